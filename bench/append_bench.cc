// Write benchmark: bulk appends against a plain Parquet write, the latency of one-row appends
// to a table with a long history (in process and through the CLI), and concurrent appenders.
//
//   append_bench [--rows N] [--runs R] [--commits C] [--files F] [--checkpoint-interval K]
//                [--appends A] [--cli-appends B] [--writers W] [--writer-commits M]
//                [--parts bulk,latency,cli,concurrent] [--cli PATH] [--dir PATH]
//
// --parts selects the measurements (all by default); `latency` stands for `handle,location`.
// Working data lives under PATH (a temporary directory when omitted). Every measured write runs
// in a child process, so this process never starts a thread and can always fork.
//
// 1. bulk: N rows (id long, amount double, name string of 5-17 characters, event_time
//    timestamp; the row formulas of scan_bench) generated on the fly in batches of 128Ki rows by
//    an arrow::RecordBatchReader and written to a new table with deltacpp::WriteTable, against
//    the lower bound of this machine: a plain write of the same batches with
//    parquet::arrow::FileWriter laid out the way deltacpp's data writer does (snappy,
//    microsecond timestamps, a row group whenever 64 MiB of Arrow data are buffered, written
//    with at most 1Mi rows per row group, a new file once 128 MiB are written, one file per core
//    encoding at once), without statistics or log. The cold figure of each writer is the mean
//    of two runs, each in a process of its own (order deltacpp, plain, plain, deltacpp, after one
//    unreported fresh-process run of each), with the peak RSS at the end of the write;
//    the warm figure is the median of R runs in one process after one unreported run of each,
//    alternating which goes first. Checks on every run: the commit's numOutputRows, the sum of
//    the files' numRecords and a full deltacpp scan whose checksum must match the generator's
//    (deltacpp); the files' row counts (plain). Which row groups land in which file depends on
//    which file finishes encoding first, so the layouts are printed, not compared.
// 2. latency / cli: one-row appends to a log-only table of C commits and F live files
//    (GenerateLogOnlyTable; checkpoint every K commits, which is also the table's
//    delta.checkpointInterval), generated once under PATH and copied afresh for each sequence:
//    1 + A appends through one DeltaTable handle (WriteTable(handle, ...)), 1 + A appends
//    through the location (WriteTable(path, ...): a fresh open each time), and 1 + B runs of
//    `deltacpp write TABLE --mode append --input-format json -` with the row on stdin. The
//    first append of a sequence is reported apart; an append that commits a multiple of K also
//    writes a checkpoint, and those are reported apart as well. Checks: each append commits
//    the next version; the final snapshot holds the original files plus one file per append,
//    each with numRecords 1.
// 3. concurrent: W processes, each with its own handle, append M one-row commits each to one
//    table at the same time. Checks: the final version is the start version plus W*M and a scan
//    returns every row exactly once.
//
// Any failed check makes the program exit with status 1.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <string_view>
#include <vector>

#include "bench_util.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "support/fixture_writer.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace deltacpp::bench;  // NOLINT(build/namespaces): the shared benchmark helpers
using Clock = std::chrono::steady_clock;

constexpr int64_t kBaseMicros = 1'700'000'000'000'000LL;  // 2023-11-14T22:13:20Z
constexpr int64_t kBatchRows = 1 << 17;
// deltacpp's data writer defaults (src/write/data_writer.cc): delta.targetFileSize 128 MiB,
// row groups cut at min(target, 64 MiB) of buffered Arrow data.
constexpr int64_t kTargetFileSize = 128LL << 20;
constexpr int64_t kRowGroupBytes = 64LL << 20;
// Rows the concurrent benchmark's table starts with; writer w appends ids from (w+1) * kIdStride.
constexpr int64_t kInitialRows = 1000;
constexpr int64_t kIdStride = 1'000'000'000;

struct Options {
  int64_t rows = 10'000'000;
  int64_t runs = 3;
  int64_t commits = 10'000;
  int64_t files = 10'000;
  int64_t checkpoint_interval = 10;
  int64_t appends = 200;
  int64_t cli_appends = 50;
  int64_t writers = 8;
  int64_t writer_commits = 25;
  std::string parts = "bulk,latency,cli,concurrent";
  std::string cli;
  std::string dir;

  bool Has(std::string_view part) const {
    std::string_view rest = parts;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (rest.substr(0, comma) == part) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return false;
  }
};

void Usage(const char* argv0) {
  fmt::print(stderr,
             "usage: {} [--rows N] [--runs R] [--commits C] [--files F] [--checkpoint-interval K]\n"
             "       [--appends A] [--cli-appends B] [--writers W] [--writer-commits M]\n"
             "       [--parts bulk,latency,cli,concurrent] [--cli PATH] [--dir PATH]\n",
             argv0);
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options opt;
  if (!ParseFlagsWithStrings(argc, argv, &opt.dir,
                             {{"--rows", &opt.rows},
                              {"--runs", &opt.runs},
                              {"--commits", &opt.commits},
                              {"--files", &opt.files},
                              {"--checkpoint-interval", &opt.checkpoint_interval},
                              {"--appends", &opt.appends},
                              {"--cli-appends", &opt.cli_appends},
                              {"--writers", &opt.writers},
                              {"--writer-commits", &opt.writer_commits}},
                             {{"--parts", &opt.parts}, {"--cli", &opt.cli}})) {
    return std::nullopt;
  }
  if (opt.rows < 1 || opt.runs < 1 || opt.commits < 2 || opt.files < 0 ||
      opt.checkpoint_interval < 1 || opt.appends < 1 || opt.cli_appends < 1 || opt.writers < 1 ||
      opt.writer_commits < 1 || opt.writer_commits >= kIdStride) {
    fmt::print(stderr,
               "need --rows, --runs, --checkpoint-interval, --appends, --cli-appends, --writers, "
               "--writer-commits >= 1, --commits >= 2, --files >= 0\n");
    return std::nullopt;
  }
  std::string_view rest = opt.parts;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    if (part != "bulk" && part != "latency" && part != "handle" && part != "location" &&
        part != "cli" && part != "concurrent") {
      fmt::print(stderr,
                 "--parts takes a comma-separated list of bulk, latency (= handle,location), "
                 "cli, concurrent\n");
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (opt.cli.empty()) {
    // build/bench/append_bench -> build/deltacpp
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    opt.cli = (self.parent_path().parent_path() / "deltacpp").string();
  }
  return opt;
}

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// Data: the rows of scan_bench, generated batch by batch

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Values of row `r`.
struct Row {
  explicit Row(int64_t r) : h(Mix(static_cast<uint64_t>(r))) {}
  uint64_t h;
  double amount() const { return static_cast<double>(h % 10'000'000) / 100.0; }
  /// "c" plus 4 to 16 hex digits.
  void name(char* buf, size_t* len) const {
    const int digits = 4 + static_cast<int>((h >> 56) % 13);
    buf[0] = 'c';
    static constexpr char kHex[] = "0123456789abcdef";
    uint64_t v = h;
    for (int d = 0; d < digits; ++d, v >>= 4) buf[1 + d] = kHex[v & 0xF];
    *len = 1 + static_cast<size_t>(digits);
  }
  int64_t event_time(int64_t r) const {
    return kBaseMicros + r * 1000 + static_cast<int64_t>(h % 1000);
  }
};

std::shared_ptr<arrow::Schema> RowSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()),
                        arrow::field("amount", arrow::float64()),
                        arrow::field("name", arrow::utf8()),
                        arrow::field("event_time",
                                     arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> MakeRows(int64_t first, int64_t count) {
  arrow::Int64Builder id;
  arrow::DoubleBuilder amount;
  arrow::StringBuilder name;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(id.Reserve(count));
  ARROW_RETURN_NOT_OK(amount.Reserve(count));
  ARROW_RETURN_NOT_OK(name.Reserve(count));
  ARROW_RETURN_NOT_OK(name.ReserveData(count * 12));
  ARROW_RETURN_NOT_OK(ts.Reserve(count));
  char buf[32];
  for (int64_t r = first; r < first + count; ++r) {
    Row row(r);
    size_t len = 0;
    row.name(buf, &len);
    id.UnsafeAppend(r);
    amount.UnsafeAppend(row.amount());
    ARROW_RETURN_NOT_OK(name.Append(buf, static_cast<int32_t>(len)));
    ts.UnsafeAppend(row.event_time(r));
  }
  std::vector<std::shared_ptr<arrow::Array>> cols(4);
  ARROW_RETURN_NOT_OK(id.Finish(&cols[0]));
  ARROW_RETURN_NOT_OK(amount.Finish(&cols[1]));
  ARROW_RETURN_NOT_OK(name.Finish(&cols[2]));
  ARROW_RETURN_NOT_OK(ts.Finish(&cols[3]));
  return arrow::RecordBatch::Make(RowSchema(), count, cols);
}

/// Rows [first, first + rows), generated when asked for, `batch_rows` at a time.
class GeneratedReader final : public arrow::RecordBatchReader {
 public:
  GeneratedReader(int64_t first, int64_t rows, int64_t batch_rows)
      : next_(first), end_(first + rows), batch_rows_(batch_rows) {}

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (next_ >= end_) {
      *batch = nullptr;
      return arrow::Status::OK();
    }
    const int64_t n = std::min(batch_rows_, end_ - next_);
    ARROW_ASSIGN_OR_RAISE(*batch, MakeRows(next_, n));
    next_ += n;
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_ = RowSchema();
  int64_t next_;
  int64_t end_;
  int64_t batch_rows_;
};

/// Order-independent digest of rows: wrapping sums per column (as in scan_bench).
struct Checksum {
  int64_t rows = 0;
  uint64_t id_sum = 0;
  uint64_t amount_bits = 0;  // sum of the doubles' bit patterns
  uint64_t name_bytes = 0;
  uint64_t time_sum = 0;
  int64_t nulls = 0;
  bool types_ok = true;

  bool operator==(const Checksum&) const = default;

  std::string ToString() const {
    return fmt::format(
        "rows={} id_sum={} amount_bits={:#x} name_bytes={} time_sum={} nulls={}{}", rows, id_sum,
        amount_bits, name_bytes, time_sum, nulls, types_ok ? "" : " (unexpected column types)");
  }

  void Add(const arrow::RecordBatch& batch) {
    static const auto schema = RowSchema();
    rows += batch.num_rows();
    if (batch.num_columns() != schema->num_fields()) {
      types_ok = false;
      return;
    }
    for (int c = 0; c < batch.num_columns(); ++c) {
      const arrow::Array& a = *batch.column(c);
      if (!a.type()->Equals(*schema->field(c)->type())) {
        types_ok = false;
        continue;
      }
      nulls += a.null_count();
      const int64_t n = a.length();
      switch (c) {
        case 0: {
          const auto& x = static_cast<const arrow::Int64Array&>(a);
          for (int64_t i = 0; i < n; ++i) {
            if (x.IsValid(i)) id_sum += static_cast<uint64_t>(x.Value(i));
          }
          break;
        }
        case 1: {
          const auto& x = static_cast<const arrow::DoubleArray&>(a);
          for (int64_t i = 0; i < n; ++i) {
            if (!x.IsValid(i)) continue;
            uint64_t bits;
            const double d = x.Value(i);
            std::memcpy(&bits, &d, sizeof bits);
            amount_bits += bits;
          }
          break;
        }
        case 2: {
          const auto& s = static_cast<const arrow::StringArray&>(a);
          if (n > 0) name_bytes += static_cast<uint64_t>(s.value_offset(n) - s.value_offset(0));
          break;
        }
        case 3: {
          const auto& x = static_cast<const arrow::TimestampArray&>(a);
          for (int64_t i = 0; i < n; ++i) {
            if (x.IsValid(i)) time_sum += static_cast<uint64_t>(x.Value(i));
          }
          break;
        }
      }
    }
  }
};

Checksum Expected(int64_t rows) {
  Checksum c;
  c.rows = rows;
  char buf[32];
  for (int64_t r = 0; r < rows; ++r) {
    Row row(r);
    c.id_sum += static_cast<uint64_t>(r);
    const double d = row.amount();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    c.amount_bits += bits;
    size_t len = 0;
    row.name(buf, &len);
    c.name_bytes += len;
    c.time_sum += static_cast<uint64_t>(row.event_time(r));
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Reading results back

/// Parquet files under `root` outside _delta_log, sorted (for deltacpp: in writing order).
std::vector<fs::path> ParquetFiles(const fs::path& root, int64_t* total_bytes) {
  std::vector<fs::path> out;
  *total_bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().lexically_relative(root).string().starts_with("_delta_log")) continue;
    if (entry.is_regular_file() && entry.path().extension() == ".parquet") {
      out.push_back(entry.path());
      *total_bytes += static_cast<int64_t>(entry.file_size());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The row groups of the Parquet files under `root`: "[a b] [c]" lists each file's row-group
/// row counts. Sets `*rows` to the total.
arrow::Result<std::string> Layout(const fs::path& root, int64_t* rows, int64_t* bytes) {
  std::string out;
  *rows = 0;
  for (const auto& path : ParquetFiles(root, bytes)) {
    std::unique_ptr<parquet::ParquetFileReader> reader;
    try {
      reader = parquet::ParquetFileReader::OpenFile(path.string());
    } catch (const std::exception& e) {
      return arrow::Status::IOError("cannot read ", path.string(), ": ", e.what());
    }
    const auto meta = reader->metadata();
    out += out.empty() ? "[" : " [";
    for (int g = 0; g < meta->num_row_groups(); ++g) {
      const int64_t n = meta->RowGroup(g)->num_rows();
      out += fmt::format("{}{}", g ? " " : "", n);
      *rows += n;
    }
    out += "]";
  }
  return out;
}

/// The integer after `"key":` (optionally quoted) in a JSON text; nullopt when absent.
std::optional<int64_t> JsonInt(std::string_view json, std::string_view key) {
  const std::string needle = fmt::format("\"{}\":", key);
  const size_t at = json.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + needle.size();
  while (i < json.size() && (json[i] == ' ' || json[i] == '"')) ++i;
  size_t j = i;
  while (j < json.size() && json[j] >= '0' && json[j] <= '9') ++j;
  return ParseInt(json.substr(i, j - i));
}

/// add.stats numRecords of each live file, by add.path.
arrow::Result<std::vector<std::pair<std::string, int64_t>>> NumRecords(
    const deltacpp::Snapshot& snapshot) {
  std::vector<std::pair<std::string, int64_t>> out;
  const auto& files = snapshot.files();
  if (!files) return out;
  auto path = std::dynamic_pointer_cast<arrow::StringArray>(files->GetColumnByName("path"));
  auto stats = std::dynamic_pointer_cast<arrow::StringArray>(files->GetColumnByName("stats"));
  if (!path || !stats) return arrow::Status::Invalid("the snapshot's files lack path or stats");
  for (int64_t i = 0; i < files->num_rows(); ++i) {
    const auto n = stats->IsValid(i) ? JsonInt(stats->GetView(i), "numRecords") : std::nullopt;
    out.emplace_back(std::string(path->GetView(i)), n.value_or(-1));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. Bulk append

/// Writes batches into Parquet files in `dir` as fast as Arrow alone can on this machine's
/// cores, laid out like deltacpp's data writer lays out an unpartitioned table: the batches of
/// a row group are buffered until their Arrow data reaches 64 MiB and then written as one table
/// (split by the writer at 1Mi rows), each file is finished after the row group that takes it
/// to 128 MiB, and while one file encodes a row group on a thread of its own the next row group
/// goes to another file (one file per core). No statistics, no log: the lower bound of a write.
class PlainWriter {
 public:
  explicit PlainWriter(fs::path dir)
      : dir_(std::move(dir)), lanes_(std::max(1u, std::thread::hardware_concurrency())) {}

  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
    if (batch->num_rows() == 0) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(const int64_t bytes, arrow::util::ReferencedBufferSize(*batch));
    pending_.push_back(batch);
    pending_bytes_ += bytes;
    if (pending_bytes_ < kRowGroupBytes) return arrow::Status::OK();
    return WritePending();
  }

  arrow::Status Finish() {
    arrow::Status st = WritePending();
    for (auto& lane : lanes_) {
      auto closed = Wait(lane);
      if (closed.ok() && lane.writer) closed = Close(lane);
      if (st.ok()) st = closed;
    }
    return st;
  }

 private:
  struct Lane {
    std::shared_ptr<arrow::io::FileOutputStream> sink;
    std::unique_ptr<parquet::arrow::FileWriter> writer;
    std::future<arrow::Status> encoding;
  };

  static arrow::Status Wait(Lane& lane) {
    return lane.encoding.valid() ? lane.encoding.get() : arrow::Status::OK();
  }

  arrow::Status WritePending() {
    if (pending_.empty()) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, pending_));
    pending_.clear();
    pending_bytes_ = 0;
    Lane& lane = lanes_[next_lane_];
    next_lane_ = (next_lane_ + 1) % lanes_.size();
    ARROW_RETURN_NOT_OK(Wait(lane));
    if (!lane.writer) ARROW_RETURN_NOT_OK(Open(lane));
    lane.encoding = std::async(std::launch::async, [&lane, table]() -> arrow::Status {
      ARROW_RETURN_NOT_OK(lane.writer->WriteTable(*table, parquet::DEFAULT_MAX_ROW_GROUP_LENGTH));
      ARROW_ASSIGN_OR_RAISE(const int64_t written, lane.sink->Tell());
      return written >= kTargetFileSize ? Close(lane) : arrow::Status::OK();
    });
    return arrow::Status::OK();
  }

  arrow::Status Open(Lane& lane) {
    const auto path = dir_ / fmt::format("part-{:05d}.snappy.parquet", files_++);
    ARROW_ASSIGN_OR_RAISE(lane.sink, arrow::io::FileOutputStream::Open(path.string()));
    auto props =
        parquet::WriterProperties::Builder().compression(arrow::Compression::SNAPPY)->build();
    auto arrow_props = parquet::ArrowWriterProperties::Builder()
                           .coerce_timestamps(arrow::TimeUnit::MICRO)
                           ->disable_deprecated_int96_timestamps()
                           ->build();
    ARROW_ASSIGN_OR_RAISE(lane.writer, parquet::arrow::FileWriter::Open(
                                           *schema_, arrow::default_memory_pool(), lane.sink,
                                           props, arrow_props));
    return arrow::Status::OK();
  }

  static arrow::Status Close(Lane& lane) {
    ARROW_RETURN_NOT_OK(lane.writer->Close());
    lane.writer.reset();
    if (!lane.sink->closed()) ARROW_RETURN_NOT_OK(lane.sink->Close());
    lane.sink.reset();
    return arrow::Status::OK();
  }

  fs::path dir_;
  std::shared_ptr<arrow::Schema> schema_ = RowSchema();
  std::vector<Lane> lanes_;
  size_t next_lane_ = 0;
  std::vector<std::shared_ptr<arrow::RecordBatch>> pending_;
  int64_t pending_bytes_ = 0;
  int files_ = 0;
};

struct BulkRun {
  double seconds = 0;
  double rss_mib = 0;  ///< peak RSS at the end of the write, before the checks
  double cpu_seconds = 0;  ///< of every thread, during the write
  int64_t bytes = 0;
  std::string layout;
};

bool ClearDir(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) {
    fmt::print(stderr, "cannot clear {}: {}\n", dir.string(), ec.message());
    return false;
  }
  return true;
}

/// Checks a deltacpp bulk write: the result, the snapshot's files and numRecords, the commit's
/// numOutputRows and a full scan's checksum.
arrow::Status CheckDeltaBulk(const std::string& root, const deltacpp::WriteResult& result,
                             const Checksum& want) {
  auto fail = [](std::string what) { return arrow::Status::Invalid(std::move(what)); };
  if (result.version != 0 || result.num_rows != want.rows) {
    return fail(fmt::format("WriteTable returned version {} with {} rows, expected 0 and {}",
                            result.version.value_or(-1), result.num_rows, want.rows));
  }
  ARROW_ASSIGN_OR_RAISE(auto table, deltacpp::DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->Latest());
  if (snapshot->version() != 0 || snapshot->num_files() != result.num_files) {
    return fail(fmt::format("the table is at version {} with {} files, expected 0 and {}",
                            snapshot->version(), snapshot->num_files(), result.num_files));
  }
  ARROW_ASSIGN_OR_RAISE(auto records, NumRecords(*snapshot));
  int64_t sum = 0;
  for (const auto& [path, n] : records) sum += n;
  if (sum != want.rows) {
    return fail(fmt::format("the files' numRecords add up to {}, expected {}", sum, want.rows));
  }
  ARROW_ASSIGN_OR_RAISE(auto history, table->History(1));
  const auto output_rows =
      history.empty() ? std::nullopt : JsonInt(history[0].operation_metrics, "numOutputRows");
  if (output_rows != want.rows) {
    return fail(fmt::format("the commit's operationMetrics are {}, expected numOutputRows {}",
                            history.empty() ? "missing" : history[0].operation_metrics,
                            want.rows));
  }
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Build());
  ARROW_ASSIGN_OR_RAISE(auto reader, scan->Execute());
  Checksum got;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    got.Add(*batch);
  }
  if (!(got == want)) {
    return fail(fmt::format("a scan read {}\n  expected {}", got.ToString(), want.ToString()));
  }
  return arrow::Status::OK();
}

std::optional<BulkRun> DeltaBulk(const Options& opt, const fs::path& dir, const Checksum& want) {
  if (!ClearDir(dir)) return std::nullopt;
  auto input = std::make_shared<GeneratedReader>(0, opt.rows, kBatchRows);
  const auto start = Clock::now();
  const double cpu_start = CpuSeconds();
  auto result = deltacpp::WriteTable(dir.string(), input, deltacpp::WriteOptions{});
  BulkRun run;
  run.seconds = Ms(start) / 1000;
  run.cpu_seconds = CpuSeconds() - cpu_start;
  run.rss_mib = PeakRssMiB();
  if (!result.ok()) {
    fmt::print(stderr, "deltacpp bulk append failed: {}\n", result.status().ToString());
    return std::nullopt;
  }
  auto st = CheckDeltaBulk(dir.string(), *result, want);
  int64_t rows = 0;
  if (st.ok()) {
    auto layout = Layout(dir, &rows, &run.bytes);
    if (layout.ok()) run.layout = *layout;
    st = layout.status();
  }
  if (!st.ok()) {
    fmt::print(stderr, "CHECK FAILED: deltacpp bulk append: {}\n", st.message());
    return std::nullopt;
  }
  return run;
}

std::optional<BulkRun> PlainBulk(const Options& opt, const fs::path& dir) {
  std::error_code ec;
  if (!ClearDir(dir) || !fs::create_directories(dir, ec)) return std::nullopt;
  GeneratedReader input(0, opt.rows, kBatchRows);
  const auto start = Clock::now();
  const double cpu_start = CpuSeconds();
  PlainWriter writer(dir);
  arrow::Status st;
  while (st.ok()) {
    std::shared_ptr<arrow::RecordBatch> batch;
    st = input.ReadNext(&batch);
    if (!st.ok() || !batch) break;
    st = writer.Write(batch);
  }
  if (st.ok()) st = writer.Finish();
  BulkRun run;
  run.seconds = Ms(start) / 1000;
  run.cpu_seconds = CpuSeconds() - cpu_start;
  run.rss_mib = PeakRssMiB();
  if (!st.ok()) {
    fmt::print(stderr, "plain Parquet write failed: {}\n", st.ToString());
    return std::nullopt;
  }
  int64_t rows = 0;
  auto layout = Layout(dir, &rows, &run.bytes);
  if (!layout.ok() || rows != opt.rows) {
    fmt::print(stderr, "CHECK FAILED: plain Parquet write: {}\n",
               layout.ok() ? fmt::format("{} rows in the files, expected {}", rows, opt.rows)
                           : layout.status().ToString());
    return std::nullopt;
  }
  run.layout = *layout;
  return run;
}

int RunBulk(const Options& opt, const fs::path& dir) {
  const fs::path delta_dir = dir / "bulk-deltacpp";
  const fs::path plain_dir = dir / "bulk-plain";
  fmt::print("append_bench: bulk append of {} rows (id long, amount double, name string, "
             "event_time timestamp) in batches of {} rows\n",
             opt.rows, kBatchRows);
  const Checksum want = Expected(opt.rows);

  // Cold: each writer's first run in a process of its own, in the order deltacpp, plain, plain,
  // deltacpp (what a fresh process pays for its memory depends on what ran just before it),
  // after one unreported fresh-process run of each: the very first write of the program also
  // pays for the page cache of the shared libraries and of the output directory, which is not a
  // property of either writer.
  auto cold_delta_once = [&]() -> std::optional<std::vector<double>> {
    deltacpp::Initialize();
    auto r = DeltaBulk(opt, delta_dir, want);
    if (!r) return std::nullopt;
    return std::vector<double>{r->seconds, r->rss_mib, r->cpu_seconds};
  };
  auto cold_plain_once = [&]() -> std::optional<std::vector<double>> {
    deltacpp::Initialize();  // the same allocator settings as the deltacpp run
    auto r = PlainBulk(opt, plain_dir);
    if (!r) return std::nullopt;
    return std::vector<double>{r->seconds, r->rss_mib, r->cpu_seconds};
  };
  std::vector<double> cold_delta, cold_plain, cpu_delta, cpu_plain;
  double rss_delta = 0, rss_plain = 0;
  if (!RunSamplesInFreshProcess(cold_delta_once) || !RunSamplesInFreshProcess(cold_plain_once)) {
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    const bool is_delta = i == 0 || i == 3;
    auto r = is_delta ? RunSamplesInFreshProcess(cold_delta_once)
                      : RunSamplesInFreshProcess(cold_plain_once);
    if (!r || r->size() != 3) return 1;
    (is_delta ? cold_delta : cold_plain).push_back((*r)[0]);
    (is_delta ? cpu_delta : cpu_plain).push_back((*r)[2]);
    double& rss = is_delta ? rss_delta : rss_plain;
    rss = std::max(rss, (*r)[1]);
  }

  // Warm: in one process, one unreported run of each, then R of each, alternating which goes
  // first; every run's files must be laid out like the first deltacpp run's. Also times the
  // input alone (generating the batches without writing them).
  auto warm = [&]() -> std::optional<std::vector<double>> {
    deltacpp::Initialize();
    auto first = DeltaBulk(opt, delta_dir, want);
    if (!first || !PlainBulk(opt, plain_dir)) return std::nullopt;
    std::vector<double> delta_s, plain_s, gen_s;
    int64_t delta_bytes = first->bytes, plain_bytes = 0;
    for (int64_t run = 0; run < opt.runs; ++run) {
      std::optional<BulkRun> d, p;
      if (run % 2 == 0) {
        d = DeltaBulk(opt, delta_dir, want);
        if (d) p = PlainBulk(opt, plain_dir);
      } else {
        p = PlainBulk(opt, plain_dir);
        if (p) d = DeltaBulk(opt, delta_dir, want);
      }
      if (!d || !p) return std::nullopt;
      delta_s.push_back(d->seconds);
      plain_s.push_back(p->seconds);
      plain_bytes = p->bytes;
      GeneratedReader input(0, opt.rows, kBatchRows);
      const auto start = Clock::now();
      std::shared_ptr<arrow::RecordBatch> batch;
      do {
        if (!input.ReadNext(&batch).ok()) return std::nullopt;
      } while (batch);
      gen_s.push_back(Ms(start) / 1000);
    }
    const size_t files = static_cast<size_t>(std::count(first->layout.begin(),
                                                        first->layout.end(), '['));
    fmt::print("  layout (first deltacpp run): {} file{}, rows per row group {}; {:.1f} MB (deltacpp), "
               "{:.1f} MB (plain)\n",
               files, files == 1 ? "" : "s", first->layout, static_cast<double>(delta_bytes) / 1e6,
               static_cast<double>(plain_bytes) / 1e6);
    std::vector<double> out{PeakRssMiB(), static_cast<double>(delta_bytes)};
    for (const auto* v : {&delta_s, &plain_s, &gen_s}) out.insert(out.end(), v->begin(), v->end());
    return out;
  };
  auto w = RunSamplesInFreshProcess(warm);
  if (!w || w->size() != 2 + 3 * static_cast<size_t>(opt.runs)) return 1;
  const double warm_rss = (*w)[0];
  const double mb = (*w)[1] / 1e6;
  const auto r = static_cast<ptrdiff_t>(opt.runs);
  const std::vector<double> warm_delta(w->begin() + 2, w->begin() + 2 + r);
  const std::vector<double> warm_plain(w->begin() + 2 + r, w->begin() + 2 + 2 * r);
  const std::vector<double> gen(w->begin() + 2 + 2 * r, w->end());

  auto line = [&](const char* label, const std::vector<double>& cold,
                  const std::vector<double>& cpu, double rss,
                  const std::vector<double>& warm_runs) {
    const double med = Median(warm_runs);
    fmt::print("  {:<8}: cold {:.1f} ms (mean of fresh processes: {}; CPU {:.2f} s; peak RSS "
               "{:.0f} MiB), warm median {:.1f} ms of {} ({:.0f} MB/s, {:.2f} Mrows/s; runs {})\n",
               label, Mean(cold) * 1000, FormatRuns(cold, 1000), Mean(cpu), rss, med * 1000,
               warm_runs.size(), mb / med, static_cast<double>(opt.rows) / med / 1e6,
               FormatRuns(warm_runs, 1000));
  };
  fmt::print("  input generation alone: median {:.1f} ms (included in both writers' times)\n",
             Median(gen) * 1000);
  line("deltacpp", cold_delta, cpu_delta, rss_delta, warm_delta);
  line("plain", cold_plain, cpu_plain, rss_plain, warm_plain);
  fmt::print("  ratio deltacpp/plain: warm {:.3f}, cold {:.3f}\n",
             Median(warm_delta) / Median(warm_plain), Mean(cold_delta) / Mean(cold_plain));
  fmt::print("  peak RSS of the warm process (both writers and the checks' scans): {:.0f} MiB\n",
             warm_rss);
  fmt::print("  check: OK (numOutputRows, numRecords and scan checksum {}; plain row counts)\n",
             want.ToString());
  ClearDir(delta_dir);
  ClearDir(plain_dir);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// 2. One-row appends to a table with a long history

std::shared_ptr<arrow::Schema> LogTableSchema() {  // the schema GenerateLogOnlyTable writes
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("value", arrow::float64()),
                        arrow::field("name", arrow::utf8()), arrow::field("part", arrow::int32())});
}

std::shared_ptr<arrow::RecordBatchReader> OneLogTableRow(int64_t id) {
  arrow::Int64Builder ids;
  arrow::DoubleBuilder values;
  arrow::StringBuilder names;
  arrow::Int32Builder parts;
  std::vector<std::shared_ptr<arrow::Array>> cols(4);
  const std::string name = fmt::format("row-{}", id);
  if (!ids.Append(id).ok() || !values.Append(static_cast<double>(id) / 2).ok() ||
      !names.Append(name).ok() || !parts.Append(static_cast<int32_t>(id % 10)).ok() ||
      !ids.Finish(&cols[0]).ok() || !values.Finish(&cols[1]).ok() ||
      !names.Finish(&cols[2]).ok() || !parts.Finish(&cols[3]).ok()) {
    return nullptr;
  }
  auto batch = arrow::RecordBatch::Make(LogTableSchema(), 1, cols);
  return *arrow::RecordBatchReader::Make({batch}, LogTableSchema());
}

std::string OneLogTableRowJson(int64_t id) {
  return fmt::format("{{\"id\":{},\"value\":{},\"name\":\"row-{}\",\"part\":{}}}\n", id,
                     static_cast<double>(id) / 2, id, id % 10);
}

/// The state of a table before a sequence of appends.
struct StartState {
  int64_t version = -1;
  std::set<std::string> paths;
};

std::optional<StartState> ReadStart(const std::string& root) {
  auto table = deltacpp::DeltaTable::Open(root);
  auto snapshot = table.ok() ? (*table)->Latest() : table.status();
  if (!snapshot.ok()) {
    fmt::print(stderr, "cannot load {}: {}\n", root, snapshot.status().ToString());
    return std::nullopt;
  }
  auto records = NumRecords(**snapshot);
  if (!records.ok()) return std::nullopt;
  StartState s;
  s.version = (*snapshot)->version();
  for (const auto& [path, n] : *records) s.paths.insert(path);
  return s;
}

/// After `appends` one-row appends: the version advanced by exactly that many, every earlier
/// file is still live, and there is one new file per append, holding one record, on disk.
bool CheckAppended(const char* what, const std::string& root, const StartState& start,
                   int64_t appends) {
  auto table = deltacpp::DeltaTable::Open(root);
  auto snapshot = table.ok() ? (*table)->Latest() : table.status();
  if (!snapshot.ok()) {
    fmt::print(stderr, "CHECK FAILED: {}: cannot load {}: {}\n", what, root,
               snapshot.status().ToString());
    return false;
  }
  auto records = NumRecords(**snapshot);
  if (!records.ok()) return false;
  const int64_t version = (*snapshot)->version();
  int64_t old_files = 0, new_files = 0, bad = 0;
  for (const auto& [path, n] : *records) {
    if (start.paths.count(path)) {
      ++old_files;
    } else {
      ++new_files;
      // One-row files are named without characters that need URI decoding.
      if (n != 1 || !fs::exists(fs::path(root) / path)) ++bad;
    }
  }
  if (version != start.version + appends ||
      old_files != static_cast<int64_t>(start.paths.size()) || new_files != appends || bad) {
    fmt::print(stderr,
               "CHECK FAILED: {}: after {} appends the table is at version {} (expected {}) "
               "with {} of the {} earlier files and {} new files ({} without one record on "
               "disk)\n",
               what, appends, version, start.version + appends, old_files, start.paths.size(),
               new_files, bad);
    return false;
  }
  return true;
}

/// Runs one append; its latency in ms, or nullopt (after printing why) when it failed or did
/// not commit `expected_version`.
template <typename Append>
std::optional<double> TimedAppend(const char* what, Append append, int64_t expected_version) {
  const auto start = Clock::now();
  arrow::Result<deltacpp::WriteResult> result = append();
  const double ms = Ms(start);
  if (!result.ok()) {
    fmt::print(stderr, "{}: append failed: {}\n", what, result.status().ToString());
    return std::nullopt;
  }
  if (result->version != expected_version || result->num_rows != 1 || result->num_files != 1) {
    fmt::print(stderr,
               "CHECK FAILED: {}: an append committed version {} with {} rows in {} files, "
               "expected version {} with 1 row in 1 file\n",
               what, result->version.value_or(-1), result->num_rows, result->num_files,
               expected_version);
    return std::nullopt;
  }
  return ms;
}

/// One run of `cli write` appending `json` from stdin; its latency in ms (process start to
/// exit), or nullopt (after printing why) when it failed or did not report `expected_version`.
std::optional<double> CliAppend(const std::string& cli, const std::string& root,
                                const std::string& json, int64_t expected_version) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return std::nullopt;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  std::vector<std::string> args = {cli,     "write", root, "--mode", "append", "--input-format",
                                   "json", "-"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = Clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, cli.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    fmt::print(stderr, "cannot start {}: {}\n", cli, std::strerror(rc));
    return std::nullopt;
  }
  const bool sent = write(in[1], json.data(), json.size()) == static_cast<ssize_t>(json.size());
  close(in[1]);
  std::string output;
  char buf[4096];
  while (true) {
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  const bool waited = waitpid(pid, &status, 0) == pid;
  const double ms = Ms(start);
  if (!sent || !waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "{} write failed (status {}): {}\n", cli, status, output);
    return std::nullopt;
  }
  const std::string want = fmt::format("committed version {}: 1 rows in 1 files", expected_version);
  if (output.find(want) == std::string::npos) {
    fmt::print(stderr, "CHECK FAILED: {} write printed '{}', expected '{}'\n", cli, output, want);
    return std::nullopt;
  }
  return ms;
}

/// Process start to exit of `cli --version`, in ms.
std::optional<double> CliStartup(const std::string& cli) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  std::string arg0 = cli, arg1 = "--version";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  const auto start = Clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, cli.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return std::nullopt;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  return Ms(start);
}

enum class Route { kHandle, kLocation, kCli };

/// One sequence of 1 + n appends on `root`, in this (child) process. Returns the first
/// append's latency, then (version, latency) of each of the n others, then, for the CLI, the
/// start-up times of `cli --version`.
std::optional<std::vector<double>> AppendSequence(const Options& opt, Route route,
                                                  const std::string& root, int64_t n) {
  deltacpp::Initialize();
  const char* what = route == Route::kHandle     ? "appends through a handle"
                     : route == Route::kLocation ? "appends through the location"
                                                 : "CLI appends";
  auto start = ReadStart(root);
  if (!start) return std::nullopt;
  std::shared_ptr<deltacpp::DeltaTable> handle;
  const deltacpp::WriteOptions options;
  int64_t version = start->version;
  std::vector<double> out;
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t id = 100'000'000 + version + 1;
    std::optional<double> ms;
    if (route == Route::kCli) {
      ms = CliAppend(opt.cli, root, OneLogTableRowJson(id), version + 1);
    } else if (route == Route::kLocation) {
      ms = TimedAppend(
          what, [&] { return deltacpp::WriteTable(root, OneLogTableRow(id), options); },
          version + 1);
    } else {
      ms = TimedAppend(
          what,
          [&]() -> arrow::Result<deltacpp::WriteResult> {
            if (!handle) {
              ARROW_ASSIGN_OR_RAISE(handle, deltacpp::DeltaTable::Locate(root));
            }
            return deltacpp::WriteTable(handle, OneLogTableRow(id), options);
          },
          version + 1);
    }
    if (!ms) return std::nullopt;
    ++version;
    if (i > 0) out.push_back(static_cast<double>(version));
    out.push_back(*ms);
  }
  if (!CheckAppended(what, root, *start, n + 1)) return std::nullopt;
  if (route == Route::kCli) {
    for (int i = 0; i < 10; ++i) {
      auto ms = CliStartup(opt.cli);
      if (!ms) {
        fmt::print(stderr, "{} --version failed\n", opt.cli);
        return std::nullopt;
      }
      out.push_back(*ms);
    }
  }
  return out;
}

/// Copies the generated table (the template stays untouched: appends add commits and
/// checkpoints, and may delete expired log files).
bool FreshCopy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!ClearDir(to)) return false;
  fs::copy(from, to, fs::copy_options::recursive, ec);
  if (ec) {
    fmt::print(stderr, "cannot copy {} to {}: {}\n", from.string(), to.string(), ec.message());
    return false;
  }
  return true;
}

std::string LatencyLine(const std::vector<double>& samples, int64_t interval) {
  // samples: (version, ms) pairs
  std::vector<double> all, plain, checkpointing;
  for (size_t i = 0; i + 1 < samples.size(); i += 2) {
    const auto version = static_cast<int64_t>(samples[i]);
    all.push_back(samples[i + 1]);
    (version % interval == 0 ? checkpointing : plain).push_back(samples[i + 1]);
  }
  std::string text = fmt::format("{} appends: p50 {:.2f} ms, p90 {:.2f}, p99 {:.2f}, max {:.2f}",
                                 all.size(), Percentile(all, 50), Percentile(all, 90),
                                 Percentile(all, 99), Max(all));
  text += fmt::format("; without a checkpoint ({}): p50 {:.2f}, p90 {:.2f}, max {:.2f}",
                      plain.size(), Percentile(plain, 50), Percentile(plain, 90), Max(plain));
  if (!checkpointing.empty()) {
    text += fmt::format("; with a checkpoint ({}): p50 {:.2f}, max {:.2f}", checkpointing.size(),
                        Percentile(checkpointing, 50), Max(checkpointing));
  }
  return text;
}

int RunLatency(const Options& opt, const fs::path& dir, bool handle, bool location, bool cli) {
  const fs::path original = dir / "log-table";
  const fs::path copy = dir / "log-table-copy";
  double generated_s = -1;
  const std::string shape =
      fmt::format("log-only commits={} files={} checkpoint_interval={}\n", opt.commits, opt.files,
                  opt.checkpoint_interval);
  if (!PrepareTable(
          original, shape,
          [&] {
            return deltacpp::testing::GenerateLogOnlyTable(original.string(), opt.commits,
                                                           opt.files, opt.checkpoint_interval);
          },
          &generated_s)) {
    return 1;
  }
  fmt::print("append_bench: one-row appends to a table of {} commits and {} live files, "
             "checkpoint every {} commits (delta.checkpointInterval={})\n",
             opt.commits, opt.files, opt.checkpoint_interval, opt.checkpoint_interval);
  if (generated_s < 0) {
    fmt::print("  table: {} (reused; each sequence appends to a fresh copy)\n", original.string());
  } else {
    fmt::print("  table: {} (generated in {:.1f} s; each sequence appends to a fresh copy)\n",
               original.string(), generated_s);
  }

  struct Sequence {
    Route route;
    const char* label;
    int64_t n;
  };
  std::vector<Sequence> sequences;
  if (handle) sequences.push_back({Route::kHandle, "through one handle  ", opt.appends});
  if (location) sequences.push_back({Route::kLocation, "through the location", opt.appends});
  if (cli) {
    if (access(opt.cli.c_str(), X_OK) != 0) {
      fmt::print(stderr, "the CLI {} is missing; build it or pass --cli PATH\n", opt.cli);
      return 1;
    }
    sequences.push_back({Route::kCli, "CLI (deltacpp write) ", opt.cli_appends});
  }
  int64_t checked = 0;
  for (const auto& seq : sequences) {
    if (!FreshCopy(original, copy)) return 1;
    auto r = RunSamplesInFreshProcess(
        [&] { return AppendSequence(opt, seq.route, copy.string(), seq.n); });
    if (!r || r->size() < 1 + 2 * static_cast<size_t>(seq.n)) return 1;
    const std::vector<double> pairs(r->begin() + 1, r->begin() + 1 + 2 * seq.n);
    fmt::print("  {}: first {:.2f} ms; {}\n", seq.label, (*r)[0],
               LatencyLine(pairs, opt.checkpoint_interval));
    if (seq.route == Route::kCli) {
      const std::vector<double> startup(r->begin() + 1 + 2 * seq.n, r->end());
      fmt::print("  CLI start-up alone (deltacpp --version, {} runs): p50 {:.2f} ms, max {:.2f}\n",
                 startup.size(), Percentile(startup, 50), Max(startup));
    }
    checked += seq.n + 1;
  }
  ClearDir(copy);
  fmt::print("  (latencies in ms; 'first' is the first append of each sequence, not in the "
             "percentiles; an append that commits a multiple of {} also writes a checkpoint)\n",
             opt.checkpoint_interval);
  fmt::print("  check: OK ({} appends, each committing the next version and adding one file "
             "with numRecords 1)\n",
             checked);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// 3. Concurrent appenders

int RunConcurrent(const Options& opt, const fs::path& dir) {
  const fs::path table = dir / "concurrent-table";
  const std::string root = table.string();
  const int64_t total = opt.writers * opt.writer_commits;
  fmt::print("append_bench: {} processes appending {} one-row commits each to one table at "
             "the same time\n",
             opt.writers, opt.writer_commits);
  if (!ClearDir(table)) return 1;
  auto created = RunSamplesInFreshProcess([&]() -> std::optional<std::vector<double>> {
    deltacpp::Initialize();
    auto r = deltacpp::WriteTable(
        root, std::make_shared<GeneratedReader>(0, kInitialRows, kBatchRows), {});
    if (!r.ok() || r->version != 0) {
      fmt::print(stderr, "cannot create {}: {}\n", root, r.status().ToString());
      return std::nullopt;
    }
    return std::vector<double>{};
  });
  if (!created) return 1;

  // Each writer opens its handle, reads the table, reports ready and waits for the start signal
  // (the start pipe closing); then it appends and reports its finish time and latencies.
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return 1;
  struct Writer {
    pid_t pid = -1;
    int results = -1;
  };
  std::vector<Writer> writers;
  fflush(stdout);
  fflush(stderr);
  for (int64_t w = 0; w < opt.writers; ++w) {
    int results[2];
    if (pipe(results) != 0) return 1;
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(ready[0]);
      close(go[1]);
      close(results[0]);
      deltacpp::Initialize();
      auto handle = deltacpp::DeltaTable::Locate(root);
      if (!handle.ok() || !(*handle)->Latest().ok()) _exit(1);
      char byte = 1;
      if (write(ready[1], &byte, 1) != 1) _exit(1);
      close(ready[1]);
      while (read(go[0], &byte, 1) > 0) {
      }
      std::vector<double> out{0};
      for (int64_t i = 0; i < opt.writer_commits; ++i) {
        const int64_t id = (w + 1) * kIdStride + i;
        const auto start = Clock::now();
        auto r = deltacpp::WriteTable(*handle, std::make_shared<GeneratedReader>(id, 1, 1), {});
        out.push_back(Ms(start));
        if (!r.ok() || !r->version || r->num_rows != 1) {
          fmt::print(stderr, "writer {}: append {} failed: {}\n", w, i, r.status().ToString());
          fflush(stderr);
          _exit(1);
        }
      }
      out[0] = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
      const auto size = static_cast<ssize_t>(out.size() * sizeof(double));
      const bool ok = write(results[1], out.data(), static_cast<size_t>(size)) == size;
      fflush(stderr);
      _exit(ok ? 0 : 1);
    }
    close(results[1]);
    writers.push_back({pid, results[0]});
  }
  close(ready[1]);
  close(go[0]);
  char byte = 0;
  int64_t ready_count = 0;
  while (ready_count < opt.writers && read(ready[0], &byte, 1) == 1) ++ready_count;
  close(ready[0]);
  const double start_s = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  close(go[1]);  // go

  bool ok = ready_count == opt.writers;
  double end_s = start_s;
  std::vector<double> latencies, finished_s;
  for (auto& w : writers) {
    std::vector<double> values(1 + static_cast<size_t>(opt.writer_commits));
    const auto want = static_cast<ssize_t>(values.size() * sizeof(double));
    ssize_t got = 0;
    while (got < want) {
      const ssize_t n = read(w.results, reinterpret_cast<char*>(values.data()) + got,
                             static_cast<size_t>(want - got));
      if (n <= 0) break;
      got += n;
    }
    close(w.results);
    int status = 0;
    if (waitpid(w.pid, &status, 0) != w.pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got != want) {
      ok = false;
      continue;
    }
    end_s = std::max(end_s, values[0]);
    finished_s.push_back(values[0] - start_s);
    latencies.insert(latencies.end(), values.begin() + 1, values.end());
  }
  if (!ok) {
    fmt::print(stderr, "a concurrent writer failed\n");
    return 1;
  }
  const double wall_s = end_s - start_s;

  // Check: the version advanced by exactly W*M, a scan returns every id exactly once; count the
  // commits that were retried after a concurrent commit took their version (readVersion is the
  // version the writer read, which is then older than the version before its own).
  auto check = RunSamplesInFreshProcess([&]() -> std::optional<std::vector<double>> {
    deltacpp::Initialize();
    auto table_handle = deltacpp::DeltaTable::Open(root);
    auto snapshot = table_handle.ok() ? (*table_handle)->Latest() : table_handle.status();
    if (!snapshot.ok()) {
      fmt::print(stderr, "CHECK FAILED: cannot load {}: {}\n", root, snapshot.status().ToString());
      return std::nullopt;
    }
    if ((*snapshot)->version() != total) {
      fmt::print(stderr, "CHECK FAILED: the table is at version {}, expected 0 + {}\n",
                 (*snapshot)->version(), total);
      return std::nullopt;
    }
    std::vector<int64_t> ids;
    auto scan = (*snapshot)->NewScan().Columns({"id"}).Build();
    auto reader = scan.ok() ? (*scan)->Execute() : scan.status();
    if (!reader.ok()) return std::nullopt;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      if (!(*reader)->ReadNext(&batch).ok()) return std::nullopt;
      if (!batch) break;
      const auto& col = static_cast<const arrow::Int64Array&>(*batch->column(0));
      for (int64_t i = 0; i < col.length(); ++i) ids.push_back(col.Value(i));
    }
    std::vector<int64_t> want;
    for (int64_t i = 0; i < kInitialRows; ++i) want.push_back(i);
    for (int64_t w = 0; w < opt.writers; ++w) {
      for (int64_t i = 0; i < opt.writer_commits; ++i) want.push_back((w + 1) * kIdStride + i);
    }
    std::sort(ids.begin(), ids.end());
    if (ids != want) {
      fmt::print(stderr, "CHECK FAILED: a scan returned {} rows, expected {} distinct ids "
                 "(each once)\n", ids.size(), want.size());
      return std::nullopt;
    }
    auto history = (*table_handle)->History(total);
    if (!history.ok()) return std::nullopt;
    double retried = 0;
    for (const auto& e : *history) {
      const auto read_version = JsonInt(e.commit_info_json, "readVersion");
      if (read_version && *read_version < e.version - 1) ++retried;
    }
    return std::vector<double>{static_cast<double>(ids.size()), retried};
  });
  if (!check || check->size() != 2) return 1;
  std::sort(finished_s.begin(), finished_s.end());
  fmt::print("  {} commits in {:.2f} s: {:.1f} commits/s; latency of a commit p50 {:.1f} ms, "
             "p90 {:.1f}, p99 {:.1f}, max {:.1f}; {:.0f} commits were retried after a concurrent "
             "commit\n",
             total, wall_s, static_cast<double>(total) / wall_s, Percentile(latencies, 50),
             Percentile(latencies, 90), Percentile(latencies, 99), Max(latencies), (*check)[1]);
  std::string finished;
  for (double f : finished_s) finished += fmt::format("{}{:.2f}", finished.empty() ? "" : " ", f);
  fmt::print("  the writers finished after {} s\n", finished);
  fmt::print("  check: OK (version 0 -> {}, a scan returns all {} rows, each id once)\n", total,
             static_cast<int64_t>((*check)[0]));
  ClearDir(table);
  return 0;
}

int Main(int argc, char** argv) {
  auto parsed = ParseArgs(argc, argv);
  if (!parsed) {
    Usage(argv[0]);
    return 2;
  }
  const Options& opt = *parsed;
  WorkDir work;
  if (!work.Init(opt.dir, "append_bench")) return 1;
  std::error_code ec;
  fs::create_directories(work.path(), ec);
  bool first = true;
  auto separate = [&] {
    if (!first) fmt::print("\n");
    first = false;
  };
  if (opt.Has("bulk")) {
    separate();
    if (RunBulk(opt, work.path()) != 0) return 1;
  }
  const bool handle = opt.Has("latency") || opt.Has("handle");
  const bool location = opt.Has("latency") || opt.Has("location");
  if (handle || location || opt.Has("cli")) {
    separate();
    if (RunLatency(opt, work.path(), handle, location, opt.Has("cli")) != 0) return 1;
  }
  if (opt.Has("concurrent")) {
    separate();
    if (RunConcurrent(opt, work.path()) != 0) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
