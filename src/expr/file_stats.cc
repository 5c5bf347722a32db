#include "expr/file_stats.h"

#include <simdjson.h>

#include <charconv>

#include "deltacpp/error.h"
#include "expr/coerce.h"
#include "expr/physical_name.h"

namespace deltacpp::internal {

namespace {

namespace od = simdjson::ondemand;

constexpr int kMaxNesting = 64;

// A scalar JSON value found in one of the statistics maps.
struct JsonLeaf {
  enum class Kind { kNumber, kString, kBool } kind = Kind::kNumber;
  std::string text;  // number token as written, or the unescaped string
  bool flag = false;
};

using LeafMap = std::unordered_map<std::string, JsonLeaf>;

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
                        s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

arrow::Status Malformed(simdjson::error_code error) {
  return DeltaError(DeltaErrorCode::kCorruptLog,
                    std::string("malformed file statistics JSON: ") + simdjson::error_message(error));
}

// Records every scalar under `value`, keyed by its dot-joined path.
arrow::Status CollectLeaves(od::value value, const std::string& prefix, int depth, LeafMap* out) {
  if (depth > kMaxNesting) return Malformed(simdjson::DEPTH_ERROR);
  od::json_type type;
  if (auto err = value.type().get(type)) return Malformed(err);
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (auto err = value.get_object().get(object)) return Malformed(err);
      for (auto field : object) {
        if (field.error()) return Malformed(field.error());
        std::string_view key;
        if (auto err = field.unescaped_key().get(key)) return Malformed(err);
        std::string path = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
        od::value child;
        if (auto err = field.value().get(child)) return Malformed(err);
        ARROW_RETURN_NOT_OK(CollectLeaves(child, path, depth + 1, out));
      }
      return arrow::Status::OK();
    }
    case od::json_type::number: {
      std::string_view token = value.raw_json_token();
      (*out)[prefix] = JsonLeaf{JsonLeaf::Kind::kNumber, std::string(TrimRight(token)), false};
      return arrow::Status::OK();
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto err = value.get_string().get(s)) return Malformed(err);
      (*out)[prefix] = JsonLeaf{JsonLeaf::Kind::kString, std::string(s), false};
      return arrow::Status::OK();
    }
    case od::json_type::boolean: {
      bool b = false;
      if (auto err = value.get_bool().get(b)) return Malformed(err);
      (*out)[prefix] = JsonLeaf{JsonLeaf::Kind::kBool, "", b};
      return arrow::Status::OK();
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto err = value.is_null().get(is_null)) return Malformed(err);
      return arrow::Status::OK();
    }
    case od::json_type::array: {
      // Arrays carry no statistics Delta defines; walk them only to validate the syntax.
      od::array array;
      if (auto err = value.get_array().get(array)) return Malformed(err);
      LeafMap ignored;
      for (auto element : array) {
        od::value child;
        if (auto err = element.get(child)) return Malformed(err);
        ARROW_RETURN_NOT_OK(CollectLeaves(child, prefix, depth + 1, &ignored));
      }
      return arrow::Status::OK();
    }
  }
  return arrow::Status::OK();
}

// Converts a statistics value to a scalar of `type`; nullptr when it does not convert.
std::shared_ptr<arrow::Scalar> ToScalar(const JsonLeaf& leaf,
                                        const std::shared_ptr<arrow::DataType>& type) {
  switch (leaf.kind) {
    case JsonLeaf::Kind::kBool:
      if (type->id() == arrow::Type::BOOL) return std::make_shared<arrow::BooleanScalar>(leaf.flag);
      return nullptr;
    case JsonLeaf::Kind::kNumber:
      if (!IsNumericType(*type)) return nullptr;
      break;
    case JsonLeaf::Kind::kString:
      if (IsBinaryType(*type) || type->id() == arrow::Type::BOOL) return nullptr;
      break;
  }
  auto result = ScalarFromText(leaf.text, type);
  if (!result.ok()) return nullptr;
  return *result;
}

std::optional<int64_t> ToCount(const JsonLeaf& leaf) {
  if (leaf.kind != JsonLeaf::Kind::kNumber) return std::nullopt;
  int64_t v = 0;
  const char* end = leaf.text.data() + leaf.text.size();
  auto res = std::from_chars(leaf.text.data(), end, v);
  if (res.ec != std::errc() || res.ptr != end || v < 0) return std::nullopt;
  return v;
}

void WalkSchema(const arrow::FieldVector& fields, const std::string& prefix, const LeafMap& mins,
                const LeafMap& maxs, const LeafMap& nulls, FileStats* out) {
  for (const auto& field : fields) {
    const std::string key = prefix.empty() ? PhysicalFieldName(*field)
                                           : prefix + "." + PhysicalFieldName(*field);
    if (field->type()->id() == arrow::Type::STRUCT) {
      WalkSchema(field->type()->fields(), key, mins, maxs, nulls, out);
      continue;
    }
    ColumnStats stats;
    if (auto it = mins.find(key); it != mins.end()) stats.min = ToScalar(it->second, field->type());
    if (auto it = maxs.find(key); it != maxs.end()) stats.max = ToScalar(it->second, field->type());
    if (auto it = nulls.find(key); it != nulls.end()) stats.null_count = ToCount(it->second);
    if (stats.min || stats.max || stats.null_count) out->columns.emplace(key, std::move(stats));
  }
}

}  // namespace

arrow::Result<FileStats> ParseStatsJson(std::string_view json, const arrow::Schema& logical_schema) {
  simdjson::padded_string padded(json);
  // One parser per thread: it keeps its buffers between the many small documents of a log.
  thread_local od::parser parser;
  od::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return Malformed(err);
  od::object root;
  if (auto err = doc.get_object().get(root)) return Malformed(err);

  FileStats stats;
  LeafMap mins, maxs, nulls;
  for (auto field : root) {
    if (field.error()) return Malformed(field.error());
    std::string_view key_view;
    if (auto err = field.unescaped_key().get(key_view)) return Malformed(err);
    const std::string key(key_view);
    od::value value;
    if (auto err = field.value().get(value)) return Malformed(err);
    od::json_type type;
    if (auto err = value.type().get(type)) return Malformed(err);
    if (key == "minValues" || key == "maxValues" || key == "nullCount") {
      LeafMap* target = key == "minValues" ? &mins : key == "maxValues" ? &maxs : &nulls;
      ARROW_RETURN_NOT_OK(CollectLeaves(value, "", 0, target));
      // A bare scalar in place of a map carries no per-column information.
      target->erase("");
    } else if (key == "numRecords" && type == od::json_type::number) {
      std::string_view token = value.raw_json_token();
      stats.num_records = ToCount(JsonLeaf{JsonLeaf::Kind::kNumber, std::string(TrimRight(token)), false});
    } else if (key == "tightBounds" && type == od::json_type::boolean) {
      bool b = false;
      if (auto err = value.get_bool().get(b)) return Malformed(err);
      stats.tight_bounds = b;
    } else {
      LeafMap ignored;
      ARROW_RETURN_NOT_OK(CollectLeaves(value, "", 0, &ignored));
    }
  }
  WalkSchema(logical_schema.fields(), "", mins, maxs, nulls, &stats);
  return stats;
}

}  // namespace deltacpp::internal
