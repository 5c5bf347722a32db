// File statistics for written data files: string truncation, timestamp text, column selection.
#include <gtest/gtest.h>

#include "deltacpp/error.h"
#include "write/stats_collector.h"

namespace deltacpp::internal {
namespace {

const std::string kMaxCp = "\xF4\x8F\xBF\xBF";  // U+10FFFF

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(StatsTruncation, ShortValuesAreKept) {
  EXPECT_EQ(TruncateStatsMin("abc", 3), "abc");
  EXPECT_EQ(TruncateStatsMax("abc", 3), "abc");
  EXPECT_EQ(TruncateStatsMin("", 3), "");
  EXPECT_EQ(TruncateStatsMax("", 3), "");
  // Length counts code points, not bytes.
  const std::string unicode = "\xC3\xBC\xE6\x9D\xB1\xF0\x9F\x98\x80";  // ü 東 😀
  EXPECT_EQ(TruncateStatsMin(unicode, 3), unicode);
  EXPECT_EQ(TruncateStatsMax(unicode, 3), unicode);
}

TEST(StatsTruncation, MinIsThePrefix) {
  EXPECT_EQ(TruncateStatsMin(Repeat("a", 40)), Repeat("a", 32));
  EXPECT_EQ(TruncateStatsMin("\xC3\xBC\xC3\xBC\xC3\xBC", 2), "\xC3\xBC\xC3\xBC");
}

TEST(StatsTruncation, MaxAppendsATieBreaker) {
  // The next character is below U+007F: the ASCII tie-breaker is enough.
  EXPECT_EQ(TruncateStatsMax(Repeat("m", 32) + "nop"), Repeat("m", 32) + "\x7F");
  // The next character is not: U+10FFFF follows the prefix.
  EXPECT_EQ(TruncateStatsMax(Repeat("z", 32) + "\xC3\xA9xyz"), Repeat("z", 32) + kMaxCp);
  EXPECT_EQ(TruncateStatsMax("ab\x7F" "c", 2), "ab" + kMaxCp);
  EXPECT_EQ(TruncateStatsMax("\xE6\x9D\xB1\xE6\x9D\xB1\xE6\x9D\xB1", 2), "\xE6\x9D\xB1\xE6\x9D\xB1" + kMaxCp);
}

TEST(StatsTruncation, MaxSkipsMaximalCodePoints) {
  // U+10FFFF right after the prefix cannot be topped: the prefix grows past it.
  EXPECT_EQ(TruncateStatsMax("ab" + kMaxCp + "cd", 2), "ab" + kMaxCp + "\x7F");
  // Reaching the end of the value within twice the prefix: the value itself.
  EXPECT_EQ(TruncateStatsMax("ab" + kMaxCp + kMaxCp, 2), "ab" + kMaxCp + kMaxCp);
  // No usable maximum within twice the prefix length.
  EXPECT_EQ(TruncateStatsMax("ab" + kMaxCp + kMaxCp + kMaxCp, 2), std::nullopt);
}

TEST(StatsTruncation, TruncatedBoundsStillBoundTheValue) {
  const std::vector<std::string> values = {Repeat("q", 40), Repeat("q", 32) + "\xC3\xA9",
                                           Repeat("\xE6\x9D\xB1", 35), Repeat("q", 32) + "\x01"};
  for (const auto& v : values) {
    EXPECT_LE(TruncateStatsMin(v), v);
    auto max = TruncateStatsMax(v);
    ASSERT_TRUE(max.has_value());
    // std::string compares bytes as unsigned char, i.e. UTF-8 order.
    EXPECT_GE(*max, v);
  }
}

TEST(StatsTimestamp, MillisecondsTruncatedDown) {
  // 2024-01-15T10:00:00.123456Z
  const int64_t micros = 1705312800123456LL;
  EXPECT_EQ(FormatStatsTimestamp(micros, arrow::TimeUnit::MICRO, true), "2024-01-15T10:00:00.123Z");
  EXPECT_EQ(FormatStatsTimestamp(micros, arrow::TimeUnit::MICRO, false), "2024-01-15T10:00:00.123");
  EXPECT_EQ(FormatStatsTimestamp(0, arrow::TimeUnit::MICRO, true), "1970-01-01T00:00:00.000Z");
  // Before the epoch truncation still goes down (towards the past).
  EXPECT_EQ(FormatStatsTimestamp(-1, arrow::TimeUnit::MICRO, true), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatStatsTimestamp(-1000, arrow::TimeUnit::MICRO, true), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatStatsTimestamp(-1001, arrow::TimeUnit::MICRO, true), "1969-12-31T23:59:59.998Z");
  EXPECT_EQ(FormatStatsTimestamp(1705312800123456789LL, arrow::TimeUnit::NANO, true),
            "2024-01-15T10:00:00.123Z");
  EXPECT_EQ(FormatStatsTimestamp(1705312800LL, arrow::TimeUnit::SECOND, false), "2024-01-15T10:00:00.000");
}

std::vector<std::string> LeafKeys(const std::vector<StatsLeaf>& leaves) {
  std::vector<std::string> out;
  for (const auto& leaf : leaves) {
    std::string key;
    for (const auto& part : leaf.physical_path) key += (key.empty() ? "" : ".") + part;
    out.push_back(key);
  }
  return out;
}

std::shared_ptr<arrow::Schema> SelectionSchema() {
  return arrow::schema({arrow::field("a", arrow::struct_({arrow::field("x", arrow::int32()),
                                                          arrow::field("y", arrow::utf8())})),
                        arrow::field("b", arrow::list(arrow::int32())), arrow::field("c", arrow::boolean()),
                        arrow::field("d", arrow::float64()), arrow::field("a.b", arrow::int64())});
}

std::vector<std::string> Select(int32_t n, std::optional<std::vector<std::string>> columns = std::nullopt) {
  auto leaves = SelectStatsLeaves(*SelectionSchema(), n, columns, {"p"});
  EXPECT_TRUE(leaves.ok()) << leaves.status();
  return leaves.ok() ? LeafKeys(*leaves) : std::vector<std::string>{};
}

TEST(StatsSelection, FirstLeavesInSchemaOrder) {
  EXPECT_EQ(Select(32), (std::vector<std::string>{"a.x", "a.y", "b", "c", "d", "a.b"}));
  EXPECT_EQ(Select(-1), (std::vector<std::string>{"a.x", "a.y", "b", "c", "d", "a.b"}));
  EXPECT_EQ(Select(3), (std::vector<std::string>{"a.x", "a.y", "b"}));
  EXPECT_EQ(Select(0), std::vector<std::string>{});
  auto leaves = SelectStatsLeaves(*SelectionSchema(), 32, std::nullopt, {});
  ASSERT_TRUE(leaves.ok());
  std::vector<bool> min_max;
  for (const auto& leaf : *leaves) min_max.push_back(leaf.min_max);
  EXPECT_EQ(min_max, (std::vector<bool>{true, true, false, false, true, true}));
  EXPECT_TRUE(IsDeltaError(SelectStatsLeaves(*SelectionSchema(), -2, std::nullopt, {}).status(),
                           DeltaErrorCode::kInvalidArgument));
}

TEST(StatsSelection, NamedColumns) {
  EXPECT_EQ(Select(1, std::vector<std::string>{"d", "a.y"}), (std::vector<std::string>{"a.y", "d"}));
  EXPECT_EQ(Select(1, std::vector<std::string>{"A"}), (std::vector<std::string>{"a.x", "a.y"}));
  EXPECT_EQ(Select(1, std::vector<std::string>{"`a`.`X`", " c "}), (std::vector<std::string>{"a.x", "c"}));
  EXPECT_EQ(Select(1, std::vector<std::string>{"`a.b`"}), (std::vector<std::string>{"a.b"}));
  EXPECT_EQ(Select(1, std::vector<std::string>{"b", "p"}), (std::vector<std::string>{"b"}));
  EXPECT_EQ(Select(1, std::vector<std::string>{}), std::vector<std::string>{});
  for (const std::string bad : {"nope", "a.z", "b.element", "d.x", "`a", "a..x", "a.b"}) {
    auto r = SelectStatsLeaves(*SelectionSchema(), 1, std::vector<std::string>{bad}, {"p"});
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kInvalidArgument)) << bad << ": " << r.status();
  }
}

}  // namespace
}  // namespace deltacpp::internal
