// UTF-8 checks for text bound for the log: validity, where text goes wrong, and how bad text is
// shown in messages.
#include "util/utf8.h"

#include <gtest/gtest.h>

namespace deltacpp::internal {
namespace {

TEST(Utf8Text, ValidTextOfEveryLength) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9"));                    // 2-byte é
  EXPECT_TRUE(IsValidUtf8("\xE6\x9D\xB1\xE4\xBA\xAC"));       // 3-byte 東京
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));               // 4-byte 😀
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));               // U+10FFFF
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 10)));   // NUL is a character
  EXPECT_EQ(InvalidUtf8Offset("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::nullopt);
}

TEST(Utf8Text, InvalidTextAndWhereItGoesWrong) {
  EXPECT_EQ(InvalidUtf8Offset("caf\xE9"), 3u);                   // Latin-1 é
  EXPECT_EQ(InvalidUtf8Offset("ab\xC3"), 2u);                    // 2-byte sequence cut short
  EXPECT_EQ(InvalidUtf8Offset("\xE6\x9D"), 0u);                  // 3-byte sequence cut short
  EXPECT_EQ(InvalidUtf8Offset("x\xF0\x9F\x98"), 1u);             // 4-byte sequence cut short
  EXPECT_EQ(InvalidUtf8Offset("\xC3\xA9\x80"), 2u);              // lone continuation byte
  EXPECT_EQ(InvalidUtf8Offset("a\xC0\xAF"), 1u);                 // overlong '/'
  EXPECT_EQ(InvalidUtf8Offset("\xED\xA0\x80"), 0u);              // UTF-16 surrogate
  EXPECT_EQ(InvalidUtf8Offset("\xF4\x90\x80\x80"), 0u);          // above U+10FFFF
  EXPECT_EQ(InvalidUtf8Offset("\xFF"), 0u);
  EXPECT_EQ(InvalidUtf8Offset("\xF0\x9F\x98\x80\xE6\x9D\xB1!\xFE"), 8u);
}

TEST(Utf8Text, PrintableTextEscapesBadBytesAndControls) {
  EXPECT_EQ(PrintableText("caf\xE9"), "caf\\xE9");
  EXPECT_EQ(PrintableText("caf\xC3\xA9\n"), "caf\xC3\xA9\\x0A");
  EXPECT_EQ(PrintableText("\xF0\x9F\x98\x80\xF0\x9F"), "\xF0\x9F\x98\x80\\xF0\\x9F");
  EXPECT_EQ(PrintableText("abcdef", 3), "abc...");
  // A character cut by the limit is not shown half.
  EXPECT_EQ(PrintableText("a\xE6\x9D\xB1", 2), "a...");
}

TEST(Utf8Text, CheckNamesWhatAndWhere) {
  EXPECT_TRUE(CheckUtf8("caf\xC3\xA9", DeltaErrorCode::kInvalidArgument, "the comment").ok());
  auto st = CheckUtf8("caf\xE9", DeltaErrorCode::kInvalidArgument, "the comment");
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument));
  EXPECT_EQ(st.message(),
            "the comment is not valid UTF-8 (byte 0xE9 at offset 3 of 'caf\\xE9')");
  // The message itself is valid UTF-8, whatever the text held.
  EXPECT_TRUE(IsValidUtf8(st.message()));
  EXPECT_TRUE(IsDeltaError(CheckUtf8("\xFF", DeltaErrorCode::kSchemaMismatch, "x"),
                           DeltaErrorCode::kSchemaMismatch));
}

}  // namespace
}  // namespace deltacpp::internal
