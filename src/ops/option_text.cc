#include "ops/option_text.h"

#include <fmt/core.h>

#include "util/utf8.h"

namespace deltacpp::internal {

namespace {

arrow::Status Refuse(DeltaErrorCode code, std::string_view text, std::string_view context,
                     const std::string& what) {
  return DeltaError(code, fmt::format("{}{} is not valid UTF-8 ({})", context, what,
                                      DescribeInvalidUtf8(text)));
}

// The fields of a nested type that the Delta schema names (struct fields) or only describes
// (list elements, map keys and values), with the path component each adds.
arrow::Status CheckTypeText(const arrow::DataType& type, const std::string& path,
                            DeltaErrorCode code, std::string_view context,
                            std::string_view columns) {
  switch (type.id()) {
    case arrow::Type::STRUCT:
      for (const auto& f : type.fields()) {
        ARROW_RETURN_NOT_OK(CheckFieldText(*f, path, code, context, columns));
      }
      return arrow::Status::OK();
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
      return CheckTypeText(*type.field(0)->type(), path + ".element", code, context, columns);
    case arrow::Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(type);
      ARROW_RETURN_NOT_OK(CheckTypeText(*map.key_type(), path + ".key", code, context, columns));
      return CheckTypeText(*map.item_type(), path + ".value", code, context, columns);
    }
    default:
      return arrow::Status::OK();
  }
}

}  // namespace

arrow::Status CheckOptionText(std::string_view text, std::string_view context,
                              std::string_view what) {
  if (IsValidUtf8(text)) return arrow::Status::OK();
  return Refuse(DeltaErrorCode::kInvalidArgument, text, context, std::string(what));
}

arrow::Status CheckPropertiesText(const std::map<std::string, std::string>& properties,
                                  std::string_view context, std::string_view what) {
  for (const auto& [key, value] : properties) {
    if (!IsValidUtf8(key)) {
      return Refuse(DeltaErrorCode::kInvalidArgument, key, context,
                    fmt::format("the {} key '{}'", what, PrintableText(key)));
    }
    if (!IsValidUtf8(value)) {
      return Refuse(DeltaErrorCode::kInvalidArgument, value, context,
                    fmt::format("the value of {} '{}'", what, key));
    }
  }
  return arrow::Status::OK();
}

arrow::Status CheckFieldText(const arrow::Field& field, const std::string& parent,
                             DeltaErrorCode code, std::string_view context,
                             std::string_view columns) {
  const std::string path =
      parent.empty() ? PrintableText(field.name()) : parent + "." + PrintableText(field.name());
  if (!IsValidUtf8(field.name())) {
    return Refuse(code, field.name(), context, fmt::format("the name of {} '{}'", columns, path));
  }
  if (const auto& md = field.metadata()) {
    for (int64_t i = 0; i < md->size(); ++i) {
      if (!IsValidUtf8(md->key(i))) {
        return Refuse(code, md->key(i), context,
                      fmt::format("a metadata key of {} '{}'", columns, path));
      }
      if (!IsValidUtf8(md->value(i))) {
        return Refuse(code, md->value(i), context,
                      fmt::format("the metadata '{}' of {} '{}'", md->key(i), columns, path));
      }
    }
  }
  return CheckTypeText(*field.type(), path, code, context, columns);
}

arrow::Status CheckSchemaText(const arrow::Schema& schema, DeltaErrorCode code,
                              std::string_view context, std::string_view columns) {
  for (const auto& f : schema.fields()) {
    ARROW_RETURN_NOT_OK(CheckFieldText(*f, "", code, context, columns));
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
