// Helpers of the streaming tests: landing files, the sink's rows, id counts.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "deltacpp/api.h"
#include "deltacpp/schema.h"

namespace deltacpp::testing {

/// Writes a JSON Lines file of records {"id": i, "name": "n<i>"} for ids [first, first + n)
/// atomically (under a hidden name, then renamed), so a source never sees it half-written.
inline void LandJson(const std::filesystem::path& dir, const std::string& name, int64_t first,
                     int64_t n) {
  const auto target = dir / name;
  std::filesystem::create_directories(target.parent_path());
  const auto tmp = target.parent_path() / ("." + target.filename().string() + ".tmp");
  {
    std::ofstream out(tmp);
    for (int64_t i = first; i < first + n; ++i) {
      out << "{\"id\":" << i << ",\"name\":\"n" << i << "\"}\n";
    }
  }
  std::filesystem::rename(tmp, target);
}

inline void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

inline std::shared_ptr<arrow::Schema> IdNameSchema() {
  return *SchemaFromDdl("id long, name string");
}

/// How often each id occurs in the latest version of the table at `root` (column "id").
inline std::map<int64_t, int> IdCounts(const std::string& root) {
  std::map<int64_t, int> out;
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return out;
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  if (!snap.ok()) return out;
  auto scan = (*snap)->NewScan().Columns({"id"}).Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  if (!scan.ok()) return out;
  auto rows = (*scan)->ToTable();
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok()) return out;
  for (const auto& chunk : (*rows)->column(0)->chunks()) {
    const auto& ids = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < ids.length(); ++i) ++out[ids.Value(i)];
  }
  return out;
}

/// The ids [first, first + n) once each.
inline std::map<int64_t, int> EachOnce(int64_t first, int64_t n) {
  std::map<int64_t, int> out;
  for (int64_t i = first; i < first + n; ++i) out[i] = 1;
  return out;
}

}  // namespace deltacpp::testing
