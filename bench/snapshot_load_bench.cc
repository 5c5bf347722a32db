// Snapshot load benchmark: time to open a large log-only table and reconstruct the latest
// snapshot and one in the middle of its history (checkpoint read plus JSON commit replay).
//
//   snapshot_load_bench [--commits N] [--files M] [--checkpoint-interval K] [--runs R]
//                       [--dir PATH]
//
// The table is generated under PATH (a temporary directory when omitted) and reused when PATH
// already holds one of the same shape. Generation runs in a child process so that the peak RSS
// reported belongs to the measured loads only. The cold figure of each kind of load is the mean
// of two first loads, each in a process of its own (fresh memory, thread pools not started yet);
// the warm figure is the median of R loads in one process after two unreported loads of each.
// The live-file count and total size of both snapshots are checked against values derived from
// the generator's layout; any mismatch makes the program exit with status 1.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

struct Options {
  int64_t commits = 10000;
  int64_t files = 200000;
  int64_t checkpoint_interval = 100;
  int64_t runs = 5;
  std::string dir;
};

void Usage(const char* argv0) {
  fmt::print(stderr,
             "usage: {} [--commits N] [--files M] [--checkpoint-interval K] [--runs R] "
             "[--dir PATH]\n",
             argv0);
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options opt;
  if (!ParseFlags(argc, argv, &opt.dir,
                  {{"--commits", &opt.commits},
                   {"--files", &opt.files},
                   {"--checkpoint-interval", &opt.checkpoint_interval},
                   {"--runs", &opt.runs}})) {
    return std::nullopt;
  }
  if (opt.commits < 1 || opt.files < 0 || opt.runs < 1) {
    fmt::print(stderr, "need --commits >= 1, --files >= 0, --runs >= 1\n");
    return std::nullopt;
  }
  return opt;
}

std::string ShapeText(const Options& opt) {
  return fmt::format("log-only commits={} files={} checkpoint_interval={}\n", opt.commits,
                     opt.files, opt.checkpoint_interval);
}

/// Makes `dir` hold a table of the requested shape. Returns false (after printing why) when
/// that is impossible. Sets `*generated_s` to the generation time, or -1 when reused.
bool PrepareTable(const Options& opt, const fs::path& dir, double* generated_s) {
  return deltacpp::bench::PrepareTable(
      dir, ShapeText(opt),
      [&] {
        return deltacpp::testing::GenerateLogOnlyTable(dir.string(), opt.commits, opt.files,
                                                       opt.checkpoint_interval);
      },
      generated_s);
}

/// Live files after `version` as the generator lays them out: file i is added by one data commit
/// and the oldest files are removed later, oldest first, so the live files form the index range
/// [removed, added). Data commits are versions 1..N-1 (version 0 alone for a one-commit table);
/// adds are spread evenly over them (the first ones take the remainder) and removes, a tenth of
/// the final live count, evenly over all data commits but the first.
struct ExpectedFiles {
  int64_t first = 0;  ///< index of the oldest live file
  int64_t end = 0;    ///< one past the newest live file
  int64_t count() const { return end - first; }
  int64_t total_size() const {
    int64_t sum = 0;
    for (int64_t i = first; i < end; ++i) sum += 10000 + (i * 7919) % 90000;
    return sum;
  }
};

ExpectedFiles ExpectedAt(const Options& opt, int64_t version) {
  const int64_t first_data = opt.commits == 1 ? 0 : 1;
  const int64_t data_commits = opt.commits - first_data;
  const int64_t removes = data_commits >= 2 ? opt.files / 10 : 0;
  const int64_t adds = opt.files + removes;
  const int64_t j = version - first_data;  // data commits [0, j] are applied
  ExpectedFiles e;
  if (j < 0) return e;
  // Commit k adds adds/D files, plus one while k < adds % D.
  e.end = (j + 1) * (adds / data_commits) + std::min(j + 1, adds % data_commits);
  if (removes > 0) {
    // Data commit k >= 1 removes removes/(D-1) files, plus one while k-1 < removes % (D-1).
    const int64_t n = data_commits - 1;
    e.first = j * (removes / n) + std::min(j, removes % n);
  }
  return e;
}

struct LoadResult {
  double ms = 0;
  int64_t version = -1;
  int64_t num_files = 0;
  int64_t total_size = 0;
};

/// DeltaTable::Open followed by SnapshotAt(version), timed together.
arrow::Result<LoadResult> Load(const std::string& root, std::optional<int64_t> version) {
  const auto start = std::chrono::steady_clock::now();
  ARROW_ASSIGN_OR_RAISE(auto table, deltacpp::DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->SnapshotAt(version));
  LoadResult r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count();
  r.version = snapshot->version();
  r.num_files = snapshot->num_files();
  r.total_size = snapshot->total_size_bytes();
  return r;
}

bool Check(const char* what, const LoadResult& got, int64_t version, const ExpectedFiles& want) {
  bool ok = true;
  if (got.version != version) {
    fmt::print(stderr, "CHECK FAILED: {}: snapshot version {}, expected {}\n", what, got.version,
               version);
    ok = false;
  }
  if (got.num_files != want.count()) {
    fmt::print(stderr, "CHECK FAILED: {}: {} live files, expected {}\n", what, got.num_files,
               want.count());
    ok = false;
  }
  if (got.total_size != want.total_size()) {
    fmt::print(stderr, "CHECK FAILED: {}: live files total {} bytes, expected {}\n", what,
               got.total_size, want.total_size());
    ok = false;
  }
  return ok;
}

int Main(int argc, char** argv) {
  auto parsed = ParseArgs(argc, argv);
  if (!parsed) {
    Usage(argv[0]);
    return 2;
  }
  const Options& opt = *parsed;

  WorkDir work;
  if (!work.Init(opt.dir, "snapshot_load_bench")) return 1;
  const fs::path& dir = work.path();

  double generated_s = -1;
  if (!PrepareTable(opt, dir, &generated_s)) return 1;

  const int64_t latest = opt.commits - 1;
  const int64_t middle = latest / 2;
  const ExpectedFiles want_latest = ExpectedAt(opt, latest);
  const ExpectedFiles want_middle = ExpectedAt(opt, middle);
  if (want_latest.count() != opt.files) {
    fmt::print(stderr, "internal error: layout model gives {} live files at the end, not {}\n",
               want_latest.count(), opt.files);
    return 1;
  }

  fmt::print("snapshot_load_bench: {} commits, {} live files, checkpoint interval {}\n",
             opt.commits, opt.files, opt.checkpoint_interval);
  if (generated_s < 0) {
    fmt::print("  table: {} (reused)\n", dir.string());
  } else {
    fmt::print("  table: {} (generated in {:.1f} s)\n", dir.string(), generated_s);
  }

  const std::string root = dir.string();
  // One load, checked; nullopt (after printing why) on failure.
  auto load = [&](const char* what, std::optional<int64_t> version, int64_t expected_version,
                  const ExpectedFiles& want) -> std::optional<LoadResult> {
    deltacpp::Initialize();
    auto r = Load(root, version);
    if (!r.ok()) {
      fmt::print(stderr, "loading the {} snapshot failed: {}\n", what, r.status().ToString());
      return std::nullopt;
    }
    if (!Check(what, *r, expected_version, want)) return std::nullopt;
    return *r;
  };
  auto load_latest = [&] { return load("latest", std::nullopt, latest, want_latest); };
  auto load_middle = [&] { return load("middle", middle, middle, want_middle); };

  // Cold: the first load of each kind, in a process of its own (this one has no threads yet).
  // Twice each, in the order latest, middle, middle, latest: how much a fresh process pays to
  // fault its memory in depends on what ran just before it, and this order spreads that evenly.
  std::vector<ColdResult<LoadResult>> cold_latest, cold_middle;
  for (int i = 0; i < 4; ++i) {
    const bool is_latest = i == 0 || i == 3;
    auto r = is_latest ? RunInFreshProcess(load_latest) : RunInFreshProcess(load_middle);
    if (!r) return 1;
    (is_latest ? cold_latest : cold_middle).push_back(*r);
  }

  // Warm: two unreported loads of each (the process's memory keeps growing over the first
  // loads), then R loads of each, interleaved.
  for (int i = 0; i < 2; ++i) {
    if (!load_latest() || !load_middle()) return 1;
  }
  std::vector<double> warm_latest, warm_middle;
  for (int run = 0; run < opt.runs; ++run) {
    auto l = load_latest();
    if (!l) return 1;
    auto m = load_middle();
    if (!m) return 1;
    warm_latest.push_back(l->ms);
    warm_middle.push_back(m->ms);
  }

  auto report = [&](const char* label, const std::vector<ColdResult<LoadResult>>& cold,
                    const std::vector<double>& warm) {
    std::vector<double> cold_ms;
    double rss = 0;
    for (const auto& c : cold) {
      cold_ms.push_back(c.value.ms);
      rss = std::max(rss, c.peak_rss_mib);
    }
    fmt::print("  {:<6} v{} ({} files): cold {:.1f} ms (mean of fresh processes: {}; peak RSS "
               "{:.0f} MiB), warm median {:.1f} ms of {} (runs {})\n",
               label, cold[0].value.version, cold[0].value.num_files, Mean(cold_ms),
               FormatRuns(cold_ms), rss, Median(warm), warm.size(), FormatRuns(warm));
  };
  report("latest", cold_latest, warm_latest);
  report("middle", cold_middle, warm_middle);
  fmt::print("  peak RSS of the warm loads: {:.0f} MiB\n", PeakRssMiB());
  fmt::print("  check: OK (live files and total size match the generator's layout)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
