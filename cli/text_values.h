// Converts columns of text read from CSV or JSON input to the types of the table's columns.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace deltacpp::cli {

/// The first value a conversion could not take: its index in the array and why (empty when
/// "not a <type>" says it all).
struct BadValue {
  int64_t index = -1;
  std::string reason;
};

/// True for the types ConvertText produces: numbers, booleans, decimals, dates, timestamps,
/// strings and binary (not structs, arrays or maps).
bool IsTextConvertible(const arrow::DataType& type);

/// Converts `text` (a string array) to `type`. Strings and binary are kept as they are; for
/// other types surrounding white space is ignored and an empty value is null. Timestamps with
/// a zone take an ISO-8601 offset and are UTC without one. Errors (Invalid) when a value does
/// not convert; `bad` then names the first such value.
arrow::Result<std::shared_ptr<arrow::Array>> ConvertText(
    const std::shared_ptr<arrow::Array>& text, const std::shared_ptr<arrow::DataType>& type,
    BadValue* bad);

}  // namespace deltacpp::cli
