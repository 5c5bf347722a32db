// Helpers for the DELETE and UPDATE tests: tables with or without deletion vectors and the
// change data feed, the actions of one commit, cdc files read back with plain Parquet, and a
// log store that lets a test commit in the middle of an operation.
#pragma once

#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "util/uri.h"

namespace deltacpp::testing {

/// Creates a table (id BIGINT, name STRING, part STRING) with `properties`, partitioned by
/// `part` when `partitioned`.
inline void CreateIdNamePart(const std::string& root,
                             std::map<std::string, std::string> properties, bool partitioned) {
  CreateTableOptions create;
  create.schema = arrow::schema({arrow::field("id", arrow::int64()),
                                 arrow::field("name", arrow::utf8()),
                                 arrow::field("part", arrow::utf8())});
  if (partitioned) create.partition_columns = {"part"};
  create.properties = std::move(properties);
  auto created = CreateTable(root, create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
}

/// Appends rows (id, name, part); one data file per partition.
inline void AppendIdNamePart(const std::string& root, const std::vector<int64_t>& ids,
                             const std::vector<std::optional<std::string>>& names,
                             const std::string& part) {
  std::vector<std::optional<int64_t>> id_values(ids.begin(), ids.end());
  std::vector<std::optional<std::string>> parts(ids.size(), part);
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("part", arrow::utf8())});
  auto written = WriteTable(root, Rows(schema, {Longs(id_values), Strings(names), Strings(parts)}),
                            WriteOptions{});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
}

/// One action of a commit, as parsed JSON text of the fields the tests look at.
struct FileActionInfo {
  std::string path;
  std::optional<std::string> stats;
  std::optional<std::string> dv_unique_id;  ///< storageType + pathOrInlineDv (+ @offset)
  std::optional<int64_t> dv_cardinality;
  std::map<std::string, std::optional<std::string>> partition_values;
  bool data_change = true;
  std::optional<int64_t> base_row_id;
};

/// The actions of one commit file.
struct CommitFile {
  bool exists = false;
  std::vector<FileActionInfo> adds;
  std::vector<FileActionInfo> removes;
  std::vector<FileActionInfo> cdc;
  std::string operation;
  std::map<std::string, std::string> parameters;
  std::map<std::string, std::string> metrics;
  std::map<std::string, std::string> tags;
  std::string isolation_level;
  bool has_metadata = false;  ///< the commit has a metaData action
};

inline FileActionInfo ParseFileAction(const rapidjson::Value& a) {
  FileActionInfo out;
  out.path = a["path"].GetString();
  if (a.HasMember("stats") && a["stats"].IsString()) out.stats = a["stats"].GetString();
  if (a.HasMember("dataChange")) out.data_change = a["dataChange"].GetBool();
  if (a.HasMember("baseRowId")) out.base_row_id = a["baseRowId"].GetInt64();
  if (a.HasMember("partitionValues")) {
    for (const auto& pv : a["partitionValues"].GetObject()) {
      out.partition_values[pv.name.GetString()] =
          pv.value.IsNull() ? std::nullopt : std::optional<std::string>(pv.value.GetString());
    }
  }
  if (a.HasMember("deletionVector") && a["deletionVector"].IsObject()) {
    const auto& dv = a["deletionVector"];
    std::string id = std::string(dv["storageType"].GetString()) + dv["pathOrInlineDv"].GetString();
    if (dv.HasMember("offset")) id += "@" + std::to_string(dv["offset"].GetInt());
    out.dv_unique_id = id;
    out.dv_cardinality = dv["cardinality"].GetInt64();
  }
  return out;
}

inline CommitFile ReadCommitFile(const std::string& root, int64_t version) {
  CommitFile out;
  std::ifstream in(root + "/_delta_log/" + CommitName(version));
  if (!in.good()) return out;
  out.exists = true;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    EXPECT_FALSE(doc.HasParseError()) << line;
    if (doc.HasParseError() || !doc.IsObject()) continue;
    if (doc.HasMember("add")) out.adds.push_back(ParseFileAction(doc["add"]));
    if (doc.HasMember("remove")) out.removes.push_back(ParseFileAction(doc["remove"]));
    if (doc.HasMember("cdc")) out.cdc.push_back(ParseFileAction(doc["cdc"]));
    if (doc.HasMember("metaData")) out.has_metadata = true;
    if (doc.HasMember("commitInfo")) {
      const auto& ci = doc["commitInfo"];
      if (ci.HasMember("operation")) out.operation = ci["operation"].GetString();
      if (ci.HasMember("isolationLevel")) out.isolation_level = ci["isolationLevel"].GetString();
      for (const char* key : {"operationParameters", "operationMetrics", "tags"}) {
        if (!ci.HasMember(key)) continue;
        auto& target = std::string(key) == "operationParameters" ? out.parameters
                       : std::string(key) == "operationMetrics"  ? out.metrics
                                                                 : out.tags;
        for (const auto& m : ci[key].GetObject()) {
          target[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
        }
      }
    }
  }
  return out;
}

/// A Parquet file read as stored (physical column names, no partition columns).
inline std::shared_ptr<arrow::Table> ReadParquetFile(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path);
  EXPECT_TRUE(file.ok()) << path << ": " << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  auto table = (*reader)->ReadTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : nullptr;
}

/// The rows of every cdc file of a commit as "col|...|_change_type" strings (columns as stored,
/// in file order; partition columns are not in the files).
inline std::multiset<std::string> ChangeRows(const std::string& root, const CommitFile& commit) {
  std::multiset<std::string> out;
  for (const auto& c : commit.cdc) {
    auto decoded = internal::PercentDecodeStrict(c.path);
    EXPECT_TRUE(decoded.ok()) << c.path;
    auto table = ReadParquetFile(root + "/" + (decoded.ok() ? *decoded : c.path));
    if (!table) continue;
    auto rows = RowStrings(*table);
    out.insert(rows.begin(), rows.end());
  }
  return out;
}

/// Files (relative to the root) under `_change_data`.
inline std::set<std::string> ChangeDataFiles(const std::string& root) {
  std::set<std::string> out;
  std::error_code ec;
  const auto dir = std::filesystem::path(root) / "_change_data";
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) out.insert(std::filesystem::relative(it->path(), root).string());
  }
  return out;
}

/// Deletion vector files (`*.bin`) under the table root.
inline std::set<std::string> DeletionVectorFiles(const std::string& root) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".bin") {
      out.insert(std::filesystem::relative(it->path(), root).string());
    }
  }
  return out;
}

/// Overwrites every live data file of `root` whose relative path starts with `prefix` with
/// bytes that are not Parquet, so that an operation that reads one fails.
inline int SpoilDataFiles(const std::string& root, const std::string& prefix) {
  int spoiled = 0;
  for (const auto& f : DataFiles(root)) {
    if (f.rfind(prefix, 0) != 0) continue;
    std::ofstream out(root + "/" + f, std::ios::trunc | std::ios::binary);
    out << "not a parquet file";
    ++spoiled;
  }
  return spoiled;
}

/// Delegates to the local store, but runs `hook` once, before the first commit file is
/// written: lets a test commit something between an operation's snapshot and its commit.
class HookedLogStore final : public LogStore {
 public:
  explicit HookedLogStore(std::function<void()> hook)
      : inner_(MakeLocalLogStore()), hook_(std::move(hook)) {}
  arrow::Result<std::vector<FileEntry>> List(const std::string& dir,
                                             std::string_view start_after_name) override {
    return inner_->List(dir, start_after_name);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override {
    return inner_->Read(path);
  }
  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override {
    RunHook(path);
    return inner_->PutIfAbsent(path, data);
  }
  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override {
    RunHook(path);
    return inner_->PutIfAbsentStreaming(path, write);
  }
  arrow::Status PutReplace(const std::string& path, std::string_view data) override {
    return inner_->PutReplace(path, data);
  }
  arrow::Status Delete(const std::string& path) override { return inner_->Delete(path); }
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override {
    return inner_->filesystem();
  }

 private:
  void RunHook(const std::string& path) {
    if (!hook_ || path.find(".json") == std::string::npos) return;
    auto hook = std::move(hook_);
    hook_ = nullptr;
    hook();
  }
  std::shared_ptr<LogStore> inner_;
  std::function<void()> hook_;
};

/// A handle on `root` whose first commit runs `hook` first.
inline std::shared_ptr<DeltaTable> HookedTable(const std::string& root,
                                               std::function<void()> hook) {
  auto table = DeltaTable::Open(root, std::make_shared<HookedLogStore>(std::move(hook)));
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : nullptr;
}

}  // namespace deltacpp::testing
