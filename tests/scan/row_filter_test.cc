// Row filters: every predicate is checked against an evaluation written out by hand over the
// same rows, on a table whose files carry statistics and several row groups (so file and
// row-group skipping take part) and on one without any statistics.
#include <gtest/gtest.h>

#include <functional>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

struct Row {
  int64_t id;
  std::optional<std::string> name;
  std::optional<int32_t> score;
  std::optional<int32_t> d;        // days since the epoch
  std::optional<int64_t> ts;       // microseconds since the epoch, UTC
  std::optional<int64_t> amount;   // decimal(10,2) as cents
};

const std::vector<Row>& AllRows() {
  static const std::vector<Row> rows = {
      {1, "alpha", 10, Days(2024, 1, 10), Micros(2024, 1, 14, 23, 59, 59, 999'999), 150},
      {2, "beta", 20, Days(2024, 1, 15), Micros(2024, 1, 15), 1050},
      {3, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
      {4, "gamma", 10, Days(2024, 1, 16), Micros(2024, 1, 15, 0, 0, 0, 1), 1051},
      {5, "delta", 5, Days(2024, 1, 1), Micros(2023, 12, 31, 12), 300},
      {6, "h\xC3\xA9llo w\xC3\xB6rld", std::nullopt, Days(2024, 2, 29), Micros(2024, 3, 1, 8), -250},
      {7, "", 0, Days(2023, 12, 31), Micros(2024, 1, 15, 10, 30), 0},
      {8, "Beta", 30, std::nullopt, Micros(2024, 1, 20), 525},
      {9, "beta", -5, Days(2024, 1, 15), std::nullopt, 99'999'999},
      {10, std::nullopt, 20, Days(2024, 1, 14), Micros(2024, 1, 1), 100},
      {11, "zeta", 15, Days(2024, 1, 20), Micros(2024, 1, 16), 2500},
      {12, "alpha", std::nullopt, Days(2024, 1, 10), Micros(2024, 1, 15), std::nullopt},
  };
  return rows;
}

std::shared_ptr<arrow::Table> ToTable(const std::vector<Row>& rows) {
  std::vector<std::optional<int64_t>> id, ts, amount;
  std::vector<std::optional<std::string>> name;
  std::vector<std::optional<int32_t>> score, d;
  for (const auto& r : rows) {
    id.push_back(r.id);
    name.push_back(r.name);
    score.push_back(r.score);
    d.push_back(r.d);
    ts.push_back(r.ts);
    amount.push_back(r.amount);
  }
  return MakeTable({{"id", Int64s(id)},
                    {"name", Strings(name)},
                    {"score", Int32s(score)},
                    {"d", Dates(d)},
                    {"ts", Timestamps(ts)},
                    {"amount", Decimals(10, 2, amount)}});
}

struct FilterCase {
  std::string filter;
  std::function<bool(const Row&)> passes;
};

enum class Layout { kStatsAndRowGroups, kNoStats };

std::string LayoutName(const ::testing::TestParamInfo<Layout>& info) {
  return info.param == Layout::kStatsAndRowGroups ? "WithStatsAndRowGroups" : "WithoutStats";
}

class RowFilterTest : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(ToTable({})->schema()).ok());
    const auto& rows = AllRows();
    std::vector<Row> first(rows.begin(), rows.begin() + 6), second(rows.begin() + 6, rows.end());
    for (const auto* part : {&first, &second}) {
      FixtureFile f(ToTable(*part));
      if (GetParam() == Layout::kStatsAndRowGroups) {
        f.WithMaxRowGroupRows(2);
      } else {
        f.WithStats(false);
      }
      ASSERT_TRUE(w.Append({f}).ok());
    }
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  void Check(const std::vector<FilterCase>& cases) {
    for (const auto& c : cases) {
      SCOPED_TRACE("filter: " + c.filter);
      std::vector<int64_t> expected;
      for (const auto& r : AllRows()) {
        if (c.passes(r)) expected.push_back(r.id);
      }
      auto scan = Plan(*snap_, {}, c.filter);
      if (!scan) continue;
      auto t = Read(*scan);
      if (!t) continue;
      EXPECT_EQ(SortedIds(*t), expected);
      EXPECT_EQ(static_cast<int64_t>(scan->files().size()) + scan->num_skipped_files(), 2);
    }
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
};

INSTANTIATE_TEST_SUITE_P(Layouts, RowFilterTest,
                         ::testing::Values(Layout::kStatsAndRowGroups, Layout::kNoStats),
                         LayoutName);

bool Is(const std::optional<std::string>& v, const char* s) { return v && *v == s; }

TEST_P(RowFilterTest, UnfilteredScanReadsEveryValueOfEveryType) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->num_rows(), static_cast<int64_t>(AllRows().size()));
  EXPECT_EQ(FieldNames(*t->schema()),
            (std::vector<std::string>{"id", "name", "score", "d", "ts", "amount"}));
  auto ids = Int64Values(*t, "id");
  auto names = StringValues(*t, "name");
  auto scores = Int32Values(*t, "score");
  auto dates = DateValues(*t, "d");
  auto stamps = TimestampValues(*t, "ts");
  auto amounts = Column<arrow::Decimal128Array>(*t, "amount", arrow::decimal128(10, 2));
  ASSERT_NE(amounts, nullptr);
  std::map<int64_t, const Row*> by_id;
  for (const auto& r : AllRows()) by_id[r.id] = &r;
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(ids[i].has_value());
    const Row& r = *by_id.at(*ids[i]);
    SCOPED_TRACE("id " + std::to_string(r.id));
    EXPECT_EQ(names[i], r.name);
    EXPECT_EQ(scores[i], r.score);
    EXPECT_EQ(dates[i], r.d);
    EXPECT_EQ(stamps[i], r.ts);
    if (r.amount) {
      ASSERT_TRUE(amounts->IsValid(static_cast<int64_t>(i)));
      EXPECT_EQ(arrow::Decimal128(amounts->GetValue(static_cast<int64_t>(i))),
                arrow::Decimal128(*r.amount));
    } else {
      EXPECT_TRUE(amounts->IsNull(static_cast<int64_t>(i)));
    }
  }
}

TEST_P(RowFilterTest, IntegerComparisonsSelectExactlyTheMatchingRows) {
  Check({
      {"id > 5", [](const Row& r) { return r.id > 5; }},
      {"id <= 3", [](const Row& r) { return r.id <= 3; }},
      {"id = 4", [](const Row& r) { return r.id == 4; }},
      {"id != 4", [](const Row& r) { return r.id != 4; }},
      {"id <> 4", [](const Row& r) { return r.id != 4; }},
      {"5 < id", [](const Row& r) { return r.id > 5; }},
      {"id >= 100", [](const Row&) { return false; }},
      {"score > 10", [](const Row& r) { return r.score && *r.score > 10; }},
      {"score < 0", [](const Row& r) { return r.score && *r.score < 0; }},
      {"ID > 10", [](const Row& r) { return r.id > 10; }},
      {"id + score > 20", [](const Row& r) { return r.score && r.id + *r.score > 20; }},
      {"score * 2 = 20", [](const Row& r) { return r.score && *r.score * 2 == 20; }},
  });
}

TEST_P(RowFilterTest, NullNeverPassesAComparisonNorItsNegation) {
  Check({
      {"score = 10", [](const Row& r) { return r.score && *r.score == 10; }},
      {"NOT (score = 10)", [](const Row& r) { return r.score && *r.score != 10; }},
      {"score <> 10", [](const Row& r) { return r.score && *r.score != 10; }},
      {"NOT (score <> 10)", [](const Row& r) { return r.score && *r.score == 10; }},
      {"name = 'beta'", [](const Row& r) { return Is(r.name, "beta"); }},
      {"NOT (name = 'beta')", [](const Row& r) { return r.name && *r.name != "beta"; }},
      {"score = NULL", [](const Row&) { return false; }},
      {"NOT (score = NULL)", [](const Row&) { return false; }},
      {"score <=> NULL", [](const Row& r) { return !r.score; }},
      {"score <=> 10", [](const Row& r) { return r.score && *r.score == 10; }},
      {"NULL", [](const Row&) { return false; }},
      {"TRUE", [](const Row&) { return true; }},
      {"FALSE", [](const Row&) { return false; }},
  });
}

TEST_P(RowFilterTest, AndOrNotFollowThreeValuedLogic) {
  Check({
      {"score > 10 AND name = 'beta'",
       [](const Row& r) { return r.score && *r.score > 10 && Is(r.name, "beta"); }},
      // NULL OR TRUE is TRUE.
      {"score < 5 OR name = 'zeta'",
       [](const Row& r) { return (r.score && *r.score < 5) || Is(r.name, "zeta"); }},
      {"NOT (id > 3)", [](const Row& r) { return r.id <= 3; }},
      // NOT (FALSE AND NULL) is TRUE; NOT (TRUE AND NULL) is NULL.
      {"NOT (id > 3 AND score > 10)",
       [](const Row& r) { return r.id <= 3 || (r.score && *r.score <= 10); }},
      // Both disjuncts must be FALSE (not NULL).
      {"NOT (score > 10 OR name = 'beta')",
       [](const Row& r) { return r.score && *r.score <= 10 && r.name && *r.name != "beta"; }},
      {"score = 10 OR score IS NULL", [](const Row& r) { return !r.score || *r.score == 10; }},
      {"(id < 3 OR id > 10) AND NOT (name = 'alpha')",
       [](const Row& r) { return (r.id < 3 || r.id > 10) && r.name && *r.name != "alpha"; }},
      {"id > 2 and id < 5 or id = 12",
       [](const Row& r) { return (r.id > 2 && r.id < 5) || r.id == 12; }},
  });
}

TEST_P(RowFilterTest, IsNullAndIsNotNullSelectRowsByNullness) {
  Check({
      {"score IS NULL", [](const Row& r) { return !r.score; }},
      {"score IS NOT NULL", [](const Row& r) { return r.score.has_value(); }},
      {"name IS NULL", [](const Row& r) { return !r.name; }},
      {"NOT (name IS NULL)", [](const Row& r) { return r.name.has_value(); }},
      {"ts IS NULL OR d IS NULL", [](const Row& r) { return !r.ts || !r.d; }},
      {"amount IS NOT NULL AND d IS NOT NULL", [](const Row& r) { return r.amount && r.d; }},
      {"id IS NULL", [](const Row&) { return false; }},
  });
}

TEST_P(RowFilterTest, InListMatchesAnyListedValueAndNullNeverMatches) {
  Check({
      {"id IN (1, 3, 99)", [](const Row& r) { return r.id == 1 || r.id == 3; }},
      {"name IN ('alpha', 'zeta', 'nope')",
       [](const Row& r) { return Is(r.name, "alpha") || Is(r.name, "zeta"); }},
      // A NULL in the list makes a non-match NULL, never TRUE.
      {"score IN (10, NULL)", [](const Row& r) { return r.score && *r.score == 10; }},
      {"score NOT IN (10, 20)",
       [](const Row& r) { return r.score && *r.score != 10 && *r.score != 20; }},
      {"score NOT IN (10, NULL)", [](const Row&) { return false; }},
      {"d IN (DATE '2024-01-15', DATE '2024-01-10')",
       [](const Row& r) { return r.d && (*r.d == Days(2024, 1, 15) || *r.d == Days(2024, 1, 10)); }},
  });
}

TEST_P(RowFilterTest, BetweenIsInclusiveAndNotBetweenExcludesNulls) {
  Check({
      {"id BETWEEN 3 AND 6", [](const Row& r) { return r.id >= 3 && r.id <= 6; }},
      {"id NOT BETWEEN 3 AND 6", [](const Row& r) { return r.id < 3 || r.id > 6; }},
      {"score BETWEEN 5 AND 15", [](const Row& r) { return r.score && *r.score >= 5 && *r.score <= 15; }},
      {"score NOT BETWEEN 5 AND 15",
       [](const Row& r) { return r.score && (*r.score < 5 || *r.score > 15); }},
      {"id BETWEEN 6 AND 3", [](const Row&) { return false; }},
  });
}

TEST_P(RowFilterTest, StringComparisonsAreBinaryAndCaseSensitive) {
  Check({
      {"name >= 'beta'", [](const Row& r) { return r.name && *r.name >= std::string("beta"); }},
      {"name < 'b'", [](const Row& r) { return r.name && *r.name < std::string("b"); }},
      {"name = 'h\xC3\xA9llo w\xC3\xB6rld'", [](const Row& r) { return r.id == 6; }},
      {"name = ''", [](const Row& r) { return Is(r.name, ""); }},
      {"name = 'BETA'", [](const Row&) { return false; }},
      {"lower(name) = 'beta'",
       [](const Row& r) { return Is(r.name, "beta") || Is(r.name, "Beta"); }},
      {"name > 'gamma'", [](const Row& r) { return r.name && *r.name > std::string("gamma"); }},
  });
}

TEST_P(RowFilterTest, DateComparisonsAcceptDateAndStringLiterals) {
  Check({
      {"d >= DATE '2024-01-15'", [](const Row& r) { return r.d && *r.d >= Days(2024, 1, 15); }},
      {"d = '2024-01-10'", [](const Row& r) { return r.d && *r.d == Days(2024, 1, 10); }},
      {"d < DATE '2024-01-01'", [](const Row& r) { return r.d && *r.d < Days(2024, 1, 1); }},
      {"d BETWEEN DATE '2024-01-14' AND DATE '2024-01-16'",
       [](const Row& r) { return r.d && *r.d >= Days(2024, 1, 14) && *r.d <= Days(2024, 1, 16); }},
      {"d = DATE '2024-02-29'", [](const Row& r) { return r.id == 6; }},
  });
}

TEST_P(RowFilterTest, TimestampLiteralsAreUtcAndCompareToTheMicrosecond) {
  const int64_t jan15 = Micros(2024, 1, 15);
  Check({
      {"ts >= TIMESTAMP '2024-01-15 00:00:00'", [=](const Row& r) { return r.ts && *r.ts >= jan15; }},
      {"ts < TIMESTAMP '2024-01-15 00:00:00'", [=](const Row& r) { return r.ts && *r.ts < jan15; }},
      {"ts = TIMESTAMP '2024-01-15 00:00:00'", [=](const Row& r) { return r.ts && *r.ts == jan15; }},
      {"ts > TIMESTAMP '2024-01-15 00:00:00.000000'",
       [=](const Row& r) { return r.ts && *r.ts > jan15; }},
      {"ts <= TIMESTAMP '2024-01-14 23:59:59.999999'",
       [=](const Row& r) { return r.ts && *r.ts <= jan15 - 1; }},
      // A zone offset is converted to UTC: 01:00+02:00 is 23:00 the day before.
      {"ts >= TIMESTAMP '2024-01-15T01:00:00+02:00'",
       [](const Row& r) { return r.ts && *r.ts >= Micros(2024, 1, 14, 23); }},
      {"ts > TIMESTAMP '2024-01-15 10:00:00' AND ts < TIMESTAMP '2024-01-20 00:00:00'",
       [](const Row& r) {
         return r.ts && *r.ts > Micros(2024, 1, 15, 10) && *r.ts < Micros(2024, 1, 20);
       }},
  });
}

TEST_P(RowFilterTest, DecimalComparisonsUseExactValues) {
  Check({
      {"amount > 10.50", [](const Row& r) { return r.amount && *r.amount > 1050; }},
      {"amount >= 10.5", [](const Row& r) { return r.amount && *r.amount >= 1050; }},
      {"amount = 3", [](const Row& r) { return r.amount && *r.amount == 300; }},
      {"amount BETWEEN 1.00 AND 5.25",
       [](const Row& r) { return r.amount && *r.amount >= 100 && *r.amount <= 525; }},
      {"amount < 0", [](const Row& r) { return r.amount && *r.amount < 0; }},
      {"amount = 999999.99", [](const Row& r) { return r.amount && *r.amount == 99'999'999; }},
      {"amount IN (1.50, 25)", [](const Row& r) { return r.amount && (*r.amount == 150 || *r.amount == 2500); }},
  });
}

TEST_P(RowFilterTest, StatisticsSkipOnlyFilesTheyRuleOut) {
  // The first file holds ids 1..6, the second 7..12.
  auto scan = Plan(*snap_, {}, "id > 6");
  ASSERT_NE(scan, nullptr);
  const bool with_stats = GetParam() == Layout::kStatsAndRowGroups;
  EXPECT_EQ(scan->num_skipped_files(), with_stats ? 1 : 0);
  EXPECT_EQ(scan->files().size(), with_stats ? 1u : 2u);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), IdsBetween(7, 12));
}

TEST_P(RowFilterTest, FilterColumnOutsideTheProjectionIsNotReturned) {
  auto scan = Plan(*snap_, {"name"}, "score > 10");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FieldNames(*scan->schema()), std::vector<std::string>{"name"});
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), std::vector<std::string>{"name"});
  std::vector<std::optional<std::string>> expected;
  for (const auto& r : AllRows()) {
    if (r.score && *r.score > 10) expected.push_back(r.name);
  }
  auto got = StringValues(*t, "name");
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST_P(RowFilterTest, SeveralHiddenFilterColumnsResolveCaseInsensitively) {
  auto scan = Plan(*snap_, {"id"}, "NAME = 'beta' AND D > DATE '2024-01-01' AND Amount > 1");
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), std::vector<std::string>{"id"});
  std::vector<int64_t> expected;
  for (const auto& r : AllRows()) {
    if (Is(r.name, "beta") && r.d && *r.d > Days(2024, 1, 1) && r.amount && *r.amount > 100) {
      expected.push_back(r.id);
    }
  }
  EXPECT_EQ(SortedIds(*t), expected);
}

TEST_P(RowFilterTest, ProjectedFilterColumnIsReturnedOnce) {
  auto scan = Plan(*snap_, {"score", "id"}, "score >= 20");
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"score", "id"}));
  std::vector<int64_t> expected;
  for (const auto& r : AllRows()) {
    if (r.score && *r.score >= 20) expected.push_back(r.id);
  }
  EXPECT_EQ(SortedIds(*t), expected);
  for (const auto& s : Int32Values(*t, "score")) {
    ASSERT_TRUE(s.has_value());
    EXPECT_GE(*s, 20);
  }
}

TEST_P(RowFilterTest, MalformedOrUnboundFilterFailsBuildWithInvalidExpression) {
  for (const std::string filter :
       {"id >", "id = = 3", "(id > 1", "id > 1 AND", "'unterminated", "id IN ()",
        "no_such_column = 1", "id AND name", "id + 1", "name > DATE 'not a date'",
        "unknown_fn(id) = 1"}) {
    SCOPED_TRACE("filter: " + filter);
    auto builder = snap_->NewScan();
    builder.Filter(filter);
    auto scan = builder.Build();
    ASSERT_FALSE(scan.ok());
    EXPECT_TRUE(IsDeltaError(scan.status(), DeltaErrorCode::kInvalidExpression))
        << scan.status().ToString();
  }
}

TEST_P(RowFilterTest, UnknownColumnInFilterIsNamedInTheError) {
  auto builder = snap_->NewScan();
  builder.Filter("id > 1 AND missing_col = 2");
  auto scan = builder.Build();
  ASSERT_FALSE(scan.ok());
  EXPECT_TRUE(IsDeltaError(scan.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_NE(scan.status().message().find("missing_col"), std::string::npos)
      << scan.status().message();
}

}  // namespace
}  // namespace deltacpp::scantest
