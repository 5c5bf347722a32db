// No read can deadlock: checkpoints split into 1 to 100 parts or sidecars, and tables of many
// data files, load and scan within a time limit, also with Arrow's I/O pool at one or two
// threads (every part and data file pre-buffers its reads on that pool).
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/io/type_fwd.h>
#include <arrow/util/thread_pool.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

#include "deltacpp/api.h"
#include "support/cli_runner.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;
using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::TempDir;

constexpr int kDataFiles = 100;
constexpr int kRowsPerFile = 5;
constexpr auto kTimeLimit = std::chrono::seconds(60);

// Runs `fn` on its own thread and waits at most kTimeLimit. A read that blocks forever cannot be
// cancelled, so a timeout ends the whole test process with a message naming the case.
void RunWithinTimeLimit(const std::string& what, const std::function<void()>& fn) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    fn();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, kTimeLimit, [&] { return done; })) {
    std::cerr << "FAILED: " << what << " did not finish within " << kTimeLimit.count()
              << " s (deadlock?)" << std::endl;
    std::_Exit(3);
  }
  lock.unlock();
  worker.join();
}

// Sets the I/O pool's capacity for the lifetime of the object (0 keeps it).
class IoPoolCapacity {
 public:
  explicit IoPoolCapacity(int threads) : saved_(arrow::io::GetIOThreadPoolCapacity()) {
    if (threads > 0) {
      EXPECT_TRUE(arrow::io::SetIOThreadPoolCapacity(threads).ok());
    }
  }
  ~IoPoolCapacity() { (void)arrow::io::SetIOThreadPoolCapacity(saved_); }

 private:
  int saved_;
};

std::shared_ptr<arrow::Table> ReadParquet(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  return reader->ReadTable().ValueOrDie();
}

void WriteParquet(const arrow::Table& table, const std::string& path) {
  auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  ASSERT_TRUE(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink, 1024).ok());
  ASSERT_TRUE(sink->Close().ok());
}

std::string LogDir(const std::string& root) { return root + "/_delta_log"; }

// A table whose version 1 adds kDataFiles files of kRowsPerFile rows (ids 0..N-1), with a
// classic checkpoint at version 1 which tests then re-lay as parts or sidecars. Commit 0 is
// deleted so the snapshot can only come from the checkpoint.
class ManyPartsTable {
 public:
  explicit ManyPartsTable(bool v2) : root_(dir_.str() + "/t") {
    FixtureTableWriter w(root_);
    auto schema = arrow::schema({arrow::field("id", arrow::int64())});
    if (v2) {
      EXPECT_TRUE(w.Create(schema, {}, {}, 3, 7, {"v2Checkpoint"}, {"v2Checkpoint"}).ok());
    } else {
      EXPECT_TRUE(w.Create(schema).ok());
    }
    std::vector<FixtureFile> files;
    for (int f = 0; f < kDataFiles; ++f) {
      arrow::Int64Builder ids;
      for (int r = 0; r < kRowsPerFile; ++r) EXPECT_TRUE(ids.Append(f * kRowsPerFile + r).ok());
      files.emplace_back(arrow::Table::Make(schema, {ids.Finish().ValueOrDie()}));
    }
    EXPECT_TRUE(w.Append(files).ok());
    EXPECT_TRUE(w.WriteCheckpoint().ok());
    protocol_and_metadata_ = NonFileActionLines(LogDir(root_) + "/00000000000000000000.json");
    rows_ = ReadParquet(Checkpoint());
    fs::remove(Checkpoint());
    fs::remove(LogDir(root_) + "/_last_checkpoint");
    fs::remove(LogDir(root_) + "/00000000000000000000.json");
  }

  // Lays the checkpoint rows as a `parts`-part checkpoint (a classic one when parts == 1).
  void LayParts(int parts) {
    if (parts == 1) {
      WriteParquet(*rows_, Checkpoint());
      return;
    }
    const int64_t n = rows_->num_rows();
    for (int p = 0; p < parts; ++p) {
      int64_t begin = n * p / parts, end = n * (p + 1) / parts;
      WriteParquet(*rows_->Slice(begin, end - begin),
                   fmt::format("{}/{:020d}.checkpoint.{:010d}.{:010d}.parquet", LogDir(root_), 1,
                               p + 1, parts));
    }
  }

  // Lays the checkpoint as a UUID-named JSON V2 checkpoint whose adds are in `sidecars` files.
  void LaySidecars(int sidecars) {
    auto add = rows_->GetColumnByName("add");
    auto valid = arrow::compute::IsValid(add).ValueOrDie();
    auto only_add = arrow::Table::Make(arrow::schema({rows_->schema()->GetFieldByName("add")}),
                                       {add});
    auto adds = arrow::compute::Filter(only_add, valid).ValueOrDie().table();
    ASSERT_EQ(adds->num_rows(), kDataFiles);
    fs::create_directories(LogDir(root_) + "/_sidecars");
    std::string text = R"({"checkpointMetadata":{"version":1}})" "\n";
    for (const auto& line : protocol_and_metadata_) text += line + "\n";
    const int64_t n = adds->num_rows();
    for (int s = 0; s < sidecars; ++s) {
      int64_t begin = n * s / sidecars, end = n * (s + 1) / sidecars;
      std::string name = fmt::format("sidecar-{:03d}.parquet", s);
      std::string path = LogDir(root_) + "/_sidecars/" + name;
      WriteParquet(*adds->Slice(begin, end - begin), path);
      text += fmt::format(R"({{"sidecar":{{"path":"{}","sizeInBytes":{},"modificationTime":1}}}})",
                          name, fs::file_size(path)) +
              "\n";
    }
    std::ofstream out(
        LogDir(root_) + "/00000000000000000001.checkpoint.3a0d65cd-4f9c-4b0a-8b5e-5f6a1e2c9d11.json",
        std::ios::binary);
    out << text;
  }

  // Loads the latest snapshot and scans every row; checks the checkpoint was used and every
  // row came back once.
  void LoadAndScan() {
    auto table = DeltaTable::Open(root_);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto snap = (*table)->Latest();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ((*snap)->state().checkpoint_version, std::optional<int64_t>(1));
    EXPECT_EQ((*snap)->files()->num_rows(), kDataFiles);
    auto scan = ScanBuilder(*snap).Build();
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    auto rows = (*scan)->ToTable();
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ((*rows)->num_rows(), kDataFiles * kRowsPerFile);
    auto sum = arrow::compute::Sum((*rows)->GetColumnByName("id")).ValueOrDie();
    const int64_t n = kDataFiles * kRowsPerFile;
    EXPECT_EQ(sum.scalar_as<arrow::Int64Scalar>().value, n * (n - 1) / 2);
  }

  const std::string& root() const { return root_; }

 private:
  std::string Checkpoint() const {
    return LogDir(root_) + "/00000000000000000001.checkpoint.parquet";
  }

  static std::vector<std::string> NonFileActionLines(const std::string& commit) {
    std::ifstream in(commit);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(R"({"protocol")", 0) == 0 || line.rfind(R"({"metaData")", 0) == 0) {
        out.push_back(line);
      }
    }
    EXPECT_EQ(out.size(), 2u);
    return out;
  }

  TempDir dir_;
  std::string root_;
  std::shared_ptr<arrow::Table> rows_;
  std::vector<std::string> protocol_and_metadata_;
};

struct Case {
  int files;        // checkpoint parts or sidecars
  int io_threads;   // 0: Arrow's default
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("{}Files_Io{}", info.param.files,
                     info.param.io_threads == 0 ? std::string("Default")
                                                : std::to_string(info.param.io_threads));
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (int io : {0, 1, 2}) {
    for (int files : {1, 7, 8, 9, 32, 100}) out.push_back({files, io});
  }
  return out;
}

class MultiPartCheckpointRead : public ::testing::TestWithParam<Case> {};

TEST_P(MultiPartCheckpointRead, LoadsAndScansWithinTheTimeLimit) {
  ManyPartsTable t(/*v2=*/false);
  t.LayParts(GetParam().files);
  IoPoolCapacity io(GetParam().io_threads);
  RunWithinTimeLimit(fmt::format("multi-part checkpoint of {} parts", GetParam().files),
                     [&] { t.LoadAndScan(); });
}

INSTANTIATE_TEST_SUITE_P(Parts, MultiPartCheckpointRead, ::testing::ValuesIn(AllCases()),
                         CaseName);

class SidecarCheckpointRead : public ::testing::TestWithParam<Case> {};

TEST_P(SidecarCheckpointRead, LoadsAndScansWithinTheTimeLimit) {
  ManyPartsTable t(/*v2=*/true);
  t.LaySidecars(GetParam().files);
  IoPoolCapacity io(GetParam().io_threads);
  RunWithinTimeLimit(fmt::format("V2 checkpoint with {} sidecars", GetParam().files),
                     [&] { t.LoadAndScan(); });
}

INSTANTIATE_TEST_SUITE_P(Sidecars, SidecarCheckpointRead, ::testing::ValuesIn(AllCases()),
                         CaseName);

// Scans run from threads of Arrow's CPU pool (as an Acero node would) while every thread of
// that pool is such a consumer: the file reads must not queue behind them.
TEST(ScanFromCpuPool, ConsumersOnEveryCpuThreadFinish) {
  ManyPartsTable t(/*v2=*/false);
  t.LayParts(8);
  auto* cpu = arrow::internal::GetCpuThreadPool();
  RunWithinTimeLimit("scans from every CPU pool thread", [&] {
    std::vector<arrow::Future<>> futures;
    for (int i = 0; i < cpu->GetCapacity(); ++i) {
      futures.push_back(cpu->Submit([&t] { t.LoadAndScan(); }).ValueOrDie());
    }
    for (auto& f : futures) EXPECT_TRUE(f.status().ok());
  });
}

// The command-line reader with the I/O pool set from the environment, as users would.
TEST(ParallelReadCli, ReadsAHundredPartCheckpointWithOneIoThread) {
  ManyPartsTable t(/*v2=*/false);
  t.LayParts(100);
  TempDir scratch;
  setenv("ARROW_IO_THREADS", "1", 1);
  auto r = testing::RunCli("read " + t.root() + " --format csv", scratch, 60);
  unsetenv("ARROW_IO_THREADS");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Header plus one line per row.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), kDataFiles * kRowsPerFile + 1);
}

}  // namespace
}  // namespace deltacpp
