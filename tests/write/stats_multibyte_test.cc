// String statistics around the truncation boundary with 2-, 3- and 4-byte characters: the
// bounds never split a character, stay valid UTF-8 and still bound the values.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <simdjson.h>

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
