// Z-order keys: ranks interleaved bit by bit, first column most significant; nulls lowest;
// any orderable type; refusals.
#include "ops/zorder.h"

#include <gtest/gtest.h>

#include "deltacpp/error.h"
#include "ops/ops_test_util.h"

namespace deltacpp::internal {
namespace {

using testing::Batch;
using testing::Longs;
using testing::Strings;

TEST(ZOrder, InterleavesTheTopBitsOfEachColumnFirstColumnFirst) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("y", arrow::utf8())});
  // (x, y) = (0,a) (0,b) (1,a) (1,b) in scrambled order.
  auto rows = Batch(schema, {Longs({1, 0, 1, 0}), Strings({"b", "b", "a", "a"})});
  auto keys = ZOrderKeys(*rows, {"x", "Y"});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  // Two distinct values per column: the low one maps to 0, the high one to the top bit.
  EXPECT_EQ((*keys)->Value(3), 0u);              // (0, a)
  EXPECT_EQ((*keys)->Value(1), 1ULL << 62);      // (0, b)
  EXPECT_EQ((*keys)->Value(2), 1ULL << 63);      // (1, a)
  EXPECT_EQ((*keys)->Value(0), 3ULL << 62);      // (1, b)

  auto sorted = SortByZOrder(rows, {"x", "y"});
  ASSERT_TRUE(sorted.ok()) << sorted.status().ToString();
  const auto& xs = static_cast<const arrow::Int64Array&>(*(*sorted)->column(0));
  const auto& ys = static_cast<const arrow::StringArray&>(*(*sorted)->column(1));
  std::vector<std::string> order;
  for (int64_t i = 0; i < 4; ++i) order.push_back(std::to_string(xs.Value(i)) + ys.GetString(i));
  EXPECT_EQ(order, (std::vector<std::string>{"0a", "0b", "1a", "1b"}));
}

TEST(ZOrder, OneColumnKeepsItsOrderWithNullsLowestAndEqualValuesEqualKeys) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64())});
  auto rows = Batch(schema, {Longs({500, std::nullopt, -3, 500, 7})});
  auto keys = ZOrderKeys(*rows, {"x"});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  const auto& k = **keys;
  EXPECT_EQ(k.Value(1), 0u) << "null is lowest";
  EXPECT_LT(k.Value(1), k.Value(2));
  EXPECT_LT(k.Value(2), k.Value(4));
  EXPECT_LT(k.Value(4), k.Value(0));
  EXPECT_EQ(k.Value(0), k.Value(3));
}

TEST(ZOrder, RefusesUnknownUnorderedAndTooManyColumns) {
  auto inner = arrow::struct_({arrow::field("a", arrow::int64())});
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("s", inner)});
  auto s = *arrow::StructArray::Make({Longs({1})}, std::vector<std::string>{"a"});
  auto rows = Batch(schema, {Longs({1}), s});
  for (const auto& columns : std::vector<std::vector<std::string>>{
           {"nope"}, {"s"}, {}, std::vector<std::string>(65, "x")}) {
    auto keys = ZOrderKeys(*rows, columns);
    EXPECT_TRUE(IsDeltaError(keys.status(), DeltaErrorCode::kInvalidArgument))
        << keys.status().ToString();
  }
}

}  // namespace
}  // namespace deltacpp::internal
