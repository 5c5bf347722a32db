// VACUUM: what it deletes (tombstoned files past the retention, old orphans, expired change
// data, replaced deletion vector files, folders left empty) and what it never touches (live
// files, files a version inside the window reads, fresh files, hidden folders, anything outside
// the table root), the retention check, dry runs, LITE mode and the START / END commits.
#include <gtest/gtest.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/vacuum.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/transaction.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::TempDir;

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Touch(const fs::path& path, const std::string& content = "x") {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

// Sets the modification time of `path` (file or folder) `days` days back.
void AgeBy(const fs::path& path, int days) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(24 * days));
}

// Ages every file and folder under `root` except `_delta_log` by `days` days (folders last, so
// aging their files does not make them young again).
void AgeTable(const std::string& root, int days) {
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == "_delta_log") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      dirs.push_back(it->path());
    } else {
      AgeBy(it->path(), days);
    }
  }
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) AgeBy(*d, days);
}

// Every file under `root` outside `_delta_log`, relative to the root.
std::set<std::string> AllFiles(const std::string& root) {
  std::set<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == "_delta_log") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory()) out.insert(fs::relative(it->path(), root).string());
  }
  return out;
}

std::set<std::string> Paths(const VacuumResult& r) {
  std::set<std::string> out;
  for (const auto& f : r.files) out.insert(f.path);
  return out;
}

// A table (id, name, part) partitioned by part, with two appends.
void MakeTable(const std::string& root, std::map<std::string, std::string> properties = {}) {
  testing::CreateIdNamePart(root, std::move(properties), /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2, 3}, {"a", "b", "c"}, "x");
  testing::AppendIdNamePart(root, {4, 5}, {"d", "e"}, "y");
}

// Commits a remove of the live file `path` whose deletionTimestamp is `deleted_at_ms`.
void RemoveWithTime(const std::string& root, const std::string& path, int64_t deleted_at_ms) {
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snapshot = (*table)->Latest();
  ASSERT_TRUE(snapshot.ok());
  auto txn = Transaction::Start(*table, *snapshot);
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  RemoveFile remove;
  remove.path = path;
  remove.deletion_timestamp = deleted_at_ms;
  // The tables here are partitioned by `part`, and the path starts with `part=<value>/`.
  const auto eq = path.find('='), slash = path.find('/');
  ASSERT_TRUE(eq != std::string::npos && slash != std::string::npos) << path;
  remove.partition_values["part"] = path.substr(eq + 1, slash - eq - 1);
  (*txn)->RemoveFiles({remove});
  auto committed = (*txn)->Commit("DELETE");
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
}

std::vector<std::string> LivePaths(const std::string& root) {
  std::vector<std::string> out;
  auto snapshot = testing::Latest(root);
  snapshot->live_files().ForEach(
      [&](FileRef ref) { out.emplace_back(snapshot->live_files().path(ref)); });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Vacuum, DefaultRetentionDeletesOldOrphansAndKeepsEverythingAVersionInsideItReads) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  // A DELETE now: its tombstone is fresh, so version 2 (which still has the file) stays whole.
  auto deleted = DeleteBuilder(root).Where("part = 'y'").Execute();
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  AgeTable(root, 30);  // every data file is old; only the tombstone's time protects it
  Touch(fs::path(root) / "part=x" / "orphan-old.parquet");
  AgeBy(fs::path(root) / "part=x" / "orphan-old.parquet", 8);
  Touch(fs::path(root) / "part=x" / "orphan-fresh.parquet");  // a writer not yet committed
  const auto before = AllFiles(root);

  auto result = VacuumBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Paths(*result), std::set<std::string>{"part=x/orphan-old.parquet"});
  EXPECT_EQ(result->num_files, 1);
  EXPECT_EQ(result->retention_ms, 7 * kDayMs);
  auto after = AllFiles(root);
  EXPECT_EQ(testing::Minus(before, after), Paths(*result));
  EXPECT_TRUE(after.count("part=x/orphan-fresh.parquet"));
  // Every version reads as before.
  for (int64_t v = 0; v <= 3; ++v) testing::ReadRows(root, v);
  EXPECT_EQ(testing::ReadRows(root, 2).size(), 5u);
}

TEST(Vacuum, TombstonesOlderThanTheRetentionGoAndTimeTravelThereNamesTheMissingFile) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  const auto live = LivePaths(root);
  ASSERT_EQ(live.size(), 2u);
  const std::string gone = live[0];
  RemoveWithTime(root, gone, NowMs() - 8 * kDayMs);  // version 3
  AgeTable(root, 30);

  auto result = VacuumBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Paths(*result), std::set<std::string>{gone});
  EXPECT_FALSE(fs::exists(fs::path(root) / gone));
  EXPECT_TRUE(fs::exists(fs::path(root) / live[1]));
  // The latest version (and the VACUUM commits) read; version 2 needs the vacuumed file.
  EXPECT_EQ(testing::ReadRows(root).size(), live[1].find("part=x") != std::string::npos ? 3u : 2u);
  auto old = testing::ReadTable(root, 2);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(testing::Code(old.status()), "MissingFile") << old.status().ToString();
  EXPECT_NE(old.status().message().find(fs::path(gone).filename().string()), std::string::npos)
      << old.status().ToString();
}

TEST(Vacuum, ARetentionShorterThanTheTablesIsRefusedUnlessTheCheckIsOff) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  ASSERT_TRUE(DeleteBuilder(root).Where("part = 'y'").Execute().ok());
  AgeTable(root, 30);
  const auto files = AllFiles(root);
  const auto version = testing::LatestVersion(root);

  auto refused = VacuumBuilder(root).RetentionHours(24).Execute();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(testing::Code(refused.status()), "InvalidArgument");
  EXPECT_NE(refused.status().message().find("168 hours"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(AllFiles(root), files);
  EXPECT_EQ(testing::LatestVersion(root), version) << "a refused VACUUM commits nothing";

  for (double bad : {-1.0, std::nan("")}) {
    auto negative = VacuumBuilder(root).RetentionHours(bad).RetentionDurationCheck(false).Execute();
    ASSERT_FALSE(negative.ok()) << bad;
    EXPECT_EQ(testing::Code(negative.status()), "InvalidArgument");
  }
  // The table's own property sets the bar: one day is enough for a table that keeps one day.
  TempDir short_dir;
  MakeTable(short_dir.str(), {{"delta.deletedFileRetentionDuration", "interval 1 day"}});
  auto allowed = VacuumBuilder(short_dir.str()).RetentionHours(24).DryRun().Execute();
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(allowed->retention_ms, kDayMs);
}

TEST(Vacuum, RetentionZeroLeavesExactlyTheLatestVersionsFiles) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root, {{"delta.enableChangeDataFeed", "true"}});
  ASSERT_TRUE(DeleteBuilder(root).Where("id = 2").Execute().ok());  // rewrites part=x
  ASSERT_TRUE(DeleteBuilder(root).Where("part = 'y'").Execute().ok());
  testing::AppendIdNamePart(root, {6}, {"f"}, "z");
  Touch(fs::path(root) / "stray.parquet");
  const auto latest_rows = testing::ReadRows(root);
  ASSERT_FALSE(testing::ChangeDataFiles(root).empty()) << "the rewrite wrote change data";

  auto folders = [&] {
    std::set<std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_directory()) out.insert(fs::relative(it->path(), root).string());
    }
    return out;
  };
  const auto folders_before = folders();
  auto result = VacuumBuilder(root).RetentionHours(0).RetentionDurationCheck(false).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::set<std::string> live;
  for (const auto& p : LivePaths(root)) live.insert(p);
  EXPECT_EQ(AllFiles(root), live) << "only the latest version's files are left";
  EXPECT_TRUE(testing::ChangeDataFiles(root).empty());
  EXPECT_FALSE(fs::exists(fs::path(root) / "part=y")) << "the emptied partition folder is gone";
  EXPECT_FALSE(fs::exists(fs::path(root) / "_change_data"));
  const auto gone_folders = testing::Minus(folders_before, folders());
  EXPECT_TRUE(gone_folders.count("part=y") && gone_folders.count("_change_data"));
  EXPECT_EQ(result->num_directories, static_cast<int64_t>(gone_folders.size()));
  EXPECT_EQ(testing::ReadRows(root), latest_rows);
  // The versions VACUUM committed read the same rows.
  const int64_t latest = *testing::LatestVersion(root);
  EXPECT_EQ(*result->end_version, latest);
  EXPECT_EQ(testing::ReadRows(root, *result->start_version), latest_rows);
}

TEST(Vacuum, HiddenFoldersAndTheLogAreNeverTouchedButChangeDataIs) {
  TempDir dir;
  const std::string root = dir.str();
  CreateTableOptions create;
  create.schema = arrow::schema({arrow::field("id", arrow::int64()),
                                 arrow::field("_p", arrow::utf8())});
  create.partition_columns = {"_p"};
  ASSERT_TRUE(CreateTable(root, create).ok());
  auto written = WriteTable(root,
                            testing::Rows(create.schema, {testing::Longs({1, 2}),
                                                          testing::Strings({"a", "b"})}),
                            WriteOptions{});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const fs::path r(root);
  const std::vector<std::string> hidden = {"_checkpoints/offsets/0", ".hidden/file.parquet",
                                           "_SUCCESS", ".part-0.parquet.crc",
                                           "_p=a/.inflight.parquet"};
  for (const auto& h : hidden) Touch(r / h);
  Touch(r / "_change_data" / "cdc-old.parquet");
  Touch(r / "_p=a" / "orphan.parquet");
  Touch(r / "_delta_index" / "old.idx");
  const auto log_before = testing::LogListing(root);
  AgeTable(root, 30);
  for (const auto& entry : fs::directory_iterator(r / "_delta_log")) AgeBy(entry.path(), 30);

  auto result = VacuumBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Paths(*result),
            (std::set<std::string>{"_change_data/cdc-old.parquet", "_delta_index/old.idx",
                                   "_p=a/orphan.parquet"}));
  for (const auto& h : hidden) EXPECT_TRUE(fs::exists(r / h)) << h;
  // The log only gained the two VACUUM commits.
  auto log_after = testing::LogListing(root);
  EXPECT_EQ(testing::Minus(log_before, log_after), std::set<std::string>{});
  EXPECT_EQ(log_after.size(), log_before.size() + 2);
  EXPECT_EQ(testing::ReadRows(root).size(), 2u);
}

TEST(Vacuum, NothingOutsideTheTableRootIsDeletedOrFollowed) {
  TempDir dir;
  const fs::path base = dir.path();
  const std::string root = (base / "table").string();
  MakeTable(root);
  // Canaries outside the root, old enough to be deleted if VACUUM ever reached them.
  const fs::path outside = base / "outside";
  Touch(outside / "canary.parquet");
  Touch(outside / "linked" / "data.parquet");
  Touch(base / "canary-dv.bin");
  // Removes naming them, spelled every way that climbs out, plus another scheme.
  const int64_t old = NowMs() - 30 * kDayMs;
  std::vector<std::string> lines;
  const std::vector<std::string> climbing = {
      "../outside/canary.parquet", "%2E%2E/outside/canary.parquet",
      "part=x/..%2F..%2Foutside/canary.parquet", (outside / "canary.parquet").string(),
      "file://" + (outside / "canary.parquet").string(), "s3://bucket/outside/canary.parquet"};
  const std::string outside_dv = "p:" + (base / "canary-dv.bin").string();
  for (const std::string& p : climbing) {
    lines.push_back(fmt::format(R"({{"remove":{{"path":"{}","deletionTimestamp":{},)"
                                R"("dataChange":true}}}})",
                                p, old));
  }
  lines.push_back(fmt::format(
      R"({{"remove":{{"path":"gone.parquet","deletionTimestamp":{},"dataChange":true,)"
      R"("deletionVector":{{"storageType":"p","pathOrInlineDv":"{}","sizeInBytes":10,)"
      R"("cardinality":1,"offset":1}}}}}})",
      old, (base / "canary-dv.bin").string()));
  // One commit each: some spellings name the same file, and one commit may not remove a file
  // twice.
  auto store = MakeLocalLogStore();
  int64_t version = 3;
  for (const auto& l : lines) {
    const std::string body = R"({"commitInfo":{"operation":"DELETE","timestamp":1}})"
                             "\n" + l + "\n";
    ASSERT_TRUE(
        store->PutIfAbsent(root + "/_delta_log/" + testing::CommitName(version++), body).ok());
  }
  // A link inside the root to a folder outside, and one to a file outside.
  fs::create_directory_symlink(outside / "linked", fs::path(root) / "linked");
  fs::create_symlink(outside / "canary.parquet", fs::path(root) / "link.parquet");
  AgeTable(root, 30);
  for (const auto& p : {outside / "canary.parquet", outside / "linked" / "data.parquet",
                        base / "canary-dv.bin"}) {
    AgeBy(p, 30);
  }

  for (VacuumMode mode : {VacuumMode::kFull, VacuumMode::kLite}) {
    for (bool dry : {true, false}) {
      auto result = VacuumBuilder(root)
                        .Mode(mode)
                        .DryRun(dry)
                        .RetentionHours(0)
                        .RetentionDurationCheck(false)
                        .Execute();
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      // LITE reads every commit, so every spelling is reported; FULL reports the tombstones of
      // the latest version, where spellings of one file count once (the newest).
      const std::set<std::string> refused(result->refused_paths.begin(),
                                          result->refused_paths.end());
      EXPECT_TRUE(refused.count(outside_dv)) << ::testing::PrintToString(refused);
      EXPECT_TRUE(refused.count(climbing.back())) << ::testing::PrintToString(refused);
      if (mode == VacuumMode::kLite) {
        for (const auto& c : climbing) EXPECT_TRUE(refused.count(c)) << c;
      }
      for (const auto& f : result->files) {
        EXPECT_EQ(f.path.find(".."), std::string::npos) << f.path;
        EXPECT_NE(f.path, "linked/data.parquet");
      }
      EXPECT_TRUE(fs::exists(outside / "canary.parquet"));
      EXPECT_TRUE(fs::exists(outside / "linked" / "data.parquet"));
      EXPECT_TRUE(fs::exists(base / "canary-dv.bin"));
      EXPECT_TRUE(fs::is_symlink(fs::path(root) / "linked")) << "links are left alone";
      EXPECT_TRUE(fs::is_symlink(fs::path(root) / "link.parquet"));
    }
  }
  EXPECT_EQ(testing::ReadRows(root).size(), 5u);
}

TEST(Vacuum, ADryRunListsWhatARealRunDeletesAndChangesNothing) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  const auto live = LivePaths(root);
  RemoveWithTime(root, live[1], NowMs() - 10 * kDayMs);
  Touch(fs::path(root) / "old-orphan.parquet", "12345");
  AgeTable(root, 30);
  const auto files = AllFiles(root);
  const auto version = testing::LatestVersion(root);

  auto dry = VacuumBuilder(root).DryRun().Execute();
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_TRUE(dry->dry_run);
  EXPECT_EQ(Paths(*dry), (std::set<std::string>{live[1], "old-orphan.parquet"}));
  EXPECT_EQ(AllFiles(root), files);
  EXPECT_EQ(testing::LatestVersion(root), version);
  EXPECT_FALSE(dry->start_version.has_value());
  int64_t bytes = 0;
  for (const auto& p : Paths(*dry)) bytes += static_cast<int64_t>(fs::file_size(fs::path(root) / p));
  EXPECT_EQ(dry->num_bytes, bytes);

  auto real = VacuumBuilder(root).Execute();
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(Paths(*real), Paths(*dry));
  EXPECT_EQ(real->num_bytes, dry->num_bytes);
  EXPECT_EQ(testing::Minus(files, AllFiles(root)), Paths(*dry));
}

TEST(Vacuum, StartAndEndCommitsCarryDeltaSparksParametersAndMetrics) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  Touch(fs::path(root) / "a.parquet", "abc");
  Touch(fs::path(root) / "b.parquet", "de");
  AgeTable(root, 30);
  auto result = VacuumBuilder(root).RetentionHours(200).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->start_version && result->end_version);
  EXPECT_EQ(*result->end_version, *result->start_version + 1);

  auto start = testing::ReadCommitFile(root, *result->start_version);
  auto end = testing::ReadCommitFile(root, *result->end_version);
  EXPECT_TRUE(start.adds.empty() && start.removes.empty()) << "START holds only commitInfo";
  EXPECT_TRUE(end.adds.empty() && end.removes.empty());
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto history = (*table)->History(2);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  const auto& e = (*history)[0];
  const auto& s = (*history)[1];
  EXPECT_EQ(s.operation.value_or(""), "VACUUM START");
  EXPECT_EQ(e.operation.value_or(""), "VACUUM END");
  rapidjson::Document sp, sm, ep, em;
  sp.Parse(s.operation_parameters.c_str());
  sm.Parse(s.operation_metrics.c_str());
  ep.Parse(e.operation_parameters.c_str());
  em.Parse(e.operation_metrics.c_str());
  EXPECT_STREQ(sp["retentionCheckEnabled"].GetString(), "true");
  EXPECT_STREQ(sp["defaultRetentionMillis"].GetString(), "604800000");
  EXPECT_STREQ(sp["specifiedRetentionMillis"].GetString(), "720000000");
  EXPECT_STREQ(sm["numFilesToDelete"].GetString(), "2");
  EXPECT_STREQ(sm["sizeOfDataToDelete"].GetString(), "5");
  EXPECT_STREQ(ep["status"].GetString(), "COMPLETED");
  EXPECT_STREQ(em["numDeletedFiles"].GetString(), "2");
  EXPECT_STREQ(em["numVacuumedDirectories"].GetString(), "0");
}

TEST(Vacuum, ReplacedDeletionVectorFilesGoAndTheCurrentOnesStay) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.enableDeletionVectors", "true"}}, false);
  // Enough scattered deletes that the bitmaps are too large to be stored inline.
  std::vector<int64_t> ids;
  std::vector<std::optional<std::string>> names;
  for (int64_t i = 0; i < 3000; ++i) {
    ids.push_back(i);
    names.emplace_back("n");
  }
  testing::AppendIdNamePart(root, ids, names, "x");
  ASSERT_TRUE(DeleteBuilder(root).Where("id % 3 = 0").Execute().ok());
  const auto first_dvs = testing::DeletionVectorFiles(root);
  ASSERT_EQ(first_dvs.size(), 1u);
  ASSERT_TRUE(DeleteBuilder(root).Where("id % 3 = 1").Execute().ok());  // a new, larger DV
  const auto all_dvs = testing::DeletionVectorFiles(root);
  ASSERT_EQ(all_dvs.size(), 2u);
  const auto rows = testing::ReadRows(root);

  auto result = VacuumBuilder(root).RetentionHours(0).RetentionDurationCheck(false).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto left = testing::DeletionVectorFiles(root);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(first_dvs.count(*left.begin()), 0u) << "the replaced DV went, the current stayed";
  EXPECT_EQ(testing::ReadRows(root), rows);
  EXPECT_EQ(rows.size(), 1000u);
}

TEST(Vacuum, LiteModeDeletesWhatTheLogNamesAndLeavesUnnamedFilesAlone) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  const auto live = LivePaths(root);
  RemoveWithTime(root, live[0], NowMs() - 9 * kDayMs);
  RemoveWithTime(root, live[1], NowMs() - kDayMs);  // inside the window: kept
  Touch(fs::path(root) / "orphan.parquet");
  AgeTable(root, 30);

  auto lite = VacuumBuilder(root).Mode(VacuumMode::kLite).Execute();
  ASSERT_TRUE(lite.ok()) << lite.status().ToString();
  EXPECT_EQ(Paths(*lite), std::set<std::string>{live[0]});
  EXPECT_TRUE(fs::exists(fs::path(root) / "orphan.parquet")) << "LITE does not list folders";
  EXPECT_TRUE(fs::exists(fs::path(root) / live[1]));
  // FULL finds the orphan.
  auto full = VacuumBuilder(root).Execute();
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(Paths(*full), std::set<std::string>{"orphan.parquet"});
}

// LITE takes its paths from the log, so a remove or cdc entry naming a hidden file (the log
// itself, a stream checkpoint, an in-flight temporary file) must not make it delete one.
TEST(Vacuum, LiteModeNeverDeletesHiddenPathsTheLogNames) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  const auto live = LivePaths(root);
  RemoveWithTime(root, live[0], NowMs() - 9 * kDayMs);  // the one file that may go
  const fs::path r(root);
  const std::vector<std::string> hidden = {"_checkpoints/offsets/0", ".hidden/file.parquet",
                                           "part=x/.inflight.parquet", "_SUCCESS",
                                           "_delta_log/" + testing::CommitName(0)};
  for (const auto& h : hidden) {
    if (!fs::exists(r / h)) Touch(r / h);
  }
  const int64_t old = NowMs() - 30 * kDayMs;
  auto store = MakeLocalLogStore();
  int64_t version = *testing::LatestVersion(root) + 1;
  for (const auto& h : hidden) {
    const std::string body = fmt::format(
        "{}\n{{\"remove\":{{\"path\":\"{}\",\"deletionTimestamp\":{},\"dataChange\":true}}}}\n"
        "{{\"cdc\":{{\"path\":\"{}\",\"partitionValues\":{{}},\"size\":1,"
        "\"dataChange\":false}}}}\n",
        R"({"commitInfo":{"operation":"DELETE","timestamp":1}})", h, old, h);
    ASSERT_TRUE(
        store->PutIfAbsent(root + "/_delta_log/" + testing::CommitName(version++), body).ok());
  }
  AgeTable(root, 30);
  for (const auto& entry : fs::directory_iterator(r / "_delta_log")) AgeBy(entry.path(), 30);

  for (bool dry : {true, false}) {
    auto lite = VacuumBuilder(root).Mode(VacuumMode::kLite).DryRun(dry).Execute();
    ASSERT_TRUE(lite.ok()) << lite.status().ToString();
    EXPECT_EQ(Paths(*lite), std::set<std::string>{live[0]}) << (dry ? "dry run" : "run");
    for (const auto& h : hidden) EXPECT_TRUE(fs::exists(r / h)) << h;
  }
}

TEST(Vacuum, AFreshEmptyFolderStaysAndAnOldOneGoes) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  AgeTable(root, 30);
  fs::create_directories(fs::path(root) / "part=old" / "deeper");
  AgeBy(fs::path(root) / "part=old" / "deeper", 30);
  AgeBy(fs::path(root) / "part=old", 30);
  fs::create_directories(fs::path(root) / "part=new");  // a writer's folder, file to come

  auto result = VacuumBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_directories, 2);
  EXPECT_FALSE(fs::exists(fs::path(root) / "part=old"));
  EXPECT_TRUE(fs::exists(fs::path(root) / "part=new"));
  EXPECT_TRUE(fs::exists(fs::path(root) / "part=x"));
}

TEST(Vacuum, ATableWithAnUnknownWriterFeatureIsRefusedBeforeAnythingIsDeleted) {
  TempDir dir;
  const std::string root = dir.str();
  MakeTable(root);
  Touch(fs::path(root) / "orphan.parquet");
  AgeTable(root, 30);
  auto store = MakeLocalLogStore();
  const std::string protocol =
      R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],)"
      R"("writerFeatures":["aFeatureFromTheFuture"]}})";
  ASSERT_TRUE(store->PutIfAbsent(root + "/_delta_log/" + testing::CommitName(3),
                                 R"({"commitInfo":{"operation":"UPGRADE PROTOCOL"}})"
                                 "\n" + protocol + "\n")
                  .ok());
  auto result = VacuumBuilder(root).Execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(testing::Code(result.status()), "UnsupportedFeature") << result.status().ToString();
  EXPECT_TRUE(fs::exists(fs::path(root) / "orphan.parquet"));
}

}  // namespace
}  // namespace deltacpp
