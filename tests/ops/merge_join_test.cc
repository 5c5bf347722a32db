// The MERGE join's key index against a nested-loop join of the same rows, for the packed form
// (fixed-width keys of at most 8 bytes) and the byte form (strings, wide or several keys).
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "ops/merge_join.h"

namespace deltacpp::internal {
namespace {

using Columns = std::vector<std::shared_ptr<arrow::Array>>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// SQL `=` of two values as MERGE's ON has it: NULL matches nothing, NaN = NaN, -0.0 = 0.0.
bool SameValue(const arrow::Array& a, int64_t i, const arrow::Array& b, int64_t j) {
  if (a.IsNull(i) || b.IsNull(j)) return false;
  if (a.type_id() == arrow::Type::DOUBLE) {
    const double x = static_cast<const arrow::DoubleArray&>(a).Value(i);
    const double y = static_cast<const arrow::DoubleArray&>(b).Value(j);
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  auto x = a.GetScalar(i).ValueOrDie();
  auto y = b.GetScalar(j).ValueOrDie();
  return x->Equals(*y);
}

Pairs NestedLoop(const Columns& probe, int64_t probe_rows, const Columns& indexed,
                 int64_t indexed_rows) {
  Pairs out;
  for (int64_t i = 0; i < probe_rows; ++i) {
    for (int64_t j = 0; j < indexed_rows; ++j) {
      bool same = true;
      for (size_t k = 0; k < probe.size() && same; ++k) {
        same = SameValue(*probe[k], i, *indexed[k], j);
      }
      if (same) out.emplace_back(i, j);
    }
  }
  return out;
}

Pairs Probe(const JoinKeyIndex& index, const Columns& probe, int64_t rows) {
  Pairs out;
  EXPECT_TRUE(index.Probe(probe, rows, [&](int64_t t, int64_t s) { out.emplace_back(t, s); })
                  .ok());
  return out;
}

// `n` random values of a column kind, drawn from few distinct ones so that keys repeat, with
// some NULLs.
std::shared_ptr<arrow::Array> RandomColumn(char kind, int64_t n, std::mt19937_64* rng) {
  std::uniform_int_distribution<int> pick(0, 9);
  auto null = [&] { return pick(*rng) == 0; };
  switch (kind) {
    case 'l': {
      arrow::Int64Builder b;
      for (int64_t i = 0; i < n; ++i) {
        // Negative values too: their high bits are set.
        null() ? (void)b.AppendNull() : (void)b.Append(pick(*rng) - 4);
      }
      return b.Finish().ValueOrDie();
    }
    case 'i': {
      arrow::Int32Builder b;
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(pick(*rng) - 3);
      }
      return b.Finish().ValueOrDie();
    }
    case 's': {
      arrow::Int16Builder b;
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(pick(*rng) % 3);
      }
      return b.Finish().ValueOrDie();
    }
    case 'b': {
      arrow::BooleanBuilder b;
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(pick(*rng) < 5);
      }
      return b.Finish().ValueOrDie();
    }
    case 'd': {
      const double values[] = {0.0, -0.0, 1.5, std::numeric_limits<double>::quiet_NaN(),
                               -std::numeric_limits<double>::quiet_NaN(), 2.0};
      arrow::DoubleBuilder b;
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(values[pick(*rng) % 6]);
      }
      return b.Finish().ValueOrDie();
    }
    case 'S': {
      // Strings that are prefixes of one another, and the empty string.
      const char* values[] = {"", "a", "ab", "abc", "b", "ba"};
      arrow::StringBuilder b;
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(values[pick(*rng) % 6]);
      }
      return b.Finish().ValueOrDie();
    }
    case 'D': {
      arrow::Decimal128Builder b(arrow::decimal128(20, 2));
      for (int64_t i = 0; i < n; ++i) {
        null() ? (void)b.AppendNull() : (void)b.Append(arrow::Decimal128(pick(*rng) % 4 - 1));
      }
      return b.Finish().ValueOrDie();
    }
  }
  return nullptr;
}

void CheckAgainstNestedLoop(const std::string& kinds, uint64_t seed) {
  SCOPED_TRACE("key columns " + kinds);
  std::mt19937_64 rng(seed);
  const int64_t indexed_rows = 120;
  const int64_t probe_rows = 150;
  Columns indexed;
  Columns probe;
  for (char kind : kinds) {
    indexed.push_back(RandomColumn(kind, indexed_rows, &rng));
    // A probe column sliced from a longer one: a non-zero offset.
    probe.push_back(RandomColumn(kind, probe_rows + 7, &rng)->Slice(7));
  }
  auto index = JoinKeyIndex::Build(indexed, indexed_rows);
  ASSERT_TRUE(index.ok()) << index.status();
  const Pairs want = NestedLoop(probe, probe_rows, indexed, indexed_rows);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(Probe(*index, probe, probe_rows), want);
  int64_t valid = 0;
  for (int64_t j = 0; j < indexed_rows; ++j) {
    bool all = true;
    for (const auto& c : indexed) all = all && c->IsValid(j);
    valid += all ? 1 : 0;
  }
  EXPECT_EQ(index->num_indexed(), valid);
}

TEST(MergeJoinTest, PackedKeysMatchANestedLoop) {
  for (const std::string kinds : {"l", "i", "s", "b", "d", "is", "isb", "ii"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) CheckAgainstNestedLoop(kinds, seed);
  }
}

TEST(MergeJoinTest, ByteKeysMatchANestedLoop) {
  for (const std::string kinds : {"S", "D", "lS", "Sl", "ll", "dS", "lil"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) CheckAgainstNestedLoop(kinds, seed);
  }
}

TEST(MergeJoinTest, WithoutKeysEveryRowMatchesEveryProbe) {
  auto index = JoinKeyIndex::Build({}, 3);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(Probe(*index, {}, 2), (Pairs{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
}

TEST(MergeJoinTest, LargeIndexOfDistinctKeys) {
  // Many keys: long probe sequences and the prefetch path; every probe finds its own row.
  const int64_t n = 200000;
  arrow::Int64Builder b;
  for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(b.Append(i * 7919 - 1000000).ok());
  auto keys = b.Finish().ValueOrDie();
  auto index = JoinKeyIndex::Build({keys}, n);
  ASSERT_TRUE(index.ok());
  // Probe with the keys reversed and one key absent from the index appended.
  arrow::Int64Builder p;
  for (int64_t i = n - 1; i >= 0; --i) ASSERT_TRUE(p.Append(i * 7919 - 1000000).ok());
  ASSERT_TRUE(p.Append(3).ok());
  auto probe = p.Finish().ValueOrDie();
  int64_t found = 0;
  bool in_place = true;
  ASSERT_TRUE(index
                  ->Probe({probe}, n + 1,
                          [&](int64_t t, int64_t s) {
                            ++found;
                            in_place = in_place && s == n - 1 - t;
                          })
                  .ok());
  EXPECT_EQ(found, n);
  EXPECT_TRUE(in_place);
}

TEST(MergeJoinTest, RefusesKeysOfAnotherLength) {
  std::mt19937_64 rng(1);
  auto keys = RandomColumn('l', 10, &rng);
  EXPECT_FALSE(JoinKeyIndex::Build({keys}, 11).ok());
}

}  // namespace
}  // namespace deltacpp::internal
