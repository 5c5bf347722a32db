#include <gtest/gtest.h>

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>

#include <cmath>
#include <limits>
#include <random>

#include "expr/binder.h"
#include "expr/data_skipping.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace deltacpp::internal {
namespace {

namespace cp = arrow::compute;

// 2021-01-01 00:00:00 UTC in microseconds.
constexpr int64_t kBase = 1609459200000000;
const auto kUtc = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");

// Random files and predicates: whenever CanSkipFile says "skip", evaluating the predicate on
// the file's rows must select nothing. Statistics are computed from the rows the way writers
// do (timestamps truncated to milliseconds) and some are randomly dropped.
class SkippingSoundness : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cp::Initialize().ok());
    schema_ = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("s", arrow::utf8()),
                             arrow::field("ts", kUtc), arrow::field("p", arrow::utf8()),
                             arrow::field("g", arrow::float64())});
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::string XLiteral() { return Chance(0.1) ? "NULL" : std::to_string(Pick(9) - 4); }
  std::string SLiteral() {
    static const char* kValues[] = {"''", "'a'", "'ab'", "'b'", "'ba'", "'c'"};
    return Chance(0.1) ? "NULL" : kValues[Pick(6)];
  }
  std::string TsLiteral() {
    static const char* kValues[] = {"00.000000", "00.000999", "00.001000", "00.001500",
                                    "00.001999", "00.002000", "00.002500", "00.003000"};
    return Chance(0.1) ? "NULL"
                       : std::string("TIMESTAMP '2021-01-01 00:00:") + kValues[Pick(8)] + "'";
  }
  std::string GLiteral() {
    static const char* kValues[] = {"-1", "-0.5D", "0", "1", "1.5D", "'NaN'", "'Infinity'",
                                    "'-Infinity'"};
    return Chance(0.1) ? "NULL" : kValues[Pick(8)];
  }
  std::string PLiteral() { return Chance(0.2) ? "NULL" : (Pick(2) ? "'a'" : "'b'"); }

  std::string Atom() {
    static const char* kOps[] = {"=", "!=", "<", "<=", ">", ">=", "<=>"};
    const int column = Pick(5);
    static const char* kNames[] = {"x", "s", "ts", "p", "g"};
    const char* name = kNames[column];
    auto lit = [&] {
      switch (column) {
        case 0: return XLiteral();
        case 1: return SLiteral();
        case 2: return TsLiteral();
        case 3: return PLiteral();
        default: return GLiteral();
      }
    };
    // Constructs skipping does not look into (LIKE, CASE, CAST, %) must only ever keep files.
    static const char* kOpaque[] = {
        "CAST(x AS STRING) = '1'", "x % 3 = 1", "s LIKE 'a%'", "s NOT LIKE '_'",
        "CASE WHEN x > 0 THEN s = 'a' ELSE g > 1 END", "if(g > 0, TRUE, NULL)",
        "CAST(x AS DOUBLE) > 0.5D", "CASE x WHEN 1 THEN FALSE WHEN 2 THEN TRUE END",
        "concat(s, p) = 'ab'", "substring(s, 2) = 'a'"};
    switch (Pick(8)) {
      case 6: return kOpaque[Pick(10)];
      case 0: return std::string(name) + " " + kOps[Pick(7)] + " " + lit();
      case 1: return lit() + " " + kOps[Pick(7)] + " " + name;
      case 2: return std::string(name) + (Pick(2) ? " IS NULL" : " IS NOT NULL");
      case 3:
      case 4: {
        std::string out = std::string(name) + (Pick(2) ? " IN (" : " NOT IN (") + lit();
        for (int i = Pick(3); i > 0; --i) out += ", " + lit();
        return out + ")";
      }
      case 5:
        return std::string(name) + (Pick(2) ? " BETWEEN " : " NOT BETWEEN ") + lit() + " AND " + lit();
      default: return std::string(name) + " " + kOps[Pick(7)] + " " + lit();
    }
  }

  std::string Predicate(int depth) {
    if (depth == 0 || Chance(0.35)) return Atom();
    switch (Pick(3)) {
      case 0: return "(" + Predicate(depth - 1) + ") AND (" + Predicate(depth - 1) + ")";
      case 1: return "(" + Predicate(depth - 1) + ") OR (" + Predicate(depth - 1) + ")";
      default: return "NOT (" + Predicate(depth - 1) + ")";
    }
  }

  struct File {
    std::shared_ptr<arrow::RecordBatch> batch;
    FileStats stats;
    PartitionValuesView partitions;
  };

  // How the writer of a file recorded the bounds of a floating-point column holding NaN.
  enum class NaNStats { kSpark, kParquet, kNone };

  File RandomFile() {
    static const double kDoubles[] = {-1.0, -0.0, 0.0, 1.0, 1.5,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity()};
    const auto nan_stats = static_cast<NaNStats>(Pick(3));
    arrow::DoubleBuilder gb;
    std::optional<double> gmin, gmax;  // over the values other than NaN
    bool g_has_nan = false;
    int64_t gnull = 0;
    static const char* kStrings[] = {"", "a", "ab", "b", "ba"};
    const int rows = Pick(5);
    std::optional<std::string> partition;
    if (!Chance(0.25)) partition = Pick(2) ? "a" : "b";
    arrow::Int64Builder xb;
    arrow::StringBuilder sb, pb;
    arrow::TimestampBuilder tb(kUtc, arrow::default_memory_pool());
    std::optional<int64_t> xmin, xmax, tmin, tmax;
    std::optional<std::string> smin, smax;
    int64_t xnull = 0, snull = 0, tnull = 0;
    for (int i = 0; i < rows; ++i) {
      if (Chance(0.2)) {
        EXPECT_TRUE(xb.AppendNull().ok());
        ++xnull;
      } else {
        int64_t v = Pick(7) - 3;
        EXPECT_TRUE(xb.Append(v).ok());
        xmin = xmin ? std::min(*xmin, v) : v;
        xmax = xmax ? std::max(*xmax, v) : v;
      }
      if (Chance(0.2)) {
        EXPECT_TRUE(sb.AppendNull().ok());
        ++snull;
      } else {
        std::string v = kStrings[Pick(5)];
        EXPECT_TRUE(sb.Append(v).ok());
        smin = smin ? std::min(*smin, v) : v;
        smax = smax ? std::max(*smax, v) : v;
      }
      if (Chance(0.2)) {
        EXPECT_TRUE(tb.AppendNull().ok());
        ++tnull;
      } else {
        int64_t v = kBase + Pick(3000);
        EXPECT_TRUE(tb.Append(v).ok());
        tmin = tmin ? std::min(*tmin, v) : v;
        tmax = tmax ? std::max(*tmax, v) : v;
      }
      EXPECT_TRUE((partition ? pb.Append(*partition) : pb.AppendNull()).ok());
      if (Chance(0.2)) {
        EXPECT_TRUE(gb.AppendNull().ok());
        ++gnull;
      } else {
        // Mostly NaN, so that files holding only NaN occur too.
        const double v = Chance(0.3) ? kDoubles[5] : kDoubles[Pick(7)];
        EXPECT_TRUE(gb.Append(v).ok());
        if (std::isnan(v)) {
          g_has_nan = true;
        } else {
          gmin = gmin ? std::min(*gmin, v) : v;
          gmax = gmax ? std::max(*gmax, v) : v;
        }
      }
    }
    File file;
    std::shared_ptr<arrow::Array> xa, sa, ta, pa, ga;
    EXPECT_TRUE(gb.Finish(&ga).ok());
    EXPECT_TRUE(xb.Finish(&xa).ok());
    EXPECT_TRUE(sb.Finish(&sa).ok());
    EXPECT_TRUE(tb.Finish(&ta).ok());
    EXPECT_TRUE(pb.Finish(&pa).ok());
    file.batch = arrow::RecordBatch::Make(schema_, rows, {xa, sa, ta, pa, ga});
    file.stats.num_records = rows;
    auto keep = [&] { return !Chance(0.15); };
    ColumnStats x, s, t;
    if (xmin && keep()) x.min = std::make_shared<arrow::Int64Scalar>(*xmin);
    if (xmax && keep()) x.max = std::make_shared<arrow::Int64Scalar>(*xmax);
    if (keep()) x.null_count = xnull;
    if (smin && keep()) s.min = std::make_shared<arrow::StringScalar>(*smin);
    if (smax && keep()) s.max = std::make_shared<arrow::StringScalar>(*smax);
    if (keep()) s.null_count = snull;
    // Writers keep millisecond precision only.
    auto to_millis = [](int64_t v) { return v - (v % 1000); };
    if (tmin && keep()) t.min = std::make_shared<arrow::TimestampScalar>(to_millis(*tmin), kUtc);
    if (tmax && keep()) t.max = std::make_shared<arrow::TimestampScalar>(to_millis(*tmax), kUtc);
    if (keep()) t.null_count = tnull;
    // Spark orders NaN above everything: NaN is the maximum of a column holding one and also the
    // minimum when every value is NaN. Parquet statistics leave NaN out of both bounds; some
    // writers record no bounds at all once a NaN is seen.
    ColumnStats g;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::optional<double> glo = gmin, ghi = gmax;
    if (g_has_nan && nan_stats == NaNStats::kSpark) {
      ghi = nan;
      if (!glo) glo = nan;
    }
    if (g_has_nan && nan_stats == NaNStats::kNone) glo = ghi = std::nullopt;
    if (glo && keep()) g.min = std::make_shared<arrow::DoubleScalar>(*glo);
    if (ghi && keep()) g.max = std::make_shared<arrow::DoubleScalar>(*ghi);
    if (keep()) g.null_count = gnull;
    file.stats.columns["g"] = g;
    file.stats.columns["x"] = x;
    file.stats.columns["s"] = s;
    file.stats.columns["ts"] = t;
    file.partitions["p"] = partition ? std::make_shared<arrow::StringScalar>(*partition)
                                     : arrow::MakeNullScalar(arrow::utf8());
    return file;
  }

  int64_t CountMatches(const BoundExpr& predicate, const File& file) {
    auto expr = ToArrowFilter(predicate);
    EXPECT_TRUE(expr.ok());
    auto bound = expr->Bind(*schema_);
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    auto result = cp::ExecuteScalarExpression(*bound, *schema_, arrow::Datum(file.batch));
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return -1;
    if (result->is_scalar()) {
      const auto& s = static_cast<const arrow::BooleanScalar&>(*result->scalar());
      return s.is_valid && s.value ? file.batch->num_rows() : 0;
    }
    const auto& mask = static_cast<const arrow::BooleanArray&>(*result->make_array());
    return mask.true_count();
  }

  std::mt19937 rng_{20240611};
  std::shared_ptr<arrow::Schema> schema_;
};

TEST_F(SkippingSoundness, SkippedFilesNeverContainMatchingRows) {
  int skipped = 0, checked = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string sql = Predicate(3);
    auto parsed = ParseExpression(sql);
    ASSERT_TRUE(parsed.ok()) << sql << ": " << parsed.status().ToString();
    auto bound = BindPredicate(*parsed, *schema_);
    ASSERT_TRUE(bound.ok()) << sql << ": " << bound.status().ToString();
    for (int f = 0; f < 4; ++f) {
      File file = RandomFile();
      ++checked;
      if (!CanSkipFile(*bound, file.stats, file.partitions)) continue;
      ++skipped;
      ASSERT_EQ(CountMatches(*bound, file), 0)
          << "skipped a file with matching rows\n  predicate: " << sql
          << "\n  rows: " << file.batch->ToString();
    }
  }
  // The generator must exercise the skipping paths, not just keep everything.
  EXPECT_GT(skipped, checked / 10);
}

// The dual: whenever AllRowsMatch says every row matches, evaluating the predicate on the
// file's rows must select all of them.
TEST_F(SkippingSoundness, AllRowsMatchOnlyWhenEveryRowMatches) {
  int all = 0, checked = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string sql = Predicate(3);
    auto parsed = ParseExpression(sql);
    ASSERT_TRUE(parsed.ok()) << sql << ": " << parsed.status().ToString();
    auto bound = BindPredicate(*parsed, *schema_);
    ASSERT_TRUE(bound.ok()) << sql << ": " << bound.status().ToString();
    for (int f = 0; f < 4; ++f) {
      File file = RandomFile();
      if (file.batch->num_rows() == 0) continue;
      ++checked;
      if (!AllRowsMatch(*bound, file.stats, file.partitions)) continue;
      ++all;
      ASSERT_EQ(CountMatches(*bound, file), file.batch->num_rows())
          << "claimed every row matches\n  predicate: " << sql
          << "\n  rows: " << file.batch->ToString();
    }
  }
  // The generator must reach the positive answer often enough to test it.
  EXPECT_GT(all, checked / 50);
}

}  // namespace
}  // namespace deltacpp::internal
