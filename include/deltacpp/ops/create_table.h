// CREATE TABLE: a new Delta table (or a replacement of one) from a schema, partitioning,
// properties and CHECK constraints, with the lowest protocol its features need.
#pragma once

#include <arrow/api.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/transaction.h"

namespace deltacpp {

/// What to do when a table already exists at the location.
enum class CreateMode {
  kErrorIfExists,  ///< fail with TableAlreadyExists
  kIfNotExists,    ///< do nothing
  kOrReplace,      ///< new version replacing schema, properties and data; history kept
};

/// Table definition.
struct CreateTableOptions {
  /// Logical schema; field metadata may carry Delta column metadata (e.g.
  /// `delta.generationExpression`, `comment`).
  std::shared_ptr<arrow::Schema> schema;
  std::vector<std::string> partition_columns;
  /// Table properties. `delta.feature.<name>=supported` entries become protocol features and
  /// are not stored; `delta.minReaderVersion` / `delta.minWriterVersion` raise the protocol.
  std::map<std::string, std::string> properties;
  /// CHECK constraints, name -> SQL boolean expression (stored as `delta.constraints.<name>`).
  std::map<std::string, std::string> constraints;
  std::optional<std::string> name;
  std::optional<std::string> description;
  CreateMode mode = CreateMode::kErrorIfExists;
  TransactionOptions transaction;
};

/// Outcome of CreateTable.
struct CreateTableResult {
  int64_t version = -1;  ///< the version written (the existing version for a no-op)
  bool created = false;  ///< false when kIfNotExists found a table
};

/// Creates the table at `location`. Errors: TableAlreadyExists (kErrorIfExists), InvalidArgument
/// (unknown partition column, bad property; text that is not valid UTF-8 in the name,
/// description, properties, constraints, column names or field metadata, naming it),
/// InvalidExpression (bad constraint), and the commit errors of Transaction::Commit.
arrow::Result<CreateTableResult> CreateTable(std::string_view location,
                                             const CreateTableOptions& options);

}  // namespace deltacpp
