#include "support/fixture_writer.h"

#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>

#include "protocol/deletion_vector.h"

namespace deltacpp::testing {
namespace {

namespace fs = std::filesystem;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr const char* kEngineInfo = "deltacpp-fixture/0.1";
constexpr int64_t kCheckpointBatchRows = 32 * 1024;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string VersionPrefix(int64_t version) { return fmt::format("{:020d}", version); }

std::string RandomUuid() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> lock(mu);
    hi = rng();
    lo = rng();
  }
  hi = (hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF,
                     hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFULL);
}

/// Writes `data` to a new file at `path`. With `exclusive` it fails when the file exists
/// (commits are put-if-absent); without, an existing file is truncated, which is much cheaper on
/// some file systems and fine for a directory known to be fresh.
arrow::Status WriteNewFile(const std::string& path, std::string_view data, bool exclusive = true) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return arrow::Status::AlreadyExists("file exists: ", path);
    return arrow::Status::IOError("cannot create ", path, ": ", std::strerror(errno));
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return arrow::Status::IOError("write to ", path, " failed: ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return arrow::Status::IOError("close of ", path, " failed");
  return arrow::Status::OK();
}

/// Replaces the file at `path` with `data` (temp file + rename).
arrow::Status ReplaceFile(const std::string& path, std::string_view data) {
  std::string tmp = path + "." + RandomUuid() + ".tmp";
  ARROW_RETURN_NOT_OK(WriteNewFile(tmp, data, /*exclusive=*/false));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return arrow::Status::IOError("rename to ", path, " failed: ", std::strerror(errno));
  }
  return arrow::Status::OK();
}

arrow::Status SetFileTimeMs(const std::string& path, int64_t epoch_ms) {
  struct timespec times[2];
  int64_t sec = epoch_ms >= 0 ? epoch_ms / 1000 : -((-epoch_ms + 999) / 1000);
  times[0].tv_sec = static_cast<time_t>(sec);
  times[0].tv_nsec = static_cast<long>((epoch_ms - sec * 1000) * 1000000);
  times[1] = times[0];
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
    return arrow::Status::IOError("cannot set the time of ", path, ": ", std::strerror(errno));
  }
  return arrow::Status::OK();
}

arrow::Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return arrow::Status::IOError("cannot create ", dir, ": ", ec.message());
  return arrow::Status::OK();
}

void EnsureComputeInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { (void)arrow::compute::Initialize(); });
}

std::string JsonQuote(std::string_view s) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteStringMap(JsonWriter& w, const std::map<std::string, std::string>& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    WriteString(w, k);
    WriteString(w, v);
  }
  w.EndObject();
}

void WriteOptStringMap(JsonWriter& w, const std::map<std::string, std::optional<std::string>>& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    WriteString(w, k);
    if (v) {
      WriteString(w, *v);
    } else {
      w.Null();
    }
  }
  w.EndObject();
}

void WriteStringArray(JsonWriter& w, const std::vector<std::string>& values) {
  w.StartArray();
  for (const auto& v : values) WriteString(w, v);
  w.EndArray();
}

std::string StringArrayJson(const std::vector<std::string>& values) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  WriteStringArray(w, values);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string StringMapJson(const std::map<std::string, std::string>& m) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  WriteStringMap(w, m);
  return std::string(buf.GetString(), buf.GetSize());
}

// ---------------------------------------------------------------------------------------------
// Arrow schema -> Delta schema JSON

arrow::Status WriteDeltaType(const std::shared_ptr<arrow::DataType>& type, JsonWriter& w);

void WriteFieldMetadata(const arrow::Field& field, JsonWriter& w) {
  w.StartObject();
  if (const auto& md = field.metadata()) {
    for (int64_t i = 0; i < md->size(); ++i) {
      const std::string& key = md->key(i);
      const std::string& value = md->value(i);
      if (key.rfind("PARQUET:", 0) == 0 || key.rfind("ARROW:", 0) == 0) continue;
      WriteString(w, key);
      // Delta metadata values are JSON values: integers and booleans (column mapping ids,
      // identity settings) and nested JSON (nested ids) are written as such, the rest as strings.
      rapidjson::Document doc;
      doc.Parse(value.c_str(), value.size());
      if (!doc.HasParseError() &&
          (doc.IsInt64() || doc.IsBool() || doc.IsObject() || doc.IsArray())) {
        doc.Accept(w);
      } else {
        WriteString(w, value);
      }
    }
  }
  w.EndObject();
}

arrow::Status WriteDeltaField(const arrow::Field& field, JsonWriter& w) {
  w.StartObject();
  w.Key("name");
  WriteString(w, field.name());
  w.Key("type");
  ARROW_RETURN_NOT_OK(WriteDeltaType(field.type(), w));
  w.Key("nullable");
  w.Bool(field.nullable());
  w.Key("metadata");
  WriteFieldMetadata(field, w);
  w.EndObject();
  return arrow::Status::OK();
}

arrow::Status WriteDeltaType(const std::shared_ptr<arrow::DataType>& type, JsonWriter& w) {
  using arrow::Type;
  switch (type->id()) {
    case Type::NA:
      w.String("void");
      break;
    case Type::BOOL:
      w.String("boolean");
      break;
    case Type::INT8:
      w.String("byte");
      break;
    case Type::INT16:
      w.String("short");
      break;
    case Type::INT32:
      w.String("integer");
      break;
    case Type::INT64:
      w.String("long");
      break;
    case Type::FLOAT:
      w.String("float");
      break;
    case Type::DOUBLE:
      w.String("double");
      break;
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
      w.String("string");
      break;
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
    case Type::FIXED_SIZE_BINARY:
      w.String("binary");
      break;
    case Type::DATE32:
    case Type::DATE64:
      w.String("date");
      break;
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(*type);
      w.String(ts.timezone().empty() ? "timestamp_ntz" : "timestamp");
      break;
    }
    case Type::DECIMAL32:
    case Type::DECIMAL64:
    case Type::DECIMAL128:
    case Type::DECIMAL256: {
      const auto& dec = static_cast<const arrow::DecimalType&>(*type);
      WriteString(w, fmt::format("decimal({},{})", dec.precision(), dec.scale()));
      break;
    }
    case Type::STRUCT: {
      w.StartObject();
      w.Key("type");
      w.String("struct");
      w.Key("fields");
      w.StartArray();
      for (const auto& child : type->fields()) ARROW_RETURN_NOT_OK(WriteDeltaField(*child, w));
      w.EndArray();
      w.EndObject();
      break;
    }
    case Type::LIST:
    case Type::LARGE_LIST:
    case Type::LIST_VIEW:
    case Type::LARGE_LIST_VIEW:
    case Type::FIXED_SIZE_LIST: {
      const auto& value_field = type->field(0);
      w.StartObject();
      w.Key("type");
      w.String("array");
      w.Key("elementType");
      ARROW_RETURN_NOT_OK(WriteDeltaType(value_field->type(), w));
      w.Key("containsNull");
      w.Bool(value_field->nullable());
      w.EndObject();
      break;
    }
    case Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      w.StartObject();
      w.Key("type");
      w.String("map");
      w.Key("keyType");
      ARROW_RETURN_NOT_OK(WriteDeltaType(map.key_type(), w));
      w.Key("valueType");
      ARROW_RETURN_NOT_OK(WriteDeltaType(map.item_type(), w));
      w.Key("valueContainsNull");
      w.Bool(map.item_field()->nullable());
      w.EndObject();
      break;
    }
    default:
      return arrow::Status::NotImplemented("no Delta type for Arrow type ", type->ToString());
  }
  return arrow::Status::OK();
}

arrow::Result<std::string> SchemaToDeltaJsonString(const arrow::Schema& schema) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("type");
  w.String("struct");
  w.Key("fields");
  w.StartArray();
  for (const auto& field : schema.fields()) ARROW_RETURN_NOT_OK(WriteDeltaField(*field, w));
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// ---------------------------------------------------------------------------------------------
// Per-file statistics

/// Civil date (proleptic Gregorian) of a day count since 1970-01-01.
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string FormatDate(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  return fmt::format("{:04d}-{:02d}-{:02d}", y, m, d);
}

/// ISO-8601 text of a millisecond timestamp ("...Z" when `utc`, no offset otherwise).
std::string FormatTimestampMs(int64_t ms, bool utc) {
  int64_t days = FloorDiv(ms, 86400000);
  int64_t rem = ms - days * 86400000;
  return fmt::format("{}T{:02d}:{:02d}:{:02d}.{:03d}{}", FormatDate(days), rem / 3600000,
                     (rem / 60000) % 60, (rem / 1000) % 60, rem % 1000, utc ? "Z" : "");
}

int64_t TimestampToMs(int64_t value, arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND:
      return value * 1000;
    case arrow::TimeUnit::MILLI:
      return value;
    case arrow::TimeUnit::MICRO:
      return FloorDiv(value, 1000);
    case arrow::TimeUnit::NANO:
      return FloorDiv(value, 1000000);
  }
  return value;
}

constexpr size_t kStringPrefixChars = 32;

/// Byte length of the first `chars` UTF-8 code points of `s` (all of `s` when shorter).
size_t Utf8PrefixBytes(std::string_view s, size_t chars) {
  size_t pos = 0;
  for (size_t n = 0; n < chars && pos < s.size(); ++n) {
    unsigned char c = static_cast<unsigned char>(s[pos]);
    pos += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  }
  return std::min(pos, s.size());
}

struct StatNode {
  std::string name;
  std::vector<StatNode> children;  // non-empty for structs
  bool is_struct = false;
  std::optional<std::string> min_json;
  std::optional<std::string> max_json;
  int64_t null_count = 0;
};

template <typename ArrowType>
void FloatMinMax(const arrow::ChunkedArray& column, StatNode& node) {
  using CType = typename ArrowType::c_type;
  bool any = false, bad = false;
  CType lo = 0, hi = 0;
  for (const auto& chunk : column.chunks()) {
    const auto& arr = static_cast<const arrow::NumericArray<ArrowType>&>(*chunk);
    for (int64_t i = 0; i < arr.length(); ++i) {
      if (arr.IsNull(i)) continue;
      CType v = arr.Value(i);
      if (!std::isfinite(v)) {
        bad = true;
        continue;
      }
      if (!any || v < lo) lo = v;
      if (!any || v > hi) hi = v;
      any = true;
    }
  }
  // NaN and infinities have no JSON form; leaving the bounds out is always safe.
  if (!any || bad) return;
  node.min_json = fmt::format("{}", lo);
  node.max_json = fmt::format("{}", hi);
}

std::optional<std::string> ScalarToStatJson(const arrow::Scalar& scalar, bool is_max) {
  using arrow::Type;
  if (!scalar.is_valid) return std::nullopt;
  switch (scalar.type->id()) {
    case Type::INT8:
      return std::to_string(static_cast<const arrow::Int8Scalar&>(scalar).value);
    case Type::INT16:
      return std::to_string(static_cast<const arrow::Int16Scalar&>(scalar).value);
    case Type::INT32:
      return std::to_string(static_cast<const arrow::Int32Scalar&>(scalar).value);
    case Type::INT64:
      return std::to_string(static_cast<const arrow::Int64Scalar&>(scalar).value);
    case Type::DATE32:
      return JsonQuote(FormatDate(static_cast<const arrow::Date32Scalar&>(scalar).value));
    case Type::DATE64:
      return JsonQuote(
          FormatDate(FloorDiv(static_cast<const arrow::Date64Scalar&>(scalar).value, 86400000)));
    case Type::TIMESTAMP: {
      const auto& ts_type = static_cast<const arrow::TimestampType&>(*scalar.type);
      int64_t ms =
          TimestampToMs(static_cast<const arrow::TimestampScalar&>(scalar).value, ts_type.unit());
      return JsonQuote(FormatTimestampMs(ms, !ts_type.timezone().empty()));
    }
    case Type::DECIMAL128: {
      const auto& dec = static_cast<const arrow::Decimal128Scalar&>(scalar);
      return dec.value.ToString(static_cast<const arrow::Decimal128Type&>(*scalar.type).scale());
    }
    case Type::DECIMAL256: {
      const auto& dec = static_cast<const arrow::Decimal256Scalar&>(scalar);
      return dec.value.ToString(static_cast<const arrow::Decimal256Type&>(*scalar.type).scale());
    }
    case Type::STRING:
    case Type::LARGE_STRING: {
      std::string_view s = static_cast<const arrow::BaseBinaryScalar&>(scalar).view();
      size_t cut = Utf8PrefixBytes(s, kStringPrefixChars);
      if (cut == s.size()) return JsonQuote(s);
      std::string prefix(s.substr(0, cut));
      if (!is_max) return JsonQuote(prefix);
      // A truncated max must still be >= the real value: append a character above the one cut.
      unsigned char next = static_cast<unsigned char>(s[cut]);
      prefix += next < 0x7F ? std::string("\x7F") : std::string("\xF4\x8F\xBF\xBF");
      return JsonQuote(prefix);
    }
    default:
      return std::nullopt;
  }
}

void CollectLeafMinMax(const std::shared_ptr<arrow::ChunkedArray>& column, StatNode& node) {
  using arrow::Type;
  switch (column->type()->id()) {
    case Type::FLOAT:
      FloatMinMax<arrow::FloatType>(*column, node);
      return;
    case Type::DOUBLE:
      FloatMinMax<arrow::DoubleType>(*column, node);
      return;
    case Type::INT8:
    case Type::INT16:
    case Type::INT32:
    case Type::INT64:
    case Type::DATE32:
    case Type::DATE64:
    case Type::TIMESTAMP:
    case Type::DECIMAL128:
    case Type::DECIMAL256:
    case Type::STRING:
    case Type::LARGE_STRING:
      break;
    default:
      return;  // booleans, binary, nested: null counts only
  }
  EnsureComputeInitialized();
  auto options = arrow::compute::ScalarAggregateOptions(/*skip_nulls=*/true, /*min_count=*/1);
  auto result = arrow::compute::MinMax(column, options);
  if (!result.ok()) return;  // unsupported kernel: leave the bounds out
  const auto& pair = static_cast<const arrow::StructScalar&>(*result->scalar());
  if (!pair.is_valid || pair.value.size() != 2) return;
  node.min_json = ScalarToStatJson(*pair.value[0], /*is_max=*/false);
  node.max_json = ScalarToStatJson(*pair.value[1], /*is_max=*/true);
  if (!node.min_json || !node.max_json) {
    node.min_json.reset();
    node.max_json.reset();
  }
}

/// Stats of one column; `chunks` already carry parent-struct nulls (flattened).
arrow::Result<std::optional<StatNode>> CollectColumnStats(
    const std::string& name, const std::shared_ptr<arrow::DataType>& type,
    const arrow::ArrayVector& chunks) {
  StatNode node;
  node.name = name;
  if (type->id() == arrow::Type::STRUCT) {
    node.is_struct = true;
    for (int i = 0; i < type->num_fields(); ++i) {
      arrow::ArrayVector child_chunks;
      for (const auto& chunk : chunks) {
        ARROW_ASSIGN_OR_RAISE(auto child,
                              static_cast<const arrow::StructArray&>(*chunk).GetFlattenedField(i));
        child_chunks.push_back(std::move(child));
      }
      ARROW_ASSIGN_OR_RAISE(
          auto child_node,
          CollectColumnStats(type->field(i)->name(), type->field(i)->type(), child_chunks));
      if (child_node) node.children.push_back(std::move(*child_node));
    }
    if (node.children.empty()) return std::nullopt;
    return node;
  }
  if (type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST ||
      type->id() == arrow::Type::MAP || type->id() == arrow::Type::FIXED_SIZE_LIST ||
      type->id() == arrow::Type::LIST_VIEW || type->id() == arrow::Type::LARGE_LIST_VIEW) {
    return std::nullopt;
  }
  auto column = std::make_shared<arrow::ChunkedArray>(chunks, type);
  node.null_count = column->null_count();
  CollectLeafMinMax(column, node);
  return node;
}

enum class StatKind { kMin, kMax, kNullCount };

bool HasStat(const StatNode& node, StatKind kind) {
  if (node.is_struct) {
    return std::any_of(node.children.begin(), node.children.end(),
                       [&](const StatNode& c) { return HasStat(c, kind); });
  }
  if (kind == StatKind::kMin) return node.min_json.has_value();
  if (kind == StatKind::kMax) return node.max_json.has_value();
  return true;
}

void WriteStatObject(const std::vector<StatNode>& nodes, StatKind kind, JsonWriter& w) {
  w.StartObject();
  for (const auto& node : nodes) {
    if (!HasStat(node, kind)) continue;
    WriteString(w, node.name);
    if (node.is_struct) {
      WriteStatObject(node.children, kind, w);
    } else if (kind == StatKind::kNullCount) {
      w.Int64(node.null_count);
    } else {
      const std::string& raw = kind == StatKind::kMin ? *node.min_json : *node.max_json;
      w.RawValue(raw.data(), raw.size(), rapidjson::kStringType);
    }
  }
  w.EndObject();
}

arrow::Result<std::string> ComputeStatsJson(const arrow::Table& table, bool tight_bounds) {
  std::vector<StatNode> nodes;
  for (int i = 0; i < table.num_columns(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto node,
                          CollectColumnStats(table.field(i)->name(), table.field(i)->type(),
                                             table.column(i)->chunks()));
    if (node) nodes.push_back(std::move(*node));
  }
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("numRecords");
  w.Int64(table.num_rows());
  w.Key("minValues");
  WriteStatObject(nodes, StatKind::kMin, w);
  w.Key("maxValues");
  WriteStatObject(nodes, StatKind::kMax, w);
  w.Key("nullCount");
  WriteStatObject(nodes, StatKind::kNullCount, w);
  if (!tight_bounds) {
    w.Key("tightBounds");
    w.Bool(false);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// ---------------------------------------------------------------------------------------------
// Paths

std::string PercentEncode(std::string_view s, bool (*needs)(unsigned char)) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (needs(c)) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

/// Characters Spark escapes in Hive partition directory names.
bool NeedsHiveEscape(unsigned char c) {
  return c < 0x20 || c == 0x7F || std::strchr("\"#%'*/:=?\\{[]^", c) != nullptr;
}

/// Characters a file path must have percent-encoded to be a valid URI path.
bool NeedsUriEscape(unsigned char c) {
  return c < 0x20 || c == 0x7F || std::strchr(" \"#%<>?[\\]^`{|}", c) != nullptr;
}

// ---------------------------------------------------------------------------------------------
// Action lines

void WriteDeletionVector(const FixtureTableWriter::FileEntry& e, JsonWriter& w) {
  w.StartObject();
  w.Key("storageType");
  WriteString(w, *e.dv_storage_type);
  w.Key("pathOrInlineDv");
  WriteString(w, e.dv_path_or_inline);
  if (e.dv_offset) {
    w.Key("offset");
    w.Int(*e.dv_offset);
  }
  w.Key("sizeInBytes");
  w.Int(e.dv_size_in_bytes);
  w.Key("cardinality");
  w.Int64(e.dv_cardinality);
  w.EndObject();
}

std::string AddLine(const FixtureTableWriter::FileEntry& e, bool data_change) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("add");
  w.StartObject();
  w.Key("path");
  WriteString(w, e.path);
  w.Key("partitionValues");
  WriteOptStringMap(w, e.partition_values);
  w.Key("size");
  w.Int64(e.size);
  w.Key("modificationTime");
  w.Int64(e.modification_time);
  w.Key("dataChange");
  w.Bool(data_change);
  if (e.stats) {
    w.Key("stats");
    WriteString(w, *e.stats);
  }
  if (!e.tags.empty()) {
    w.Key("tags");
    WriteStringMap(w, e.tags);
  }
  if (e.dv_storage_type) {
    w.Key("deletionVector");
    WriteDeletionVector(e, w);
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string RemoveLine(const FixtureTableWriter::FileEntry& e, int64_t deletion_ts) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("remove");
  w.StartObject();
  w.Key("path");
  WriteString(w, e.path);
  w.Key("deletionTimestamp");
  w.Int64(deletion_ts);
  w.Key("dataChange");
  w.Bool(true);
  w.Key("extendedFileMetadata");
  w.Bool(true);
  w.Key("partitionValues");
  WriteOptStringMap(w, e.partition_values);
  w.Key("size");
  w.Int64(e.size);
  if (e.dv_storage_type) {
    w.Key("deletionVector");
    WriteDeletionVector(e, w);
  }
  if (e.base_row_id) {
    w.Key("baseRowId");
    w.Int64(*e.base_row_id);
  }
  if (e.default_row_commit_version) {
    w.Key("defaultRowCommitVersion");
    w.Int64(*e.default_row_commit_version);
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// simdjson accessors returning std::nullopt for absent or mistyped fields.
std::optional<std::string> GetStr(simdjson::dom::object obj, const char* key) {
  std::string_view v;
  if (obj[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return std::string(v);
}
std::optional<int64_t> GetInt(simdjson::dom::object obj, const char* key) {
  int64_t v;
  if (obj[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}
std::optional<bool> GetBool(simdjson::dom::object obj, const char* key) {
  bool v;
  if (obj[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}
std::optional<std::vector<std::string>> GetStrArray(simdjson::dom::object obj, const char* key) {
  simdjson::dom::array arr;
  if (obj[key].get(arr) != simdjson::SUCCESS) return std::nullopt;
  std::vector<std::string> out;
  for (auto el : arr) {
    std::string_view s;
    if (el.get(s) == simdjson::SUCCESS) out.emplace_back(s);
  }
  return out;
}
std::map<std::string, std::optional<std::string>> GetOptStrMap(simdjson::dom::object obj,
                                                               const char* key) {
  std::map<std::string, std::optional<std::string>> out;
  simdjson::dom::object m;
  if (obj[key].get(m) != simdjson::SUCCESS) return out;
  for (auto [k, v] : m) {
    std::string_view s;
    if (v.get(s) == simdjson::SUCCESS) {
      out[std::string(k)] = std::string(s);
    } else {
      out[std::string(k)] = std::nullopt;
    }
  }
  return out;
}
std::map<std::string, std::string> GetStrMap(simdjson::dom::object obj, const char* key) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : GetOptStrMap(obj, key)) {
    if (v) out[k] = *v;
  }
  return out;
}

FixtureTableWriter::FileEntry ParseFileAction(simdjson::dom::object obj) {
  FixtureTableWriter::FileEntry e;
  e.path = GetStr(obj, "path").value_or("");
  e.partition_values = GetOptStrMap(obj, "partitionValues");
  e.size = GetInt(obj, "size").value_or(0);
  e.modification_time = GetInt(obj, "modificationTime").value_or(0);
  e.stats = GetStr(obj, "stats");
  e.tags = GetStrMap(obj, "tags");
  e.base_row_id = GetInt(obj, "baseRowId");
  e.default_row_commit_version = GetInt(obj, "defaultRowCommitVersion");
  e.clustering_provider = GetStr(obj, "clusteringProvider");
  simdjson::dom::object dv;
  if (obj["deletionVector"].get(dv) == simdjson::SUCCESS) {
    e.dv_storage_type = GetStr(dv, "storageType").value_or("");
    e.dv_path_or_inline = GetStr(dv, "pathOrInlineDv").value_or("");
    if (auto off = GetInt(dv, "offset")) e.dv_offset = static_cast<int32_t>(*off);
    e.dv_size_in_bytes = static_cast<int32_t>(GetInt(dv, "sizeInBytes").value_or(0));
    e.dv_cardinality = GetInt(dv, "cardinality").value_or(0);
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// Classic checkpoint writing

std::shared_ptr<arrow::DataType> StringMapType() {
  return arrow::map(arrow::utf8(), arrow::utf8());
}

std::shared_ptr<arrow::DataType> DeletionVectorType() {
  return arrow::struct_(
      {arrow::field("storageType", arrow::utf8()), arrow::field("pathOrInlineDv", arrow::utf8()),
       arrow::field("offset", arrow::int32()), arrow::field("sizeInBytes", arrow::int32()),
       arrow::field("cardinality", arrow::int64())});
}

enum CheckpointColumn : int {
  kTxnCol = 0,
  kAddCol,
  kRemoveCol,
  kMetaDataCol,
  kProtocolCol,
  kDomainCol
};

std::shared_ptr<arrow::Schema> CheckpointSchema(bool with_domains) {
  using arrow::field;
  auto txn = arrow::struct_({field("appId", arrow::utf8()), field("version", arrow::int64()),
                             field("lastUpdated", arrow::int64())});
  auto add = arrow::struct_(
      {field("path", arrow::utf8()), field("partitionValues", StringMapType()),
       field("size", arrow::int64()), field("modificationTime", arrow::int64()),
       field("dataChange", arrow::boolean()), field("stats", arrow::utf8()),
       field("tags", StringMapType()), field("deletionVector", DeletionVectorType()),
       field("baseRowId", arrow::int64()), field("defaultRowCommitVersion", arrow::int64()),
       field("clusteringProvider", arrow::utf8())});
  auto remove = arrow::struct_(
      {field("path", arrow::utf8()), field("deletionTimestamp", arrow::int64()),
       field("dataChange", arrow::boolean()), field("extendedFileMetadata", arrow::boolean()),
       field("partitionValues", StringMapType()), field("size", arrow::int64()),
       field("deletionVector", DeletionVectorType()), field("baseRowId", arrow::int64()),
       field("defaultRowCommitVersion", arrow::int64())});
  auto format =
      arrow::struct_({field("provider", arrow::utf8()), field("options", StringMapType())});
  auto metadata = arrow::struct_(
      {field("id", arrow::utf8()), field("name", arrow::utf8()),
       field("description", arrow::utf8()), field("format", format),
       field("schemaString", arrow::utf8()), field("partitionColumns", arrow::list(arrow::utf8())),
       field("configuration", StringMapType()), field("createdTime", arrow::int64())});
  auto protocol = arrow::struct_({field("minReaderVersion", arrow::int32()),
                                  field("minWriterVersion", arrow::int32()),
                                  field("readerFeatures", arrow::list(arrow::utf8())),
                                  field("writerFeatures", arrow::list(arrow::utf8()))});
  arrow::FieldVector fields = {field("txn", txn), field("add", add), field("remove", remove),
                               field("metaData", metadata), field("protocol", protocol)};
  if (with_domains) {
    fields.push_back(field("domainMetadata", arrow::struct_({field("domain", arrow::utf8()),
                                                             field("configuration", arrow::utf8()),
                                                             field("removed", arrow::boolean())})));
  }
  return arrow::schema(fields);
}

template <typename B>
B* Child(arrow::ArrayBuilder* parent, int i) {
  return static_cast<B*>(static_cast<arrow::StructBuilder*>(parent)->field_builder(i));
}

arrow::Status AppendOptStr(arrow::ArrayBuilder* b, const std::optional<std::string>& v) {
  auto* sb = static_cast<arrow::StringBuilder*>(b);
  return v ? sb->Append(*v) : sb->AppendNull();
}
arrow::Status AppendOptI64(arrow::ArrayBuilder* b, std::optional<int64_t> v) {
  auto* ib = static_cast<arrow::Int64Builder*>(b);
  return v ? ib->Append(*v) : ib->AppendNull();
}
arrow::Status AppendOptI32(arrow::ArrayBuilder* b, std::optional<int32_t> v) {
  auto* ib = static_cast<arrow::Int32Builder*>(b);
  return v ? ib->Append(*v) : ib->AppendNull();
}
arrow::Status AppendOptBool(arrow::ArrayBuilder* b, std::optional<bool> v) {
  auto* bb = static_cast<arrow::BooleanBuilder*>(b);
  return v ? bb->Append(*v) : bb->AppendNull();
}
template <typename Map>
arrow::Status AppendStrMap(arrow::ArrayBuilder* b, const Map* m) {
  auto* mb = static_cast<arrow::MapBuilder*>(b);
  if (m == nullptr) return mb->AppendNull();
  ARROW_RETURN_NOT_OK(mb->Append());
  auto* keys = static_cast<arrow::StringBuilder*>(mb->key_builder());
  auto* items = static_cast<arrow::StringBuilder*>(mb->item_builder());
  for (const auto& [k, v] : *m) {
    ARROW_RETURN_NOT_OK(keys->Append(k));
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::optional<std::string>>) {
      ARROW_RETURN_NOT_OK(v ? items->Append(*v) : items->AppendNull());
    } else {
      ARROW_RETURN_NOT_OK(items->Append(v));
    }
  }
  return arrow::Status::OK();
}
arrow::Status AppendStrList(arrow::ArrayBuilder* b, const std::vector<std::string>* values) {
  auto* lb = static_cast<arrow::ListBuilder*>(b);
  if (values == nullptr) return lb->AppendNull();
  ARROW_RETURN_NOT_OK(lb->Append());
  auto* items = static_cast<arrow::StringBuilder*>(lb->value_builder());
  for (const auto& v : *values) ARROW_RETURN_NOT_OK(items->Append(v));
  return arrow::Status::OK();
}

/// Streams checkpoint rows into a Parquet file in bounded record batches. Consecutive rows of
/// the same action type are grouped so the other columns get their nulls in bulk.
class CheckpointFileWriter {
 public:
  static arrow::Result<std::unique_ptr<CheckpointFileWriter>> Open(const std::string& path,
                                                                   bool with_domains) {
    auto out = std::unique_ptr<CheckpointFileWriter>(new CheckpointFileWriter());
    out->path_ = path;
    out->schema_ = CheckpointSchema(with_domains);
    ARROW_ASSIGN_OR_RAISE(
        out->builder_, arrow::RecordBatchBuilder::Make(out->schema_, arrow::default_memory_pool()));
    ARROW_ASSIGN_OR_RAISE(out->sink_, arrow::io::FileOutputStream::Open(path));
    auto props = parquet::WriterProperties::Builder()
                     .compression(parquet::Compression::SNAPPY)
                     ->max_row_group_length(1 << 20)
                     ->build();
    ARROW_ASSIGN_OR_RAISE(
        out->writer_, parquet::arrow::FileWriter::Open(*out->schema_, arrow::default_memory_pool(),
                                                       out->sink_, props));
    return out;
  }

  arrow::Status AddProtocol(const FixtureTableWriter::State& s) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kProtocolCol));
    ARROW_RETURN_NOT_OK(AppendOptI32(Child<arrow::ArrayBuilder>(b, 0), s.min_reader.value_or(1)));
    ARROW_RETURN_NOT_OK(AppendOptI32(Child<arrow::ArrayBuilder>(b, 1), s.min_writer.value_or(2)));
    ARROW_RETURN_NOT_OK(AppendStrList(Child<arrow::ArrayBuilder>(b, 2),
                                      s.reader_features ? &*s.reader_features : nullptr));
    return AppendStrList(Child<arrow::ArrayBuilder>(b, 3),
                         s.writer_features ? &*s.writer_features : nullptr);
  }

  arrow::Status AddMetadata(const FixtureTableWriter::State& s) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kMetaDataCol));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 0), s.table_id));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 1), s.name));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 2), s.description));
    auto* format = Child<arrow::StructBuilder>(b, 3);
    ARROW_RETURN_NOT_OK(format->Append());
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(format, 0), "parquet"));
    ARROW_RETURN_NOT_OK(AppendStrMap(Child<arrow::ArrayBuilder>(format, 1), &s.format_options));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 4), s.schema_string));
    ARROW_RETURN_NOT_OK(AppendStrList(Child<arrow::ArrayBuilder>(b, 5), &s.partition_columns));
    ARROW_RETURN_NOT_OK(AppendStrMap(Child<arrow::ArrayBuilder>(b, 6), &s.configuration));
    return AppendOptI64(Child<arrow::ArrayBuilder>(b, 7), s.created_time);
  }

  arrow::Status AddTxn(const std::string& app_id, int64_t version,
                       std::optional<int64_t> last_updated) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kTxnCol));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 0), app_id));
    ARROW_RETURN_NOT_OK(AppendOptI64(Child<arrow::ArrayBuilder>(b, 1), version));
    return AppendOptI64(Child<arrow::ArrayBuilder>(b, 2), last_updated);
  }

  arrow::Status AddDomain(const std::string& domain, const std::string& configuration) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kDomainCol));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 0), domain));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 1), configuration));
    return AppendOptBool(Child<arrow::ArrayBuilder>(b, 2), false);
  }

  arrow::Status AddFile(const FixtureTableWriter::FileEntry& e) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kAddCol));
    ++num_adds_;
    ARROW_RETURN_NOT_OK(Child<arrow::StringBuilder>(b, 0)->Append(e.path));
    ARROW_RETURN_NOT_OK(AppendStrMap(Child<arrow::ArrayBuilder>(b, 1), &e.partition_values));
    ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 2)->Append(e.size));
    ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 3)->Append(e.modification_time));
    ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 4)->Append(false));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(b, 5), e.stats));
    ARROW_RETURN_NOT_OK(
        AppendStrMap(Child<arrow::ArrayBuilder>(b, 6), e.tags.empty() ? nullptr : &e.tags));
    ARROW_RETURN_NOT_OK(AppendDv(Child<arrow::StructBuilder>(b, 7), e));
    ARROW_RETURN_NOT_OK(AppendOptI64(Child<arrow::ArrayBuilder>(b, 8), e.base_row_id));
    ARROW_RETURN_NOT_OK(
        AppendOptI64(Child<arrow::ArrayBuilder>(b, 9), e.default_row_commit_version));
    return AppendOptStr(Child<arrow::ArrayBuilder>(b, 10), e.clustering_provider);
  }

  arrow::Status AddTombstone(const FixtureTableWriter::FileEntry& e, bool extended) {
    ARROW_ASSIGN_OR_RAISE(auto* b, Begin(kRemoveCol));
    ARROW_RETURN_NOT_OK(Child<arrow::StringBuilder>(b, 0)->Append(e.path));
    ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 1)->Append(e.deletion_timestamp.value_or(0)));
    ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 2)->Append(false));
    ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 3)->Append(extended));
    ARROW_RETURN_NOT_OK(
        AppendStrMap(Child<arrow::ArrayBuilder>(b, 4), extended ? &e.partition_values : nullptr));
    ARROW_RETURN_NOT_OK(AppendOptI64(Child<arrow::ArrayBuilder>(b, 5),
                                     extended ? std::optional<int64_t>(e.size) : std::nullopt));
    ARROW_RETURN_NOT_OK(AppendDv(Child<arrow::StructBuilder>(b, 6), e));
    ARROW_RETURN_NOT_OK(AppendOptI64(Child<arrow::ArrayBuilder>(b, 7), e.base_row_id));
    return AppendOptI64(Child<arrow::ArrayBuilder>(b, 8), e.default_row_commit_version);
  }

  /// Writes `values` (a prebuilt array of `column`'s struct type) as rows of their own, with
  /// every other column null.
  arrow::Status WriteColumnSlice(int column, const std::shared_ptr<arrow::Array>& values) {
    ARROW_RETURN_NOT_OK(Flush());
    const int64_t n = values->length();
    if (n == 0) return arrow::Status::OK();
    arrow::ArrayVector columns;
    for (int i = 0; i < schema_->num_fields(); ++i) {
      if (i == column) {
        columns.push_back(values);
        continue;
      }
      auto& nulls = null_columns_[schema_->field(i)->name()];
      if (!nulls || nulls->length() < n) {
        ARROW_ASSIGN_OR_RAISE(nulls, arrow::MakeArrayOfNull(schema_->field(i)->type(),
                                                            std::max(n, kCheckpointBatchRows)));
      }
      columns.push_back(nulls->Slice(0, n));
    }
    num_rows_ += n;
    if (column == kAddCol) num_adds_ += n;
    return writer_->WriteRecordBatch(*arrow::RecordBatch::Make(schema_, n, std::move(columns)));
  }

  /// Flushes, writes the footer and returns the file size in bytes.
  arrow::Result<int64_t> Close() {
    ARROW_RETURN_NOT_OK(Flush());
    ARROW_RETURN_NOT_OK(writer_->Close());
    ARROW_RETURN_NOT_OK(sink_->Close());
    std::error_code ec;
    auto size = fs::file_size(path_, ec);
    if (ec) return arrow::Status::IOError("cannot stat ", path_, ": ", ec.message());
    return static_cast<int64_t>(size);
  }

  int64_t num_rows() const { return num_rows_; }
  int64_t num_adds() const { return num_adds_; }

 private:
  CheckpointFileWriter() = default;

  arrow::Status AppendDv(arrow::StructBuilder* dv, const FixtureTableWriter::FileEntry& e) {
    if (!e.dv_storage_type) return dv->AppendNull();
    ARROW_RETURN_NOT_OK(dv->Append());
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(dv, 0), e.dv_storage_type));
    ARROW_RETURN_NOT_OK(AppendOptStr(Child<arrow::ArrayBuilder>(dv, 1), e.dv_path_or_inline));
    ARROW_RETURN_NOT_OK(AppendOptI32(Child<arrow::ArrayBuilder>(dv, 2), e.dv_offset));
    ARROW_RETURN_NOT_OK(AppendOptI32(Child<arrow::ArrayBuilder>(dv, 3), e.dv_size_in_bytes));
    return AppendOptI64(Child<arrow::ArrayBuilder>(dv, 4), e.dv_cardinality);
  }

  /// Starts one row of `column`; returns its (already appended, valid) struct builder.
  arrow::Result<arrow::StructBuilder*> Begin(int column) {
    if (column >= schema_->num_fields()) {
      return arrow::Status::Invalid("checkpoint schema has no column ", column);
    }
    if (pending_rows_ > 0 && (pending_column_ != column || pending_rows_ >= kCheckpointBatchRows)) {
      ARROW_RETURN_NOT_OK(Flush());
    }
    pending_column_ = column;
    ++pending_rows_;
    ++num_rows_;
    auto* b = builder_->GetFieldAs<arrow::StructBuilder>(column);
    ARROW_RETURN_NOT_OK(b->Append());
    return b;
  }

  arrow::Status Flush() {
    if (pending_rows_ == 0) return arrow::Status::OK();
    for (int i = 0; i < schema_->num_fields(); ++i) {
      if (i == pending_column_) continue;
      ARROW_RETURN_NOT_OK(builder_->GetField(i)->AppendNulls(pending_rows_));
    }
    ARROW_ASSIGN_OR_RAISE(auto batch, builder_->Flush());
    pending_rows_ = 0;
    return writer_->WriteRecordBatch(*batch);
  }

  std::string path_;
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<arrow::RecordBatchBuilder> builder_;
  std::shared_ptr<arrow::io::FileOutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  int pending_column_ = -1;
  int64_t pending_rows_ = 0;
  int64_t num_rows_ = 0;
  int64_t num_adds_ = 0;
  std::map<std::string, std::shared_ptr<arrow::Array>> null_columns_;
};

std::string LastCheckpointJson(int64_t version, int64_t rows, int64_t bytes, int64_t adds) {
  return fmt::format(R"({{"version":{},"size":{},"sizeInBytes":{},"numOfAddFiles":{}}})", version,
                     rows, bytes, adds);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FixtureTableWriter

std::string FixtureTableWriter::FileEntry::Key() const {
  std::string key = path;
  key += '\x1f';
  if (dv_storage_type) {
    key += *dv_storage_type + dv_path_or_inline;
    if (dv_offset) key += "@" + std::to_string(*dv_offset);
  }
  return key;
}

FixtureTableWriter::FixtureTableWriter(std::string table_root)
    : table_root_(std::move(table_root)) {}

std::string FixtureTableWriter::LogDir() const { return table_root_ + "/_delta_log"; }

arrow::Status FixtureTableWriter::Create(const std::shared_ptr<arrow::Schema>& schema,
                                         std::vector<std::string> partition_columns,
                                         std::map<std::string, std::string> configuration,
                                         int min_reader, int min_writer,
                                         std::vector<std::string> reader_features,
                                         std::vector<std::string> writer_features,
                                         std::optional<int64_t> commit_timestamp_ms) {
  if (!schema) return arrow::Status::Invalid("Create: null schema");
  for (const auto& col : partition_columns) {
    if (schema->GetFieldIndex(col) < 0) {
      return arrow::Status::Invalid("partition column '", col, "' is not in the schema ",
                                    schema->ToString());
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto schema_string, SchemaToDeltaJsonString(*schema));
  return CreateImpl(schema_string, std::move(partition_columns), std::move(configuration),
                    min_reader, min_writer, std::move(reader_features), std::move(writer_features),
                    commit_timestamp_ms);
}

arrow::Status FixtureTableWriter::CreateWithSchemaString(
    const std::string& schema_string, std::vector<std::string> partition_columns,
    std::map<std::string, std::string> configuration, int min_reader, int min_writer,
    std::vector<std::string> reader_features, std::vector<std::string> writer_features,
    std::optional<int64_t> commit_timestamp_ms) {
  return CreateImpl(schema_string, std::move(partition_columns), std::move(configuration),
                    min_reader, min_writer, std::move(reader_features), std::move(writer_features),
                    commit_timestamp_ms);
}

arrow::Status FixtureTableWriter::CreateImpl(const std::string& schema_string,
                                             std::vector<std::string> partition_columns,
                                             std::map<std::string, std::string> configuration,
                                             int min_reader, int min_writer,
                                             std::vector<std::string> reader_features,
                                             std::vector<std::string> writer_features,
                                             std::optional<int64_t> commit_timestamp_ms) {
  if (version_ >= 0) return arrow::Status::AlreadyExists("table ", table_root_, " already created");
  if ((!reader_features.empty() && min_reader != 3) ||
      (!writer_features.empty() && min_writer != 7)) {
    return arrow::Status::Invalid("features need reader version 3 / writer version 7");
  }
  int64_t ts = commit_timestamp_ms.value_or(NowMs());
  // Needed before ResolveIct, which looks at the configuration.
  state_.configuration = configuration;

  rapidjson::StringBuffer pbuf;
  {
    JsonWriter w(pbuf);
    w.StartObject();
    w.Key("protocol");
    w.StartObject();
    w.Key("minReaderVersion");
    w.Int(min_reader);
    w.Key("minWriterVersion");
    w.Int(min_writer);
    if (min_reader == 3) {
      w.Key("readerFeatures");
      WriteStringArray(w, reader_features);
    }
    if (min_writer == 7) {
      w.Key("writerFeatures");
      WriteStringArray(w, writer_features);
    }
    w.EndObject();
    w.EndObject();
  }
  rapidjson::StringBuffer mbuf;
  {
    JsonWriter w(mbuf);
    w.StartObject();
    w.Key("metaData");
    w.StartObject();
    w.Key("id");
    WriteString(w, RandomUuid());
    w.Key("format");
    w.StartObject();
    w.Key("provider");
    w.String("parquet");
    w.Key("options");
    w.StartObject();
    w.EndObject();
    w.EndObject();
    w.Key("schemaString");
    WriteString(w, schema_string);
    w.Key("partitionColumns");
    WriteStringArray(w, partition_columns);
    w.Key("configuration");
    WriteStringMap(w, configuration);
    w.Key("createdTime");
    w.Int64(ts);
    w.EndObject();
    w.EndObject();
  }
  std::string params = fmt::format(
      R"({{"isManaged":"false","description":null,"partitionBy":{},"properties":{}}})",
      JsonQuote(StringArrayJson(partition_columns)), JsonQuote(StringMapJson(configuration)));
  std::string body = CommitInfoLine("CREATE TABLE", params, ts, ResolveIct({}, ts), true);
  body += '\n';
  body.append(pbuf.GetString(), pbuf.GetSize());
  body += '\n';
  body.append(mbuf.GetString(), mbuf.GetSize());
  body += '\n';
  return WriteCommit(body).status();
}

std::optional<int64_t> FixtureTableWriter::ResolveIct(std::optional<int64_t> explicit_ict,
                                                      int64_t ts) {
  std::optional<int64_t> ict = explicit_ict;
  if (!ict) {
    auto it = state_.configuration.find("delta.enableInCommitTimestamps");
    if (it == state_.configuration.end() || it->second != "true") return std::nullopt;
    ict = last_ict_ ? std::max(ts, *last_ict_ + 1) : ts;
  }
  last_ict_ = ict;
  return ict;
}

std::string FixtureTableWriter::CommitInfoLine(const std::string& operation,
                                               const std::string& params_json, int64_t ts,
                                               std::optional<int64_t> ict,
                                               bool blind_append) const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("commitInfo");
  w.StartObject();
  w.Key("timestamp");
  w.Int64(ts);
  if (ict) {
    w.Key("inCommitTimestamp");
    w.Int64(*ict);
  }
  w.Key("operation");
  WriteString(w, operation);
  w.Key("operationParameters");
  w.RawValue(params_json.data(), params_json.size(), rapidjson::kObjectType);
  if (version_ >= 0) {
    w.Key("readVersion");
    w.Int64(version_);
  }
  w.Key("isolationLevel");
  w.String("Serializable");
  w.Key("isBlindAppend");
  w.Bool(blind_append);
  w.Key("engineInfo");
  w.String(kEngineInfo);
  w.Key("txnId");
  WriteString(w, RandomUuid());
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

arrow::Result<FixtureTableWriter::FileEntry> FixtureTableWriter::WriteDataFile(
    const FixtureFile& file, int64_t commit_ts) {
  if (!file.data) return arrow::Status::Invalid("FixtureFile without data");
  const auto& part_cols = state_.partition_columns;
  for (const auto& col : part_cols) {
    if (!file.partition_values.count(col)) {
      return arrow::Status::Invalid("file lacks a value for partition column '", col, "'");
    }
    if (file.data->schema()->GetFieldIndex(col) >= 0) {
      return arrow::Status::Invalid("partition column '", col, "' must not be in the file data");
    }
  }
  for (const auto& [col, value] : file.partition_values) {
    if (std::find(part_cols.begin(), part_cols.end(), col) == part_cols.end()) {
      return arrow::Status::Invalid("'", col, "' is not a partition column");
    }
  }
  if (file.max_row_group_rows < 1) return arrow::Status::Invalid("max_row_group_rows < 1");

  std::string rel_dir;
  for (const auto& col : part_cols) {
    const auto& v = file.partition_values.at(col);
    rel_dir += PercentEncode(col, NeedsHiveEscape) + "=" +
               (v && !v->empty() ? PercentEncode(*v, NeedsHiveEscape)
                                 : std::string("__HIVE_DEFAULT_PARTITION__")) +
               "/";
  }
  std::string rel_file =
      rel_dir + fmt::format("part-{:05d}-{}.c000.snappy.parquet", file_counter_++, RandomUuid());
  std::string abs_path = table_root_ + "/" + rel_file;
  ARROW_RETURN_NOT_OK(EnsureDir(table_root_ + "/" + rel_dir));

  {
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(abs_path));
    auto props = parquet::WriterProperties::Builder()
                     .compression(parquet::Compression::SNAPPY)
                     ->max_row_group_length(file.max_row_group_rows)
                     ->build();
    auto arrow_props = parquet::ArrowWriterProperties::Builder()
                           .coerce_timestamps(arrow::TimeUnit::MICRO)
                           ->allow_truncated_timestamps()
                           ->build();
    ARROW_RETURN_NOT_OK(parquet::arrow::WriteTable(*file.data, arrow::default_memory_pool(), sink,
                                                   file.max_row_group_rows, props, arrow_props));
    ARROW_RETURN_NOT_OK(sink->Close());
  }

  FileEntry e;
  e.path = PercentEncode(rel_file, NeedsUriEscape);
  e.partition_values = file.partition_values;
  std::error_code ec;
  e.size = static_cast<int64_t>(fs::file_size(abs_path, ec));
  if (ec) return arrow::Status::IOError("cannot stat ", abs_path, ": ", ec.message());
  e.modification_time = commit_ts;
  e.tags = file.tags;

  if (!file.deleted_rows.empty()) {
    const auto& rf = state_.reader_features;
    const auto& wf = state_.writer_features;
    bool supported = state_.min_reader == 3 && state_.min_writer == 7 && rf &&
                     std::find(rf->begin(), rf->end(), "deletionVectors") != rf->end() && wf &&
                     std::find(wf->begin(), wf->end(), "deletionVectors") != wf->end();
    if (!supported) {
      return arrow::Status::Invalid(
          "deletion vectors need protocol (3,7) with the deletionVectors feature in both lists");
    }
    std::vector<uint64_t> rows = file.deleted_rows;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    if (rows.back() >= static_cast<uint64_t>(file.data->num_rows())) {
      return arrow::Status::Invalid("deleted row ", rows.back(), " beyond the file's ",
                                    file.data->num_rows(), " rows");
    }
    ARROW_ASSIGN_OR_RAISE(auto bitmap, internal::SerializeRoaringBitmapArray(rows));
    ARROW_ASSIGN_OR_RAISE(auto z85, internal::EncodeInlineDeletionVector(rows));
    e.dv_storage_type = "i";
    e.dv_path_or_inline = std::move(z85);
    e.dv_size_in_bytes = static_cast<int32_t>(bitmap.size());
    e.dv_cardinality = static_cast<int64_t>(rows.size());
  }
  if (file.with_stats) {
    ARROW_ASSIGN_OR_RAISE(auto stats, ComputeStatsJson(*file.data, file.deleted_rows.empty()));
    e.stats = std::move(stats);
  }
  return e;
}

arrow::Result<int64_t> FixtureTableWriter::WriteCommit(const std::string& body) {
  ARROW_RETURN_NOT_OK(EnsureDir(LogDir()));
  int64_t next = version_ + 1;
  ARROW_RETURN_NOT_OK(WriteNewFile(LogDir() + "/" + VersionPrefix(next) + ".json", body));
  version_ = next;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    if (end > start) ApplyActionLine(body.substr(start, end - start));
    start = end + 1;
  }
  return next;
}

void FixtureTableWriter::ApplyActionLine(const std::string& line) {
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (parser.parse(line).get(root) != simdjson::SUCCESS) return;
  simdjson::dom::object obj;
  if (root["add"].get(obj) == simdjson::SUCCESS) {
    FileEntry e = ParseFileAction(obj);
    std::string key = e.Key();
    state_.tombstones.erase(key);
    state_.live[key] = std::move(e);
  } else if (root["remove"].get(obj) == simdjson::SUCCESS) {
    FileEntry e = ParseFileAction(obj);
    e.deletion_timestamp = GetInt(obj, "deletionTimestamp").value_or(0);
    // Without extendedFileMetadata the partition values and size are unknown; keep none.
    if (!GetBool(obj, "extendedFileMetadata").value_or(false)) {
      e.partition_values.clear();
      e.size = -1;
    }
    std::string key = e.Key();
    state_.live.erase(key);
    state_.tombstones[key] = std::move(e);
  } else if (root["metaData"].get(obj) == simdjson::SUCCESS) {
    state_.has_metadata = true;
    state_.table_id = GetStr(obj, "id").value_or("");
    state_.name = GetStr(obj, "name");
    state_.description = GetStr(obj, "description");
    simdjson::dom::object format;
    state_.format_options.clear();
    if (obj["format"].get(format) == simdjson::SUCCESS) {
      state_.format_options = GetStrMap(format, "options");
    }
    state_.schema_string = GetStr(obj, "schemaString").value_or("");
    state_.partition_columns =
        GetStrArray(obj, "partitionColumns").value_or(std::vector<std::string>{});
    state_.configuration = GetStrMap(obj, "configuration");
    state_.created_time = GetInt(obj, "createdTime");
  } else if (root["protocol"].get(obj) == simdjson::SUCCESS) {
    state_.min_reader = static_cast<int>(GetInt(obj, "minReaderVersion").value_or(1));
    state_.min_writer = static_cast<int>(GetInt(obj, "minWriterVersion").value_or(2));
    state_.reader_features = GetStrArray(obj, "readerFeatures");
    state_.writer_features = GetStrArray(obj, "writerFeatures");
  } else if (root["txn"].get(obj) == simdjson::SUCCESS) {
    if (auto app = GetStr(obj, "appId")) {
      state_.txns[*app] =
          State::TxnEntry{GetInt(obj, "version").value_or(0), GetInt(obj, "lastUpdated")};
    }
  } else if (root["domainMetadata"].get(obj) == simdjson::SUCCESS) {
    if (auto domain = GetStr(obj, "domain")) {
      if (GetBool(obj, "removed").value_or(false)) {
        state_.domains.erase(*domain);
      } else {
        state_.domains[*domain] = GetStr(obj, "configuration").value_or("");
      }
    }
  }
}

arrow::Result<int64_t> FixtureTableWriter::Append(const std::vector<FixtureFile>& files,
                                                  std::string operation,
                                                  std::optional<int64_t> commit_timestamp_ms,
                                                  std::optional<int64_t> in_commit_timestamp_ms) {
  if (version_ < 0 || !state_.has_metadata) {
    return arrow::Status::Invalid("Append on ", table_root_, " before Create");
  }
  int64_t ts = commit_timestamp_ms.value_or(NowMs());
  std::vector<FileEntry> entries;
  for (const auto& f : files) {
    ARROW_ASSIGN_OR_RAISE(auto e, WriteDataFile(f, ts));
    entries.push_back(std::move(e));
  }
  std::string params = operation == "WRITE"
                           ? fmt::format(R"({{"mode":"Append","partitionBy":{}}})",
                                         JsonQuote(StringArrayJson(state_.partition_columns)))
                           : std::string("{}");
  std::string body = CommitInfoLine(operation, params, ts, ResolveIct(in_commit_timestamp_ms, ts),
                                    operation == "WRITE");
  body += '\n';
  for (size_t i = 0; i < entries.size(); ++i) {
    body += AddLine(entries[i], files[i].data_change);
    body += '\n';
  }
  return WriteCommit(body);
}

arrow::Result<int64_t> FixtureTableWriter::Remove(const std::vector<std::string>& paths,
                                                  const std::vector<FixtureFile>& add_files,
                                                  std::string operation,
                                                  std::optional<int64_t> commit_timestamp_ms) {
  if (version_ < 0 || !state_.has_metadata) {
    return arrow::Status::Invalid("Remove on ", table_root_, " before Create");
  }
  int64_t ts = commit_timestamp_ms.value_or(NowMs());
  std::vector<const FileEntry*> removed;
  for (const auto& path : paths) {
    bool found = false;
    for (const auto& [key, e] : state_.live) {
      if (e.path == path) {
        removed.push_back(&e);
        found = true;
      }
    }
    if (!found) return arrow::Status::KeyError("no live file '", path, "' in ", table_root_);
  }
  std::vector<FileEntry> added;
  for (const auto& f : add_files) {
    ARROW_ASSIGN_OR_RAISE(auto e, WriteDataFile(f, ts));
    added.push_back(std::move(e));
  }
  std::string params = operation == "DELETE" ? R"({"predicate":"[]"})" : "{}";
  std::string body = CommitInfoLine(operation, params, ts, ResolveIct({}, ts), false);
  body += '\n';
  for (const FileEntry* e : removed) {
    body += RemoveLine(*e, ts);
    body += '\n';
  }
  for (size_t i = 0; i < added.size(); ++i) {
    body += AddLine(added[i], add_files[i].data_change);
    body += '\n';
  }
  return WriteCommit(body);
}

arrow::Result<int64_t> FixtureTableWriter::CommitRaw(const std::vector<std::string>& json_lines) {
  std::string body;
  for (const auto& line : json_lines) {
    body += line;
    body += '\n';
  }
  return WriteCommit(body);
}

arrow::Status FixtureTableWriter::WriteCheckpoint() {
  if (version_ < 0 || !state_.has_metadata || !state_.min_reader) {
    return arrow::Status::Invalid("checkpoint of ", table_root_, " needs protocol and metaData");
  }
  std::string path = LogDir() + "/" + VersionPrefix(version_) + ".checkpoint.parquet";
  ARROW_ASSIGN_OR_RAISE(auto writer, CheckpointFileWriter::Open(path, !state_.domains.empty()));
  ARROW_RETURN_NOT_OK(writer->AddProtocol(state_));
  ARROW_RETURN_NOT_OK(writer->AddMetadata(state_));
  for (const auto& [app, txn] : state_.txns) {
    ARROW_RETURN_NOT_OK(writer->AddTxn(app, txn.version, txn.last_updated));
  }
  for (const auto& [domain, config] : state_.domains) {
    ARROW_RETURN_NOT_OK(writer->AddDomain(domain, config));
  }
  for (const auto& [key, e] : state_.live) ARROW_RETURN_NOT_OK(writer->AddFile(e));
  for (const auto& [key, e] : state_.tombstones) {
    ARROW_RETURN_NOT_OK(writer->AddTombstone(e, e.size >= 0));
  }
  ARROW_ASSIGN_OR_RAISE(int64_t bytes, writer->Close());
  return ReplaceFile(LogDir() + "/_last_checkpoint",
                     LastCheckpointJson(version_, writer->num_rows(), bytes, writer->num_adds()));
}

arrow::Status FixtureTableWriter::SetCommitFileTime(int64_t version, int64_t epoch_ms) {
  return SetFileTimeMs(LogDir() + "/" + VersionPrefix(version) + ".json", epoch_ms);
}

std::vector<std::string> FixtureTableWriter::active_paths() const {
  std::vector<std::string> out;
  for (const auto& [key, e] : state_.live) out.push_back(e.path);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Log-only generator

namespace {

constexpr int kGeneratedPartitions = 8;
constexpr const char* kGeneratedAppId = "deltacpp-generator";

/// Deterministic attributes of the generated file with index `i`.
struct GeneratedFile {
  static void Path(fmt::memory_buffer& out, int64_t i) {
    fmt::format_to(std::back_inserter(out),
                   "part={}/part-00000-{:08x}-0000-4000-8000-{:012x}.c000.snappy.parquet",
                   i % kGeneratedPartitions, static_cast<uint64_t>(i) >> 32,
                   static_cast<uint64_t>(i) & 0xFFFFFFFFFFFFULL);
  }
  static int64_t Size(int64_t i) { return 10000 + (i * 7919) % 90000; }
  static int64_t Rows(int64_t i) { return 1000 + i % 100; }
  /// The stats JSON text (not escaped).
  static void Stats(fmt::memory_buffer& out, int64_t i) {
    int64_t n = Rows(i);
    fmt::format_to(std::back_inserter(out),
                   R"({{"numRecords":{},"minValues":{{"id":{},"value":{},"name":"name-{:08d}"}},)"
                   R"("maxValues":{{"id":{},"value":{},"name":"name-{:08d}-z"}},)"
                   R"("nullCount":{{"id":0,"value":0,"name":{}}}}})",
                   n, i * 10000, (i % 1000) * 0.5, i, i * 10000 + n - 1, (i % 1000) * 0.5 + 100.25,
                   i, i % 7);
  }
};

/// Checkpoint add/remove rows of generated files, built once per chunk of file indexes and
/// sliced into every checkpoint that needs them (a file's rows never change once written).
class GeneratedRowCache {
 public:
  GeneratedRowCache(const std::vector<int64_t>& add_ts, const std::vector<int64_t>& remove_ts)
      : add_ts_(add_ts), remove_ts_(remove_ts) {
    auto schema = CheckpointSchema(false);
    add_type_ = schema->field(kAddCol)->type();
    remove_type_ = schema->field(kRemoveCol)->type();
  }

  /// Writes the add rows of files [lo, hi) (`adds`) or the tombstones of files [lo, hi).
  arrow::Status Write(CheckpointFileWriter& writer, bool adds, int64_t lo, int64_t hi) {
    auto& chunks = adds ? add_chunks_ : remove_chunks_;
    for (int64_t c = lo / kChunk; c * kChunk < hi; ++c) {
      if (static_cast<size_t>(c) >= chunks.size()) chunks.resize(static_cast<size_t>(c) + 1);
      auto& chunk = chunks[static_cast<size_t>(c)];
      if (!chunk) {
        ARROW_ASSIGN_OR_RAISE(chunk, Build(adds, c));
      }
      const int64_t start = std::max(lo, c * kChunk);
      const int64_t end = std::min(hi, (c + 1) * kChunk);
      ARROW_RETURN_NOT_OK(writer.WriteColumnSlice(adds ? kAddCol : kRemoveCol,
                                                  chunk->Slice(start - c * kChunk, end - start)));
    }
    return arrow::Status::OK();
  }

 private:
  static constexpr int64_t kChunk = kCheckpointBatchRows;

  arrow::Result<std::shared_ptr<arrow::Array>> Build(bool adds, int64_t c) {
    const int64_t limit = static_cast<int64_t>(adds ? add_ts_.size() : remove_ts_.size());
    const int64_t first = c * kChunk;
    const int64_t last = std::min(limit, first + kChunk);
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(),
                                           adds ? add_type_ : remove_type_, &builder));
    auto* b = static_cast<arrow::StructBuilder*>(builder.get());
    ARROW_RETURN_NOT_OK(b->Reserve(last - first));
    fmt::memory_buffer path, stats;
    for (int64_t i = first; i < last; ++i) {
      path.clear();
      GeneratedFile::Path(path, i);
      const std::string part = std::to_string(i % kGeneratedPartitions);
      ARROW_RETURN_NOT_OK(b->Append());
      ARROW_RETURN_NOT_OK(
          Child<arrow::StringBuilder>(b, 0)->Append(std::string_view(path.data(), path.size())));
      auto* pv = Child<arrow::MapBuilder>(b, adds ? 1 : 4);
      ARROW_RETURN_NOT_OK(pv->Append());
      ARROW_RETURN_NOT_OK(static_cast<arrow::StringBuilder*>(pv->key_builder())->Append("part"));
      ARROW_RETURN_NOT_OK(static_cast<arrow::StringBuilder*>(pv->item_builder())->Append(part));
      if (adds) {
        stats.clear();
        GeneratedFile::Stats(stats, i);
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 2)->Append(GeneratedFile::Size(i)));
        ARROW_RETURN_NOT_OK(
            Child<arrow::Int64Builder>(b, 3)->Append(add_ts_[static_cast<size_t>(i)]));
        ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 4)->Append(false));
        ARROW_RETURN_NOT_OK(Child<arrow::StringBuilder>(b, 5)->Append(
            std::string_view(stats.data(), stats.size())));
        ARROW_RETURN_NOT_OK(Child<arrow::MapBuilder>(b, 6)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::StructBuilder>(b, 7)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 8)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 9)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::StringBuilder>(b, 10)->AppendNull());
      } else {
        ARROW_RETURN_NOT_OK(
            Child<arrow::Int64Builder>(b, 1)->Append(remove_ts_[static_cast<size_t>(i)]));
        ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 2)->Append(false));
        ARROW_RETURN_NOT_OK(Child<arrow::BooleanBuilder>(b, 3)->Append(true));
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 5)->Append(GeneratedFile::Size(i)));
        ARROW_RETURN_NOT_OK(Child<arrow::StructBuilder>(b, 6)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 7)->AppendNull());
        ARROW_RETURN_NOT_OK(Child<arrow::Int64Builder>(b, 8)->AppendNull());
      }
    }
    return builder->Finish();
  }

  const std::vector<int64_t>& add_ts_;
  const std::vector<int64_t>& remove_ts_;
  std::shared_ptr<arrow::DataType> add_type_;
  std::shared_ptr<arrow::DataType> remove_type_;
  std::vector<std::shared_ptr<arrow::Array>> add_chunks_;
  std::vector<std::shared_ptr<arrow::Array>> remove_chunks_;
};

}  // namespace

arrow::Status GenerateLogOnlyTable(const std::string& table_root, int64_t num_commits,
                                   int64_t total_active_files, int64_t checkpoint_interval) {
  if (num_commits < 1) return arrow::Status::Invalid("num_commits must be >= 1");
  if (total_active_files < 0) return arrow::Status::Invalid("total_active_files must be >= 0");
  const std::string log_dir = table_root + "/_delta_log";
  ARROW_RETURN_NOT_OK(EnsureDir(log_dir));
  if (fs::exists(log_dir + "/" + VersionPrefix(0) + ".json")) {
    return arrow::Status::AlreadyExists("table exists at ", table_root);
  }

  // Plan first: file i is added at version add_version(i) and, for the oldest files, removed
  // later (oldest first), so the live files after any version are one contiguous index range.
  // Versions holding adds are 1..N-1, or version 0 alone for a one-commit table.
  const int64_t first_data = num_commits == 1 ? 0 : 1;
  const int64_t data_commits = num_commits - first_data;
  const int64_t total_removes = data_commits >= 2 ? total_active_files / 10 : 0;
  const int64_t total_adds = total_active_files + total_removes;
  const int64_t base_ts = NowMs() - (num_commits + 3600) * 1000;
  auto commit_ts = [&](int64_t v) { return base_ts + v * 1000; };
  std::vector<int64_t> added_after(static_cast<size_t>(num_commits));    // files [0, x) added
  std::vector<int64_t> removed_after(static_cast<size_t>(num_commits));  // files [0, x) removed
  std::vector<int64_t> add_ts(static_cast<size_t>(total_adds));
  std::vector<int64_t> remove_ts(static_cast<size_t>(total_removes));
  {
    int64_t added = 0, removed = 0;
    for (int64_t v = 0; v < num_commits; ++v) {
      const int64_t j = v - first_data;  // index among the data commits
      int64_t n_add = 0, n_remove = 0;
      if (j >= 0) {
        n_add = total_adds / data_commits + (j < total_adds % data_commits ? 1 : 0);
        if (j > 0 && total_removes > 0) {
          const int64_t n = data_commits - 1;
          n_remove = total_removes / n + (j - 1 < total_removes % n ? 1 : 0);
        }
      }
      if (removed + n_remove > added) {
        return arrow::Status::Invalid("generator removes outran adds at version ", v);
      }
      for (int64_t k = 0; k < n_remove; ++k)
        remove_ts[static_cast<size_t>(removed++)] = commit_ts(v);
      for (int64_t k = 0; k < n_add; ++k) add_ts[static_cast<size_t>(added++)] = commit_ts(v);
      added_after[static_cast<size_t>(v)] = added;
      removed_after[static_cast<size_t>(v)] = removed;
    }
    if (added - removed != total_active_files) {
      return arrow::Status::Invalid("generator plan ends with ", added - removed,
                                    " live files, not ", total_active_files);
    }
  }

  const std::string schema_string =
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
      R"({"name":"value","type":"double","nullable":true,"metadata":{}},)"
      R"({"name":"name","type":"string","nullable":true,"metadata":{}},)"
      R"({"name":"part","type":"integer","nullable":true,"metadata":{}}]})";
  FixtureTableWriter::State state;
  state.min_reader = 1;
  state.min_writer = 2;
  state.has_metadata = true;
  state.table_id = RandomUuid();
  state.schema_string = schema_string;
  state.partition_columns = {"part"};
  if (checkpoint_interval > 0) {
    state.configuration["delta.checkpointInterval"] = std::to_string(checkpoint_interval);
  }
  state.created_time = commit_ts(0);

  GeneratedRowCache rows(add_ts, remove_ts);
  fmt::memory_buffer buf;
  fmt::memory_buffer stats;
  auto out = std::back_inserter(buf);
  int64_t last_checkpoint = -1;
  int64_t last_rows = 0, last_bytes = 0, last_adds = 0;

  for (int64_t v = 0; v < num_commits; ++v) {
    buf.clear();
    const int64_t ts = commit_ts(v);
    const int64_t add_lo = v == 0 ? 0 : added_after[static_cast<size_t>(v - 1)];
    const int64_t add_hi = added_after[static_cast<size_t>(v)];
    const int64_t rm_lo = v == 0 ? 0 : removed_after[static_cast<size_t>(v - 1)];
    const int64_t rm_hi = removed_after[static_cast<size_t>(v)];
    const char* op = v == 0 ? "CREATE TABLE" : rm_hi > rm_lo ? "MERGE" : "WRITE";
    fmt::format_to(
        out, R"({{"commitInfo":{{"timestamp":{},"operation":"{}","operationParameters":{{}},)", ts,
        op);
    if (v > 0) fmt::format_to(out, R"("readVersion":{},)", v - 1);
    fmt::format_to(out,
                   R"("isolationLevel":"Serializable","isBlindAppend":{},"engineInfo":"{}"}}}})"
                   "\n",
                   rm_hi == rm_lo ? "true" : "false", kEngineInfo);
    if (v == 0) {
      fmt::format_to(out, R"({{"protocol":{{"minReaderVersion":1,"minWriterVersion":2}}}})"
                          "\n");
      fmt::format_to(out,
                     R"({{"metaData":{{"id":"{}","format":{{"provider":"parquet","options":{{}}}},)"
                     R"("schemaString":{},"partitionColumns":["part"],"configuration":{},)"
                     R"("createdTime":{}}}}})"
                     "\n",
                     state.table_id, JsonQuote(schema_string), StringMapJson(state.configuration),
                     ts);
    } else {
      fmt::format_to(out,
                     R"({{"txn":{{"appId":"{}","version":{},"lastUpdated":{}}}}})"
                     "\n",
                     kGeneratedAppId, v, ts);
    }
    for (int64_t i = rm_lo; i < rm_hi; ++i) {
      buf.append(std::string_view(R"({"remove":{"path":")"));
      GeneratedFile::Path(buf, i);
      fmt::format_to(out,
                     R"(","deletionTimestamp":{},"dataChange":true,"extendedFileMetadata":true,)"
                     R"("partitionValues":{{"part":"{}"}},"size":{}}}}})"
                     "\n",
                     ts, i % kGeneratedPartitions, GeneratedFile::Size(i));
    }
    for (int64_t i = add_lo; i < add_hi; ++i) {
      buf.append(std::string_view(R"({"add":{"path":")"));
      GeneratedFile::Path(buf, i);
      fmt::format_to(out,
                     R"(","partitionValues":{{"part":"{}"}},"size":{},"modificationTime":{},)"
                     R"("dataChange":true,"stats":")",
                     i % kGeneratedPartitions, GeneratedFile::Size(i), ts);
      stats.clear();
      GeneratedFile::Stats(stats, i);
      for (char c : stats) {  // the stats text only needs its quotes escaped
        if (c == '"') buf.push_back('\\');
        buf.push_back(c);
      }
      buf.append(std::string_view("\"}}\n"));
    }
    const std::string commit_path = log_dir + "/" + VersionPrefix(v) + ".json";
    ARROW_RETURN_NOT_OK(WriteNewFile(commit_path, std::string_view(buf.data(), buf.size()),
                                     /*exclusive=*/false));
    ARROW_RETURN_NOT_OK(SetFileTimeMs(commit_path, ts));

    if (checkpoint_interval > 0 && v > 0 && v % checkpoint_interval == 0) {
      const std::string cp_path = log_dir + "/" + VersionPrefix(v) + ".checkpoint.parquet";
      ARROW_ASSIGN_OR_RAISE(auto writer, CheckpointFileWriter::Open(cp_path, false));
      ARROW_RETURN_NOT_OK(writer->AddProtocol(state));
      ARROW_RETURN_NOT_OK(writer->AddMetadata(state));
      ARROW_RETURN_NOT_OK(writer->AddTxn(kGeneratedAppId, v, ts));
      ARROW_RETURN_NOT_OK(rows.Write(*writer, /*adds=*/true, rm_hi, add_hi));
      ARROW_RETURN_NOT_OK(rows.Write(*writer, /*adds=*/false, 0, rm_hi));
      ARROW_ASSIGN_OR_RAISE(last_bytes, writer->Close());
      last_checkpoint = v;
      last_rows = writer->num_rows();
      last_adds = writer->num_adds();
    }
  }
  if (last_checkpoint >= 0) {
    ARROW_RETURN_NOT_OK(
        ReplaceFile(log_dir + "/_last_checkpoint",
                    LastCheckpointJson(last_checkpoint, last_rows, last_bytes, last_adds)));
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::testing
