// One-row UPDATEs through one long-lived table handle: does the N-th cost what the 10th did?
//
//   update_handle_bench [--rows N] [--files F] [--updates U] [--dv 0|1] [--dir PATH]
//
// A table of N rows in F files (columns id long, amount double; one commit per file, ids in
// file order so statistics pick one file per id; `delta.enableDeletionVectors` per --dv) is
// made under PATH (a temporary directory when omitted; regenerated every run, as the updates
// change it). Then U updates `SET amount = amount + 1 WHERE id = k` run one after another
// through one DeltaTable handle, each on a different row spread over the files. Reported: the
// first update, the median of updates 2-11 ("10th") and of the last ten, p90 and max, and the
// table's live files at the end. The check: the table then holds N rows, and its amounts sum
// to the generated sum plus U (exit status 1 otherwise).
#include <arrow/api.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/update.h"
#include "deltacpp/ops/write.h"

namespace {

namespace fs = std::filesystem;
using namespace deltacpp::bench;  // NOLINT(build/namespaces): the shared benchmark helpers

struct Options {
  int64_t rows = 1'000'000;
  int64_t files = 40;
  int64_t updates = 1000;
  int64_t dv = 1;
  std::string dir;
};

arrow::Result<std::shared_ptr<arrow::Table>> Rows(int64_t first, int64_t count) {
  arrow::Int64Builder id;
  arrow::DoubleBuilder amount;
  ARROW_RETURN_NOT_OK(id.Reserve(count));
  ARROW_RETURN_NOT_OK(amount.Reserve(count));
  for (int64_t r = first; r < first + count; ++r) {
    id.UnsafeAppend(r);
    amount.UnsafeAppend(static_cast<double>(r % 1000));
  }
  std::shared_ptr<arrow::Array> ids, amounts;
  ARROW_RETURN_NOT_OK(id.Finish(&ids));
  ARROW_RETURN_NOT_OK(amount.Finish(&amounts));
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("amount", arrow::float64())});
  return arrow::Table::Make(schema, {ids, amounts}, count);
}

double Ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

arrow::Status Run(const Options& opt, const std::string& root) {
  // The table: created with its properties, then one append per file.
  deltacpp::WriteOptions write;
  write.properties["delta.enableDeletionVectors"] = opt.dv ? "true" : "false";
  ARROW_ASSIGN_OR_RAISE(auto handle, deltacpp::DeltaTable::Locate(root));
  double expected_sum = 0;
  for (int64_t k = 0; k < opt.files; ++k) {
    const int64_t per = opt.rows / opt.files;
    const int64_t first = k * per;
    const int64_t count = k + 1 == opt.files ? opt.rows - first : per;
    ARROW_ASSIGN_OR_RAISE(auto rows, Rows(first, count));
    for (int64_t r = first; r < first + count; ++r) expected_sum += static_cast<double>(r % 1000);
    ARROW_RETURN_NOT_OK(deltacpp::WriteTable(handle, rows, write).status());
  }
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(opt.updates));
  for (int64_t u = 0; u < opt.updates; ++u) {
    // Distinct rows, spread over every file.
    const int64_t id = (u * 7919 + u / opt.files) % opt.rows;
    const auto start = std::chrono::steady_clock::now();
    ARROW_ASSIGN_OR_RAISE(auto metrics, deltacpp::UpdateBuilder(handle)
                                            .Set("amount", "amount + 1")
                                            .Where(fmt::format("id = {}", id))
                                            .Execute());
    ms.push_back(Ms(start));
    if (metrics.num_updated_rows != 1) {
      return arrow::Status::Invalid(fmt::format("update {} of id {} changed {} rows", u + 1, id,
                                                metrics.num_updated_rows));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto snapshot, handle->Latest());
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Columns({"amount"}).Build());
  ARROW_ASSIGN_OR_RAISE(auto table, scan->ToTable());
  double sum = 0;
  for (const auto& chunk : table->column(0)->chunks()) {
    const auto& a = static_cast<const arrow::DoubleArray&>(*chunk);
    for (int64_t i = 0; i < a.length(); ++i) sum += a.Value(i);
  }
  if (table->num_rows() != opt.rows || sum != expected_sum + static_cast<double>(opt.updates)) {
    return arrow::Status::Invalid(fmt::format(
        "after the updates the table has {} rows summing to {}, expected {} rows summing to {}",
        table->num_rows(), sum, opt.rows, expected_sum + static_cast<double>(opt.updates)));
  }
  auto window = [&](size_t begin, size_t end) {
    return Median(std::vector<double>(ms.begin() + static_cast<std::ptrdiff_t>(begin),
                                      ms.begin() + static_cast<std::ptrdiff_t>(end)));
  };
  const size_t n = ms.size();
  fmt::print("update_handle_bench: {} rows in {} files, {}, {} one-row updates through one "
             "handle\n",
             opt.rows, opt.files, opt.dv ? "deletion vectors" : "copy-on-write", n);
  fmt::print("  first {:.2f} ms; updates 2-11: median {:.2f} ms; last 10: median {:.2f} ms; "
             "all: p50 {:.2f}, p90 {:.2f}, max {:.2f} ms; {} live files at the end\n",
             ms[0], window(1, std::min<size_t>(n, 11)), window(n >= 10 ? n - 10 : 0, n),
             Percentile(ms, 50), Percentile(ms, 90), Max(ms), snapshot->num_files());
  return arrow::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseFlags(argc, argv, &opt.dir,
                  {{"--rows", &opt.rows}, {"--files", &opt.files}, {"--updates", &opt.updates},
                   {"--dv", &opt.dv}}) ||
      opt.files < 1 || opt.rows < opt.files || opt.updates < 11) {
    fmt::print(stderr, "usage: {} [--rows N >= F] [--files F >= 1] [--updates U >= 11] "
               "[--dv 0|1] [--dir PATH]\n", argv[0]);
    return 2;
  }
  WorkDir work;
  if (!work.Init(opt.dir, "update-handle-bench")) return 1;
  const fs::path root = work.path() / "update-handle";
  fs::remove_all(root);
  deltacpp::Initialize();
  auto st = Run(opt, root.string());
  if (!st.ok()) {
    fmt::print(stderr, "update_handle_bench: FAILED: {}\n", st.ToString());
    return 1;
  }
  return 0;
}
