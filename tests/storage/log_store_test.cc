#include <gtest/gtest.h>

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "storage/fault_injecting_log_store.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

#define ASSERT_OK(expr)                            \
  do {                                             \
    const arrow::Status st_ = (expr);              \
    ASSERT_TRUE(st_.ok()) << #expr << ": " << st_; \
  } while (false)

#define STORAGE_TEST_CONCAT_(a, b) a##b
#define STORAGE_TEST_CONCAT(a, b) STORAGE_TEST_CONCAT_(a, b)
#define ASSIGN_OR_FAIL(lhs, expr) \
  ASSIGN_OR_FAIL_IMPL(STORAGE_TEST_CONCAT(result_, __LINE__), lhs, expr)
#define ASSIGN_OR_FAIL_IMPL(result, lhs, expr)                  \
  auto result = (expr);                                         \
  ASSERT_TRUE(result.ok()) << #expr << ": " << result.status(); \
  lhs = std::move(result).ValueUnsafe()

using internal::FaultInjectingLogStore;
using Op = FaultInjectingLogStore::Op;
using When = FaultInjectingLogStore::When;

std::string ToString(const std::shared_ptr<arrow::Buffer>& buffer) {
  return buffer ? buffer->ToString() : std::string("<null>");
}

std::vector<std::string> Paths(const std::vector<FileEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.path);
  return out;
}

// Every name in `dir` (hidden ones included), recursively, as seen by the OS.
std::vector<std::string> AllNamesOnDisk(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  return out;
}

struct StoreKind {
  std::string name;
  std::function<std::shared_ptr<LogStore>()> make;
  bool local;
};

class LogStoreTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { store_ = GetParam().make(); }

  // Local stores work under a real temp dir; the memory store under a made-up absolute root.
  std::string Root() const { return GetParam().local ? temp_.str() : "/mem/root"; }
  std::string Log() const { return Root() + "/table/_delta_log"; }

  testing::TempDir temp_;
  std::shared_ptr<LogStore> store_;
};

TEST_P(LogStoreTest, ListsSortedByNameFromStartName) {
  const std::string log = Log();
  for (const char* name : {"00000000000000000002.json", "00000000000000000000.json",
                           "_last_checkpoint", "00000000000000000010.checkpoint.parquet",
                           "00000000000000000001.json"}) {
    ASSERT_OK(store_->PutIfAbsent(log + "/" + name, std::string("content of ") + name));
  }
  ASSIGN_OR_FAIL(auto all, store_->List(log));
  EXPECT_EQ(Paths(all), (std::vector<std::string>{
                            log + "/00000000000000000000.json",
                            log + "/00000000000000000001.json",
                            log + "/00000000000000000002.json",
                            log + "/00000000000000000010.checkpoint.parquet",
                            log + "/_last_checkpoint",
                        }));
  for (const auto& e : all) {
    std::string name = e.path.substr(log.size() + 1);
    EXPECT_EQ(e.size, static_cast<int64_t>(std::string("content of ").size() + name.size()));
    EXPECT_GT(e.modification_time_ms, 1'600'000'000'000);  // after 2020
  }

  // The start name itself is included; everything before it is not.
  ASSIGN_OR_FAIL(auto from1, store_->List(log, "00000000000000000001.json"));
  EXPECT_EQ(Paths(from1), (std::vector<std::string>{
                              log + "/00000000000000000001.json",
                              log + "/00000000000000000002.json",
                              log + "/00000000000000000010.checkpoint.parquet",
                              log + "/_last_checkpoint",
                          }));
  ASSIGN_OR_FAIL(auto from_prefix, store_->List(log, "00000000000000000003"));
  EXPECT_EQ(Paths(from_prefix), (std::vector<std::string>{
                                    log + "/00000000000000000010.checkpoint.parquet",
                                    log + "/_last_checkpoint",
                                }));
  ASSIGN_OR_FAIL(auto none, store_->List(log, "zzz"));
  EXPECT_TRUE(none.empty());

  // A trailing slash on the directory does not change the entry paths.
  ASSIGN_OR_FAIL(auto slashed, store_->List(log + "/"));
  EXPECT_EQ(Paths(slashed), Paths(all));
}

TEST_P(LogStoreTest, ListsOnlyFilesDirectlyInsideTheDirectory) {
  const std::string log = Log();
  ASSERT_OK(store_->PutIfAbsent(log + "/a.json", "a"));
  ASSERT_OK(store_->PutIfAbsent(log + "/_sidecars/s.parquet", "s"));
  ASSERT_OK(store_->PutIfAbsent(log + "-other/b.json", "b"));
  ASSIGN_OR_FAIL(auto entries, store_->List(log));
  EXPECT_EQ(Paths(entries), (std::vector<std::string>{log + "/a.json"}));
  ASSIGN_OR_FAIL(auto sidecars, store_->List(log + "/_sidecars"));
  EXPECT_EQ(Paths(sidecars), (std::vector<std::string>{log + "/_sidecars/s.parquet"}));
}

TEST_P(LogStoreTest, MissingDirectoryListsEmpty) {
  ASSIGN_OR_FAIL(auto entries, store_->List(Root() + "/no/such/dir"));
  EXPECT_TRUE(entries.empty());
  ASSIGN_OR_FAIL(auto from, store_->List(Root() + "/no/such/dir", "00001.json"));
  EXPECT_TRUE(from.empty());
}

TEST_P(LogStoreTest, ReadingMissingFileIsMissingFileNamingThePath) {
  const std::string path = Log() + "/00000000000000000007.json";
  auto result = store_->Read(path);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.status().IsIOError()) << result.status();
  EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kMissingFile)) << result.status();
  EXPECT_NE(result.status().message().find(path), std::string::npos) << result.status();
}

TEST_P(LogStoreTest, ListNamesGivesTheNamesOfTheListing) {
  const std::string log = Log();
  for (const char* name : {"00000000000000000002.json", "00000000000000000000.json",
                           "_last_checkpoint", "00000000000000000001.json"}) {
    ASSERT_OK(store_->PutIfAbsent(log + "/" + name, "x"));
  }
  ASSERT_OK(store_->PutIfAbsent(log + "/_sidecars/s.parquet", "s"));
  ASSIGN_OR_FAIL(auto all, store_->ListNames(log));
  EXPECT_EQ(all, (std::vector<std::string>{"00000000000000000000.json",
                                           "00000000000000000001.json",
                                           "00000000000000000002.json", "_last_checkpoint"}));
  ASSIGN_OR_FAIL(auto from1, store_->ListNames(log + "/", "00000000000000000001"));
  EXPECT_EQ(from1, (std::vector<std::string>{"00000000000000000001.json",
                                             "00000000000000000002.json", "_last_checkpoint"}));
  ASSIGN_OR_FAIL(auto missing, store_->ListNames(Root() + "/no/such/dir"));
  EXPECT_TRUE(missing.empty());
}

TEST_P(LogStoreTest, StatGivesTheListingEntryOfOneFile) {
  const std::string log = Log();
  for (const char* name : {"00000000000000000000.json", "00000000000000000001.json",
                           "00000000000000000001.json.extra"}) {
    ASSERT_OK(store_->PutIfAbsent(log + "/" + name, std::string("content of ") + name));
  }
  ASSIGN_OR_FAIL(auto listed, store_->List(log));
  ASSERT_EQ(listed.size(), 3u);
  for (const auto& want : listed) {
    ASSIGN_OR_FAIL(auto got, store_->Stat(want.path));
    EXPECT_EQ(got.path, want.path);
    EXPECT_EQ(got.size, want.size);
    EXPECT_EQ(got.modification_time_ms, want.modification_time_ms);
  }
  // A name that only prefixes a listed file and a missing file are missing; a subdirectory is
  // not listed as a file either, and a store that can tell says it is no regular file.
  ASSERT_OK(store_->PutIfAbsent(log + "/_sidecars/s.parquet", "s"));
  auto dir = store_->Stat(log + "/_sidecars");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find(log + "/_sidecars"), std::string::npos) << dir.status();
  for (const std::string& missing :
       {log + "/00000000000000000001", log + "/00000000000000000002.json",
        Root() + "/no/such/dir/00000000000000000000.json"}) {
    auto result = store_->Stat(missing);
    ASSERT_FALSE(result.ok()) << missing;
    EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kMissingFile)) << result.status();
    EXPECT_NE(result.status().message().find(missing), std::string::npos) << result.status();
  }
}

TEST_P(LogStoreTest, PutIfAbsentWritesOnceAndSecondPutLosesWithoutTouchingTheFile) {
  const std::string path = Log() + "/00000000000000000000.json";
  ASSERT_OK(store_->PutIfAbsent(path, "first"));
  ASSIGN_OR_FAIL(auto first, store_->Read(path));
  EXPECT_EQ(ToString(first), "first");

  auto st = store_->PutIfAbsent(path, "second, longer content");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.IsAlreadyExists()) << st;
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionExists)) << st;
  EXPECT_NE(st.message().find(path), std::string::npos) << st;

  ASSIGN_OR_FAIL(auto after, store_->Read(path));
  EXPECT_EQ(ToString(after), "first");
  ASSIGN_OR_FAIL(auto entries, store_->List(Log()));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].size, 5);
}

TEST_P(LogStoreTest, PutIfAbsentCreatesParentsAndHandlesEmptyAndLargeContent) {
  const std::string empty = Root() + "/deep/er/still/_delta_log/empty.json";
  ASSERT_OK(store_->PutIfAbsent(empty, ""));
  ASSIGN_OR_FAIL(auto e, store_->Read(empty));
  EXPECT_EQ(e->size(), 0);

  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) ^ (i >> 11));
  const std::string big_path = Log() + "/big.checkpoint.parquet";
  ASSERT_OK(store_->PutIfAbsent(big_path, big));
  ASSIGN_OR_FAIL(auto b, store_->Read(big_path));
  EXPECT_TRUE(ToString(b) == big);
}

TEST_P(LogStoreTest, PutReplaceCreatesThenReplaces) {
  const std::string path = Log() + "/_last_checkpoint";
  ASSERT_OK(store_->PutReplace(path, R"({"version":10,"size":3})"));
  ASSIGN_OR_FAIL(auto v1, store_->Read(path));
  EXPECT_EQ(ToString(v1), R"({"version":10,"size":3})");
  ASSERT_OK(store_->PutReplace(path, R"({"version":20})"));
  ASSIGN_OR_FAIL(auto v2, store_->Read(path));
  EXPECT_EQ(ToString(v2), R"({"version":20})");
  // A buffer read earlier keeps its content.
  EXPECT_EQ(ToString(v1), R"({"version":10,"size":3})");
  ASSIGN_OR_FAIL(auto entries, store_->List(Log()));
  EXPECT_EQ(Paths(entries), (std::vector<std::string>{path}));
}

TEST_P(LogStoreTest, DeleteRemovesAndMissingIsFine) {
  const std::string path = Log() + "/00000000000000000000.json";
  ASSERT_OK(store_->PutIfAbsent(path, "x"));
  ASSERT_OK(store_->Delete(path));
  EXPECT_TRUE(IsDeltaError(store_->Read(path).status(), DeltaErrorCode::kMissingFile));
  ASSERT_OK(store_->Delete(path));
  ASSERT_OK(store_->Delete(Root() + "/never/existed.json"));
  // The name is free again.
  ASSERT_OK(store_->PutIfAbsent(path, "y"));
  ASSIGN_OR_FAIL(auto y, store_->Read(path));
  EXPECT_EQ(ToString(y), "y");
}

TEST_P(LogStoreTest, ConcurrentThreadsPuttingTheSameFileHaveExactlyOneWinner) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = Log() + "/" + std::to_string(round) + ".json";
    std::atomic<bool> go{false};
    std::vector<arrow::Status> results(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        results[t] = store_->PutIfAbsent(path, "writer " + std::to_string(t));
      });
    }
    go = true;
    for (auto& th : threads) th.join();
    int winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      if (results[t].ok()) {
        EXPECT_EQ(winner, -1) << "two winners in round " << round;
        winner = t;
      } else {
        EXPECT_TRUE(IsDeltaError(results[t], DeltaErrorCode::kVersionExists)) << results[t];
      }
    }
    ASSERT_NE(winner, -1);
    ASSIGN_OR_FAIL(auto content, store_->Read(path));
    EXPECT_EQ(ToString(content), "writer " + std::to_string(winner));
  }
  ASSIGN_OR_FAIL(auto entries, store_->List(Log()));
  EXPECT_EQ(entries.size(), static_cast<size_t>(kRounds));
}

TEST_P(LogStoreTest, FilesystemReadsAndWritesDataFiles) {
  auto fs = store_->filesystem();
  ASSERT_NE(fs, nullptr);
  const std::string path = Root() + "/table/part-00000.parquet";
  ASSERT_OK(fs->CreateDir(Root() + "/table", /*recursive=*/true));
  {
    ASSIGN_OR_FAIL(auto out, fs->OpenOutputStream(path));
    ASSERT_OK(out->Write("PAR1data", 8));
    ASSERT_OK(out->Close());
  }
  ASSIGN_OR_FAIL(auto in, fs->OpenInputFile(path));
  ASSIGN_OR_FAIL(auto size, in->GetSize());
  EXPECT_EQ(size, 8);
  ASSIGN_OR_FAIL(auto data, in->ReadAt(0, size));
  EXPECT_EQ(data->ToString(), "PAR1data");
}

INSTANTIATE_TEST_SUITE_P(
    Stores, LogStoreTest,
    ::testing::Values(StoreKind{"Local", [] { return MakeLocalLogStore(); }, true},
                      StoreKind{"Memory", [] { return MakeMemoryLogStore(); }, false}),
    [](const ::testing::TestParamInfo<StoreKind>& info) { return info.param.name; });

// --- Local-only behaviour: temporary files and on-disk state. ---

TEST(LocalLogStore, LeavesNoTemporaryFilesBehind) {
  testing::TempDir dir;
  auto store = MakeLocalLogStore();
  const std::string log = dir.str() + "/_delta_log";
  const std::string v0 = log + "/00000000000000000000.json";
  ASSERT_OK(store->PutIfAbsent(v0, "v0"));
  EXPECT_TRUE(IsDeltaError(store->PutIfAbsent(v0, "again"), DeltaErrorCode::kVersionExists));
  ASSERT_OK(store->PutReplace(log + "/_last_checkpoint", "a"));
  ASSERT_OK(store->PutReplace(log + "/_last_checkpoint", "b"));

  // Error paths: the target is a directory, so publishing fails after the temp file exists.
  std::filesystem::create_directories(log + "/a_directory.json");
  auto replace_dir = store->PutReplace(log + "/a_directory.json", "x");
  EXPECT_FALSE(replace_dir.ok());
  EXPECT_NE(replace_dir.message().find(log + "/a_directory.json"), std::string::npos)
      << replace_dir;
  EXPECT_FALSE(store->PutIfAbsent(log + "/a_directory.json", "x").ok());

  auto names = AllNamesOnDisk(dir.path());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"00000000000000000000.json", "_delta_log",
                                             "_last_checkpoint", "a_directory.json"}));
  ASSIGN_OR_FAIL(auto v0_content, store->Read(v0));
  EXPECT_EQ(ToString(v0_content), "v0");
}

TEST(LocalLogStore, ListingSkipsDirectoriesAndInFlightTemporaryFiles) {
  testing::TempDir dir;
  auto store = MakeLocalLogStore();
  std::filesystem::create_directories(dir.path() / "_sidecars");
  ASSERT_OK(store->PutIfAbsent(dir.str() + "/00000000000000000000.json", "{}"));
  // What a writer that crashed mid-put leaves behind.
  ASSERT_OK(store->PutReplace(dir.str() + "/.00000000000000000001.json.abc.tmp", "{"));
  ASSIGN_OR_FAIL(auto entries, store->List(dir.str()));
  EXPECT_EQ(Paths(entries), (std::vector<std::string>{dir.str() + "/00000000000000000000.json"}));
}

TEST(LocalLogStore, ReadingADirectoryOrListingAFileIsAnIOErrorNamingThePath) {
  testing::TempDir dir;
  auto store = MakeLocalLogStore();
  auto read = store->Read(dir.str());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsIOError());
  EXPECT_FALSE(IsDeltaError(read.status(), DeltaErrorCode::kMissingFile));
  EXPECT_NE(read.status().message().find(dir.str()), std::string::npos);

  ASSERT_OK(store->PutIfAbsent(dir.str() + "/file", "x"));
  auto list = store->List(dir.str() + "/file");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find(dir.str() + "/file"), std::string::npos);
  // A path below a regular file cannot exist.
  EXPECT_TRUE(IsDeltaError(store->Read(dir.str() + "/file/child").status(),
                           DeltaErrorCode::kMissingFile));
}

TEST(LocalLogStore, FilesystemSeesWhatTheStoreWrote) {
  testing::TempDir dir;
  auto store = MakeLocalLogStore();
  ASSERT_OK(store->PutIfAbsent(dir.str() + "/_delta_log/0.json", "abc"));
  ASSIGN_OR_FAIL(auto info, store->filesystem()->GetFileInfo(dir.str() + "/_delta_log/0.json"));
  EXPECT_EQ(info.type(), arrow::fs::FileType::File);
  EXPECT_EQ(info.size(), 3);
}

// --- ResolveTableLocation ---

TEST(ResolveTableLocation, RelativePathBecomesNormalisedAbsolute) {
  const std::string cwd = std::filesystem::current_path().string();
  ASSIGN_OR_FAIL(auto resolved, ResolveTableLocation("some/dir/../table/"));
  EXPECT_EQ(resolved.first, cwd + "/some/table");
  ASSERT_NE(resolved.second, nullptr);

  ASSIGN_OR_FAIL(auto dot, ResolveTableLocation("."));
  EXPECT_EQ(dot.first, cwd);
  ASSIGN_OR_FAIL(auto colon, ResolveTableLocation("tables/a:b"));
  EXPECT_EQ(colon.first, cwd + "/tables/a:b");
}

TEST(ResolveTableLocation, AbsolutePathIsNormalised) {
  ASSIGN_OR_FAIL(auto r, ResolveTableLocation("/data//lake/./t//"));
  EXPECT_EQ(r.first, "/data/lake/t");
  ASSIGN_OR_FAIL(auto root, ResolveTableLocation("/"));
  EXPECT_EQ(root.first, "/");
}

TEST(ResolveTableLocation, FileUrisArePercentDecoded) {
  ASSIGN_OR_FAIL(auto r, ResolveTableLocation("file:///tmp/my%20table/"));
  EXPECT_EQ(r.first, "/tmp/my table");
  ASSIGN_OR_FAIL(auto short_form, ResolveTableLocation("file:/tmp/a%2Fb%25c"));
  EXPECT_EQ(short_form.first, "/tmp/a/b%c");
  ASSIGN_OR_FAIL(auto localhost, ResolveTableLocation("FILE://localhost/tmp/t"));
  EXPECT_EQ(localhost.first, "/tmp/t");

  auto bad = ResolveTableLocation("file:///tmp/bad%2");
  EXPECT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kInvalidArgument)) << bad.status();
  auto remote = ResolveTableLocation("file://otherhost/tmp/t");
  EXPECT_TRUE(IsDeltaError(remote.status(), DeltaErrorCode::kUnsupportedStorage))
      << remote.status();
}

TEST(ResolveTableLocation, OtherSchemesAreUnsupportedStorage) {
  for (std::string location : {"s3://bucket/path/table", "abfss://c@acct.dfs.core.windows.net/t",
                               "gs://b/t", "hdfs://nn/t"}) {
    auto r = ResolveTableLocation(location);
    ASSERT_FALSE(r.ok()) << location;
    EXPECT_TRUE(r.status().IsNotImplemented()) << r.status();
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kUnsupportedStorage)) << r.status();
    const std::string scheme = location.substr(0, location.find(':'));
    EXPECT_NE(r.status().message().find("'" + scheme + "'"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(location), std::string::npos) << r.status();
  }
  EXPECT_EQ(ResolveTableLocation("s3://bucket/t").status().message(),
            "unsupported storage scheme 's3' in s3://bucket/t: only local paths are supported");
  EXPECT_TRUE(IsDeltaError(ResolveTableLocation("").status(), DeltaErrorCode::kInvalidArgument));
}

// --- FaultInjectingLogStore ---

TEST(FaultInjectingLogStore, FailsExactlyTheNthCallOfTheChosenOperation) {
  auto inner = MakeMemoryLogStore();
  ASSERT_OK(inner->PutIfAbsent("/t/_delta_log/0.json", "zero"));
  FaultInjectingLogStore store(inner);
  store.FailOn(Op::kRead, 2);

  EXPECT_TRUE(store.Read("/t/_delta_log/0.json").ok());
  auto second = store.Read("/t/_delta_log/0.json");
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().IsIOError());
  EXPECT_FALSE(GetDeltaErrorCode(second.status()).has_value());
  EXPECT_NE(second.status().message().find("/t/_delta_log/0.json"), std::string::npos);
  EXPECT_TRUE(store.Read("/t/_delta_log/0.json").ok());
  EXPECT_TRUE(store.Read("/t/_delta_log/0.json").ok());
  EXPECT_EQ(store.calls(Op::kRead), 4);

  // Other operations are unaffected and counted separately.
  EXPECT_TRUE(store.List("/t/_delta_log").ok());
  EXPECT_EQ(store.calls(Op::kList), 1);
  EXPECT_EQ(store.calls(Op::kPutIfAbsent), 0);
  EXPECT_EQ(store.filesystem(), inner->filesystem());
}

TEST(FaultInjectingLogStore, FaultBeforeDoesNothingFaultAfterTakesEffect) {
  auto inner = MakeMemoryLogStore();
  FaultInjectingLogStore store(inner);
  store.FailOn(Op::kPutIfAbsent, 1);
  store.FailOn(Op::kPutIfAbsent, 2, When::kAfter);
  store.FailOn(Op::kDelete, 1);
  store.FailOn(Op::kPutReplace, 1);
  store.FailOn(Op::kList, 1);

  EXPECT_TRUE(store.PutIfAbsent("/t/a", "a").IsIOError());
  EXPECT_TRUE(IsDeltaError(inner->Read("/t/a").status(), DeltaErrorCode::kMissingFile));

  // The write lands even though the caller is told it failed: an ambiguous commit.
  EXPECT_TRUE(store.PutIfAbsent("/t/a", "a").IsIOError());
  ASSIGN_OR_FAIL(auto a, inner->Read("/t/a"));
  EXPECT_EQ(a->ToString(), "a");
  EXPECT_TRUE(IsDeltaError(store.PutIfAbsent("/t/a", "a"), DeltaErrorCode::kVersionExists));

  EXPECT_TRUE(store.Delete("/t/a").IsIOError());
  EXPECT_TRUE(inner->Read("/t/a").ok());
  EXPECT_TRUE(store.PutReplace("/t/b", "b").IsIOError());
  EXPECT_FALSE(inner->Read("/t/b").ok());
  EXPECT_TRUE(store.List("/t").status().IsIOError());
  ASSIGN_OR_FAIL(auto listed, store.List("/t"));
  EXPECT_EQ(listed.size(), 1u);
  EXPECT_EQ(store.calls(Op::kPutIfAbsent), 3);
}

TEST(FaultInjectingLogStore, CountsCallsAcrossThreads) {
  FaultInjectingLogStore store(MakeMemoryLogStore());
  store.FailOn(Op::kList, 250);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (!store.List("/x").ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(store.calls(Op::kList), 400);
}

}  // namespace
}  // namespace deltacpp
