// Turns a user's table definition (schema, partitioning, properties, constraints) into the
// protocol and metaData actions of a new or replaced table.
#pragma once

#include <arrow/api.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"

namespace deltacpp::internal {

/// A validated definition.
struct TableDefinition {
  Protocol protocol;
  Metadata metadata;
  std::shared_ptr<arrow::Schema> schema;  ///< logical schema as stored (column mapping assigned)
};

/// Validates partition columns (top-level, primitive, resolved case-insensitively to the schema's
/// spelling), parses CHECK constraints against the schema, converts `delta.feature.*` and
/// `delta.min*Version` properties into the protocol, assigns column-mapping ids and physical
/// names when `delta.columnMapping.mode` is name or id, and computes the lowest protocol.
/// `table_id` keeps an existing table's id (replace), otherwise a new one is made.
arrow::Result<TableDefinition> BuildTableDefinition(
    const std::shared_ptr<arrow::Schema>& schema, const std::vector<std::string>& partition_columns,
    const std::map<std::string, std::string>& properties,
    const std::map<std::string, std::string>& constraints, const std::optional<std::string>& name,
    const std::optional<std::string>& description, const std::optional<std::string>& table_id);

}  // namespace deltacpp::internal
