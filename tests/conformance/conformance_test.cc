// Conformance suite: one test per table of the shared corpus (manifest.json). Each table is
// copied to a temporary directory and read through the public API; the result is compared with
// the reference data shipped with the corpus (expected/), the row counts stated in the manifest
// and EXPECTED.md, or the typed error a correct reader must raise. See README.md beside this file.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/api.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Corpus description

/// One entry of manifest.json.
struct TableCase {
  std::string id;
  std::string test_name;  ///< id with every character gtest does not accept replaced by '_'
  fs::path table_dir;
  fs::path expected_dir;  ///< empty when the corpus ships no reference data
  std::optional<int64_t> latest_version;
  bool must_reject = false;
  std::string reject_reason;
  bool metadata_only = false;
  std::optional<int64_t> expected_rows_latest;
  /// Set on the single stand-in case produced when the corpus cannot be loaded.
  std::string setup_error;
};

void PrintTo(const TableCase& c, std::ostream* os) { *os << c.id; }

std::string SanitizeName(std::string_view id) {
  std::string out;
  out.reserve(id.size());
  for (char ch : id) {
    out.push_back(std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  }
  return out.empty() ? std::string("_") : out;
}

std::vector<TableCase> SetupFailure(std::string message) {
  TableCase c;
  c.id = "corpus";
  c.test_name = "CorpusUnavailable";
  c.setup_error = std::move(message);
  return {c};
}

std::optional<int64_t> OptionalInt(simdjson::dom::element entry, std::string_view key) {
  simdjson::dom::element value;
  if (entry[key].get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  int64_t number = 0;
  if (value.get_int64().get(number) != simdjson::SUCCESS) return std::nullopt;
  return number;
}

std::string OptionalString(simdjson::dom::element entry, std::string_view key) {
  std::string_view text;
  if (entry[key].get_string().get(text) != simdjson::SUCCESS) return {};
  return std::string(text);
}

bool OptionalBool(simdjson::dom::element entry, std::string_view key) {
  bool flag = false;
  if (entry[key].get_bool().get(flag) != simdjson::SUCCESS) return false;
  return flag;
}

/// Reads manifest.json. A missing or unreadable corpus yields one case that fails with the reason,
/// so the run can never pass without having checked the corpus.
std::vector<TableCase> LoadCases() {
  const fs::path root = testing::ConformanceDir();
  const fs::path manifest = root / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) {
    return SetupFailure(fmt::format(
        "conformance corpus not found: {} does not exist (configure DELTACPP_SHARED_DIR)",
        manifest.string()));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.load(manifest.string()).get(doc); err != simdjson::SUCCESS) {
    return SetupFailure(fmt::format("cannot parse {}: {}", manifest.string(),
                                    simdjson::error_message(err)));
  }
  simdjson::dom::array tables;
  if (doc["tables"].get_array().get(tables) != simdjson::SUCCESS) {
    return SetupFailure(fmt::format("{} has no \"tables\" array", manifest.string()));
  }
  std::vector<TableCase> cases;
  std::set<std::string> names;
  for (simdjson::dom::element entry : tables) {
    TableCase c;
    c.id = OptionalString(entry, "id");
    const std::string table_dir = OptionalString(entry, "table_dir");
    if (c.id.empty() || table_dir.empty()) {
      return SetupFailure(fmt::format("{}: an entry lacks \"id\" or \"table_dir\"",
                                      manifest.string()));
    }
    c.table_dir = root / table_dir;
    if (std::string expected = OptionalString(entry, "expected_dir"); !expected.empty()) {
      c.expected_dir = root / expected;
    }
    c.latest_version = OptionalInt(entry, "latest_version");
    c.must_reject = OptionalBool(entry, "must_reject");
    c.reject_reason = OptionalString(entry, "reject_reason");
    c.metadata_only = OptionalBool(entry, "metadata_only");
    c.expected_rows_latest = OptionalInt(entry, "expected_rows_latest");
    std::string name = SanitizeName(c.id);
    for (int suffix = 2; names.count(name) > 0; ++suffix) {
      name = SanitizeName(c.id) + "_" + std::to_string(suffix);
    }
    names.insert(name);
    c.test_name = std::move(name);
    cases.push_back(std::move(c));
  }
  if (cases.empty()) return SetupFailure(fmt::format("{} lists no tables", manifest.string()));
  return cases;
}

std::string Trim(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::optional<int64_t> ParseInt(std::string_view text) {
  std::string trimmed = Trim(text);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value);
  if (ec != std::errc() || ptr != trimmed.data() + trimmed.size() || trimmed.empty()) {
    return std::nullopt;
  }
  return value;
}

/// What EXPECTED.md says about one version of the table.
struct VersionExpectation {
  enum class Kind { kRows, kMissingFiles, kLoadOnly };
  int64_t version = 0;
  Kind kind = Kind::kLoadOnly;
  int64_t rows = 0;
};

/// The machine-usable parts of a table's EXPECTED.md.
struct ExpectedDoc {
  std::vector<VersionExpectation> versions;  ///< from "Per-version row counts"
  std::optional<int64_t> live_files_latest;  ///< from "live files at latest: N"
};

std::vector<std::string> SplitCells(std::string_view line) {
  std::vector<std::string> cells;
  std::string_view rest = line;
  if (!rest.empty() && rest.front() == '|') rest.remove_prefix(1);
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    if (bar == std::string_view::npos) {
      if (!Trim(rest).empty()) cells.push_back(Trim(rest));
      break;
    }
    cells.push_back(Trim(rest.substr(0, bar)));
    rest.remove_prefix(bar + 1);
  }
  return cells;
}

ExpectedDoc ParseExpectedDoc(const fs::path& path) {
  ExpectedDoc doc;
  std::ifstream in(path);
  std::string line;
  bool in_versions = false;
  constexpr std::string_view kLiveFiles = "- live files at latest:";
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      in_versions = line.find("Per-version row counts") != std::string::npos;
      continue;
    }
    if (line.rfind(kLiveFiles, 0) == 0) {
      doc.live_files_latest = ParseInt(std::string_view(line).substr(kLiveFiles.size()));
      continue;
    }
    if (!in_versions || line.rfind("|", 0) != 0) continue;
    std::vector<std::string> cells = SplitCells(line);
    if (cells.size() < 3) continue;
    std::optional<int64_t> version = ParseInt(cells[0]);
    if (!version) continue;  // header or separator row
    VersionExpectation v;
    v.version = *version;
    const std::string& stats = cells[1];
    const std::string& footers = cells[2];
    if (auto rows = ParseInt(footers)) {
      v.kind = VersionExpectation::Kind::kRows;
      v.rows = *rows;
    } else if (footers == "files missing" || stats == "files missing") {
      v.kind = VersionExpectation::Kind::kMissingFiles;
    } else if (auto stat_rows = ParseInt(stats)) {
      v.kind = VersionExpectation::Kind::kRows;
      v.rows = *stat_rows;
    }
    doc.versions.push_back(v);
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Exclusions: tables that fail because of a feature the library does not support.

struct Exclusions {
  std::map<std::string, std::string> reasons;  ///< id -> reason
  std::vector<std::string> problems;           ///< malformed lines, missing file
};

fs::path ExclusionsPath() { return fs::path(__FILE__).parent_path() / "exclusions.txt"; }

const Exclusions& LoadedExclusions() {
  static const Exclusions exclusions = [] {
    Exclusions out;
    const fs::path path = ExclusionsPath();
    std::ifstream in(path);
    if (!in) {
      out.problems.push_back(fmt::format("cannot read {}", path.string()));
      return out;
    }
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::string text = Trim(line);
      if (text.empty() || text.front() == '#') continue;
      size_t space = text.find_first_of(" \t");
      std::string id = text.substr(0, space);
      std::string reason = space == std::string::npos ? std::string() : Trim(text.substr(space));
      if (reason.empty()) {
        out.problems.push_back(
            fmt::format("{}:{}: `{}` has no reason naming the unsupported feature", path.string(),
                        number, id));
      }
      if (!out.reasons.emplace(id, reason).second) {
        out.problems.push_back(fmt::format("{}:{}: `{}` is listed twice", path.string(), number, id));
      }
    }
    return out;
  }();
  return exclusions;
}

// ---------------------------------------------------------------------------------------------
// Rendering rows as canonical text, for multiset comparison

constexpr std::string_view kNull = "NULL";
constexpr std::string_view kColumnSeparator = " | ";

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  out.reserve(2 + bytes.size() * 2);
  for (unsigned char b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

template <typename BinaryLike>
std::vector<std::string> RenderBinary(const arrow::Array& array) {
  const auto& typed = static_cast<const BinaryLike&>(array);
  std::vector<std::string> out(typed.length());
  for (int64_t i = 0; i < typed.length(); ++i) {
    out[i] = typed.IsNull(i) ? std::string(kNull) : Hex(typed.GetView(i));
  }
  return out;
}

template <typename ListLike>
std::vector<std::string> RenderList(const arrow::Array& array,
                                    const std::vector<std::string>& values) {
  const auto& typed = static_cast<const ListLike&>(array);
  std::vector<std::string> out(typed.length());
  for (int64_t i = 0; i < typed.length(); ++i) {
    if (typed.IsNull(i)) {
      out[i] = kNull;
      continue;
    }
    std::string text = "[";
    const int64_t begin = typed.value_offset(i);
    const int64_t end = begin + typed.value_length(i);
    for (int64_t j = begin; j < end; ++j) {
      if (j > begin) text += ", ";
      text += values[j];
    }
    text += "]";
    out[i] = std::move(text);
  }
  return out;
}

/// Timestamps as `YYYY-MM-DD HH:MM:SS.fraction` of their stored instant (no zone conversion;
/// the zone name, if any, is part of the type both sides share).
std::vector<std::string> RenderTimestamps(const arrow::Array& array) {
  const auto& type = static_cast<const arrow::TimestampType&>(*array.type());
  int64_t per_second = 1;
  int digits = 0;
  switch (type.unit()) {
    case arrow::TimeUnit::SECOND: break;
    case arrow::TimeUnit::MILLI: per_second = 1000; digits = 3; break;
    case arrow::TimeUnit::MICRO: per_second = 1000000; digits = 6; break;
    case arrow::TimeUnit::NANO: per_second = 1000000000; digits = 9; break;
  }
  const auto& values = static_cast<const arrow::TimestampArray&>(array);
  std::vector<std::string> out(values.length());
  for (int64_t i = 0; i < values.length(); ++i) {
    if (values.IsNull(i)) {
      out[i] = kNull;
      continue;
    }
    const int64_t value = values.Value(i);
    int64_t seconds = value / per_second;
    int64_t fraction = value % per_second;
    if (fraction < 0) {
      fraction += per_second;
      --seconds;
    }
    int64_t days = seconds / 86400;
    int64_t second_of_day = seconds % 86400;
    if (second_of_day < 0) {
      second_of_day += 86400;
      --days;
    }
    const std::chrono::year_month_day date{std::chrono::sys_days{std::chrono::days{days}}};
    out[i] = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", static_cast<int>(date.year()),
                         static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                         second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
    if (digits > 0) out[i] += fmt::format(".{:0{}}", fraction, digits);
  }
  return out;
}

/// Text of every value of `array`: nested values recursively, binary as hex, nulls as NULL.
std::vector<std::string> RenderArray(const std::shared_ptr<arrow::Array>& array) {
  const int64_t n = array->length();
  const arrow::DataType& type = *array->type();
  switch (type.id()) {
    case arrow::Type::NA:
      return std::vector<std::string>(n, std::string(kNull));
    case arrow::Type::DICTIONARY: {
      const auto& dict_type = static_cast<const arrow::DictionaryType&>(type);
      auto decoded = arrow::compute::Cast(*array, dict_type.value_type());
      if (decoded.ok()) return RenderArray(*decoded);
      break;
    }
    case arrow::Type::EXTENSION:
      return RenderArray(static_cast<const arrow::ExtensionArray&>(*array).storage());
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(*array);
      std::vector<std::vector<std::string>> children;
      for (int f = 0; f < s.num_fields(); ++f) children.push_back(RenderArray(s.field(f)));
      std::vector<std::string> out(n);
      for (int64_t i = 0; i < n; ++i) {
        if (s.IsNull(i)) {
          out[i] = kNull;
          continue;
        }
        std::string text = "{";
        for (int f = 0; f < s.num_fields(); ++f) {
          if (f > 0) text += ", ";
          text += type.field(f)->name();
          text += "=";
          text += children[f][i];
        }
        text += "}";
        out[i] = std::move(text);
      }
      return out;
    }
    case arrow::Type::LIST:
    case arrow::Type::MAP:
      return RenderList<arrow::ListArray>(
          *array, RenderArray(static_cast<const arrow::ListArray&>(*array).values()));
    case arrow::Type::LARGE_LIST:
      return RenderList<arrow::LargeListArray>(
          *array, RenderArray(static_cast<const arrow::LargeListArray&>(*array).values()));
    case arrow::Type::FIXED_SIZE_LIST:
      return RenderList<arrow::FixedSizeListArray>(
          *array, RenderArray(static_cast<const arrow::FixedSizeListArray&>(*array).values()));
    case arrow::Type::BINARY:
      return RenderBinary<arrow::BinaryArray>(*array);
    case arrow::Type::LARGE_BINARY:
      return RenderBinary<arrow::LargeBinaryArray>(*array);
    case arrow::Type::FIXED_SIZE_BINARY:
      return RenderBinary<arrow::FixedSizeBinaryArray>(*array);
    case arrow::Type::TIMESTAMP:
      return RenderTimestamps(*array);
    default:
      break;
  }
  std::vector<std::string> out(n);
  auto as_text = arrow::compute::Cast(*array, arrow::utf8());
  if (as_text.ok()) {
    const auto& strings = static_cast<const arrow::StringArray&>(**as_text);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = strings.IsNull(i) ? std::string(kNull) : strings.GetString(i);
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (array->IsNull(i)) {
      out[i] = kNull;
      continue;
    }
    auto scalar = array->GetScalar(i);
    out[i] = scalar.ok() ? (*scalar)->ToString() : std::string("<unrenderable>");
  }
  return out;
}

/// Appends the values of `column` to `rows` (one string per row, columns joined by separators).
/// With `corrected`, every non-null value is replaced by it.
void AppendColumn(const arrow::ChunkedArray& column, bool first, std::vector<std::string>& rows,
                  const std::string* corrected = nullptr) {
  size_t row = 0;
  for (const auto& chunk : column.chunks()) {
    for (std::string& value : RenderArray(chunk)) {
      if (!first) rows[row] += kColumnSeparator;
      rows[row] += (corrected != nullptr && value != kNull) ? *corrected : value;
      ++row;
    }
  }
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

/// Canonical rows of `ours`, in its column order.
std::vector<std::string> RenderRows(const arrow::Table& ours) {
  std::vector<std::string> rows(ours.num_rows());
  for (int c = 0; c < ours.num_columns(); ++c) AppendColumn(*ours.column(c), c == 0, rows);
  return rows;
}

/// Reference columns documented as wrong: lower-case column name -> rendered value a correct
/// reader returns for every non-null entry.
using Corrections = std::map<std::string, std::string>;

/// Errata of the corpus's reference data, each stated in the table's EXPECTED.md.
struct ReferenceErratum {
  std::string_view table_id;
  std::string_view column;
  std::string_view corrected;
};

// data-reader-partition-values: the reference parquet was written in a UTC-7 session, so its
// as_timestamp holds 18:11:11Z, while the log's zone-less partition value "2021-09-08 11:11:11"
// is UTC; EXPECTED.md says to treat 11:11:11Z as correct.
constexpr ReferenceErratum kReferenceErrata[] = {
    {"delta-golden-data-reader-partition-values", "as_timestamp", "2021-09-08 11:11:11.000000"},
};

Corrections CorrectionsFor(std::string_view table_id) {
  Corrections corrections;
  for (const ReferenceErratum& erratum : kReferenceErrata) {
    if (erratum.table_id == table_id) {
      corrections.emplace(Lower(erratum.column), std::string(erratum.corrected));
    }
  }
  return corrections;
}

/// Canonical rows of a reference table, its columns matched to `ours` by name (ignoring case)
/// and cast to our types. Appends to `rows`; returns a description of the mismatch, if any.
std::optional<std::string> RenderExpectedRows(const arrow::Table& expected,
                                              const arrow::Schema& ours,
                                              const Corrections& corrections,
                                              std::vector<std::string>& rows) {
  std::map<std::string, int> by_name;
  for (int c = 0; c < expected.num_columns(); ++c) {
    by_name.emplace(Lower(expected.schema()->field(c)->name()), c);
  }
  std::vector<std::string> missing;
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  std::set<int> used;
  for (const auto& field : ours.fields()) {
    auto it = by_name.find(Lower(field->name()));
    if (it == by_name.end()) {
      missing.push_back(field->name());
      continue;
    }
    used.insert(it->second);
    std::shared_ptr<arrow::ChunkedArray> column = expected.column(it->second);
    if (!column->type()->Equals(*field->type())) {
      auto cast = arrow::compute::Cast(arrow::Datum(column), field->type());
      if (!cast.ok()) {
        return fmt::format("expected column `{}` of type {} does not cast to our type {}: {}",
                           field->name(), column->type()->ToString(), field->type()->ToString(),
                           cast.status().ToString());
      }
      column = cast->chunked_array();
    }
    columns.push_back(std::move(column));
  }
  std::vector<std::string> extra;
  for (int c = 0; c < expected.num_columns(); ++c) {
    if (used.count(c) == 0) extra.push_back(expected.schema()->field(c)->name());
  }
  if (!missing.empty() || !extra.empty()) {
    return fmt::format("columns differ: ours lacks [{}], expected data lacks [{}]",
                       fmt::join(extra, ", "), fmt::join(missing, ", "));
  }
  std::vector<std::string> local(expected.num_rows());
  for (size_t c = 0; c < columns.size(); ++c) {
    auto correction = corrections.find(Lower(ours.field(static_cast<int>(c))->name()));
    AppendColumn(*columns[c], c == 0, local,
                 correction == corrections.end() ? nullptr : &correction->second);
  }
  rows.insert(rows.end(), std::make_move_iterator(local.begin()),
              std::make_move_iterator(local.end()));
  return std::nullopt;
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(const fs::path& path) {
  ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path.string()));
  ARROW_ASSIGN_OR_RAISE(auto reader, parquet::arrow::OpenFile(file, arrow::default_memory_pool()));
  return reader->ReadTable();
}

/// Reference data files of a result directory: everything but dot files and `_`-prefixed
/// markers such as _SUCCESS.
std::vector<fs::path> ReferenceFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.empty() || name[0] == '.' || name[0] == '_') continue;
    if (entry.path().extension() != ".parquet") continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool HasReferenceParquet(const fs::path& dir) { return !ReferenceFiles(dir).empty(); }

std::string ListRows(const std::vector<std::string>& rows) {
  std::string text;
  for (const auto& row : rows) text += "\n      " + row;
  return text;
}

/// Compares `ours` with the parquet files in `dir` as unordered multisets of rows.
std::optional<std::string> CompareWithReference(const arrow::Table& ours, const fs::path& dir,
                                                const Corrections& corrections) {
  std::vector<std::string> expected_rows;
  for (const fs::path& file : ReferenceFiles(dir)) {
    auto table = ReadParquetFile(file);
    if (!table.ok()) {
      return fmt::format("cannot read reference file {}: {}", file.string(),
                         table.status().ToString());
    }
    if (auto problem = RenderExpectedRows(**table, *ours.schema(), corrections, expected_rows)) {
      return fmt::format("{} (reference {}; our schema: {})", *problem, file.string(),
                         ours.schema()->ToString());
    }
  }
  std::vector<std::string> our_rows = RenderRows(ours);
  std::sort(our_rows.begin(), our_rows.end());
  std::sort(expected_rows.begin(), expected_rows.end());
  if (our_rows == expected_rows) return std::nullopt;

  constexpr size_t kShown = 5;
  std::vector<std::string> only_ours;
  std::vector<std::string> only_expected;
  size_t count_ours = 0;
  size_t count_expected = 0;
  auto a = our_rows.begin();
  auto b = expected_rows.begin();
  while (a != our_rows.end() || b != expected_rows.end()) {
    if (b == expected_rows.end() || (a != our_rows.end() && *a < *b)) {
      if (only_ours.size() < kShown) only_ours.push_back(*a);
      ++count_ours;
      ++a;
    } else if (a == our_rows.end() || *b < *a) {
      if (only_expected.size() < kShown) only_expected.push_back(*b);
      ++count_expected;
      ++b;
    } else {
      ++a;
      ++b;
    }
  }
  return fmt::format(
      "rows differ from the reference data in {}: we read {} rows, the reference has {}; "
      "{} rows only in ours, {} only in the reference (columns: {})\n    first rows only in "
      "ours:{}\n    first rows only in the reference:{}",
      dir.string(), our_rows.size(), expected_rows.size(), count_ours, count_expected,
      ours.schema()->ToString(), ListRows(only_ours), ListRows(only_expected));
}

// ---------------------------------------------------------------------------------------------
// Checks

std::string CodeName(const arrow::Status& status) {
  auto code = GetDeltaErrorCode(status);
  return code ? DeltaErrorCodeName(*code) : std::string("<no Delta error code>");
}

/// The typed error a correct reader raises for a table the manifest says must be rejected, read
/// from the manifest's wording of the reason.
std::optional<DeltaErrorCode> CodeForRejectReason(std::string_view reason) {
  const std::string text = Lower(reason);
  auto has = [&](std::string_view word) { return text.find(word) != std::string::npos; };
  if (has("minreaderversion") || has("reader feature") || has("unknown feature") ||
      has("unsupported") || has("catalogmanaged") || has("geospatial")) {
    return DeltaErrorCode::kUnsupportedFeature;
  }
  if (has("no metadata") || has("no protocol") || has("not contiguous")) {
    return DeltaErrorCode::kCorruptLog;
  }
  if (has("no `_delta_log`") || has("no _delta_log") || has("not a delta table")) {
    return DeltaErrorCode::kTableNotFound;
  }
  return std::nullopt;
}

/// Runs every check for one table, collecting failures instead of reporting them, so that an
/// excluded table can be required to fail.
class TableChecker {
 public:
  TableChecker(const TableCase& c, fs::path root) : case_(c), root_(std::move(root)) {}

  const std::vector<std::string>& failures() const { return failures_; }

  void Run() {
    doc_ = ParseExpectedDoc(case_.table_dir / "EXPECTED.md");
    if (case_.must_reject) {
      CheckRejected();
    } else if (case_.metadata_only) {
      CheckMetadataOnly();
    } else {
      CheckReadable();
    }
  }

 private:
  void Fail(std::string message) { failures_.push_back(std::move(message)); }

  bool OpenTable() {
    auto table = DeltaTable::Open(root_.string());
    if (!table.ok()) {
      Fail(fmt::format("DeltaTable::Open failed: {}", table.status().ToString()));
      return false;
    }
    table_ = *table;
    return true;
  }

  arrow::Result<std::shared_ptr<Snapshot>> SnapshotAt(int64_t version) {
    if (latest_ && latest_->version() == version) return latest_;
    auto it = snapshots_.find(version);
    if (it == snapshots_.end()) it = snapshots_.emplace(version, table_->SnapshotAt(version)).first;
    return it->second;
  }

  static arrow::Result<std::shared_ptr<arrow::Table>> ReadAll(const Snapshot& snapshot) {
    ARROW_ASSIGN_OR_RAISE(auto scan, snapshot.NewScan().Build());
    return scan->ToTable();
  }

  arrow::Result<std::shared_ptr<arrow::Table>> Read(int64_t version) {
    auto it = reads_.find(version);
    if (it != reads_.end()) return it->second;
    auto snapshot = SnapshotAt(version);
    arrow::Result<std::shared_ptr<arrow::Table>> result =
        snapshot.ok() ? ReadAll(**snapshot) : snapshot.status();
    reads_.emplace(version, result);
    return result;
  }

  /// Latest snapshot, with its version checked against the manifest.
  bool LoadLatest() {
    if (!OpenTable()) return false;
    auto latest = table_->Latest();
    if (!latest.ok()) {
      Fail(fmt::format("loading the latest snapshot failed: {}", latest.status().ToString()));
      return false;
    }
    latest_ = *latest;
    if (case_.latest_version && latest_->version() != *case_.latest_version) {
      Fail(fmt::format("latest version is {}, the manifest says {}", latest_->version(),
                       *case_.latest_version));
    }
    return true;
  }

  void CheckRejected() {
    auto expected = CodeForRejectReason(case_.reject_reason);
    if (!expected) {
      Fail(fmt::format("no error code is known for the reject reason: {}", case_.reject_reason));
      return;
    }
    arrow::Status status;
    std::string stage;
    int64_t rows_read = -1;
    auto table = DeltaTable::Open(root_.string());
    if (!table.ok()) {
      status = table.status();
      stage = "DeltaTable::Open";
    } else if (auto snapshot = (*table)->Latest(); !snapshot.ok()) {
      status = snapshot.status();
      stage = "SnapshotAt(latest)";
    } else if (auto read = ReadAll(**snapshot); !read.ok()) {
      status = read.status();
      stage = "scan";
    } else {
      rows_read = (*read)->num_rows();
    }
    if (status.ok()) {
      Fail(fmt::format("the table must be rejected with {} ({}), but it was read: {} rows",
                       DeltaErrorCodeName(*expected), case_.reject_reason, rows_read));
      return;
    }
    if (!IsDeltaError(status, *expected)) {
      Fail(fmt::format("{} failed with {} instead of {}: {}", stage, CodeName(status),
                       DeltaErrorCodeName(*expected), status.ToString()));
    }
    const std::string& message = status.message();
    if (message.empty()) {
      Fail(fmt::format("{} failed with an empty message", stage));
    } else {
      std::error_code ec;
      const std::string canonical = fs::weakly_canonical(root_, ec).string();
      if (message.find(root_.string()) == std::string::npos &&
          (canonical.empty() || message.find(canonical) == std::string::npos)) {
        Fail(fmt::format("{} error does not name the table path {}: {}", stage, root_.string(),
                         message));
      }
    }
  }

  void CheckMetadataOnly() {
    if (!LoadLatest()) return;
    if (doc_.live_files_latest && latest_->num_files() != *doc_.live_files_latest) {
      Fail(fmt::format("latest snapshot has {} live files, EXPECTED.md says {}",
                       latest_->num_files(), *doc_.live_files_latest));
    }
  }

  void CheckReadable() {
    if (!LoadLatest()) return;
    CheckReferenceData();
    if (case_.expected_rows_latest) {
      CheckRowCount(latest_->version(), *case_.expected_rows_latest, "the manifest");
    }
    for (const VersionExpectation& v : doc_.versions) {
      switch (v.kind) {
        case VersionExpectation::Kind::kRows:
          CheckRowCount(v.version, v.rows, "EXPECTED.md");
          break;
        case VersionExpectation::Kind::kMissingFiles:
          CheckMissingFiles(v.version);
          break;
        case VersionExpectation::Kind::kLoadOnly:
          if (auto snapshot = SnapshotAt(v.version); !snapshot.ok()) {
            Fail(fmt::format("snapshot at version {} failed: {}", v.version,
                             snapshot.status().ToString()));
          }
          break;
      }
    }
  }

  /// DAT layout: expected/<id>/{latest,v0,v1,...}/table_content; golden layout: parquet files
  /// directly in expected/<id> describing the latest version. Other layouts (text renderings)
  /// are covered by the row counts only.
  void CheckReferenceData() {
    const fs::path& dir = case_.expected_dir;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return;
    if (fs::is_directory(dir / "latest", ec)) {
      std::vector<std::pair<std::string, std::optional<int64_t>>> versions;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (!entry.is_directory()) continue;
        const std::string name = entry.path().filename().string();
        if (name == "latest") {
          versions.emplace_back(name, std::nullopt);
        } else if (name.size() > 1 && name[0] == 'v') {
          if (auto number = ParseInt(std::string_view(name).substr(1))) {
            versions.emplace_back(name, *number);
          }
        }
      }
      std::sort(versions.begin(), versions.end());
      for (const auto& [name, version] : versions) {
        CompareVersion(version.value_or(latest_->version()), dir / name / "table_content", name);
      }
    } else if (HasReferenceParquet(dir)) {
      CompareVersion(latest_->version(), dir, "latest");
    }
  }

  void CompareVersion(int64_t version, const fs::path& reference, std::string_view label) {
    auto table = Read(version);
    if (!table.ok()) {
      Fail(fmt::format("reading version {} ({}) failed: {}", version, label,
                       table.status().ToString()));
      return;
    }
    if (auto problem = CompareWithReference(**table, reference, CorrectionsFor(case_.id))) {
      Fail(fmt::format("version {} ({}): {}", version, label, *problem));
    }
  }

  void CheckRowCount(int64_t version, int64_t expected, std::string_view source) {
    auto table = Read(version);
    if (!table.ok()) {
      Fail(fmt::format("reading version {} failed: {}", version, table.status().ToString()));
      return;
    }
    if ((*table)->num_rows() != expected) {
      Fail(fmt::format("version {} has {} rows, {} says {}", version, (*table)->num_rows(), source,
                       expected));
    }
  }

  void CheckMissingFiles(int64_t version) {
    auto snapshot = SnapshotAt(version);
    if (!snapshot.ok()) {
      Fail(fmt::format("snapshot at version {} (whose data files are gone) must still load: {}",
                       version, snapshot.status().ToString()));
      return;
    }
    auto table = Read(version);
    if (table.ok()) {
      Fail(fmt::format("version {} references missing data files, yet the scan returned {} rows",
                       version, (*table)->num_rows()));
    } else if (!IsDeltaError(table.status(), DeltaErrorCode::kMissingFile)) {
      Fail(fmt::format("scanning version {} failed with {} instead of MissingFile: {}", version,
                       CodeName(table.status()), table.status().ToString()));
    }
  }

  const TableCase& case_;
  fs::path root_;
  ExpectedDoc doc_;
  std::vector<std::string> failures_;
  std::shared_ptr<DeltaTable> table_;
  std::shared_ptr<Snapshot> latest_;
  std::map<int64_t, arrow::Result<std::shared_ptr<Snapshot>>> snapshots_;
  std::map<int64_t, arrow::Result<std::shared_ptr<arrow::Table>>> reads_;
};

// ---------------------------------------------------------------------------------------------
// Tests

class ConformanceTest : public ::testing::TestWithParam<TableCase> {
 protected:
  static void SetUpTestSuite() { Initialize(); }
};

TEST_P(ConformanceTest, Table) {
  const TableCase& c = GetParam();
  ASSERT_TRUE(c.setup_error.empty()) << c.setup_error;

  // Work on a private copy: the corpus is shared and must never be written to.
  testing::TempDir tmp;
  const fs::path root = tmp.path() / c.id;
  std::error_code ec;
  fs::copy(c.table_dir, root, fs::copy_options::recursive, ec);
  ASSERT_FALSE(ec) << "cannot copy " << c.table_dir << " to " << root << ": " << ec.message();

  TableChecker checker(c, root);
  checker.Run();

  const Exclusions& exclusions = LoadedExclusions();
  auto excluded = exclusions.reasons.find(c.id);
  if (excluded != exclusions.reasons.end()) {
    if (checker.failures().empty()) {
      ADD_FAILURE() << "table " << c.id << " now passes: remove it from exclusions.txt";
    } else {
      RecordProperty("excluded", excluded->second);
      std::cout << "[ EXCLUDED ] " << c.id << " (" << excluded->second
                << "): " << checker.failures().front() << "\n";
    }
    return;
  }
  for (const std::string& failure : checker.failures()) {
    ADD_FAILURE() << c.id << ": " << failure;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ConformanceTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<TableCase>& info) {
                           return info.param.test_name;
                         });

TEST(ConformanceExclusions, ListIsWellFormedAndNamesCorpusTables) {
  const Exclusions& exclusions = LoadedExclusions();
  for (const std::string& problem : exclusions.problems) ADD_FAILURE() << problem;
  std::set<std::string> ids;
  for (const TableCase& c : LoadCases()) ids.insert(c.id);
  for (const auto& [id, reason] : exclusions.reasons) {
    EXPECT_TRUE(ids.count(id) > 0) << ExclusionsPath().string() << " lists `" << id
                                   << "`, which is not in the corpus manifest";
  }
}

}  // namespace
}  // namespace deltacpp
