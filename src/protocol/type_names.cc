// Delta's names for Arrow types.
#include <arrow/type.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "deltacpp/schema.h"

namespace deltacpp {

std::string DeltaTypeName(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::Type::INT8: return "byte";
    case arrow::Type::INT16: return "short";
    case arrow::Type::INT32: return "integer";
    case arrow::Type::INT64: return "long";
    case arrow::Type::FLOAT: return "float";
    case arrow::Type::DOUBLE: return "double";
    case arrow::Type::STRING: return "string";
    case arrow::Type::BINARY: return "binary";
    case arrow::Type::BOOL: return "boolean";
    case arrow::Type::DATE32: return "date";
    case arrow::Type::NA: return "void";
    case arrow::Type::TIMESTAMP:
      return static_cast<const arrow::TimestampType&>(t).timezone().empty() ? "timestamp_ntz"
                                                                            : "timestamp";
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(t);
      return fmt::format("decimal({},{})", d.precision(), d.scale());
    }
    case arrow::Type::LIST:
      return "array<" + DeltaTypeName(*static_cast<const arrow::ListType&>(t).value_type()) + ">";
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(t);
      return "map<" + DeltaTypeName(*m.key_type()) + "," + DeltaTypeName(*m.item_type()) + ">";
    }
    case arrow::Type::STRUCT: {
      std::vector<std::string> parts;
      for (const auto& f : t.fields()) {
        parts.push_back(f->name() + ":" + DeltaTypeName(*f->type()) +
                        (f->nullable() ? "" : " NOT NULL"));
      }
      return fmt::format("struct<{}>", fmt::join(parts, ","));
    }
    default:
      return t.ToString();
  }
}

}  // namespace deltacpp
