// Full-scan benchmark: deltacpp's scan of a Delta table against a plain Parquet read of the same
// data files, in the same process.
//
//   scan_bench [--rows N] [--files F] [--runs R] [--dir PATH]
//
// The table (columns id long, amount double, name string, event_time timestamp; snappy;
// deterministic values; F files written by F commits) is generated under PATH (a temporary
// directory when omitted) and reused when PATH already holds one of the same shape. Generation
// runs in a child process so that the peak RSS reported belongs to the reads only.
//
// Measured, each run:
//   deltacpp: Snapshot::NewScan().Build(), Scan::Execute(), every batch consumed;
//   plain:    each data file in turn through parquet::arrow::FileReader::ReadTable with
//             use_threads and pre_buffer on.
// Both consume the rows the same way: they count them and fold them into an order-independent
// checksum, which must match the values the generator wrote (exit status 1 otherwise). The cold
// figure of each reader is the mean of two first runs, each in a process of its own (fresh
// memory, thread pools not started yet); the warm figure is the median of R runs in one process
// after an unreported run of each, alternating which reader goes first.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/properties.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_util.h"
#include "deltacpp/api.h"
#include "support/fixture_writer.h"

namespace {

namespace fs = std::filesystem;
using namespace deltacpp::bench;  // NOLINT(build/namespaces): the shared benchmark helpers

constexpr int64_t kBaseMicros = 1'700'000'000'000'000LL;  // 2023-11-14T22:13:20Z

struct Options {
  int64_t rows = 10'000'000;
  int64_t files = 10;
  int64_t runs = 5;
  std::string dir;
};

void Usage(const char* argv0) {
  fmt::print(stderr, "usage: {} [--rows N] [--files F] [--runs R] [--dir PATH]\n", argv0);
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options opt;
  if (!ParseFlags(argc, argv, &opt.dir,
                  {{"--rows", &opt.rows}, {"--files", &opt.files}, {"--runs", &opt.runs}})) {
    return std::nullopt;
  }
  if (opt.rows < 0 || opt.files < 1 || opt.runs < 1) {
    fmt::print(stderr, "need --rows >= 0, --files >= 1, --runs >= 1\n");
    return std::nullopt;
  }
  return opt;
}

// ---------------------------------------------------------------------------------------------
// Data

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Values of row `r` (numbered across the whole table).
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

std::shared_ptr<arrow::Schema> TableSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()),
                        arrow::field("amount", arrow::float64()),
                        arrow::field("name", arrow::utf8()),
                        arrow::field("event_time",
                                     arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
}

arrow::Result<std::shared_ptr<arrow::Table>> MakeRows(int64_t first, int64_t count) {
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
  return arrow::Table::Make(TableSchema(), cols, count);
}

int64_t FileRows(const Options& opt, int64_t k) {
  return opt.rows / opt.files + (k < opt.rows % opt.files ? 1 : 0);
}

arrow::Status Generate(const Options& opt, const std::string& root) {
  deltacpp::testing::FixtureTableWriter writer(root);
  ARROW_RETURN_NOT_OK(writer.Create(TableSchema()));
  int64_t first = 0;
  for (int64_t k = 0; k < opt.files; ++k) {  // one commit per file keeps memory bounded
    const int64_t n = FileRows(opt, k);
    ARROW_ASSIGN_OR_RAISE(auto data, MakeRows(first, n));
    ARROW_RETURN_NOT_OK(writer.Append({deltacpp::testing::FixtureFile(data)}).status());
    first += n;
  }
  return arrow::Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Checksum

/// Order-independent digest of the rows read: wrapping sums per column.
struct Checksum {
  int64_t rows = 0;
  uint64_t id_sum = 0;
  uint64_t amount_bits = 0;  // sum of the doubles' bit patterns
  uint64_t name_bytes = 0;
  uint64_t time_sum = 0;
  int64_t nulls = 0;
  bool types_ok = true;  // every column had the type TableSchema gives it

  bool operator==(const Checksum&) const = default;

  std::string ToString() const {
    return fmt::format(
        "rows={} id_sum={} amount_bits={:#x} name_bytes={} time_sum={} nulls={}{}", rows, id_sum,
        amount_bits, name_bytes, time_sum, nulls, types_ok ? "" : " (unexpected column types)");
  }

  template <typename ArrayType, typename F>
  static uint64_t SumValues(const arrow::Array& a, F value) {
    const auto& arr = static_cast<const ArrayType&>(a);
    uint64_t sum = 0;
    const int64_t n = arr.length();
    if (arr.null_count() == 0) {
      for (int64_t i = 0; i < n; ++i) sum += value(arr, i);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if (arr.IsValid(i)) sum += value(arr, i);
      }
    }
    return sum;
  }

  /// Folds column `index` (of TableSchema) of some rows in.
  void AddColumn(int index, const arrow::Array& a) {
    static const auto schema = TableSchema();
    if (index >= schema->num_fields() || !a.type()->Equals(*schema->field(index)->type())) {
      types_ok = false;
      return;
    }
    nulls += a.null_count();
    switch (index) {
      case 0:
        id_sum += SumValues<arrow::Int64Array>(a, [](const arrow::Int64Array& x, int64_t i) {
          return static_cast<uint64_t>(x.Value(i));
        });
        break;
      case 1:
        amount_bits += SumValues<arrow::DoubleArray>(a, [](const arrow::DoubleArray& x, int64_t i) {
          uint64_t bits;
          const double d = x.Value(i);
          std::memcpy(&bits, &d, sizeof bits);
          return bits;
        });
        break;
      case 2: {
        const auto& s = static_cast<const arrow::StringArray&>(a);
        if (s.length() > 0) {
          name_bytes += static_cast<uint64_t>(s.value_offset(s.length()) - s.value_offset(0));
        }
        break;
      }
      case 3:
        time_sum +=
            SumValues<arrow::TimestampArray>(a, [](const arrow::TimestampArray& x, int64_t i) {
              return static_cast<uint64_t>(x.Value(i));
            });
        break;
    }
  }

  void Add(const arrow::RecordBatch& batch) {
    rows += batch.num_rows();
    for (int c = 0; c < batch.num_columns(); ++c) AddColumn(c, *batch.column(c));
  }

  void Add(const arrow::Table& table) {
    rows += table.num_rows();
    for (int c = 0; c < table.num_columns(); ++c) {
      for (const auto& chunk : table.column(c)->chunks()) AddColumn(c, *chunk);
    }
  }
};

/// The checksum of the rows the generator writes, computed from the row formulas.
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
// Table preparation

std::string ShapeText(const Options& opt) {
  return fmt::format("scan rows={} files={}\n", opt.rows, opt.files);
}

/// Makes `dir` hold a table of the requested shape; false (after printing why) when that is
/// impossible. Sets `*generated_s` to the generation time, or -1 when the table was reused.
bool PrepareTable(const Options& opt, const fs::path& dir, double* generated_s) {
  return deltacpp::bench::PrepareTable(
      dir, ShapeText(opt), [&] { return Generate(opt, dir.string()); }, generated_s);
}

/// Data files of the table at `root` (everything ending in .parquet outside _delta_log), sorted.
std::vector<std::string> DataFiles(const fs::path& root, int64_t* total_bytes) {
  std::vector<std::string> out;
  *total_bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto rel = entry.path().lexically_relative(root).string();
    if (rel.starts_with("_delta_log")) continue;
    if (entry.is_regular_file() && entry.path().extension() == ".parquet") {
      out.push_back(entry.path().string());
      *total_bytes += static_cast<int64_t>(entry.file_size());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// The two readers

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

arrow::Result<double> DeltaScan(const std::shared_ptr<deltacpp::Snapshot>& snapshot,
                                Checksum* sum) {
  const auto start = std::chrono::steady_clock::now();
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Build());
  ARROW_ASSIGN_OR_RAISE(auto reader, scan->Execute());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    sum->Add(*batch);
  }
  ARROW_RETURN_NOT_OK(reader->Close());
  return Seconds(start);
}

arrow::Result<double> PlainRead(const std::vector<std::string>& files, Checksum* sum) {
  const auto start = std::chrono::steady_clock::now();
  parquet::ArrowReaderProperties props;
  props.set_use_threads(true);
  props.set_pre_buffer(true);
  for (const auto& path : files) {
    ARROW_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
    parquet::arrow::FileReaderBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Open(input));
    builder.properties(props);
    ARROW_ASSIGN_OR_RAISE(auto reader, builder.Build());
    ARROW_ASSIGN_OR_RAISE(auto table, reader->ReadTable());
    sum->Add(*table);
  }
  return Seconds(start);
}

// ---------------------------------------------------------------------------------------------

arrow::Result<std::shared_ptr<deltacpp::Snapshot>> LoadSnapshot(const std::string& root) {
  deltacpp::Initialize();
  ARROW_ASSIGN_OR_RAISE(auto table, deltacpp::DeltaTable::Open(root));
  return table->Latest();
}

int Main(int argc, char** argv) {
  auto parsed = ParseArgs(argc, argv);
  if (!parsed) {
    Usage(argv[0]);
    return 2;
  }
  const Options& opt = *parsed;

  WorkDir work;
  if (!work.Init(opt.dir, "scan_bench")) return 1;
  const fs::path& dir = work.path();

  double generated_s = -1;
  if (!PrepareTable(opt, dir, &generated_s)) return 1;
  int64_t bytes = 0;
  const auto files = DataFiles(dir, &bytes);
  if (static_cast<int64_t>(files.size()) != opt.files) {
    fmt::print(stderr, "CHECK FAILED: {} holds {} data files, expected {}\n", dir.string(),
               files.size(), opt.files);
    return 1;
  }
  const Checksum want = Expected(opt.rows);
  const std::string root = dir.string();

  fmt::print("scan_bench: {} rows in {} files, {:.1f} MB on disk\n", opt.rows, opt.files,
             static_cast<double>(bytes) / 1e6);
  if (generated_s < 0) {
    fmt::print("  table: {} (reused)\n", root);
  } else {
    fmt::print("  table: {} (generated in {:.1f} s)\n", root, generated_s);
  }

  // Each reader once, with its check; the snapshot is loaded outside the timed part.
  auto run_delta = [&](const std::shared_ptr<deltacpp::Snapshot>& snapshot)
      -> std::optional<double> {
    Checksum got;
    auto t = DeltaScan(snapshot, &got);
    if (!t.ok()) {
      fmt::print(stderr, "deltacpp scan failed: {}\n", t.status().ToString());
      return std::nullopt;
    }
    if (!(got == want)) {
      fmt::print(stderr, "CHECK FAILED: deltacpp scan read {}\n  expected {}\n", got.ToString(),
                 want.ToString());
      return std::nullopt;
    }
    return *t;
  };
  auto run_plain = [&]() -> std::optional<double> {
    Checksum got;
    auto t = PlainRead(files, &got);
    if (!t.ok()) {
      fmt::print(stderr, "plain Parquet read failed: {}\n", t.status().ToString());
      return std::nullopt;
    }
    if (!(got == want)) {
      fmt::print(stderr, "CHECK FAILED: plain Parquet read read {}\n  expected {}\n",
                 got.ToString(), want.ToString());
      return std::nullopt;
    }
    return *t;
  };

  // Cold: each reader's first run, in a process of its own (this one has no threads yet).
  // Twice each, in the order deltacpp, plain, plain, deltacpp: how much a fresh process pays to
  // fault its memory in depends on what ran just before it, and this order spreads that evenly.
  auto cold_delta_once = [&]() -> std::optional<double> {
    auto snapshot = LoadSnapshot(root);
    if (!snapshot.ok()) {
      fmt::print(stderr, "cannot load {}: {}\n", root, snapshot.status().ToString());
      return std::nullopt;
    }
    return run_delta(*snapshot);
  };
  auto cold_plain_once = [&]() -> std::optional<double> {
    deltacpp::Initialize();  // the same allocator settings as the deltacpp run
    return run_plain();
  };
  std::vector<ColdResult<double>> cold_delta, cold_plain;
  for (int i = 0; i < 4; ++i) {
    const bool is_delta = i == 0 || i == 3;
    auto r = is_delta ? RunInFreshProcess(cold_delta_once) : RunInFreshProcess(cold_plain_once);
    if (!r) return 1;
    (is_delta ? cold_delta : cold_plain).push_back(*r);
  }

  // Warm: one unreported run of each, then R runs of each, alternating which goes first.
  auto snapshot = LoadSnapshot(root);
  if (!snapshot.ok()) {
    fmt::print(stderr, "cannot load {}: {}\n", root, snapshot.status().ToString());
    return 1;
  }
  if (!run_delta(*snapshot) || !run_plain()) return 1;
  std::vector<double> warm_delta, warm_plain;
  for (int run = 0; run < opt.runs; ++run) {
    std::optional<double> d, p;
    if (run % 2 == 0) {
      d = run_delta(*snapshot);
      if (d) p = run_plain();
    } else {
      p = run_plain();
      if (p) d = run_delta(*snapshot);
    }
    if (!d || !p) return 1;
    warm_delta.push_back(*d);
    warm_plain.push_back(*p);
  }

  const double mb = static_cast<double>(bytes) / 1e6;
  const double med_delta = Median(warm_delta), med_plain = Median(warm_plain);
  auto cold_mean = [](const std::vector<ColdResult<double>>& cold) {
    double sum = 0;
    for (const auto& c : cold) sum += c.value;
    return sum / static_cast<double>(cold.size());
  };
  auto line = [&](const char* label, const std::vector<ColdResult<double>>& cold, double med,
                  const std::vector<double>& warm) {
    std::vector<double> cold_s;
    double rss = 0;
    for (const auto& c : cold) {
      cold_s.push_back(c.value);
      rss = std::max(rss, c.peak_rss_mib);
    }
    fmt::print("  {:<8}: cold {:.1f} ms (mean of fresh processes: {}; peak RSS {:.0f} MiB), "
               "warm median {:.1f} ms of {} ({:.0f} MB/s, {:.1f} Mrows/s; runs {})\n",
               label, cold_mean(cold) * 1000, FormatRuns(cold_s, 1000), rss, med * 1000,
               warm.size(), mb / med, static_cast<double>(opt.rows) / med / 1e6,
               FormatRuns(warm, 1000));
  };
  line("deltacpp", cold_delta, med_delta, warm_delta);
  line("plain", cold_plain, med_plain, warm_plain);
  fmt::print("  ratio deltacpp/plain: warm {:.3f}, cold {:.3f}\n", med_delta / med_plain,
             cold_mean(cold_delta) / cold_mean(cold_plain));
  fmt::print("  peak RSS of the warm runs (both readers): {:.0f} MiB\n", PeakRssMiB());
  fmt::print("  check: OK ({})\n", want.ToString());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
