#include "log/stats_struct_json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>

#include "util/temporal.h"

namespace deltacpp::internal {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

std::string TimestampText(int64_t value, const arrow::TimestampType& type) {
  int64_t micros = value;
  switch (type.unit()) {
    case arrow::TimeUnit::SECOND: micros = value * 1'000'000; break;
    case arrow::TimeUnit::MILLI: micros = value * 1'000; break;
    case arrow::TimeUnit::MICRO: break;
    case arrow::TimeUnit::NANO: micros = value / 1'000 - (value % 1'000 < 0 ? 1 : 0); break;
  }
  int64_t ms = micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000);
  // "yyyy-mm-dd hh:mm:ss[.ffffff]" -> "yyyy-mm-ddThh:mm:ss.mmm[Z]"
  std::string text = FormatTimestampMicros(ms * 1000);
  auto dot = text.find('.');
  if (dot != std::string::npos) text.resize(dot);
  text[10] = 'T';
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03d", static_cast<int>(((ms % 1000) + 1000) % 1000));
  text += frac;
  if (!type.timezone().empty()) text += 'Z';
  return text;
}

// Writes the value at `i`; returns false when it has no JSON form (then the key is dropped).
bool WriteValue(const arrow::Array& a, int64_t i, JsonWriter& w);

void WriteStruct(const arrow::StructArray& s, int64_t i, JsonWriter& w) {
  w.StartObject();
  const auto& type = static_cast<const arrow::StructType&>(*s.type());
  for (int c = 0; c < type.num_fields(); ++c) {
    auto child = s.field(c);
    if (child->IsNull(i)) continue;
    // Key first only when the value can be written: check with a scratch writer.
    rapidjson::StringBuffer scratch;
    JsonWriter probe(scratch);
    if (!WriteValue(*child, i, probe)) continue;
    w.Key(type.field(c)->name().c_str(), static_cast<rapidjson::SizeType>(type.field(c)->name().size()));
    w.RawValue(scratch.GetString(), scratch.GetSize(), rapidjson::kObjectType);
  }
  w.EndObject();
}

bool WriteValue(const arrow::Array& a, int64_t i, JsonWriter& w) {
  switch (a.type_id()) {
    case arrow::Type::INT8: return w.Int(static_cast<const arrow::Int8Array&>(a).Value(i));
    case arrow::Type::INT16: return w.Int(static_cast<const arrow::Int16Array&>(a).Value(i));
    case arrow::Type::INT32: return w.Int(static_cast<const arrow::Int32Array&>(a).Value(i));
    case arrow::Type::INT64: return w.Int64(static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::FLOAT: {
      double v = static_cast<const arrow::FloatArray&>(a).Value(i);
      return std::isfinite(v) && w.Double(v);
    }
    case arrow::Type::DOUBLE: {
      double v = static_cast<const arrow::DoubleArray&>(a).Value(i);
      return std::isfinite(v) && w.Double(v);
    }
    case arrow::Type::BOOL: return w.Bool(static_cast<const arrow::BooleanArray&>(a).Value(i));
    case arrow::Type::STRING: {
      auto v = static_cast<const arrow::StringArray&>(a).GetView(i);
      return w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    }
    case arrow::Type::DATE32: {
      std::string d = FormatDate(static_cast<const arrow::Date32Array&>(a).Value(i));
      return w.String(d.c_str(), static_cast<rapidjson::SizeType>(d.size()));
    }
    case arrow::Type::TIMESTAMP: {
      std::string t = TimestampText(static_cast<const arrow::TimestampArray&>(a).Value(i),
                                    static_cast<const arrow::TimestampType&>(*a.type()));
      return w.String(t.c_str(), static_cast<rapidjson::SizeType>(t.size()));
    }
    case arrow::Type::DECIMAL128: {
      std::string d = static_cast<const arrow::Decimal128Array&>(a).FormatValue(i);
      return w.RawValue(d.c_str(), d.size(), rapidjson::kNumberType);
    }
    case arrow::Type::STRUCT:
      WriteStruct(static_cast<const arrow::StructArray&>(a), i, w);
      return true;
    default:
      return false;
  }
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> StatsStructToJson(const arrow::StructArray& stats) {
  arrow::StringBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(stats.length()));
  rapidjson::StringBuffer buffer;
  for (int64_t i = 0; i < stats.length(); ++i) {
    if (stats.IsNull(i)) {
      ARROW_RETURN_NOT_OK(out.AppendNull());
      continue;
    }
    buffer.Clear();
    JsonWriter w(buffer);
    WriteStruct(stats, i, w);
    ARROW_RETURN_NOT_OK(out.Append(buffer.GetString(), static_cast<int32_t>(buffer.GetSize())));
  }
  return out.Finish();
}

}  // namespace deltacpp::internal
