// File statistics for written data files: string truncation (also around the boundary with 2-,
// 3- and 4-byte characters: bounds never split a character, stay valid UTF-8 and still bound the
// values), timestamp text, column selection.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "deltacpp/error.h"
#include "util/utf8.h"
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

// --- Multibyte characters at the truncation boundary ---
struct Width {
  const char* name;
  std::string ch;
};

const Width kWidths[] = {{"2-byte", "\xC3\xA9"},           // é
                         {"3-byte", "\xE6\x9D\xB1"},       // 東
                         {"4-byte", "\xF0\x9F\x98\x80"}};  // 😀

TEST(StatsMultibyte, CharacterAtTheBoundaryIsKeptWhole) {
  for (const auto& w : kWidths) {
    SCOPED_TRACE(w.name);
    // 31 ASCII characters, then the wide one as the 32nd code point, then more.
    const std::string prefix = Repeat("a", 31) + w.ch;
    EXPECT_EQ(TruncateStatsMin(prefix + "zz"), prefix);
    EXPECT_EQ(TruncateStatsMax(prefix + "zz"), prefix + "\x7F");
    // The wide character is the 33rd code point: it is cut off whole.
    const std::string ascii = Repeat("a", 32);
    EXPECT_EQ(TruncateStatsMin(ascii + w.ch), ascii);
    EXPECT_EQ(TruncateStatsMax(ascii + w.ch), ascii + kMaxCp);
    // Exactly 32 wide characters: nothing to truncate.
    EXPECT_EQ(TruncateStatsMin(Repeat(w.ch, 32)), Repeat(w.ch, 32));
    EXPECT_EQ(TruncateStatsMax(Repeat(w.ch, 32)), Repeat(w.ch, 32));
    // 33 of them: 32 kept, and the maximum tops the 33rd.
    EXPECT_EQ(TruncateStatsMin(Repeat(w.ch, 33)), Repeat(w.ch, 32));
    EXPECT_EQ(TruncateStatsMax(Repeat(w.ch, 33)), Repeat(w.ch, 32) + kMaxCp);
  }
}

TEST(StatsMultibyte, BoundsAreValidUtf8AndBoundTheValue) {
  for (const auto& w : kWidths) {
    for (int ascii = 28; ascii <= 34; ++ascii) {
      for (const std::string& tail : {std::string("b"), w.ch, w.ch + "b", Repeat(w.ch, 5)}) {
        const std::string v = Repeat("a", ascii) + w.ch + tail;
        SCOPED_TRACE(std::string(w.name) + " after " + std::to_string(ascii) + " ASCII");
        const std::string min = TruncateStatsMin(v);
        auto max = TruncateStatsMax(v);
        ASSERT_TRUE(max.has_value());
        EXPECT_TRUE(IsValidUtf8(min)) << PrintableText(min, 200);
        EXPECT_TRUE(IsValidUtf8(*max)) << PrintableText(*max, 200);
        EXPECT_LE(min, v);
        EXPECT_GE(*max, v);  // std::string compares bytes unsigned: UTF-8 order
      }
    }
  }
}

TEST(StatsMultibyte, FileStatisticsJsonParsesWithTheValues) {
  auto schema = arrow::schema({arrow::field("s", arrow::utf8())});
  auto leaves = SelectStatsLeaves(*schema, 32, std::nullopt, {});
  ASSERT_TRUE(leaves.ok());
  FileStatsCollector stats(std::make_shared<const std::vector<StatsLeaf>>(*leaves));
  const std::string low = Repeat("a", 31) + kWidths[2].ch + "tail";  // emoji as 32nd
  const std::string high = Repeat("\xE6\x9D\xB1", 40);                // 40 3-byte characters
  arrow::StringBuilder b;
  ASSERT_TRUE(b.Append(low).ok());
  ASSERT_TRUE(b.Append(high).ok());
  ASSERT_TRUE(stats.Update(*arrow::RecordBatch::Make(schema, 2, {*b.Finish()})).ok());

  const std::string json = stats.ToJson();
  simdjson::dom::parser parser;
  auto doc = parser.parse(json);  // fails on invalid UTF-8
  ASSERT_EQ(doc.error(), simdjson::SUCCESS) << PrintableText(json, 400);
  std::string_view min, max;
  ASSERT_EQ(doc["minValues"]["s"].get(min), simdjson::SUCCESS);
  ASSERT_EQ(doc["maxValues"]["s"].get(max), simdjson::SUCCESS);
  EXPECT_EQ(min, Repeat("a", 31) + kWidths[2].ch);
  EXPECT_EQ(max, Repeat("\xE6\x9D\xB1", 32) + kMaxCp);
}

}  // namespace
}  // namespace deltacpp::internal
