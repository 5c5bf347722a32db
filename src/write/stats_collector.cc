#include "write/stats_collector.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <cmath>
#include <set>

#include "deltacpp/error.h"
#include "expr/scalar_compare.h"
#include "util/temporal.h"
#include "protocol/partition_values.h"
#include "protocol/schema_json.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr char kUtf8MaxCodePoint[] = "\xF4\x8F\xBF\xBF";  // U+10FFFF

bool MinMaxEligible(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::DATE32:
    case arrow::Type::TIMESTAMP:
      return true;
    default:
      return false;
  }
}

bool IsStatsStruct(const arrow::Field& field) {
  return field.type()->id() == arrow::Type::STRUCT && !IsVariantField(field);
}

void CollectLeaves(const arrow::FieldVector& fields, std::vector<int>* path,
                   std::vector<std::string>* names, std::vector<StatsLeaf>* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& field = fields[i];
    path->push_back(static_cast<int>(i));
    names->push_back(PhysicalName(*field));
    if (IsStatsStruct(*field)) {
      CollectLeaves(field->type()->fields(), path, names, out);
    } else {
      out->push_back(StatsLeaf{*path, *names, field->type(), MinMaxEligible(*field->type())});
    }
    path->pop_back();
    names->pop_back();
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits `a.b`, `` `a.b`.c `` into name parts (a doubled backtick inside quotes is one backtick).
arrow::Result<std::vector<std::string>> SplitColumnPath(std::string_view text) {
  auto malformed = [&] {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("malformed column name '{}' in delta.dataSkippingStatsColumns", text));
  };
  std::vector<std::string> parts;
  std::string current;
  bool in_quotes = false;
  bool quoted_part = false;
  auto finish_part = [&]() -> bool {
    std::string name = quoted_part ? current : std::string(Trim(current));
    if (!quoted_part && name.empty()) return false;
    parts.push_back(std::move(name));
    current.clear();
    quoted_part = false;
    return true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c != '`') {
        current += c;
      } else if (i + 1 < text.size() && text[i + 1] == '`') {
        current += '`';
        ++i;
      } else {
        in_quotes = false;
      }
    } else if (c == '`') {
      if (quoted_part || !Trim(current).empty()) return malformed();
      current.clear();
      in_quotes = true;
      quoted_part = true;
    } else if (c == '.') {
      if (!finish_part()) return malformed();
    } else if (quoted_part) {
      if (c != ' ' && c != '\t') return malformed();
    } else {
      current += c;
    }
  }
  if (in_quotes || !finish_part()) return malformed();
  return parts;
}

int FindFieldIgnoreCase(const arrow::FieldVector& fields, const std::string& name) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i]->name() == name) return static_cast<int>(i);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (EqualsIgnoreCase(fields[i]->name(), name)) return static_cast<int>(i);
  }
  return -1;
}

// Byte offsets of the first `max_points + 1` code point starts (fewer when the text is shorter).
// Invalid UTF-8 bytes count as one code point each.
std::vector<size_t> CodePointStarts(std::string_view s, size_t max_points) {
  std::vector<size_t> starts;
  size_t i = 0;
  while (i < s.size() && starts.size() <= max_points) {
    starts.push_back(i);
    const auto b = static_cast<unsigned char>(s[i]);
    size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
    if (i + len > s.size()) len = 1;
    i += len;
  }
  return starts;
}

// Statistic values as they go into the JSON text.
struct JsonValue {
  bool is_string = false;
  std::string text;  // raw number text, or the (unescaped) string
};

std::optional<JsonValue> Number(std::string text) { return JsonValue{false, std::move(text)}; }

template <typename T>
std::optional<JsonValue> FloatingNumber(T value) {
  if (!std::isfinite(value)) return std::nullopt;
  char buffer[64];
  auto res = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (res.ec != std::errc()) return std::nullopt;
  return Number(std::string(buffer, res.ptr));
}

// The JSON form of a min (`is_max` false) or max statistic; nullopt when it cannot be written.
arrow::Result<std::optional<JsonValue>> StatValue(const arrow::Scalar& scalar, bool is_max,
                                                  int32_t prefix_length) {
  if (!scalar.is_valid) return std::nullopt;
  switch (scalar.type->id()) {
    case arrow::Type::INT8:
      return Number(std::to_string(static_cast<const arrow::Int8Scalar&>(scalar).value));
    case arrow::Type::INT16:
      return Number(std::to_string(static_cast<const arrow::Int16Scalar&>(scalar).value));
    case arrow::Type::INT32:
      return Number(std::to_string(static_cast<const arrow::Int32Scalar&>(scalar).value));
    case arrow::Type::INT64:
      return Number(std::to_string(static_cast<const arrow::Int64Scalar&>(scalar).value));
    case arrow::Type::FLOAT:
      return FloatingNumber(static_cast<const arrow::FloatScalar&>(scalar).value);
    case arrow::Type::DOUBLE:
      return FloatingNumber(static_cast<const arrow::DoubleScalar&>(scalar).value);
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      ARROW_ASSIGN_OR_RAISE(auto text, SerializePartitionValue(scalar));
      if (!text) return std::nullopt;
      return Number(std::move(*text));
    }
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING: {
      std::string_view view = static_cast<const arrow::BaseBinaryScalar&>(scalar).view();
      if (!is_max) return JsonValue{true, TruncateStatsMin(view, prefix_length)};
      auto max = TruncateStatsMax(view, prefix_length);
      if (!max) return std::nullopt;
      return JsonValue{true, std::move(*max)};
    }
    case arrow::Type::DATE32:
      return JsonValue{true, FormatDate(static_cast<const arrow::Date32Scalar&>(scalar).value)};
    case arrow::Type::TIMESTAMP: {
      const auto& type = static_cast<const arrow::TimestampType&>(*scalar.type);
      return JsonValue{true, FormatStatsTimestamp(static_cast<const arrow::TimestampScalar&>(scalar).value,
                                                  type.unit(), !type.timezone().empty())};
    }
    default:
      return std::nullopt;
  }
}

// Keeps the smaller (sign -1) or larger (sign +1) of `*current` and `candidate`.
void MergeBound(const std::shared_ptr<arrow::Scalar>& candidate, int sign,
                std::shared_ptr<arrow::Scalar>* current) {
  if (!candidate || !candidate->is_valid) return;
  if (!*current) {
    *current = candidate;
    return;
  }
  auto order = CompareScalars(*candidate, **current);
  if (order && *order * sign > 0) *current = candidate;
}

arrow::Result<std::shared_ptr<arrow::Array>> LeafArray(const arrow::RecordBatch& batch,
                                                       const std::vector<int>& path) {
  std::shared_ptr<arrow::Array> array = batch.column(path.front());
  for (size_t i = 1; i < path.size(); ++i) {
    // The flattened child is null wherever the struct itself is null.
    ARROW_ASSIGN_OR_RAISE(array, static_cast<const arrow::StructArray&>(*array).GetFlattenedField(path[i]));
  }
  return array;
}

// The JSON maps mirror the schema: a tree of keys with leaves at the bottom.
struct KeyNode {
  std::string key;
  int leaf = -1;  // index into the leaves when this is a leaf
  std::vector<KeyNode> children;
};

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

}  // namespace

arrow::Result<std::vector<StatsLeaf>> SelectStatsLeaves(
    const arrow::Schema& data_schema, int32_t num_indexed_cols,
    const std::optional<std::vector<std::string>>& stats_columns,
    const std::vector<std::string>& partition_columns) {
  std::vector<StatsLeaf> all;
  std::vector<int> path;
  std::vector<std::string> names;
  CollectLeaves(data_schema.fields(), &path, &names, &all);
  if (!stats_columns) {
    if (num_indexed_cols < -1) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("delta.dataSkippingNumIndexedCols must be -1 or more, got {}",
                                    num_indexed_cols));
    }
    if (num_indexed_cols >= 0 && static_cast<size_t>(num_indexed_cols) < all.size()) {
      all.resize(static_cast<size_t>(num_indexed_cols));
    }
    return all;
  }
  std::set<size_t> chosen;
  for (const auto& column : *stats_columns) {
    if (Trim(column).empty()) continue;
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitColumnPath(column));
    std::vector<int> prefix;
    const arrow::FieldVector* fields = &data_schema.fields();
    bool ignored = false;
    for (size_t i = 0; i < parts.size(); ++i) {
      int index = FindFieldIgnoreCase(*fields, parts[i]);
      if (index < 0) {
        if (i == 0 && parts.size() == 1) {
          for (const auto& p : partition_columns) ignored = ignored || EqualsIgnoreCase(p, parts[0]);
        }
        if (ignored) break;
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("delta.dataSkippingStatsColumns names '{}', which is not a "
                                      "data column of the table",
                                      column));
      }
      prefix.push_back(index);
      const auto& field = (*fields)[static_cast<size_t>(index)];
      if (i + 1 < parts.size()) {
        if (!IsStatsStruct(*field)) {
          return DeltaError(DeltaErrorCode::kInvalidArgument,
                            fmt::format("delta.dataSkippingStatsColumns names '{}', but '{}' is "
                                        "not a struct column",
                                        column, field->name()));
        }
        fields = &field->type()->fields();
      }
    }
    if (ignored) continue;
    for (size_t i = 0; i < all.size(); ++i) {
      const auto& p = all[i].path;
      if (p.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), p.begin())) {
        chosen.insert(i);
      }
    }
  }
  std::vector<StatsLeaf> out;
  for (size_t i : chosen) out.push_back(all[i]);
  return out;
}

std::string TruncateStatsMin(std::string_view value, int32_t prefix_length) {
  const size_t prefix = static_cast<size_t>(std::max(prefix_length, 0));
  auto starts = CodePointStarts(value, prefix);
  if (starts.size() <= prefix) return std::string(value);
  return std::string(value.substr(0, starts[prefix]));
}

std::optional<std::string> TruncateStatsMax(std::string_view value, int32_t prefix_length) {
  const size_t prefix = static_cast<size_t>(std::max(prefix_length, 0));
  const size_t limit = 2 * prefix;
  auto starts = CodePointStarts(value, limit);
  if (starts.size() <= prefix) return std::string(value);
  if (prefix == 0) return std::nullopt;
  for (size_t n = prefix; n <= limit; ++n) {
    if (n >= starts.size()) return std::string(value);  // the whole value fits
    std::string_view next = value.substr(starts[n], (n + 1 < starts.size() ? starts[n + 1] : value.size()) - starts[n]);
    if (next == kUtf8MaxCodePoint) continue;  // nothing sorts above it: keep it and look further
    std::string out(value.substr(0, starts[n]));
    if (static_cast<unsigned char>(next[0]) < 0x7F) {
      out += '\x7F';
    } else {
      out += kUtf8MaxCodePoint;
    }
    return out;
  }
  return std::nullopt;
}

std::string FormatStatsTimestamp(int64_t value, arrow::TimeUnit::type unit, bool utc) {
  int64_t per_ms = 1;
  int64_t ms_per_unit = 1;
  switch (unit) {
    case arrow::TimeUnit::SECOND: ms_per_unit = 1000; break;
    case arrow::TimeUnit::MILLI: break;
    case arrow::TimeUnit::MICRO: per_ms = 1000; break;
    case arrow::TimeUnit::NANO: per_ms = 1000000; break;
  }
  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  const int64_t ms = floor_div(value, per_ms) * ms_per_unit;
  constexpr int64_t kMsPerDay = 86'400'000;
  const int64_t days = floor_div(ms, kMsPerDay);
  const int64_t in_day = ms - days * kMsPerDay;
  return fmt::format("{}T{:02d}:{:02d}:{:02d}.{:03d}{}", FormatDate(static_cast<int32_t>(days)),
                     in_day / 3'600'000, in_day / 60'000 % 60, in_day / 1000 % 60, in_day % 1000,
                     utc ? "Z" : "");
}

FileStatsCollector::FileStatsCollector(std::shared_ptr<const std::vector<StatsLeaf>> leaves,
                                       int32_t string_prefix_length)
    : leaves_(std::move(leaves)),
      accumulators_(leaves_->size()),
      string_prefix_length_(string_prefix_length) {}

arrow::Status FileStatsCollector::Update(const arrow::RecordBatch& batch) {
  num_records_ += batch.num_rows();
  if (batch.num_rows() == 0) return arrow::Status::OK();
  for (size_t i = 0; i < leaves_->size(); ++i) {
    const StatsLeaf& leaf = (*leaves_)[i];
    Accumulator& acc = accumulators_[i];
    ARROW_ASSIGN_OR_RAISE(auto array, LeafArray(batch, leaf.path));
    const int64_t nulls = array->null_count();
    acc.null_count += nulls;
    if (!leaf.min_max || acc.has_nan || nulls == array->length()) continue;
    if (array->type_id() == arrow::Type::FLOAT || array->type_id() == arrow::Type::DOUBLE) {
      ARROW_ASSIGN_OR_RAISE(auto is_nan, arrow::compute::CallFunction("is_nan", {array}));
      ARROW_ASSIGN_OR_RAISE(auto any, arrow::compute::Any(is_nan));
      const auto& flag = any.scalar_as<arrow::BooleanScalar>();
      if (flag.is_valid && flag.value) {
        acc.has_nan = true;
        acc.min.reset();
        acc.max.reset();
        continue;
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto min_max, arrow::compute::MinMax(array));
    const auto& pair = min_max.scalar_as<arrow::StructScalar>();
    MergeBound(pair.value[0], -1, &acc.min);
    MergeBound(pair.value[1], +1, &acc.max);
  }
  return arrow::Status::OK();
}

std::string FileStatsCollector::ToJson() const {
  // Final values per leaf.
  std::vector<std::optional<JsonValue>> mins(leaves_->size());
  std::vector<std::optional<JsonValue>> maxs(leaves_->size());
  for (size_t i = 0; i < leaves_->size(); ++i) {
    const Accumulator& acc = accumulators_[i];
    if (acc.has_nan) continue;
    if (acc.min) {
      auto v = StatValue(*acc.min, false, string_prefix_length_);
      if (v.ok()) mins[i] = std::move(*v);
    }
    if (acc.max) {
      auto v = StatValue(*acc.max, true, string_prefix_length_);
      if (v.ok()) maxs[i] = std::move(*v);
    }
  }

  KeyNode root;
  for (size_t i = 0; i < leaves_->size(); ++i) {
    KeyNode* node = &root;
    for (const auto& key : (*leaves_)[i].physical_path) {
      auto it = std::find_if(node->children.begin(), node->children.end(),
                             [&](const KeyNode& c) { return c.key == key && c.leaf < 0; });
      if (it == node->children.end()) {
        node->children.push_back(KeyNode{key, -1, {}});
        it = node->children.end() - 1;
      }
      node = &*it;
    }
    node->leaf = static_cast<int>(i);
  }

  enum class Kind { kMin, kMax, kNullCount };
  auto has_value = [&](const KeyNode& node, Kind kind, const auto& self) -> bool {
    if (node.leaf >= 0) {
      const size_t i = static_cast<size_t>(node.leaf);
      return kind == Kind::kNullCount || (kind == Kind::kMin ? mins[i] : maxs[i]).has_value();
    }
    for (const auto& child : node.children) {
      if (self(child, kind, self)) return true;
    }
    return false;
  };
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  auto emit = [&](const KeyNode& node, Kind kind, const auto& self) -> void {
    for (const auto& child : node.children) {
      if (!has_value(child, kind, has_value)) continue;
      writer.Key(child.key.data(), static_cast<rapidjson::SizeType>(child.key.size()));
      if (child.leaf < 0) {
        writer.StartObject();
        self(child, kind, self);
        writer.EndObject();
        continue;
      }
      const size_t i = static_cast<size_t>(child.leaf);
      if (kind == Kind::kNullCount) {
        writer.Int64(accumulators_[i].null_count);
        continue;
      }
      const JsonValue& v = *(kind == Kind::kMin ? mins[i] : maxs[i]);
      if (v.is_string) {
        writer.String(v.text.data(), static_cast<rapidjson::SizeType>(v.text.size()));
      } else {
        writer.RawValue(v.text.data(), v.text.size(), rapidjson::kNumberType);
      }
    }
  };
  writer.StartObject();
  writer.Key("numRecords");
  writer.Int64(num_records_);
  const std::pair<const char*, Kind> maps[] = {
      {"minValues", Kind::kMin}, {"maxValues", Kind::kMax}, {"nullCount", Kind::kNullCount}};
  for (const auto& [name, kind] : maps) {
    writer.Key(name);
    writer.StartObject();
    emit(root, kind, emit);
    writer.EndObject();
  }
  writer.Key("tightBounds");
  writer.Bool(true);
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace deltacpp::internal
