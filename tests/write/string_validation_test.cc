// String values that are not valid UTF-8 are found before they are written: the first offending
// row and the column (nested leaves by path) are named.
#include "write/string_validation.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "deltacpp/error.h"
#include "util/utf8.h"

namespace deltacpp::internal {
namespace {

const std::string kBad = "caf\xE9";
const std::string kGood = "caf\xC3\xA9 \xF0\x9F\x98\x80";

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) (void)(v ? b.Append(*v) : b.AppendNull());
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Longs(int64_t n) {
  arrow::Int64Builder b;
  for (int64_t i = 0; i < n; ++i) (void)b.Append(i);
  return *b.Finish();
}

std::shared_ptr<arrow::RecordBatch> BatchOf(
    const std::vector<std::string>& names,
    const std::vector<std::shared_ptr<arrow::Array>>& cols) {
  arrow::FieldVector fields;
  for (size_t i = 0; i < names.size(); ++i) {
    fields.push_back(arrow::field(names[i], cols[i]->type()));
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), cols[0]->length(), cols);
}

// The message of a refusal, after checking its kind and that it does not carry the bad bytes.
std::string Refusal(const arrow::Status& st) {
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kSchemaMismatch)) << st.ToString();
  EXPECT_TRUE(IsValidUtf8(st.message()));
  return st.message();
}

TEST(StringValidation, ValidStringsPass) {
  auto batch = BatchOf({"id", "s"}, {Longs(3), Strings({kGood, std::nullopt, ""})});
  EXPECT_TRUE(CheckStringsAreUtf8(*batch, 0, "").ok());
}

TEST(StringValidation, NamesColumnAndRowCountingFromOne) {
  auto batch = BatchOf({"id", "name"}, {Longs(4), Strings({"a", kGood, std::nullopt, kBad})});
  EXPECT_EQ(Refusal(CheckStringsAreUtf8(*batch, 0, "table /t: ")),
            "table /t: column 'name' row 4 of the write: the string is not valid UTF-8 (byte "
            "0xE9 at offset 3 of 'caf\\xE9'); string columns hold UTF-8 text (use a binary column "
            "for other bytes)");
  // Rows before this batch count too.
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*batch, 100, "")).find("row 104 of the write"),
            std::string::npos);
}

TEST(StringValidation, EarliestRowWinsOverColumnOrder) {
  auto batch = BatchOf({"a", "b"}, {Strings({"x", "x", kBad}), Strings({"y", kBad, "y"})});
  auto msg = Refusal(CheckStringsAreUtf8(*batch, 0, ""));
  EXPECT_NE(msg.find("column 'b' row 2 "), std::string::npos) << msg;
}

TEST(StringValidation, LargeStringsAndViews) {
  arrow::LargeStringBuilder large;
  ASSERT_TRUE(large.Append("ok").ok());
  ASSERT_TRUE(large.Append(kBad).ok());
  arrow::StringViewBuilder view;
  ASSERT_TRUE(view.Append("a value longer than twelve bytes " + kBad).ok());
  ASSERT_TRUE(view.Append("ok").ok());
  auto batch = BatchOf({"l", "v"}, {*large.Finish(), *view.Finish()});
  auto msg = Refusal(CheckStringsAreUtf8(*batch, 0, ""));
  EXPECT_NE(msg.find("column 'v' row 1 "), std::string::npos) << msg;
}

TEST(StringValidation, NestedLeavesAreNamedByPath) {
  // struct<tag: string>
  auto tag = Strings({"a", kBad, "c"});
  auto s = *arrow::StructArray::Make({tag}, {arrow::field("tag", arrow::utf8())});
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"s"}, {s}), 0, "")).find("column 's.tag' row 2 "),
            std::string::npos);

  // list<string>: rows [a], [], [b, bad]
  auto values = Strings({"a", "b", kBad});
  arrow::Int32Builder offsets;
  ASSERT_TRUE(offsets.AppendValues({0, 1, 1, 3}).ok());
  auto list = *arrow::ListArray::FromArrays(**offsets.Finish(), *values);
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"tags"}, {list}), 0, ""))
                .find("column 'tags.element' row 3 "),
            std::string::npos);

  // map<string, string>: rows {k: v}, {bad: v} and {k: bad}
  arrow::Int32Builder map_offsets;
  ASSERT_TRUE(map_offsets.AppendValues({0, 1, 2}).ok());
  auto offs = *map_offsets.Finish();
  auto bad_key = *arrow::MapArray::FromArrays(offs, Strings({"k", kBad}), Strings({"v", "v"}));
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"attrs"}, {bad_key}), 0, ""))
                .find("column 'attrs.key' row 2 "),
            std::string::npos);
  auto bad_value = *arrow::MapArray::FromArrays(offs, Strings({"k", "k"}), Strings({kBad, "v"}));
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"attrs"}, {bad_value}), 0, ""))
                .find("column 'attrs.value' row 1 "),
            std::string::npos);

  // list<struct<name: string>>
  auto names = Strings({"n", "n", kGood, kBad});
  auto elems = *arrow::StructArray::Make({names}, {arrow::field("name", arrow::utf8())});
  arrow::Int32Builder list_offsets;
  ASSERT_TRUE(list_offsets.AppendValues({0, 2, 4}).ok());
  auto people = *arrow::ListArray::FromArrays(**list_offsets.Finish(), *elems);
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"people"}, {people}), 0, ""))
                .find("column 'people.element.name' row 2 "),
            std::string::npos);
}

TEST(StringValidation, ValuesUnderANullParentAreNotWritten) {
  // Row 2's struct is null: its child slot holds garbage that no file will hold.
  auto tag = Strings({"a", kBad, "c"});
  arrow::TypedBufferBuilder<bool> validity;
  ASSERT_TRUE(validity.Append(true).ok());
  ASSERT_TRUE(validity.Append(false).ok());
  ASSERT_TRUE(validity.Append(true).ok());
  auto bitmap = *validity.Finish();
  auto s = *arrow::StructArray::Make({tag}, {arrow::field("tag", arrow::utf8())}, bitmap);
  EXPECT_TRUE(CheckStringsAreUtf8(*BatchOf({"s"}, {s}), 0, "").ok());

  // A later bad value under a present struct is still found.
  auto tag2 = Strings({"a", kBad, kBad});
  auto s2 = *arrow::StructArray::Make({tag2}, {arrow::field("tag", arrow::utf8())}, bitmap);
  EXPECT_NE(Refusal(CheckStringsAreUtf8(*BatchOf({"s"}, {s2}), 0, "")).find("row 3 "),
            std::string::npos);

  // A null list whose range covers a bad value.
  auto values = Strings({kBad, "ok"});
  arrow::Int32Builder offsets;
  ASSERT_TRUE(offsets.AppendValues({0, 1, 2}).ok());
  arrow::TypedBufferBuilder<bool> list_validity;
  ASSERT_TRUE(list_validity.Append(false).ok());
  ASSERT_TRUE(list_validity.Append(true).ok());
  auto list = *arrow::ListArray::FromArrays(**offsets.Finish(), *values,
                                            arrow::default_memory_pool(),
                                            *list_validity.Finish());
  EXPECT_TRUE(CheckStringsAreUtf8(*BatchOf({"l"}, {list}), 0, "").ok());
}

TEST(StringValidation, BinaryPartitionValuesMustBeText) {
  arrow::BinaryBuilder b;
  ASSERT_TRUE(b.Append("ok").ok());
  ASSERT_TRUE(b.Append(kBad).ok());
  auto batch = BatchOf({"bin"}, {*b.Finish()});
  // An ordinary binary column holds any bytes.
  EXPECT_TRUE(CheckStringsAreUtf8(*batch, 0, "").ok());
  EXPECT_TRUE(CheckStringsAreUtf8(*batch, 0, "", {"other"}).ok());
  // As a partition column its values go into the log.
  auto msg = Refusal(CheckStringsAreUtf8(*batch, 0, "", {"bin"}));
  EXPECT_NE(msg.find("column 'bin' row 2 of the write: the binary partition value is not valid "
                     "UTF-8"),
            std::string::npos)
      << msg;
}

// A string array over `data` split at `offsets`, with the rows in `nulls` null.
std::shared_ptr<arrow::Array> RawStrings(const std::string& data,
                                         const std::vector<int32_t>& offsets,
                                         const std::vector<int64_t>& nulls = {}) {
  arrow::TypedBufferBuilder<bool> validity;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    (void)validity.Append(std::find(nulls.begin(), nulls.end(), static_cast<int64_t>(i)) ==
                          nulls.end());
  }
  auto offsets_buffer = arrow::Buffer::FromVector(offsets);
  return std::make_shared<arrow::StringArray>(static_cast<int64_t>(offsets.size() - 1),
                                              offsets_buffer, arrow::Buffer::FromString(data),
                                              *validity.Finish());
}

TEST(StringValidation, ACharacterSplitAcrossTwoValuesIsFound) {
  // The bytes of all values together are valid UTF-8 ("aé"), but "a\xC3" and "\xA9" are not.
  auto split = RawStrings("a\xC3\xA9", {0, 2, 3});
  auto msg = Refusal(CheckStringsAreUtf8(*BatchOf({"s"}, {split}), 0, ""));
  EXPECT_NE(msg.find("column 's' row 1 "), std::string::npos) << msg;
}

TEST(StringValidation, BytesOfNullSlotsAreNotChecked) {
  const auto good_end = 4 + static_cast<int32_t>(kGood.size());
  auto garbage = RawStrings("ok\xFF\xFF" + kGood, {0, 2, 4, good_end}, {1});
  EXPECT_TRUE(CheckStringsAreUtf8(*BatchOf({"s"}, {garbage}), 0, "").ok());
  const auto bad_end = 4 + static_cast<int32_t>(kBad.size());
  auto bad_after = RawStrings("ok\xFF\xFF" + kBad, {0, 2, 4, bad_end}, {1});
  auto msg = Refusal(CheckStringsAreUtf8(*BatchOf({"s"}, {bad_after}), 0, ""));
  EXPECT_NE(msg.find("row 3 "), std::string::npos) << msg;
}

TEST(StringValidation, SlicedArraysCountRowsOfTheSlice) {
  auto batch = BatchOf({"s"}, {Strings({kBad, "a", "b", kBad})})->Slice(1, 3);
  auto msg = Refusal(CheckStringsAreUtf8(*batch, 0, ""));
  EXPECT_NE(msg.find("row 3 "), std::string::npos) << msg;
}

}  // namespace
}  // namespace deltacpp::internal
