// Parses column definitions as users write them (`id long NOT NULL, price DECIMAL(10,2),
// tags ARRAY<STRING>`) into an Arrow schema carrying Delta field metadata.
#pragma once

#include <arrow/api.h>

#include <string_view>

namespace deltacpp::internal {

/// Parses a comma-separated list of `name type [NOT NULL] [GENERATED ALWAYS AS (expr)]
/// [COMMENT 'text']`. Type names are accepted in Delta spelling (`long`, `integer`,
/// `timestamp_ntz`, `decimal(10,2)`) and SQL spelling (`BIGINT`, `INT`, `STRING`,
/// `VARCHAR(n)`, `DECIMAL(10,2)`, `TIMESTAMP_NTZ`), case-insensitively, with nested
/// `ARRAY<t>`, `MAP<k, v>` and `STRUCT<name[:] t, ...>`. A generation expression is stored as
/// `delta.generationExpression`, a comment as `comment` (JSON-string field metadata).
/// Errors: InvalidExpression naming the position and cause; duplicate names (case-insensitive).
arrow::Result<std::shared_ptr<arrow::Schema>> ParseColumnDefinitions(std::string_view ddl);

/// Parses one type name (`BIGINT`, `decimal(5,1)`, `ARRAY<INT>`, ...).
arrow::Result<std::shared_ptr<arrow::DataType>> ParseTypeName(std::string_view text);

}  // namespace deltacpp::internal
