// Text an operation takes from its caller (properties, names, comments, expressions, schemas)
// ends up in the JSON log, so it must be UTF-8: checked before the operation writes anything.
#pragma once

#include <arrow/api.h>

#include <map>
#include <string>
#include <string_view>

#include "deltacpp/error.h"

namespace deltacpp::internal {

/// InvalidArgument `<context><what> is not valid UTF-8 (byte 0xNN at offset K of '...')` when
/// `text` is not valid UTF-8.
arrow::Status CheckOptionText(std::string_view text, std::string_view context,
                              std::string_view what);

/// Every key and value of `properties` (`what`: e.g. "table property"): the error names the
/// key, or for a value the property it belongs to.
arrow::Status CheckPropertiesText(const std::map<std::string, std::string>& properties,
                                  std::string_view context, std::string_view what);

/// Column names and field metadata (keys and values: comments, generation expressions, ...) of
/// `field` and every field nested in it, as the Delta schema stores them. The error, of kind
/// `code`, names the column by its dotted path below `parent` (empty for a top-level field);
/// `columns` says what the columns are ("column", "input column").
arrow::Status CheckFieldText(const arrow::Field& field, const std::string& parent,
                             DeltaErrorCode code, std::string_view context,
                             std::string_view columns);

/// CheckFieldText for every field of `schema`.
arrow::Status CheckSchemaText(const arrow::Schema& schema, DeltaErrorCode code,
                              std::string_view context, std::string_view columns);

}  // namespace deltacpp::internal
