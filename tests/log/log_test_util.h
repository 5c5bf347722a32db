// Helpers for log tests: write raw commit files into a temp table and set their times, load
// snapshots.
#pragma once

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/api.h"

namespace deltacpp::testing {

inline std::string CommitPath(const std::string& root, int64_t version) {
  return fmt::format("{}/_delta_log/{:020d}.json", root, version);
}

/// Writes `lines` as commit `version` of the table at `root`.
inline void WriteCommit(const std::string& root, int64_t version,
                        const std::vector<std::string>& lines) {
  std::filesystem::create_directories(root + "/_delta_log");
  std::ofstream out(CommitPath(root, version), std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
}

/// The current time in milliseconds since the epoch.
inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Sets the modification time of the file at `path` to `epoch_ms`.
inline void SetFileTimeMs(const std::string& path, int64_t epoch_ms) {
  using namespace std::chrono;
  auto sys = system_clock::time_point(milliseconds(epoch_ms));
  auto ft = std::filesystem::file_time_type::clock::now() +
            duration_cast<std::filesystem::file_time_type::duration>(sys - system_clock::now());
  std::filesystem::last_write_time(path, ft);
}

/// Sets the modification time of commit `version` to `epoch_ms`.
inline void SetCommitTime(const std::string& root, int64_t version, int64_t epoch_ms) {
  SetFileTimeMs(CommitPath(root, version), epoch_ms);
}

/// The snapshot of `v` (latest when nullopt) of the table at `root`; records a failure and
/// returns null when it cannot be loaded.
inline std::shared_ptr<Snapshot> Load(const std::string& root,
                                      std::optional<int64_t> v = std::nullopt) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto snap = (*table)->SnapshotAt(v);
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : nullptr;
}

inline std::string ProtocolLine(int reader = 1, int writer = 2) {
  return fmt::format(R"({{"protocol":{{"minReaderVersion":{},"minWriterVersion":{}}}}})", reader,
                     writer);
}

inline std::string MetadataLine(const std::string& schema_fields_json =
                                    R"({"name":"id","type":"long","nullable":true,"metadata":{}})",
                                const std::string& partition_columns = "[]",
                                const std::string& configuration = "{}") {
  std::string schema = R"({"type":"struct","fields":[)" + schema_fields_json + "]}";
  // schemaString is a JSON string holding JSON: escape quotes.
  std::string escaped;
  for (char c : schema) {
    if (c == '"') escaped += "\\\"";
    else escaped += c;
  }
  return fmt::format(
      R"({{"metaData":{{"id":"t-1","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{}","partitionColumns":{},"configuration":{},"createdTime":1}}}})",
      escaped, partition_columns, configuration);
}

inline std::string AddLine(const std::string& path, int64_t size = 100,
                           const std::string& extra = "") {
  return fmt::format(
      R"({{"add":{{"path":"{}","partitionValues":{{}},"size":{},"modificationTime":1,"dataChange":true{}}}}})",
      path, size, extra);
}

inline std::string RemoveLine(const std::string& path, const std::string& extra = "") {
  return fmt::format(R"({{"remove":{{"path":"{}","deletionTimestamp":5,"dataChange":true{}}}}})",
                     path, extra);
}

}  // namespace deltacpp::testing
