#include "text_values.h"

#include <arrow/compute/api.h>

#include "deltacpp/table.h"

namespace deltacpp::cli {

namespace {

bool IsZonedTimestamp(const arrow::DataType& t) {
  return t.id() == arrow::Type::TIMESTAMP &&
         !static_cast<const arrow::TimestampType&>(t).timezone().empty();
}

arrow::Result<std::shared_ptr<arrow::Array>> ToZonedTimestamps(
    const arrow::StringArray& strings, const std::shared_ptr<arrow::DataType>& type,
    BadValue* bad) {
  arrow::TimestampBuilder b(type, arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(b.Reserve(strings.length()));
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i) || strings.GetView(i).empty()) {
      b.UnsafeAppendNull();
      continue;
    }
    auto us = ParseTimestampMicros(strings.GetView(i));
    if (!us.ok()) {
      bad->index = i;
      bad->reason = us.status().message();
      return arrow::Status::Invalid(us.status().message());
    }
    b.UnsafeAppend(*us);
  }
  return b.Finish();
}

// Trimmed text with empty values turned into nulls.
arrow::Result<std::shared_ptr<arrow::Array>> Trimmed(const std::shared_ptr<arrow::Array>& text) {
  arrow::compute::TrimOptions spaces(" \t\r\n");
  ARROW_ASSIGN_OR_RAISE(auto trimmed, arrow::compute::CallFunction("utf8_trim", {text}, &spaces));
  ARROW_ASSIGN_OR_RAISE(auto empty,
                        arrow::compute::CallFunction(
                            "equal", {trimmed, arrow::MakeScalar(std::string())}));
  ARROW_ASSIGN_OR_RAISE(auto out,
                        arrow::compute::CallFunction(
                            "if_else", {empty, arrow::MakeNullScalar(arrow::utf8()), trimmed}));
  return out.make_array();
}

}  // namespace

bool IsTextConvertible(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::BOOL:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DATE32:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return true;
    default:
      return false;
  }
}

arrow::Result<std::shared_ptr<arrow::Array>> ConvertText(
    const std::shared_ptr<arrow::Array>& text, const std::shared_ptr<arrow::DataType>& type,
    BadValue* bad) {
  if (type->id() == arrow::Type::STRING) return text;
  if (type->id() == arrow::Type::BINARY) return arrow::compute::Cast(*text, type);
  ARROW_ASSIGN_OR_RAISE(auto values, Trimmed(text));
  if (IsZonedTimestamp(*type)) {
    return ToZonedTimestamps(static_cast<const arrow::StringArray&>(*values), type, bad);
  }
  auto converted = arrow::compute::Cast(*values, type);
  if (converted.ok()) return converted;
  // Find the first value that does not convert: halve the failing range until one is left.
  int64_t begin = 0;
  int64_t end = values->length();
  while (end - begin > 1) {
    const int64_t mid = begin + (end - begin) / 2;
    if (!arrow::compute::Cast(*values->Slice(begin, mid - begin), type).ok()) {
      end = mid;
    } else {
      begin = mid;
    }
  }
  bad->index = begin;
  auto single = arrow::compute::Cast(*values->Slice(begin, 1), type);
  const std::string message = single.ok() ? converted.status().message()
                                          : single.status().message();
  // Arrow's "Failed to parse string: '...' as a scalar of type ..." only repeats the value.
  if (message.find("Failed to parse string") == std::string::npos) bad->reason = message;
  return converted.status();
}

}  // namespace deltacpp::cli
