// Conformance suite: one test per table of the shared corpus (manifest.json). Each table is
// copied to a temporary directory and read through the public API; the result is compared with
// the reference data shipped with the corpus (expected/), the row counts stated in the manifest
// and EXPECTED.md, the log metadata (protocol, partitioning, schema, properties, stats row counts)
// EXPECTED.md states, or the typed error a correct reader must raise. See README.md beside this
// file.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <simdjson.h>

#include <algorithm>
#include <arrow/util/decimal.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
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
#include <type_traits>
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
  std::optional<int64_t> stats_rows;  ///< the "rows (stats)" cell, when it is a number
};

/// The `protocol:` line of EXPECTED.md. A feature list that is absent or null is nullopt.
struct ExpectedProtocol {
  int64_t min_reader_version = 0;
  int64_t min_writer_version = 0;
  std::optional<std::set<std::string>> reader_features;
  std::optional<std::set<std::string>> writer_features;
};

/// One top-level column of the "### Schema" section: `- `name`: `type`` and, optionally,
/// ` (annotations)` such as `physical=...; fieldId=N` or `NOT NULL`.
struct ExpectedColumn {
  std::string name;
  std::string type;
  std::string annotation;  ///< the text inside the parentheses, empty when there are none
};

/// The machine-usable parts of a table's EXPECTED.md.
struct ExpectedDoc {
  std::vector<VersionExpectation> versions;  ///< from "Per-version row counts"
  std::optional<int64_t> live_files_latest;  ///< from "live files at latest: N"
  std::optional<int64_t> stats_rows_latest;  ///< from "row count from log stats (...): N"
  std::optional<ExpectedProtocol> protocol;  ///< from "protocol: `{...}`" (`null`: none given)
  /// from "partition columns: `[...]`" (`None`: none given)
  std::optional<std::vector<std::string>> partition_columns;
  /// from "table properties: `{...}`"; absent when EXPECTED.md has no such line
  std::optional<std::map<std::string, std::string>> properties;
  std::vector<ExpectedColumn> schema;  ///< from "### Schema"
  /// Lines of those sections that do not have the expected form; each fails the table's test.
  std::vector<std::string> problems;
};

/// True for `+---+` borders and `|---|` separator lines.
bool IsSeparatorLine(std::string_view line) {
  return line.find_first_not_of("|-:+ ") == std::string_view::npos;
}

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

/// The text between the first pair of backticks of `text`, if there is one.
std::optional<std::string> BacktickedValue(std::string_view text) {
  const size_t open = text.find('`');
  if (open == std::string_view::npos) return std::nullopt;
  const size_t close = text.find('`', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return std::string(text.substr(open + 1, close - open - 1));
}

/// The feature list `key` of a protocol object: an array of strings, or absent / null (nullopt).
arrow::Result<std::optional<std::set<std::string>>> FeatureList(simdjson::dom::object object,
                                                                std::string_view key) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS || value.is_null()) {
    return std::optional<std::set<std::string>>();
  }
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return arrow::Status::Invalid("`", key, "` is neither null nor an array");
  }
  std::set<std::string> features;
  for (simdjson::dom::element item : array) {
    std::string_view name;
    if (item.get_string().get(name) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("`", key, "` holds a non-string");
    }
    features.emplace(name);
  }
  return std::optional<std::set<std::string>>(std::move(features));
}

/// `{"minReaderVersion": N, "minWriterVersion": M[, "readerFeatures": [...]|null, ...]}`;
/// nullopt for `null`.
arrow::Result<std::optional<ExpectedProtocol>> ParseProtocolJson(const std::string& text) {
  if (text == "null") return std::optional<ExpectedProtocol>();
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(text).get_object().get(object) != simdjson::SUCCESS) {
    return arrow::Status::Invalid("not a JSON object");
  }
  ExpectedProtocol protocol;
  if (object["minReaderVersion"].get_int64().get(protocol.min_reader_version) !=
          simdjson::SUCCESS ||
      object["minWriterVersion"].get_int64().get(protocol.min_writer_version) !=
          simdjson::SUCCESS) {
    return arrow::Status::Invalid("minReaderVersion or minWriterVersion is missing or not an integer");
  }
  ARROW_ASSIGN_OR_RAISE(protocol.reader_features, FeatureList(object, "readerFeatures"));
  ARROW_ASSIGN_OR_RAISE(protocol.writer_features, FeatureList(object, "writerFeatures"));
  return std::optional<ExpectedProtocol>(std::move(protocol));
}

/// `{"key": "value", ...}`.
arrow::Result<std::map<std::string, std::string>> ParsePropertiesJson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(text).get_object().get(object) != simdjson::SUCCESS) {
    return arrow::Status::Invalid("not a JSON object");
  }
  std::map<std::string, std::string> properties;
  for (auto [key, value] : object) {
    std::string_view text_value;
    if (value.get_string().get(text_value) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("the value of `", key, "` is not a string");
    }
    properties.emplace(std::string(key), std::string(text_value));
  }
  return properties;
}

/// A Python list literal of strings: `['a', "b c"]`; nullopt for `None`.
arrow::Result<std::optional<std::vector<std::string>>> ParseNameList(std::string_view text) {
  if (text == "None") return std::optional<std::vector<std::string>>();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return arrow::Status::Invalid("not a [...] list");
  }
  std::vector<std::string> names;
  std::string_view rest = text.substr(1, text.size() - 2);
  while (!Trim(rest).empty()) {
    rest = rest.substr(rest.find_first_not_of(' '));
    const char quote = rest.front();
    if (quote != '\'' && quote != '"') return arrow::Status::Invalid("an unquoted name");
    const size_t close = rest.find(quote, 1);
    if (close == std::string_view::npos) return arrow::Status::Invalid("an unterminated name");
    names.emplace_back(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    const std::string after = Trim(rest);
    if (after.empty()) break;
    if (after.front() != ',') return arrow::Status::Invalid("names not separated by commas");
    rest = rest.substr(rest.find(',') + 1);
  }
  return std::optional<std::vector<std::string>>(std::move(names));
}

/// `- `name`: `type`` with an optional ` (annotation)`.
std::optional<ExpectedColumn> ParseSchemaLine(std::string_view line) {
  if (line.rfind("- `", 0) != 0) return std::nullopt;
  const size_t name_end = line.find("`: `", 3);
  if (name_end == std::string_view::npos) return std::nullopt;
  const size_t type_begin = name_end + 4;
  const size_t type_end = line.find('`', type_begin);
  if (type_end == std::string_view::npos) return std::nullopt;
  ExpectedColumn column{std::string(line.substr(3, name_end - 3)),
                        std::string(line.substr(type_begin, type_end - type_begin)),
                        {}};
  const std::string rest = Trim(line.substr(type_end + 1));
  if (!rest.empty()) {
    if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
    column.annotation = rest.substr(1, rest.size() - 2);
  }
  return column;
}

ExpectedDoc ParseExpectedDoc(const fs::path& path) {
  ExpectedDoc doc;
  std::ifstream in(path);
  if (!in) {
    doc.problems.push_back(fmt::format("cannot read {}", path.string()));
    return doc;
  }
  std::string line;
  int number = 0;
  enum class Section { kOther, kLatest, kSchema, kVersions } section = Section::kOther;
  auto problem = [&](std::string_view what) {
    doc.problems.push_back(fmt::format("{}:{}: {}: {}", path.string(), number, what, line));
  };
  auto value_after = [&](std::string_view prefix) {
    return Trim(std::string_view(line).substr(prefix.size()));
  };
  constexpr std::string_view kLiveFiles = "- live files at latest:";
  constexpr std::string_view kStatsRows = "- row count from log stats";
  constexpr std::string_view kProtocol = "- protocol:";
  constexpr std::string_view kPartitions = "- partition columns:";
  constexpr std::string_view kProperties = "- table properties:";
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("#", 0) == 0) {
      if (line.rfind("### Schema", 0) == 0) {
        section = Section::kSchema;
      } else if (line.rfind("## Latest version", 0) == 0) {
        section = Section::kLatest;
      } else if (line.rfind("## ", 0) == 0 || line.rfind("### ", 0) == 0) {
        section = line.find("Per-version row counts") != std::string::npos ? Section::kVersions
                                                                            : Section::kOther;
      }
      continue;
    }
    if (section == Section::kLatest) {
      if (line.rfind(kLiveFiles, 0) == 0) {
        // `None` for tables without a readable log (must_reject).
        doc.live_files_latest = ParseInt(value_after(kLiveFiles));
        if (!doc.live_files_latest && value_after(kLiveFiles) != "None") {
          problem("the live-file count is not an integer");
        }
      } else if (line.rfind(kStatsRows, 0) == 0) {
        const size_t colon = line.rfind(": ");
        doc.stats_rows_latest =
            colon == std::string::npos ? std::nullopt : ParseInt(line.substr(colon + 2));
        if (!doc.stats_rows_latest) problem("the row count from log stats is not an integer");
      } else if (line.rfind(kProtocol, 0) == 0) {
        auto text = BacktickedValue(value_after(kProtocol));
        auto parsed = text ? ParseProtocolJson(*text)
                           : arrow::Status::Invalid("no `...` value");
        if (parsed.ok()) {
          doc.protocol = *parsed;
        } else {
          problem(fmt::format("malformed protocol ({})", parsed.status().message()));
        }
      } else if (line.rfind(kPartitions, 0) == 0) {
        auto text = BacktickedValue(value_after(kPartitions));
        auto parsed = text ? ParseNameList(*text) : arrow::Status::Invalid("no `...` value");
        if (parsed.ok()) {
          doc.partition_columns = *parsed;
        } else {
          problem(fmt::format("malformed partition columns ({})", parsed.status().message()));
        }
      } else if (line.rfind(kProperties, 0) == 0) {
        auto text = BacktickedValue(value_after(kProperties));
        auto parsed = text ? ParsePropertiesJson(*text) : arrow::Status::Invalid("no `...` value");
        if (parsed.ok()) {
          doc.properties = *parsed;
        } else {
          problem(fmt::format("malformed table properties ({})", parsed.status().message()));
        }
      }
      continue;
    }
    if (section == Section::kSchema) {
      const std::string text = Trim(line);
      if (text.empty() || text == "(no schema)") continue;
      if (auto column = ParseSchemaLine(text)) {
        doc.schema.push_back(std::move(*column));
      } else {
        problem("a schema line is not `- `name`: `type`` [(annotations)]");
      }
      continue;
    }
    if (section != Section::kVersions || line.rfind("|", 0) != 0) continue;
    if (IsSeparatorLine(line)) continue;
    std::vector<std::string> cells = SplitCells(line);
    if (!cells.empty() && cells[0] == "version") continue;  // header
    std::optional<int64_t> version = cells.empty() ? std::nullopt : ParseInt(cells[0]);
    if (!version || cells.size() < 3) {
      problem("a per-version row is not `| version | rows (stats) | rows (parquet footers) |`");
      continue;
    }
    VersionExpectation v;
    v.version = *version;
    const std::string& stats = cells[1];
    const std::string& footers = cells[2];
    auto known = [](const std::string& cell) {
      return ParseInt(cell) || cell == "n/a" || cell == "files missing";
    };
    if (!known(stats) || !known(footers)) {
      problem("a row count is neither a number, `n/a` nor `files missing`");
      continue;
    }
    v.stats_rows = ParseInt(stats);
    if (auto rows = ParseInt(footers)) {
      v.kind = VersionExpectation::Kind::kRows;
      v.rows = *rows;
    } else if (footers == "files missing" || stats == "files missing") {
      v.kind = VersionExpectation::Kind::kMissingFiles;
    } else if (v.stats_rows) {
      v.kind = VersionExpectation::Kind::kRows;
      v.rows = *v.stats_rows;
    }
    doc.versions.push_back(v);
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Exclusions: tables that fail because of a feature the library does not support.

/// One line of exclusions.txt.
struct Exclusion {
  std::string feature;  ///< the unsupported feature; the table's errors must name it
  std::string reason;   ///< free text after the feature
};

struct Exclusions {
  std::map<std::string, Exclusion> entries;  ///< id -> exclusion
  std::vector<std::string> problems;         ///< malformed lines, missing file
};

fs::path ExclusionsPath() { return fs::path(__FILE__).parent_path() / "exclusions.txt"; }

/// Reads exclusions.txt: `<id> <feature> <reason>` per line, `#` starts a comment line.
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
      std::istringstream words(text);
      std::string id;
      Exclusion exclusion;
      words >> id >> exclusion.feature;
      std::getline(words, exclusion.reason);
      exclusion.reason = Trim(exclusion.reason);
      if (exclusion.feature.empty() || exclusion.reason.empty()) {
        out.problems.push_back(fmt::format(
            "{}:{}: `{}` must be followed by the unsupported feature's name and a reason",
            path.string(), number, id));
      }
      if (!out.entries.emplace(id, exclusion).second) {
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

/// Errata of the corpus: a machine-readable value (of the reference parquet or of EXPECTED.md)
/// that the table's own EXPECTED.md notes say is wrong. Every correction lives in kErrata, and
/// each entry quotes the EXPECTED.md sentence that documents it (checked verbatim by
/// ConformanceErrata.EachEntryQuotesItsTable), so nothing is corrected on our own authority.
enum class ErratumKind {
  kReferenceColumn,  ///< every non-null value of `column` of the reference parquet is `corrected`
  kLiveFilesLatest,  ///< "live files at latest" of EXPECTED.md is `corrected`
};

struct Erratum {
  std::string_view table_id;
  ErratumKind kind;
  std::string_view column;  ///< kReferenceColumn only
  std::string_view corrected;
  std::string_view quote;  ///< verbatim text of the table's EXPECTED.md stating the right value
};

constexpr Erratum kErrata[] = {
    // The reference parquet was written in a UTC-7 session, so its as_timestamp holds
    // 18:11:11Z, while the log's zone-less partition value "2021-09-08 11:11:11" is UTC.
    {"delta-golden-data-reader-partition-values", ErratumKind::kReferenceColumn, "as_timestamp",
     "2021-09-08 11:11:11.000000", "Treat 11:11:11Z as correct"},
    // v0 adds `/some/unqualified/absolute/path`, v1 removes `file:/some/unqualified/absolute/
    // path`: one file, so nothing is live at v1 (the machine-readable count says 1).
    {"delta-golden-canonicalized-paths-normal-a", ErratumKind::kLiveFilesLatest, "", "0",
     "the latest snapshot (v1) must contain ZERO files"},
};

Corrections CorrectionsFor(std::string_view table_id) {
  Corrections corrections;
  for (const Erratum& erratum : kErrata) {
    if (erratum.table_id == table_id && erratum.kind == ErratumKind::kReferenceColumn) {
      corrections.emplace(Lower(erratum.column), std::string(erratum.corrected));
    }
  }
  return corrections;
}

/// The live-file count a correct reader has at the latest version: EXPECTED.md's machine-readable
/// line unless kErrata corrects it.
std::optional<int64_t> LiveFilesLatest(std::string_view table_id, std::optional<int64_t> stated) {
  for (const Erratum& erratum : kErrata) {
    if (erratum.table_id == table_id && erratum.kind == ErratumKind::kLiveFilesLatest) {
      return ParseInt(erratum.corrected);
    }
  }
  return stated;
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

/// The first differing rows of two sorted multisets, or nullopt when they are equal.
std::optional<std::string> DiffSortedRows(const std::vector<std::string>& ours,
                                          const std::vector<std::string>& expected,
                                          std::string_view what) {
  if (ours == expected) return std::nullopt;
  constexpr size_t kShown = 5;
  std::vector<std::string> only_ours;
  std::vector<std::string> only_expected;
  size_t count_ours = 0;
  size_t count_expected = 0;
  auto a = ours.begin();
  auto b = expected.begin();
  while (a != ours.end() || b != expected.end()) {
    if (b == expected.end() || (a != ours.end() && *a < *b)) {
      if (only_ours.size() < kShown) only_ours.push_back(*a);
      ++count_ours;
      ++a;
    } else if (a == ours.end() || *b < *a) {
      if (only_expected.size() < kShown) only_expected.push_back(*b);
      ++count_expected;
      ++b;
    } else {
      ++a;
      ++b;
    }
  }
  return fmt::format(
      "we read {} rows, {} has {}; {} rows only in ours, {} only in the expectation\n    first "
      "rows only in ours:{}\n    first rows only in the expectation:{}",
      ours.size(), what, expected.size(), count_ours, count_expected, ListRows(only_ours),
      ListRows(only_expected));
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
  auto diff = DiffSortedRows(our_rows, expected_rows, "the reference");
  if (!diff) return std::nullopt;
  return fmt::format("rows differ from the reference data in {} (columns: {}): {}", dir.string(),
                     ours.schema()->ToString(), *diff);
}

// ---------------------------------------------------------------------------------------------
// Rows and files quoted in EXPECTED.md
//
// EXPECTED.md quotes the rows some source tests expect, as pipe tables or `+---+` tables in code
// fences after an "expects" note; they are parsed at test time. Rows quoted in prose are
// transcribed into quoted_rows.txt beside this file, each table's entry quoting the EXPECTED.md
// text it comes from. A block is compared with our read as an unordered multiset of rows of
// its columns only. Quoted values are normalised by the type of our column (numbers by value,
// timestamps as instants, decimals at the column's scale), see CanonicalQuoted().

/// One quoted table of rows (or of live files).
struct QuotedBlock {
  std::string source;              ///< where it was read, for messages
  std::optional<int64_t> version;  ///< nullopt: the latest snapshot
  std::string filter;              ///< a row filter the quote's source test applied, if any
  bool files = false;              ///< live files (path, size, modificationTime), not rows
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

/// Cell texts with a meaning of their own. A bare empty cell (arrow pretty-print style) stands
/// for a null or an empty string; `NULL` for a null; `""` for an empty string; in file blocks
/// `*` matches anything and a path ending in `...` matches by prefix.
constexpr std::string_view kNullCell = "NULL";
constexpr std::string_view kEmptyStringCell = "\"\"";
constexpr std::string_view kAnyCell = "*";

bool IsNullCell(std::string_view cell) {
  return cell == kNullCell || cell == "null" || cell == "None";
}

/// Turns the table lines of one block (pipe rows, `+---+` borders, `|---|` separators) into
/// columns and rows; false when it holds no header.
bool ParseTableLines(const std::vector<std::string>& lines, QuotedBlock& block) {
  bool header = false;
  for (const std::string& line : lines) {
    if (IsSeparatorLine(line)) continue;
    std::vector<std::string> cells = SplitCells(line);
    // SplitCells drops a trailing empty cell ("| 2 |  |"): count the bars instead.
    const size_t bars = static_cast<size_t>(std::count(line.begin(), line.end(), '|'));
    if (bars >= 2) cells.resize(bars - 1);
    if (!header) {
      block.columns = std::move(cells);
      header = true;
    } else {
      block.rows.push_back(std::move(cells));
    }
  }
  return header;
}

/// The row blocks quoted in code fences of the "Notes and expectations" section.
std::vector<QuotedBlock> QuotedBlocksOfExpectedMd(const fs::path& path) {
  std::vector<QuotedBlock> blocks;
  std::ifstream in(path);
  std::string line;
  bool in_notes = false;
  bool in_fence = false;
  bool expects = false;  // the prose before the fence announces expected rows
  std::vector<std::string> table;
  int number = 0;
  int table_line = 0;
  auto flush = [&] {
    if (table.empty()) return;
    QuotedBlock block;
    block.source = fmt::format("{}:{}", path.string(), table_line);
    if (ParseTableLines(table, block)) blocks.push_back(std::move(block));
    table.clear();
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("## ", 0) == 0) {
      flush();
      in_notes = line.find("Notes and expectations") != std::string::npos;
      in_fence = false;
      continue;
    }
    if (!in_notes) continue;
    if (line.rfind("```", 0) == 0) {
      flush();
      in_fence = !in_fence;
      if (!in_fence) expects = false;
      continue;
    }
    if (!in_fence) {
      if (!Trim(line).empty()) expects = Lower(line).find("expect") != std::string::npos;
      continue;
    }
    const std::string text = Trim(line);
    if (expects && (text.rfind("|", 0) == 0 || text.rfind("+", 0) == 0)) {
      if (table.empty()) table_line = number;
      table.push_back(text);
    } else {
      flush();
    }
  }
  flush();
  return blocks;
}

/// The `+---+` table of expected/<id>/expected-table.txt (an arrow pretty-print of the latest
/// snapshot), when there is one.
std::optional<QuotedBlock> ExpectedTableText(const fs::path& expected_dir) {
  const fs::path path = expected_dir / "expected-table.txt";
  std::error_code ec;
  if (expected_dir.empty() || !fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!Trim(line).empty()) lines.push_back(Trim(line));
  }
  QuotedBlock block;
  block.source = path.string();
  if (!ParseTableLines(lines, block)) return std::nullopt;
  return block;
}

/// A claim of EXPECTED.md's prose about the log rather than rows: `snapshot` and `history`
/// lines of quoted_rows.txt.
struct LogClaim {
  enum class Kind {
    kLoads,       ///< SnapshotAt(v) succeeds for every v in [first, last]
    kFails,       ///< SnapshotAt(v) fails with `code` for every v in [first, last]
    kCheckpoint,  ///< SnapshotAt(v) is built from the checkpoint of version `value`
    kHistory,     ///< History(limit) has `value` entries
  };
  std::string source;
  Kind kind = Kind::kLoads;
  int64_t first = 0;
  int64_t last = 0;
  DeltaErrorCode code = DeltaErrorCode::kVersionNotFound;
  int64_t value = 0;
  std::optional<int64_t> limit;
};

/// The error code named `name` (as DeltaErrorCodeName spells it).
std::optional<DeltaErrorCode> ErrorCodeNamed(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(DeltaErrorCode::kAppendOnlyViolation); ++i) {
    const auto code = static_cast<DeltaErrorCode>(i);
    if (name == DeltaErrorCodeName(code)) return code;
  }
  return std::nullopt;
}

/// Parses the words after `snapshot` or `history` (see the top of quoted_rows.txt).
std::optional<LogClaim> ParseLogClaim(const std::string& keyword, std::istringstream& words) {
  LogClaim claim;
  std::vector<std::string> rest;
  for (std::string word; words >> word;) rest.push_back(word);
  if (keyword == "history") {
    // history [limit <n>] entries <count>
    size_t at = 0;
    if (rest.size() == 4 && rest[0] == "limit") {
      claim.limit = ParseInt(rest[1]);
      if (!claim.limit) return std::nullopt;
      at = 2;
    }
    if (rest.size() != at + 2 || rest[at] != "entries" || !ParseInt(rest[at + 1])) {
      return std::nullopt;
    }
    claim.kind = LogClaim::Kind::kHistory;
    claim.value = *ParseInt(rest[at + 1]);
    return claim;
  }
  // snapshot <first> [<last>] (loads | fails <ErrorCode> | checkpoint <version>)
  if (rest.empty() || !ParseInt(rest[0])) return std::nullopt;
  claim.first = claim.last = *ParseInt(rest[0]);
  size_t at = 1;
  if (rest.size() > at && ParseInt(rest[at])) claim.last = *ParseInt(rest[at++]);
  if (claim.last < claim.first || rest.size() <= at) return std::nullopt;
  const std::string& verb = rest[at];
  if (verb == "loads" && rest.size() == at + 1) {
    claim.kind = LogClaim::Kind::kLoads;
  } else if (verb == "fails" && rest.size() == at + 2 && ErrorCodeNamed(rest[at + 1])) {
    claim.kind = LogClaim::Kind::kFails;
    claim.code = *ErrorCodeNamed(rest[at + 1]);
  } else if (verb == "checkpoint" && rest.size() == at + 2 && ParseInt(rest[at + 1])) {
    claim.kind = LogClaim::Kind::kCheckpoint;
    claim.value = *ParseInt(rest[at + 1]);
  } else {
    return std::nullopt;
  }
  return claim;
}

/// One table's entry of quoted_rows.txt.
struct Transcription {
  std::vector<std::string> quotes;  ///< EXPECTED.md text the rows are transcribed from
  std::vector<QuotedBlock> blocks;
  std::vector<LogClaim> claims;
};

struct Transcriptions {
  std::map<std::string, Transcription> tables;
  std::vector<std::string> problems;
};

fs::path TranscriptionsPath() { return fs::path(__FILE__).parent_path() / "quoted_rows.txt"; }

/// Reads quoted_rows.txt (format described at its top).
const Transcriptions& LoadedTranscriptions() {
  static const Transcriptions transcriptions = [] {
    Transcriptions out;
    const fs::path path = TranscriptionsPath();
    std::ifstream in(path);
    if (!in) {
      out.problems.push_back(fmt::format("cannot read {}", path.string()));
      return out;
    }
    Transcription* current = nullptr;
    QuotedBlock* block = nullptr;
    std::vector<std::string> table;
    auto flush = [&] {
      if (block != nullptr && !table.empty() && !ParseTableLines(table, *block)) {
        out.problems.push_back(fmt::format("{}: a block has no header", block->source));
      }
      table.clear();
    };
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const std::string text = Trim(line);
      const std::string where = fmt::format("{}:{}", path.string(), number);
      if (text.empty() || text.front() == '#') continue;
      std::istringstream words(text);
      std::string keyword;
      words >> keyword;
      if (keyword == "table") {
        flush();
        std::string id;
        words >> id;
        current = &out.tables[id];
        block = nullptr;
        continue;
      }
      if (current == nullptr) {
        out.problems.push_back(where + ": text before the first `table` line");
        continue;
      }
      if (keyword == "quote") {
        current->quotes.push_back(Trim(text.substr(keyword.size())));
      } else if (keyword == "snapshot" || keyword == "history") {
        flush();
        block = nullptr;
        if (auto claim = ParseLogClaim(keyword, words)) {
          claim->source = where;
          current->claims.push_back(std::move(*claim));
        } else {
          out.problems.push_back(
              where + ": expected `snapshot <first> [<last>] (loads | fails <ErrorCode> | "
                      "checkpoint <version>)` or `history [limit <n>] entries <count>`");
        }
      } else if (keyword == "rows" || keyword == "files") {
        flush();
        QuotedBlock b;
        b.source = where;
        b.files = keyword == "files";
        std::string word;
        bool ok = true;
        while (ok && words >> word) {
          if (word == "at") {
            std::string version;
            words >> version;
            ok = ParseInt(version).has_value();
            b.version = ParseInt(version);
          } else if (word == "where" && !b.files) {
            std::getline(words, b.filter);
            b.filter = Trim(b.filter);
            ok = !b.filter.empty();
          } else {
            ok = false;
          }
        }
        if (!ok) {
          out.problems.push_back(where + ": expected `rows [at <version>] [where <predicate>]` "
                                         "or `files [at <version>]`");
        }
        current->blocks.push_back(std::move(b));
        block = &current->blocks.back();
      } else if (keyword == "seq") {
        // seq <first> <last> [except a,b,...] [not-multiple-of K]: one row per integer.
        flush();
        std::string first;
        std::string last;
        words >> first >> last;
        std::set<int64_t> except;
        std::optional<int64_t> not_multiple_of;
        std::string option;
        bool ok = ParseInt(first) && ParseInt(last) && block != nullptr &&
                  block->columns.size() == 1;
        while (ok && words >> option) {
          std::string value;
          words >> value;
          if (option == "except") {
            std::stringstream list(value);
            std::string item;
            while (std::getline(list, item, ',')) {
              if (auto n = ParseInt(item)) {
                except.insert(*n);
              } else {
                ok = false;
              }
            }
          } else if (option == "not-multiple-of" && ParseInt(value) && *ParseInt(value) > 0) {
            not_multiple_of = ParseInt(value);
          } else {
            ok = false;
          }
        }
        if (!ok) {
          out.problems.push_back(where + ": malformed `seq` (or not in a one-column block)");
          continue;
        }
        for (int64_t n = *ParseInt(first); n <= *ParseInt(last); ++n) {
          if (except.count(n) > 0 || (not_multiple_of && n % *not_multiple_of == 0)) continue;
          block->rows.push_back({std::to_string(n)});
        }
      } else if (text.front() == '|') {
        if (block == nullptr) {
          out.problems.push_back(where + ": a table line outside a `rows` or `files` block");
          continue;
        }
        if (!block->columns.empty()) {
          // Header already read: a row.
          std::vector<std::string> cells = SplitCells(text);
          const size_t bars = static_cast<size_t>(std::count(text.begin(), text.end(), '|'));
          if (bars >= 2) cells.resize(bars - 1);
          block->rows.push_back(std::move(cells));
        } else {
          table.push_back(text);
          flush();
        }
      } else {
        out.problems.push_back(where + ": unknown line: " + text);
      }
    }
    flush();
    for (const auto& [id, t] : out.tables) {
      if (t.quotes.empty()) out.problems.push_back(fmt::format("{}: `{}` has no quote", path.string(), id));
      for (const QuotedBlock& b : t.blocks) {
        if (b.columns.empty()) out.problems.push_back(b.source + ": block without a header");
        for (const auto& row : b.rows) {
          if (row.size() != b.columns.size()) {
            out.problems.push_back(fmt::format("{}: a row of {} cells under {} columns",
                                               b.source, row.size(), b.columns.size()));
          }
        }
      }
    }
    return out;
  }();
  return transcriptions;
}

/// `text` with every run of whitespace made one space, for verbatim quote checks.
std::string CollapseSpace(std::string_view text) {
  std::string out;
  bool space = false;
  for (char ch : text) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(ch);
  }
  return out;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// True when `quote` appears in the table's EXPECTED.md (whitespace runs compared as one space).
bool ExpectedMdQuotes(const fs::path& table_dir, std::string_view quote) {
  return CollapseSpace(ReadText(table_dir / "EXPECTED.md")).find(CollapseSpace(quote)) !=
         std::string::npos;
}

// --- value normalisation -------------------------------------------------------------------

constexpr std::string_view kNullToken = "<null>";

std::string ShortestDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

std::string ShortestFloat(float value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

/// An instant as `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` (the canonical timestamp text).
std::string FormatInstant(int64_t seconds, int64_t nanos) {
  int64_t days = seconds / 86400;
  int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  const std::chrono::year_month_day date{std::chrono::sys_days{std::chrono::days{days}}};
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09}", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60, nanos);
}

/// Parses `YYYY-MM-DD[(T| )HH:MM[:SS[.fraction]]][Z|+HH:MM|-HH:MM| UTC]` into the canonical
/// instant text (a zone-less value is read as UTC / wall clock).
std::optional<std::string> ParseInstant(std::string_view text) {
  int year = 0;
  unsigned month = 0;
  unsigned day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int64_t nanos = 0;
  int offset_minutes = 0;
  size_t pos = 0;
  auto number = [&](size_t digits, auto& out) {
    if (pos + digits > text.size()) return false;
    int value = 0;
    for (size_t i = 0; i < digits; ++i) {
      char ch = text[pos + i];
      if (ch < '0' || ch > '9') return false;
      value = value * 10 + (ch - '0');
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(value);
    pos += digits;
    return true;
  };
  auto expect = [&](char ch) {
    if (pos < text.size() && text[pos] == ch) {
      ++pos;
      return true;
    }
    return false;
  };
  if (!number(4, year) || !expect('-') || !number(2, month) || !expect('-') || !number(2, day)) {
    return std::nullopt;
  }
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == ' ') && pos + 1 < text.size() &&
      std::isdigit(static_cast<unsigned char>(text[pos + 1]))) {
    ++pos;
    if (!number(2, hour) || !expect(':') || !number(2, minute)) return std::nullopt;
    if (expect(':')) {
      if (!number(2, second)) return std::nullopt;
      if (expect('.')) {
        int digits = 0;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
          if (digits < 9) nanos = nanos * 10 + (text[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0) return std::nullopt;
        for (int i = digits; i < 9; ++i) nanos *= 10;
      }
    }
  }
  std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == " UTC" || zone == "UTC" || zone.empty()) {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int h = 0;
    int m = 0;
    pos += 1;
    if (!number(2, h) || !expect(':') || !number(2, m)) return std::nullopt;
    offset_minutes = (zone[0] == '+' ? 1 : -1) * (h * 60 + m);
  } else {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month},
                                         std::chrono::day{day}};
  if (!date.ok()) return std::nullopt;
  const int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  const int64_t seconds =
      days * 86400 + hour * 3600 + minute * 60 + second - int64_t{offset_minutes} * 60;
  return FormatInstant(seconds, nanos);
}

std::vector<std::string> CanonicalValues(const std::shared_ptr<arrow::Array>& array);

/// One value in arrow's pretty-print style (nulls empty, `{name: value}` structs, `[a, b]`
/// lists, `{key: value}` maps, binary as lower-case hex), as the corpus's `+---+` tables show
/// nested values.
std::string PrettyValue(const arrow::Array& array, int64_t i) {
  if (array.IsNull(i)) return "";
  const arrow::DataType& type = *array.type();
  switch (type.id()) {
    case arrow::Type::EXTENSION:
      return PrettyValue(*static_cast<const arrow::ExtensionArray&>(array).storage(), i);
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      std::string text = "{";
      for (int f = 0; f < s.num_fields(); ++f) {
        if (f > 0) text += ", ";
        text += type.field(f)->name() + ": " + PrettyValue(*s.field(f), i);
      }
      return text + "}";
    }
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapArray&>(array);
      std::string text = "{";
      for (int64_t j = m.value_offset(i); j < m.value_offset(i) + m.value_length(i); ++j) {
        if (j > m.value_offset(i)) text += ", ";
        text += PrettyValue(*m.keys(), j) + ": " + PrettyValue(*m.items(), j);
      }
      return text + "}";
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      std::shared_ptr<arrow::Array> values;
      int64_t begin = 0;
      int64_t length = 0;
      if (type.id() == arrow::Type::LIST) {
        const auto& l = static_cast<const arrow::ListArray&>(array);
        values = l.values();
        begin = l.value_offset(i);
        length = l.value_length(i);
      } else {
        const auto& l = static_cast<const arrow::LargeListArray&>(array);
        values = l.values();
        begin = l.value_offset(i);
        length = l.value_length(i);
      }
      std::string text = "[";
      for (int64_t j = begin; j < begin + length; ++j) {
        if (j > begin) text += ", ";
        text += PrettyValue(*values, j);
      }
      return text + "]";
    }
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE: {
      std::string text = CanonicalValues(array.Slice(i, 1))[0];
      if (text.find_first_of(".eEna") == std::string::npos) text += ".0";
      return text;
    }
    default:
      return CanonicalValues(array.Slice(i, 1))[0];
  }
}

/// Canonical text of every value of `array` (kNullToken for nulls): integers and decimals as
/// arrow prints them, floating point as the shortest text that reads back, timestamps via
/// FormatInstant, dates as YYYY-MM-DD, binary as lower-case hex, nested values pretty-printed.
std::vector<std::string> CanonicalValues(const std::shared_ptr<arrow::Array>& array) {
  const int64_t n = array->length();
  std::vector<std::string> out(n);
  const arrow::DataType& type = *array->type();
  for (int64_t i = 0; i < n; ++i) {
    if (array->IsNull(i)) out[i] = kNullToken;
  }
  switch (type.id()) {
    case arrow::Type::NA:
      return out;
    case arrow::Type::FLOAT: {
      const auto& values = static_cast<const arrow::FloatArray&>(*array);
      for (int64_t i = 0; i < n; ++i) {
        if (values.IsValid(i)) out[i] = ShortestFloat(values.Value(i));
      }
      return out;
    }
    case arrow::Type::DOUBLE: {
      const auto& values = static_cast<const arrow::DoubleArray&>(*array);
      for (int64_t i = 0; i < n; ++i) {
        if (values.IsValid(i)) out[i] = ShortestDouble(values.Value(i));
      }
      return out;
    }
    case arrow::Type::TIMESTAMP: {
      const auto& ts_type = static_cast<const arrow::TimestampType&>(type);
      int64_t per_second = 1;
      switch (ts_type.unit()) {
        case arrow::TimeUnit::SECOND: break;
        case arrow::TimeUnit::MILLI: per_second = 1000; break;
        case arrow::TimeUnit::MICRO: per_second = 1000000; break;
        case arrow::TimeUnit::NANO: per_second = 1000000000; break;
      }
      const auto& values = static_cast<const arrow::TimestampArray&>(*array);
      for (int64_t i = 0; i < n; ++i) {
        if (!values.IsValid(i)) continue;
        int64_t seconds = values.Value(i) / per_second;
        int64_t fraction = values.Value(i) % per_second;
        if (fraction < 0) {
          fraction += per_second;
          --seconds;
        }
        out[i] = FormatInstant(seconds, fraction * (1000000000 / per_second));
      }
      return out;
    }
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY: {
      for (int64_t i = 0; i < n; ++i) {
        if (array->IsNull(i)) continue;
        std::string_view bytes;
        if (type.id() == arrow::Type::BINARY) {
          bytes = static_cast<const arrow::BinaryArray&>(*array).GetView(i);
        } else if (type.id() == arrow::Type::LARGE_BINARY) {
          bytes = static_cast<const arrow::LargeBinaryArray&>(*array).GetView(i);
        } else {
          bytes = static_cast<const arrow::FixedSizeBinaryArray&>(*array).GetView(i);
        }
        out[i] = Hex(bytes).substr(2);
      }
      return out;
    }
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::MAP:
    case arrow::Type::EXTENSION:
      for (int64_t i = 0; i < n; ++i) {
        if (array->IsValid(i)) out[i] = PrettyValue(*array, i);
      }
      return out;
    default:
      break;
  }
  auto as_text = arrow::compute::Cast(*array, arrow::utf8());
  for (int64_t i = 0; i < n; ++i) {
    if (array->IsNull(i)) continue;
    if (as_text.ok()) {
      out[i] = static_cast<const arrow::StringArray&>(**as_text).GetString(i);
    } else {
      auto scalar = array->GetScalar(i);
      out[i] = scalar.ok() ? (*scalar)->ToString() : std::string("<unrenderable>");
    }
  }
  return out;
}

/// The canonical text of a quoted cell for a column of `type` (see CanonicalValues), or an
/// error saying why the cell cannot be such a value.
arrow::Result<std::string> CanonicalQuoted(const std::string& cell, const arrow::DataType& type) {
  if (IsNullCell(cell)) return std::string(kNullToken);
  if (cell == kEmptyStringCell) return std::string();
  std::string text = cell;
  auto invalid = [&]() {
    return arrow::Status::Invalid("quoted value `", cell, "` is not a ", type.ToString());
  };
  switch (type.id()) {
    case arrow::Type::BOOL: {
      text = Lower(text);
      if (text != "true" && text != "false") return invalid();
      return text;
    }
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64: {
      if (!text.empty() && text.back() == 'L') text.pop_back();  // Scala long literal
      auto value = ParseInt(text);
      if (!value) return invalid();
      return std::to_string(*value);
    }
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE: {
      if (!text.empty() && (text.back() == 'f' || text.back() == 'F' || text.back() == 'd')) {
        text.pop_back();
      }
      char* end = nullptr;
      if (type.id() == arrow::Type::FLOAT) {
        const float value = std::strtof(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return invalid();
        return ShortestFloat(value);
      }
      const double value = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) return invalid();
      return ShortestDouble(value);
    }
    case arrow::Type::DECIMAL128: {
      const auto& dec = static_cast<const arrow::Decimal128Type&>(type);
      arrow::Decimal128 value;
      int32_t precision = 0;
      int32_t scale = 0;
      if (!arrow::Decimal128::FromString(text, &value, &precision, &scale).ok()) return invalid();
      auto rescaled = value.Rescale(scale, dec.scale());
      if (!rescaled.ok()) return invalid();
      return rescaled->ToString(dec.scale());
    }
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: {
      auto instant = ParseInstant(text);
      if (!instant || instant->substr(10) != " 00:00:00.000000000") return invalid();
      return instant->substr(0, 10);
    }
    case arrow::Type::TIMESTAMP: {
      auto instant = ParseInstant(text);
      if (!instant) return invalid();
      return *instant;
    }
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY:
      text = Lower(text);
      if (text.rfind("0x", 0) == 0) text = text.substr(2);
      return text;
    default:
      return text;
  }
}

/// Compares the columns `block` names of `ours` with its rows, as unordered multisets.
std::optional<std::string> CompareQuotedRows(const arrow::Table& ours, const QuotedBlock& block) {
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (const std::string& name : block.columns) {
    int found = -1;
    for (int c = 0; c < ours.num_columns(); ++c) {
      if (Lower(ours.schema()->field(c)->name()) == Lower(name)) found = c;
    }
    if (found < 0) {
      return fmt::format("quoted column `{}` is not in our result (our schema: {})", name,
                         ours.schema()->ToString());
    }
    columns.push_back(ours.column(found));
  }
  std::vector<std::string> expected(block.rows.size());
  std::vector<std::string> actual(static_cast<size_t>(ours.num_rows()));
  for (size_t c = 0; c < columns.size(); ++c) {
    const arrow::DataType& type = *columns[c]->type();
    // A bare empty cell cannot tell a null from an empty string: neither can this column.
    bool blur_empty = false;
    for (const auto& row : block.rows) blur_empty = blur_empty || row[c].empty();
    for (size_t r = 0; r < block.rows.size(); ++r) {
      std::string value;
      if (block.rows[r][c].empty()) {
        value = "";
      } else {
        auto canonical = CanonicalQuoted(block.rows[r][c], type);
        if (!canonical.ok()) {
          return fmt::format("column `{}`: {}", block.columns[c], canonical.status().message());
        }
        value = *canonical;
      }
      if (blur_empty && value == kNullToken) value = "";
      if (c > 0) expected[r] += kColumnSeparator;
      expected[r] += value;
    }
    size_t r = 0;
    for (const auto& chunk : columns[c]->chunks()) {
      for (std::string& value : CanonicalValues(chunk)) {
        if (blur_empty && value == kNullToken) value = "";
        if (c > 0) actual[r] += kColumnSeparator;
        actual[r] += value;
        ++r;
      }
    }
  }
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  return DiffSortedRows(actual, expected,
                        fmt::format("the quote (columns {})", fmt::join(block.columns, ", ")));
}

/// Compares the live files of a snapshot with a `files` block: each quoted file must match one
/// live file (path equal to the log's path or to its decoded form, or a prefix ending in `...`;
/// size and modificationTime by value; `*` matches anything), and no live file may be left over.
std::optional<std::string> CompareQuotedFiles(const arrow::RecordBatch& files,
                                              const QuotedBlock& block) {
  std::vector<std::vector<std::string>> live(static_cast<size_t>(files.num_rows()));
  for (const std::string& name : block.columns) {
    auto column = files.GetColumnByName(name);
    if (!column) return fmt::format("live files have no column `{}`", name);
    std::vector<std::string> values = CanonicalValues(column);
    for (size_t r = 0; r < live.size(); ++r) live[r].push_back(values[r]);
  }
  auto decoded = [](const std::string& path) {
    std::string out;
    for (size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '%' && i + 2 < path.size() && std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
        out.push_back(static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(path[i]);
      }
    }
    return out;
  };
  auto matches = [&](const std::vector<std::string>& quoted, const std::vector<std::string>& ours) {
    for (size_t c = 0; c < quoted.size(); ++c) {
      const std::string& q = quoted[c];
      if (q == kAnyCell) continue;
      if (block.columns[c] == "path") {
        const bool prefix = q.size() > 3 && q.compare(q.size() - 3, 3, "...") == 0;
        const std::string stem = prefix ? q.substr(0, q.size() - 3) : q;
        bool ok = false;
        for (const std::string& p : {ours[c], decoded(ours[c])}) {
          ok = ok || (prefix ? p.rfind(stem, 0) == 0 : p == stem);
        }
        if (!ok) return false;
      } else if (q != ours[c]) {
        return false;
      }
    }
    return true;
  };
  std::vector<bool> used(live.size(), false);
  std::vector<std::string> unmatched;
  for (const auto& quoted : block.rows) {
    bool found = false;
    for (size_t r = 0; r < live.size() && !found; ++r) {
      if (!used[r] && matches(quoted, live[r])) used[r] = found = true;
    }
    if (!found) unmatched.push_back(fmt::format("{}", fmt::join(quoted, kColumnSeparator)));
  }
  std::vector<std::string> extra;
  for (size_t r = 0; r < live.size(); ++r) {
    if (!used[r]) extra.push_back(fmt::format("{}", fmt::join(live[r], kColumnSeparator)));
  }
  if (unmatched.empty() && extra.empty()) return std::nullopt;
  return fmt::format("live files ({}) differ from the quote: {} live, {} quoted\n    quoted but "
                     "not live:{}\n    live but not quoted:{}",
                     fmt::join(block.columns, ", "), live.size(), block.rows.size(),
                     ListRows(unmatched), ListRows(extra));
}

// --- the log side of EXPECTED.md's "Latest version" section ---------------------------------

/// The Delta type of a schema JSON `type` value, written as EXPECTED.md writes it: primitive
/// names as in the log, `struct<a: T, b: U>`, `array<T>`, `map<K, V>`.
arrow::Result<std::string> DeltaTypeText(simdjson::dom::element type) {
  std::string_view name;
  if (type.get_string().get(name) == simdjson::SUCCESS) return std::string(name);
  simdjson::dom::object object;
  if (type.get_object().get(object) != simdjson::SUCCESS ||
      object["type"].get_string().get(name) != simdjson::SUCCESS) {
    return arrow::Status::Invalid("a type is neither a name nor an object with a `type`");
  }
  if (name == "struct") {
    simdjson::dom::array fields;
    if (object["fields"].get_array().get(fields) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("a struct type has no `fields` array");
    }
    std::vector<std::string> members;
    for (simdjson::dom::element field : fields) {
      std::string_view field_name;
      simdjson::dom::element field_type;
      if (field["name"].get_string().get(field_name) != simdjson::SUCCESS ||
          field["type"].get(field_type) != simdjson::SUCCESS) {
        return arrow::Status::Invalid("a struct field lacks `name` or `type`");
      }
      ARROW_ASSIGN_OR_RAISE(std::string member, DeltaTypeText(field_type));
      members.push_back(fmt::format("{}: {}", field_name, member));
    }
    return fmt::format("struct<{}>", fmt::join(members, ", "));
  }
  if (name == "array") {
    simdjson::dom::element element;
    if (object["elementType"].get(element) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("an array type has no `elementType`");
    }
    ARROW_ASSIGN_OR_RAISE(std::string element_text, DeltaTypeText(element));
    return fmt::format("array<{}>", element_text);
  }
  if (name == "map") {
    simdjson::dom::element key;
    simdjson::dom::element value;
    if (object["keyType"].get(key) != simdjson::SUCCESS ||
        object["valueType"].get(value) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("a map type lacks `keyType` or `valueType`");
    }
    ARROW_ASSIGN_OR_RAISE(std::string key_text, DeltaTypeText(key));
    ARROW_ASSIGN_OR_RAISE(std::string value_text, DeltaTypeText(value));
    return fmt::format("map<{}, {}>", key_text, value_text);
  }
  return arrow::Status::Invalid("unknown complex type `", name, "`");
}

/// One top-level field of a `metaData.schemaString`.
struct LogColumn {
  std::string name;
  std::string type;  ///< as DeltaTypeText writes it
  bool nullable = true;
  /// Field metadata, each value as its JSON text (strings unquoted).
  std::map<std::string, std::string> metadata;
};

arrow::Result<std::vector<LogColumn>> ColumnsOfSchemaString(const std::string& schema_string) {
  simdjson::dom::parser parser;
  simdjson::dom::array fields;
  if (parser.parse(schema_string)["fields"].get_array().get(fields) != simdjson::SUCCESS) {
    return arrow::Status::Invalid("the schema string has no `fields` array");
  }
  std::vector<LogColumn> columns;
  for (simdjson::dom::element field : fields) {
    LogColumn column;
    std::string_view name;
    simdjson::dom::element type;
    if (field["name"].get_string().get(name) != simdjson::SUCCESS ||
        field["type"].get(type) != simdjson::SUCCESS) {
      return arrow::Status::Invalid("a field lacks `name` or `type`");
    }
    column.name = std::string(name);
    ARROW_ASSIGN_OR_RAISE(column.type, DeltaTypeText(type));
    bool nullable = true;
    if (field["nullable"].get_bool().get(nullable) == simdjson::SUCCESS) column.nullable = nullable;
    simdjson::dom::object metadata;
    if (field["metadata"].get_object().get(metadata) == simdjson::SUCCESS) {
      for (auto [key, value] : metadata) {
        std::string_view text;
        column.metadata.emplace(std::string(key), value.get_string().get(text) == simdjson::SUCCESS
                                                      ? std::string(text)
                                                      : simdjson::minify(value));
      }
    }
    columns.push_back(std::move(column));
  }
  return columns;
}

/// Checks the annotations EXPECTED.md gives a column (`physical=X`, `fieldId=N`, `NOT NULL`,
/// separated by `; `) against the log's field; others (`typeChanges=...`, `generated ...`) are
/// descriptive and not checked. Returns the disagreements.
std::vector<std::string> CheckColumnAnnotation(const ExpectedColumn& expected,
                                               const LogColumn& ours) {
  std::vector<std::string> problems;
  if (expected.annotation.empty()) return problems;
  auto metadata = [&](const std::string& key) {
    auto it = ours.metadata.find(key);
    return it == ours.metadata.end() ? std::string("<absent>") : it->second;
  };
  std::string_view rest = expected.annotation;
  while (!rest.empty()) {
    const size_t end = rest.find("; ");
    const std::string item(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    if (item == "NOT NULL") {
      if (ours.nullable) problems.push_back(fmt::format("`{}` is nullable, EXPECTED.md says NOT NULL", ours.name));
    } else if (item.rfind("physical=", 0) == 0) {
      const std::string physical = metadata("delta.columnMapping.physicalName");
      if (physical != item.substr(9)) {
        problems.push_back(fmt::format("`{}` has physical name {}, EXPECTED.md says {}", ours.name,
                                       physical, item.substr(9)));
      }
    } else if (item.rfind("fieldId=", 0) == 0) {
      const std::string id = metadata("delta.columnMapping.id");
      if (id != item.substr(8)) {
        problems.push_back(fmt::format("`{}` has field id {}, EXPECTED.md says {}", ours.name, id,
                                       item.substr(8)));
      }
    }
  }
  return problems;
}

/// The row count the live files' statistics give: the sum of `numRecords` minus the
/// cardinality of each file's deletion vector. Fails when a live file has no `numRecords`.
arrow::Result<int64_t> StatsRowCount(const Snapshot& snapshot) {
  const std::shared_ptr<arrow::RecordBatch>& files = snapshot.files();
  if (!files || files->num_rows() == 0) return 0;
  auto stats = files->GetColumnByName("stats");
  auto paths = files->GetColumnByName("path");
  auto dv = files->GetColumnByName("deletionVector");
  if (!stats || stats->type_id() != arrow::Type::STRING || !paths ||
      paths->type_id() != arrow::Type::STRING) {
    return arrow::Status::Invalid("the live files have no string `stats` or `path` column");
  }
  const auto& stats_text = static_cast<const arrow::StringArray&>(*stats);
  const auto& path_text = static_cast<const arrow::StringArray&>(*paths);
  std::shared_ptr<arrow::Array> cardinality;
  if (dv && dv->type_id() == arrow::Type::STRUCT) {
    cardinality = static_cast<const arrow::StructArray&>(*dv).GetFieldByName("cardinality");
  }
  simdjson::dom::parser parser;
  int64_t rows = 0;
  for (int64_t i = 0; i < files->num_rows(); ++i) {
    int64_t records = 0;
    if (stats_text.IsNull(i) ||
        parser.parse(std::string(stats_text.GetView(i)))["numRecords"].get_int64().get(records) !=
            simdjson::SUCCESS) {
      return arrow::Status::Invalid("live file ", path_text.GetView(i), " has no numRecords");
    }
    rows += records;
    if (cardinality && cardinality->type_id() == arrow::Type::INT64 && dv->IsValid(i) &&
        cardinality->IsValid(i)) {
      rows -= static_cast<const arrow::Int64Array&>(*cardinality).Value(i);
    }
  }
  return rows;
}

std::string FeatureText(const std::optional<std::set<std::string>>& features) {
  if (!features) return "null";
  return fmt::format("[{}]", fmt::join(*features, ", "));
}

std::optional<std::set<std::string>> FeatureSet(
    const std::optional<std::vector<std::string>>& features) {
  if (!features) return std::nullopt;
  return std::set<std::string>(features->begin(), features->end());
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

/// What the error message of a rejected table must name, read from the manifest's reason: the
/// unsupported feature or the cause. Each entry lists alternatives (case-insensitive), any of
/// which satisfies it; all entries must be satisfied.
std::vector<std::vector<std::string>> RejectMessageTokens(std::string_view reason) {
  std::vector<std::vector<std::string>> tokens;
  const std::string text(reason);
  const std::string lower = Lower(reason);
  // A named feature: reader feature `X`, the unknown feature "X".
  for (std::string_view intro : {"reader feature `", "unknown feature \"", "feature `"}) {
    size_t at = lower.find(intro);
    if (at == std::string::npos) continue;
    const size_t begin = at + intro.size();
    const size_t end = text.find(intro.back(), begin);
    if (end != std::string::npos && end > begin) {
      tokens.push_back({text.substr(begin, end - begin)});
      break;
    }
  }
  // minReaderVersion = N: the version. When the reason also names a feature, either cause
  // will do (a reader refusing the version never gets to the features).
  if (size_t at = lower.find("minreaderversion"); at != std::string::npos) {
    size_t digit = lower.find_first_of("0123456789", at);
    if (digit != std::string::npos) {
      size_t end = lower.find_first_not_of("0123456789", digit);
      std::string version = "version " + text.substr(digit, end - digit);
      if (tokens.empty()) {
        tokens.push_back({version});
      } else {
        tokens.back().push_back(version);
      }
    }
  }
  if (lower.find("no metadata") != std::string::npos) tokens.push_back({"metaData"});
  if (lower.find("no protocol") != std::string::npos) tokens.push_back({"protocol"});
  if (lower.find("no `_delta_log`") != std::string::npos) tokens.push_back({"_delta_log"});
  if (lower.find("not contiguous") != std::string::npos) {
    // Versions 0 and 2 only: the gap is version 1.
    tokens.push_back({"missing", "contiguous", "gap"});
    tokens.push_back({" 1 ", " 1:", "[0, 2]", "00000000000000000001"});
  }
  return tokens;
}

/// Runs every check for one table, collecting failures instead of reporting them, so that an
/// excluded table can be required to fail.
class TableChecker {
 public:
  TableChecker(const TableCase& c, fs::path root) : case_(c), root_(std::move(root)) {}

  /// A failed check; `status` is the library error behind it, when there is one.
  struct Failure {
    std::string message;
    std::optional<arrow::Status> status;
  };

  const std::vector<Failure>& failures() const { return failures_; }

  void Run() {
    doc_ = ParseExpectedDoc(case_.table_dir / "EXPECTED.md");
    for (const std::string& problem : doc_.problems) Fail("malformed EXPECTED.md: " + problem);
    if (!case_.must_reject) {
      blocks_ = QuotedBlocksOfExpectedMd(case_.table_dir / "EXPECTED.md");
      if (auto table = ExpectedTableText(case_.expected_dir)) blocks_.push_back(std::move(*table));
      const Transcriptions& transcriptions = LoadedTranscriptions();
      if (auto it = transcriptions.tables.find(case_.id); it != transcriptions.tables.end()) {
        for (const std::string& quote : it->second.quotes) {
          if (!ExpectedMdQuotes(case_.table_dir, quote)) {
            Fail(fmt::format("{} quotes text that is not in EXPECTED.md: {}",
                             TranscriptionsPath().string(), quote));
          }
        }
        blocks_.insert(blocks_.end(), it->second.blocks.begin(), it->second.blocks.end());
      }
    }
    if (case_.must_reject) {
      CheckRejected();
    } else if (case_.metadata_only) {
      CheckMetadataOnly();
    } else {
      CheckReadable();
    }
  }

 private:
  void Fail(std::string message) { failures_.push_back({std::move(message), std::nullopt}); }
  void Fail(std::string message, const arrow::Status& status) {
    failures_.push_back({std::move(message), status});
  }

  bool OpenTable() {
    auto table = DeltaTable::Open(root_.string());
    if (!table.ok()) {
      Fail(fmt::format("DeltaTable::Open failed: {}", table.status().ToString()), table.status());
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

  /// A scan of `version` keeping the rows for which `predicate` holds.
  arrow::Result<std::shared_ptr<arrow::Table>> ReadFiltered(int64_t version,
                                                            const std::string& predicate) {
    ARROW_ASSIGN_OR_RAISE(auto snapshot, SnapshotAt(version));
    ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Filter(predicate).Build());
    return scan->ToTable();
  }

  /// Latest snapshot, with its version checked against the manifest.
  bool LoadLatest() {
    if (!OpenTable()) return false;
    auto latest = table_->Latest();
    if (!latest.ok()) {
      Fail(fmt::format("loading the latest snapshot failed: {}", latest.status().ToString()),
           latest.status());
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
    const std::string lower_message = Lower(message);
    for (const auto& alternatives : RejectMessageTokens(case_.reject_reason)) {
      bool named = false;
      for (const std::string& token : alternatives) {
        named = named || lower_message.find(Lower(token)) != std::string::npos;
      }
      if (!named) {
        Fail(fmt::format("{} error does not name the cause `{}` the manifest gives ({}): {}",
                         stage, fmt::join(alternatives, "` or `"), case_.reject_reason, message));
      }
    }
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
    const std::optional<int64_t> live = LiveFilesLatest(case_.id, doc_.live_files_latest);
    if (live && latest_->num_files() != *live) {
      Fail(fmt::format("latest snapshot has {} live files, EXPECTED.md says {}{}",
                       latest_->num_files(), *live,
                       live != doc_.live_files_latest ? " (corrected in kErrata)" : ""));
    }
    CheckLogMetadata();
    if (doc_.stats_rows_latest) CheckStatsRows(*latest_, *doc_.stats_rows_latest, "latest");
    // No data can be read: each listed version must load, with the row count its files'
    // statistics give where EXPECTED.md states one.
    for (const VersionExpectation& v : doc_.versions) {
      auto snapshot = SnapshotAt(v.version);
      if (!snapshot.ok()) {
        Fail(fmt::format("snapshot at version {} failed: {}", v.version,
                         snapshot.status().ToString()),
             snapshot.status());
      } else if (v.stats_rows) {
        CheckStatsRows(**snapshot, *v.stats_rows, "per-version table");
      }
    }
    CheckQuotedBlocks();
    CheckLogClaims();
  }

  /// Protocol, partition columns, schema (names, Delta types, stated annotations) and table
  /// properties of the latest snapshot, where the "Latest version" section of EXPECTED.md
  /// gives them. Reader and writer feature lists compare as sets.
  void CheckLogMetadata() {
    const Snapshot& snapshot = *latest_;
    if (doc_.protocol) {
      const ExpectedProtocol& expected = *doc_.protocol;
      const Protocol& ours = snapshot.protocol();
      const auto reader = FeatureSet(ours.reader_features);
      const auto writer = FeatureSet(ours.writer_features);
      if (ours.min_reader_version != expected.min_reader_version ||
          ours.min_writer_version != expected.min_writer_version ||
          reader != expected.reader_features || writer != expected.writer_features) {
        Fail(fmt::format("protocol is {}/{} reader features {} writer features {}, EXPECTED.md "
                         "says {}/{} reader features {} writer features {}",
                         ours.min_reader_version, ours.min_writer_version, FeatureText(reader),
                         FeatureText(writer), expected.min_reader_version,
                         expected.min_writer_version, FeatureText(expected.reader_features),
                         FeatureText(expected.writer_features)));
      }
    }
    if (doc_.partition_columns && snapshot.partition_columns() != *doc_.partition_columns) {
      Fail(fmt::format("partition columns are [{}], EXPECTED.md says [{}]",
                       fmt::join(snapshot.partition_columns(), ", "),
                       fmt::join(*doc_.partition_columns, ", ")));
    }
    if (doc_.properties && snapshot.properties() != *doc_.properties) {
      auto render = [](const std::map<std::string, std::string>& properties) {
        std::vector<std::string> items;
        for (const auto& [key, value] : properties) items.push_back(key + "=" + value);
        return fmt::format("{{{}}}", fmt::join(items, ", "));
      };
      Fail(fmt::format("table properties are {}, EXPECTED.md says {}",
                       render(snapshot.properties()), render(*doc_.properties)));
    }
    if (doc_.schema.empty()) return;
    auto columns = ColumnsOfSchemaString(snapshot.metadata().schema_string);
    if (!columns.ok()) {
      Fail(fmt::format("the latest schema string cannot be read: {}",
                       columns.status().ToString()));
      return;
    }
    std::vector<std::string> expected_text;
    std::vector<std::string> expected_names;
    for (const ExpectedColumn& column : doc_.schema) {
      expected_text.push_back(column.name + ": " + column.type);
      expected_names.push_back(column.name);
    }
    std::vector<std::string> ours_text;
    for (const LogColumn& column : *columns) ours_text.push_back(column.name + ": " + column.type);
    if (ours_text != expected_text) {
      Fail(fmt::format("the latest schema is [{}], EXPECTED.md's is [{}]",
                       fmt::join(ours_text, ", "), fmt::join(expected_text, ", ")));
      return;
    }
    for (size_t i = 0; i < columns->size(); ++i) {
      for (const std::string& problem : CheckColumnAnnotation(doc_.schema[i], (*columns)[i])) {
        Fail("schema: " + problem);
      }
    }
    if (snapshot.schema() && snapshot.schema()->field_names() != expected_names) {
      Fail(fmt::format("the snapshot's Arrow schema has columns [{}], EXPECTED.md's schema [{}]",
                       fmt::join(snapshot.schema()->field_names(), ", "),
                       fmt::join(expected_names, ", ")));
    }
  }

  /// The row count of `snapshot`'s file statistics (numRecords minus DV cardinality).
  /// EXPECTED.md's counts are computed from the JSON commits: a snapshot built from a checkpoint
  /// written without stats (`dat-no_stats`, `writeStatsAsJson=false`) has none to sum, which is
  /// not a disagreement; without a checkpoint every live file must have `numRecords`.
  void CheckStatsRows(const Snapshot& snapshot, int64_t expected, std::string_view where) {
    auto rows = StatsRowCount(snapshot);
    if (!rows.ok() && snapshot.state().checkpoint_version.has_value()) return;
    if (!rows.ok()) {
      Fail(fmt::format("version {}: no row count from log stats ({} of EXPECTED.md says {}): {}",
                       snapshot.version(), where, expected, rows.status().message()));
    } else if (*rows != expected) {
      Fail(fmt::format("version {}: the live files' stats give {} rows, EXPECTED.md ({}) says {}",
                       snapshot.version(), *rows, where, expected));
    }
  }

  /// The `snapshot` and `history` claims of quoted_rows.txt.
  void CheckLogClaims() {
    const Transcriptions& transcriptions = LoadedTranscriptions();
    auto it = transcriptions.tables.find(case_.id);
    if (it == transcriptions.tables.end()) return;
    for (const LogClaim& claim : it->second.claims) {
      if (claim.kind == LogClaim::Kind::kHistory) {
        auto history = table_->History(claim.limit);
        if (!history.ok()) {
          Fail(fmt::format("History({}) failed (claim at {}): {}",
                           claim.limit ? std::to_string(*claim.limit) : "", claim.source,
                           history.status().ToString()),
               history.status());
        } else if (static_cast<int64_t>(history->size()) != claim.value) {
          Fail(fmt::format("History({}) has {} entries, {} says {}",
                           claim.limit ? std::to_string(*claim.limit) : "", history->size(),
                           claim.source, claim.value));
        }
        continue;
      }
      for (int64_t version = claim.first; version <= claim.last; ++version) {
        // Uncached: the claim is about what the table handle does for this version.
        auto snapshot = table_->SnapshotAt(version);
        if (claim.kind == LogClaim::Kind::kFails) {
          if (snapshot.ok()) {
            Fail(fmt::format("snapshot at version {} loaded; {} says it fails with {}", version,
                             claim.source, DeltaErrorCodeName(claim.code)));
          } else if (!IsDeltaError(snapshot.status(), claim.code)) {
            Fail(fmt::format("snapshot at version {} failed with {} instead of {} ({}): {}",
                             version, CodeName(snapshot.status()), DeltaErrorCodeName(claim.code),
                             claim.source, snapshot.status().ToString()));
          }
          continue;
        }
        if (!snapshot.ok()) {
          Fail(fmt::format("snapshot at version {} failed ({} says it loads): {}", version,
                           claim.source, snapshot.status().ToString()),
               snapshot.status());
        } else if (claim.kind == LogClaim::Kind::kCheckpoint &&
                   (*snapshot)->state().checkpoint_version != claim.value) {
          const auto& used = (*snapshot)->state().checkpoint_version;
          Fail(fmt::format("snapshot at version {} was built from {}, {} says the checkpoint of "
                           "version {}",
                           version, used ? "the checkpoint of version " + std::to_string(*used)
                                         : std::string("no checkpoint"),
                           claim.source, claim.value));
        }
      }
    }
  }

  /// Every quoted block: rows against a scan of its version, files against the live files.
  void CheckQuotedBlocks() {
    for (const QuotedBlock& block : blocks_) {
      const int64_t version = block.version.value_or(latest_->version());
      if (block.files) {
        auto snapshot = SnapshotAt(version);
        if (!snapshot.ok()) {
          Fail(fmt::format("snapshot at version {} (files quoted at {}) failed: {}", version,
                           block.source, snapshot.status().ToString()),
               snapshot.status());
        } else if (auto problem = CompareQuotedFiles(*(*snapshot)->files(), block)) {
          Fail(fmt::format("version {}: {} (quoted at {})", version, *problem, block.source));
        }
        continue;
      }
      if (case_.metadata_only) {
        Fail(fmt::format("rows quoted at {} for a table whose data files do not exist",
                         block.source));
        continue;
      }
      auto table = block.filter.empty() ? Read(version) : ReadFiltered(version, block.filter);
      if (!table.ok()) {
        Fail(fmt::format("reading version {} (rows quoted at {}) failed: {}", version,
                         block.source, table.status().ToString()),
             table.status());
      } else if (auto problem = CompareQuotedRows(**table, block)) {
        Fail(fmt::format("version {}{}: rows differ from the quote at {}: {}", version,
                         block.filter.empty() ? "" : " where " + block.filter, block.source,
                         *problem));
      }
    }
  }

  /// The columns of the latest read are those of EXPECTED.md's schema, in order; a `void`
  /// column is read as Arrow null type, all null.
  void CheckSchemaColumns() {
    const std::vector<ExpectedColumn>& schema = doc_.schema;
    if (schema.empty()) return;
    auto table = Read(latest_->version());
    if (!table.ok()) return;  // reported by the row count checks
    std::vector<std::string> expected_names;
    for (const ExpectedColumn& column : schema) expected_names.push_back(column.name);
    std::vector<std::string> names = (*table)->schema()->field_names();
    if (names != expected_names) {
      Fail(fmt::format("columns read are [{}], EXPECTED.md's schema has [{}]",
                       fmt::join(names, ", "), fmt::join(expected_names, ", ")));
    }
    for (const ExpectedColumn& expected : schema) {
      if (expected.type != "void") continue;
      const std::string& name = expected.name;
      auto column = (*table)->GetColumnByName(name);
      if (!column) continue;  // reported above
      if (column->type()->id() != arrow::Type::NA) {
        Fail(fmt::format("void column `{}` is read as {}, not Arrow null type", name,
                         column->type()->ToString()));
      } else if (column->null_count() != column->length()) {
        Fail(fmt::format("void column `{}` has {} non-null values", name,
                         column->length() - column->null_count()));
      }
    }
  }

  void CheckReadable() {
    if (!LoadLatest()) return;
    CheckLogMetadata();
    CheckReferenceData();
    CheckSchemaColumns();
    CheckQuotedBlocks();
    CheckLogClaims();
    if (case_.expected_rows_latest) {
      CheckRowCount(latest_->version(), *case_.expected_rows_latest, "the manifest");
    }
    if (doc_.stats_rows_latest) CheckStatsRows(*latest_, *doc_.stats_rows_latest, "latest");
    for (const VersionExpectation& v : doc_.versions) {
      if (!v.stats_rows) continue;
      if (auto snapshot = SnapshotAt(v.version); snapshot.ok()) {
        CheckStatsRows(**snapshot, *v.stats_rows, "per-version table");
      }  // a snapshot that fails to load is reported below
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
                             snapshot.status().ToString()),
                 snapshot.status());
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
                       table.status().ToString()),
           table.status());
      return;
    }
    if (auto problem = CompareWithReference(**table, reference, CorrectionsFor(case_.id))) {
      Fail(fmt::format("version {} ({}): {}", version, label, *problem));
    }
  }

  void CheckRowCount(int64_t version, int64_t expected, std::string_view source) {
    auto table = Read(version);
    if (!table.ok()) {
      Fail(fmt::format("reading version {} failed: {}", version, table.status().ToString()),
           table.status());
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
                       version, snapshot.status().ToString()),
           snapshot.status());
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
  std::vector<QuotedBlock> blocks_;
  std::vector<Failure> failures_;
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
  auto excluded = exclusions.entries.find(c.id);
  if (excluded == exclusions.entries.end()) {
    for (const auto& failure : checker.failures()) ADD_FAILURE() << c.id << ": " << failure.message;
    return;
  }
  // An excluded table must fail, and only because of its feature: every failure must be an
  // UnsupportedFeature error naming it. Anything else (a wrong row, another error) is a bug.
  const Exclusion& exclusion = excluded->second;
  if (checker.failures().empty()) {
    ADD_FAILURE() << "table " << c.id << " now passes: remove it from exclusions.txt";
    return;
  }
  bool as_listed = true;
  for (const auto& failure : checker.failures()) {
    const bool unsupported =
        failure.status && IsDeltaError(*failure.status, DeltaErrorCode::kUnsupportedFeature);
    if (!unsupported || failure.status->message().find(exclusion.feature) == std::string::npos) {
      as_listed = false;
      ADD_FAILURE() << c.id << " is excluded for the unsupported feature `" << exclusion.feature
                    << "`, but this failure is not an UnsupportedFeature error naming it: "
                    << failure.message;
    }
  }
  if (as_listed) {
    RecordProperty("excluded", exclusion.feature);
    std::cout << "[ EXCLUDED ] " << c.id << " (" << exclusion.feature << ": " << exclusion.reason
              << "): " << checker.failures().front().message << "\n";
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
  for (const auto& [id, exclusion] : exclusions.entries) {
    EXPECT_TRUE(ids.count(id) > 0) << ExclusionsPath().string() << " lists `" << id
                                   << "`, which is not in the corpus manifest";
  }
}

TEST(ConformanceErrata, EachEntryQuotesItsTable) {
  std::map<std::string, fs::path> dirs;
  for (const TableCase& c : LoadCases()) dirs.emplace(c.id, c.table_dir);
  for (const Erratum& erratum : kErrata) {
    auto dir = dirs.find(std::string(erratum.table_id));
    if (dir == dirs.end()) {
      ADD_FAILURE() << "kErrata names `" << erratum.table_id << "`, which is not in the manifest";
      continue;
    }
    EXPECT_TRUE(ExpectedMdQuotes(dir->second, erratum.quote))
        << "kErrata entry for " << erratum.table_id << " quotes text its EXPECTED.md lacks: "
        << erratum.quote;
  }
}

TEST(ConformanceQuotedRows, TranscriptionsAreWellFormedAndQuoteTheirTables) {
  const Transcriptions& transcriptions = LoadedTranscriptions();
  for (const std::string& problem : transcriptions.problems) ADD_FAILURE() << problem;
  std::map<std::string, fs::path> dirs;
  for (const TableCase& c : LoadCases()) dirs.emplace(c.id, c.table_dir);
  for (const auto& [id, transcription] : transcriptions.tables) {
    auto dir = dirs.find(id);
    if (dir == dirs.end()) {
      ADD_FAILURE() << TranscriptionsPath().string() << " names `" << id
                    << "`, which is not in the manifest";
      continue;
    }
    EXPECT_FALSE(transcription.blocks.empty() && transcription.claims.empty())
        << id << " has no rows, files, snapshot or history line";
    for (const std::string& quote : transcription.quotes) {
      EXPECT_TRUE(ExpectedMdQuotes(dir->second, quote))
          << id << ": quoted text not found in its EXPECTED.md: " << quote;
    }
  }
}

TEST(ConformanceQuotedRows, CodeFenceTablesOfExpectedMdAreParsed) {
  const fs::path tables = fs::path(testing::ConformanceDir()) / "tables";
  // kernel-rs-with-short-dv: one pipe table, 4 columns, 7 rows (ids 3..9).
  auto short_dv = QuotedBlocksOfExpectedMd(tables / "kernel-rs-with-short-dv" / "EXPECTED.md");
  ASSERT_EQ(short_dv.size(), 1u);
  EXPECT_EQ(short_dv[0].columns,
            (std::vector<std::string>{"id", "value", "timestamp", "rand"}));
  ASSERT_EQ(short_dv[0].rows.size(), 7u);
  EXPECT_EQ(short_dv[0].rows[0][3], "0.7918174793484931");
  // kernel-rs-compacted-log-files-table: the blank comment of id 2 is kept as an empty cell.
  auto compacted =
      QuotedBlocksOfExpectedMd(tables / "kernel-rs-compacted-log-files-table" / "EXPECTED.md");
  ASSERT_EQ(compacted.size(), 1u);
  ASSERT_EQ(compacted[0].rows.size(), 5u);
  EXPECT_EQ(compacted[0].rows[2], (std::vector<std::string>{"2", ""}));
  // kernel-rs-type-widening: two tables in one fence, 7 and 6 columns of the same 2 rows.
  auto widening = QuotedBlocksOfExpectedMd(tables / "kernel-rs-type-widening" / "EXPECTED.md");
  ASSERT_EQ(widening.size(), 2u);
  EXPECT_EQ(widening[0].columns.size(), 7u);
  EXPECT_EQ(widening[1].columns.size(), 6u);
  EXPECT_EQ(widening[0].rows.size(), 2u);
  EXPECT_EQ(widening[1].rows.size(), 2u);
  // Tables quoting no rows yield none; the log listing fence is not a quote.
  EXPECT_TRUE(QuotedBlocksOfExpectedMd(tables / "dat-basic_append" / "EXPECTED.md").empty());
  // The arrow pretty-print of kernel-rs-unshredded-variant: 102 rows of 7 columns.
  auto variant = ExpectedTableText(fs::path(testing::ConformanceDir()) / "expected" /
                                   "kernel-rs-unshredded-variant");
  ASSERT_TRUE(variant.has_value());
  EXPECT_EQ(variant->columns.size(), 7u);
  EXPECT_EQ(variant->rows.size(), 102u);
}

TEST(ConformanceExpectedDoc, LatestVersionSchemaAndVersionSectionsAreParsed) {
  const fs::path tables = fs::path(testing::ConformanceDir()) / "tables";
  const ExpectedDoc vacuumed =
      ParseExpectedDoc(tables / "delta-rs-checkpoints_vacuumed" / "EXPECTED.md");
  EXPECT_TRUE(vacuumed.problems.empty()) << fmt::format("{}", fmt::join(vacuumed.problems, "\n"));
  ASSERT_TRUE(vacuumed.protocol.has_value());
  EXPECT_EQ(vacuumed.protocol->min_reader_version, 1);
  EXPECT_EQ(vacuumed.protocol->min_writer_version, 2);
  EXPECT_FALSE(vacuumed.protocol->reader_features.has_value());
  EXPECT_EQ(vacuumed.partition_columns, std::vector<std::string>{"date"});
  EXPECT_FALSE(vacuumed.properties.has_value());
  EXPECT_EQ(vacuumed.stats_rows_latest, 12);
  EXPECT_EQ(vacuumed.live_files_latest, 12);
  ASSERT_EQ(vacuumed.schema.size(), 4u);
  EXPECT_EQ(vacuumed.schema[0].type,
            "struct<some_struct_member: string, some_struct_timestamp: timestamp>");
  const ExpectedDoc no_last = ParseExpectedDoc(
      tables / "kernel-rs-with_checkpoint_no_last_checkpoint" / "EXPECTED.md");
  EXPECT_TRUE(no_last.problems.empty());
  EXPECT_EQ(no_last.properties,
            (std::map<std::string, std::string>{{"delta.checkpointInterval", "2"}}));
  ASSERT_EQ(no_last.versions.size(), 4u);
  EXPECT_EQ(no_last.versions[1].stats_rows, 5);
  EXPECT_EQ(no_last.versions[1].kind, VersionExpectation::Kind::kMissingFiles);
  const ExpectedDoc features =
      ParseExpectedDoc(tables / "delta-rs-simple_table_features" / "EXPECTED.md");
  ASSERT_TRUE(features.protocol.has_value());
  ASSERT_TRUE(features.protocol->reader_features.has_value());
  EXPECT_EQ(features.protocol->reader_features->count("blahabl"), 1u);
  // No protocol (a table that must be rejected): nothing to check, not malformed.
  const ExpectedDoc no_protocol = ParseExpectedDoc(
      tables / "delta-golden-deltalog-state-reconstruction-without-protocol" / "EXPECTED.md");
  EXPECT_TRUE(no_protocol.problems.empty());
  EXPECT_FALSE(no_protocol.protocol.has_value());
}

TEST(ConformanceExpectedDoc, MalformedSectionsAreReported) {
  testing::TempDir tmp;
  const fs::path path = tmp.path() / "EXPECTED.md";
  std::ofstream(path) << "## Latest version\n\n"
                         "- live files at latest: many\n"
                         "- protocol: `{\"minReaderVersion\": 1}`\n"
                         "- partition columns: `[a, b]`\n"
                         "- table properties: `{\"k\": 1}`\n"
                         "- row count from log stats (sum): n/a\n\n"
                         "### Schema (latest metaData.schemaString)\n\n"
                         "- id: integer\n\n"
                         "## Per-version row counts (time travel)\n\n"
                         "| version | rows (stats) | rows (parquet footers) |\n"
                         "|---|---|---|\n"
                         "| 0 | 3 |\n"
                         "| 1 | many | 3 |\n"
                         "| v2 | 3 | 3 |\n";
  const ExpectedDoc doc = ParseExpectedDoc(path);
  const std::string problems = fmt::format("{}", fmt::join(doc.problems, "\n"));
  EXPECT_EQ(doc.problems.size(), 9u) << problems;
  for (std::string_view what :
       {"live-file count", "malformed protocol", "malformed partition columns",
        "malformed table properties", "row count from log stats", "schema line",
        "per-version row", "neither a number"}) {
    EXPECT_NE(problems.find(what), std::string::npos) << what << " not reported in:\n" << problems;
  }
  EXPECT_TRUE(doc.versions.empty());
  EXPECT_FALSE(ParseExpectedDoc(tmp.path() / "absent.md").problems.empty());
}

TEST(ConformanceQuotedRows, LogClaimsAreParsed) {
  auto parse = [](const std::string& line) {
    std::istringstream words(line);
    std::string keyword;
    words >> keyword;
    return ParseLogClaim(keyword, words);
  };
  auto fails = parse("snapshot 0 4 fails VersionNotFound");
  ASSERT_TRUE(fails.has_value());
  EXPECT_EQ(fails->kind, LogClaim::Kind::kFails);
  EXPECT_EQ(fails->last, 4);
  EXPECT_EQ(fails->code, DeltaErrorCode::kVersionNotFound);
  auto checkpoint = parse("snapshot 3 checkpoint 2");
  ASSERT_TRUE(checkpoint.has_value());
  EXPECT_EQ(checkpoint->first, 3);
  EXPECT_EQ(checkpoint->last, 3);
  EXPECT_EQ(checkpoint->value, 2);
  auto history = parse("history limit 10 entries 8");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->limit, 10);
  EXPECT_EQ(history->value, 8);
  EXPECT_FALSE(parse("snapshot 4 0 loads").has_value());
  EXPECT_FALSE(parse("snapshot 0 fails NoSuchCode").has_value());
  EXPECT_FALSE(parse("snapshot 0 loads extra").has_value());
  EXPECT_FALSE(parse("history entries").has_value());
}

TEST(ConformanceQuotedRows, ValuesAreNormalisedByColumnType) {
  EXPECT_EQ(*CanonicalQuoted("2023-05-31T18:58:33.633Z",
                             arrow::TimestampType(arrow::TimeUnit::MICRO, "UTC")),
            "2023-05-31 18:58:33.633000000");
  EXPECT_EQ(*CanonicalQuoted("2024-01-01 12:00:00+02:00",
                             arrow::TimestampType(arrow::TimeUnit::MICRO)),
            "2024-01-01 10:00:00.000000000");
  EXPECT_EQ(*CanonicalQuoted("5.0", arrow::DoubleType()), "5");
  EXPECT_EQ(*CanonicalQuoted("3.4000000953674316", arrow::DoubleType()), "3.4000000953674316");
  EXPECT_EQ(*CanonicalQuoted("1.0", arrow::Decimal128Type(10, 3)), "1.000");
  EXPECT_FALSE(CanonicalQuoted("1.25", arrow::Decimal128Type(10, 1)).ok());
  EXPECT_EQ(*CanonicalQuoted("7L", arrow::Int64Type()), "7");
  EXPECT_FALSE(CanonicalQuoted("seven", arrow::Int64Type()).ok());
  EXPECT_EQ(*CanonicalQuoted("NULL", arrow::Int32Type()), kNullToken);
  EXPECT_EQ(*CanonicalQuoted("2024-09-09", arrow::Date32Type()), "2024-09-09");
  // A different value must not compare equal.
  EXPECT_NE(*CanonicalQuoted("2023-05-31T18:58:33.634Z",
                             arrow::TimestampType(arrow::TimeUnit::MILLI, "UTC")),
            "2023-05-31 18:58:33.633000000");
}

TEST(ConformanceQuotedRows, MismatchedRowsAreReported) {
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({1, 2}).ok());
  arrow::StringBuilder names;
  ASSERT_TRUE(names.Append("a").ok());
  ASSERT_TRUE(names.AppendNull().ok());
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}),
      {*ids.Finish(), *names.Finish()});
  QuotedBlock block;
  block.columns = {"ID", "name"};
  block.rows = {{"2", ""}, {"1", "a"}};
  EXPECT_FALSE(CompareQuotedRows(*table, block).has_value());
  block.rows = {{"2", "NULL"}, {"1", "a"}};
  EXPECT_FALSE(CompareQuotedRows(*table, block).has_value());
  block.rows = {{"2", "b"}, {"1", "a"}};
  EXPECT_TRUE(CompareQuotedRows(*table, block).has_value());
  block.rows = {{"1", "a"}};
  EXPECT_TRUE(CompareQuotedRows(*table, block).has_value());
  block.columns = {"missing"};
  block.rows = {{"1"}, {"2"}};
  EXPECT_TRUE(CompareQuotedRows(*table, block).has_value());
}

}  // namespace
}  // namespace deltacpp
