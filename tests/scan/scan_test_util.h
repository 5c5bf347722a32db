// Helpers shared by the scan tests: building Arrow data, writing fixture tables, running scans
// and pulling typed values out of their results.
#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "deltacpp/api.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp::scantest {

using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::TempDir;

/// Registers Arrow's kernels once for the whole test program.
class InitializeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { Initialize(); }
};

inline ::testing::Environment* const kInitializeEnvironment =
    ::testing::AddGlobalTestEnvironment(new InitializeEnvironment);

/// Days since 1970-01-01 of a proleptic Gregorian date.
constexpr int32_t Days(int y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int32_t>(doe) - 719468;
}
static_assert(Days(1970, 1, 1) == 0);
static_assert(Days(2024, 1, 1) == 19723);

/// Microseconds since the epoch of a UTC wall-clock time.
constexpr int64_t Micros(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0,
                         int64_t us = 0) {
  return ((static_cast<int64_t>(Days(y, mo, d)) * 86400 + h * 3600 + mi * 60 + s) * 1'000'000) +
         us;
}

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> BuildArray(Builder& b, const std::vector<std::optional<T>>& values) {
  for (const auto& v : values) {
    if (v) {
      EXPECT_TRUE(b.Append(*v).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(b.Finish(&out).ok());
  return out;
}

inline std::shared_ptr<arrow::Array> Int64s(const std::vector<std::optional<int64_t>>& v) {
  arrow::Int64Builder b;
  return BuildArray(b, v);
}
inline std::shared_ptr<arrow::Array> Int32s(const std::vector<std::optional<int32_t>>& v) {
  arrow::Int32Builder b;
  return BuildArray(b, v);
}
inline std::shared_ptr<arrow::Array> Doubles(const std::vector<std::optional<double>>& v) {
  arrow::DoubleBuilder b;
  return BuildArray(b, v);
}
inline std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& v) {
  arrow::StringBuilder b;
  return BuildArray(b, v);
}
inline std::shared_ptr<arrow::Array> Dates(const std::vector<std::optional<int32_t>>& v) {
  arrow::Date32Builder b;
  return BuildArray(b, v);
}
/// Zoned (Delta `timestamp`) microsecond timestamps.
inline std::shared_ptr<arrow::Array> Timestamps(const std::vector<std::optional<int64_t>>& v) {
  arrow::TimestampBuilder b(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                            arrow::default_memory_pool());
  return BuildArray(b, v);
}
/// decimal(precision, scale) values given as unscaled integers.
inline std::shared_ptr<arrow::Array> Decimals(int precision, int scale,
                                              const std::vector<std::optional<int64_t>>& unscaled) {
  arrow::Decimal128Builder b(arrow::decimal128(precision, scale), arrow::default_memory_pool());
  std::vector<std::optional<arrow::Decimal128>> values;
  for (const auto& u : unscaled) {
    values.push_back(u ? std::optional<arrow::Decimal128>(arrow::Decimal128(*u)) : std::nullopt);
  }
  return BuildArray(b, values);
}

/// Consecutive int64 values [first, first + count).
inline std::shared_ptr<arrow::Array> Range(int64_t first, int64_t count) {
  std::vector<std::optional<int64_t>> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(first + i);
  return Int64s(v);
}

/// A table from named columns (nullable fields typed after the arrays).
inline std::shared_ptr<arrow::Table> MakeTable(
    const std::vector<std::pair<std::string, std::shared_ptr<arrow::Array>>>& columns) {
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (const auto& [name, array] : columns) {
    fields.push_back(arrow::field(name, array->type()));
    arrays.push_back(array);
  }
  return arrow::Table::Make(arrow::schema(fields), arrays);
}

/// Appends one file as its own commit and returns its add.path.
inline std::string AppendOne(FixtureTableWriter& writer, const FixtureFile& file) {
  auto before = writer.active_paths();
  auto version = writer.Append({file});
  EXPECT_TRUE(version.ok()) << version.status().ToString();
  auto after = writer.active_paths();
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  EXPECT_EQ(added.size(), 1u);
  return added.empty() ? std::string() : added.front();
}

/// Last path component.
inline std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

/// Base names of the files a scan will read, in its order.
inline std::vector<std::string> FileBaseNames(const Scan& scan) {
  std::vector<std::string> out;
  for (const auto& f : scan.files()) out.push_back(BaseName(f.path));
  return out;
}

inline std::shared_ptr<Snapshot> OpenLatest(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : nullptr;
}

/// Plans a scan, failing the test when planning fails.
inline std::shared_ptr<Scan> Plan(const Snapshot& snap, std::vector<std::string> columns = {},
                                  std::string filter = "") {
  auto builder = snap.NewScan();
  builder.Columns(std::move(columns)).Filter(filter);
  auto scan = builder.Build();
  EXPECT_TRUE(scan.ok()) << "filter [" << filter << "]: " << scan.status().ToString();
  return scan.ok() ? *scan : nullptr;
}

/// Runs a scan to a single-chunk table, failing the test on errors.
inline std::shared_ptr<arrow::Table> Read(const Scan& scan) {
  auto table = scan.ToTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto combined = (*table)->CombineChunks();
  EXPECT_TRUE(combined.ok());
  return combined.ok() ? *combined : nullptr;
}

/// The column named `name` as one array of the given Arrow type (test failure otherwise).
template <typename ArrayType>
std::shared_ptr<ArrayType> Column(const arrow::Table& table, const std::string& name,
                                  const std::shared_ptr<arrow::DataType>& type) {
  auto column = table.GetColumnByName(name);
  EXPECT_NE(column, nullptr) << "no column " << name << " in " << table.schema()->ToString();
  if (!column) return nullptr;
  EXPECT_TRUE(column->type()->Equals(*type))
      << name << " is " << column->type()->ToString() << ", expected " << type->ToString();
  if (!column->type()->Equals(*type)) return nullptr;
  auto concatenated = column->num_chunks() == 0 ? arrow::MakeEmptyArray(type)
                                                : arrow::Concatenate(column->chunks());
  EXPECT_TRUE(concatenated.ok());
  if (!concatenated.ok()) return nullptr;
  return std::static_pointer_cast<ArrayType>(*concatenated);
}

template <typename ArrayType, typename T>
std::vector<std::optional<T>> Values(const arrow::Table& table, const std::string& name,
                                     const std::shared_ptr<arrow::DataType>& type) {
  std::vector<std::optional<T>> out;
  auto array = Column<ArrayType>(table, name, type);
  if (!array) return out;
  for (int64_t i = 0; i < array->length(); ++i) {
    if (array->IsNull(i)) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(static_cast<T>(array->Value(i)));
    }
  }
  return out;
}

inline std::vector<std::optional<int64_t>> Int64Values(const arrow::Table& t,
                                                       const std::string& name) {
  return Values<arrow::Int64Array, int64_t>(t, name, arrow::int64());
}
inline std::vector<std::optional<int32_t>> Int32Values(const arrow::Table& t,
                                                       const std::string& name) {
  return Values<arrow::Int32Array, int32_t>(t, name, arrow::int32());
}
inline std::vector<std::optional<int32_t>> DateValues(const arrow::Table& t,
                                                      const std::string& name) {
  return Values<arrow::Date32Array, int32_t>(t, name, arrow::date32());
}
inline std::vector<std::optional<int64_t>> TimestampValues(const arrow::Table& t,
                                                           const std::string& name) {
  return Values<arrow::TimestampArray, int64_t>(
      t, name, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
}
inline std::vector<std::optional<std::string>> StringValues(const arrow::Table& t,
                                                            const std::string& name) {
  std::vector<std::optional<std::string>> out;
  auto array = Column<arrow::StringArray>(t, name, arrow::utf8());
  if (!array) return out;
  for (int64_t i = 0; i < array->length(); ++i) {
    if (array->IsNull(i)) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(std::string(array->GetView(i)));
    }
  }
  return out;
}

/// Non-null int64 values of a column, sorted (for order-insensitive comparisons).
inline std::vector<int64_t> SortedIds(const arrow::Table& t, const std::string& name = "id") {
  std::vector<int64_t> out;
  for (const auto& v : Int64Values(t, name)) {
    EXPECT_TRUE(v.has_value()) << name << " holds a NULL";
    if (v) out.push_back(*v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Sorted [first, last] without the values in `minus`.
inline std::vector<int64_t> IdsBetween(int64_t first, int64_t last,
                                       const std::set<int64_t>& minus = {}) {
  std::vector<int64_t> out;
  for (int64_t i = first; i <= last; ++i) {
    if (!minus.count(i)) out.push_back(i);
  }
  return out;
}

/// Field names of a schema, in order.
inline std::vector<std::string> FieldNames(const arrow::Schema& schema) {
  std::vector<std::string> out;
  for (const auto& f : schema.fields()) out.push_back(f->name());
  return out;
}

/// JSON string literal for `s` (quotes, backslashes and control characters escaped).
inline std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace deltacpp::scantest
