// Column-level write rules through the public operations: generated columns computed or
// checked, invariants, identity values with their high-water mark; every rejected write
// leaves the log unchanged.
#include <gtest/gtest.h>

#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::ConformanceDir;
using testing::TempDir;

constexpr int64_t kDayMicros = 86400LL * 1000000;

std::shared_ptr<arrow::RecordBatch> Batch(const std::shared_ptr<arrow::Schema>& schema,
                                          const std::vector<std::shared_ptr<arrow::Array>>& cols) {
  return arrow::RecordBatch::Make(schema, cols.empty() ? 0 : cols[0]->length(), cols);
}

std::shared_ptr<arrow::RecordBatchReader> Rows(const std::shared_ptr<arrow::Schema>& schema,
                                               const std::vector<std::shared_ptr<arrow::Array>>& cols) {
  return *arrow::RecordBatchReader::Make({Batch(schema, cols)}, schema);
}

std::shared_ptr<arrow::Array> Longs(std::vector<std::optional<int64_t>> v) {
  arrow::Int64Builder b;
  for (auto x : v) (void)(x ? b.Append(*x) : b.AppendNull());
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Ints(std::vector<std::optional<int32_t>> v) {
  arrow::Int32Builder b;
  for (auto x : v) (void)(x ? b.Append(*x) : b.AppendNull());
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Strings(std::vector<std::optional<std::string>> v) {
  arrow::StringBuilder b;
  for (auto& x : v) (void)(x ? b.Append(*x) : b.AppendNull());
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Timestamps(std::vector<std::optional<int64_t>> micros) {
  arrow::TimestampBuilder b(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                            arrow::default_memory_pool());
  for (auto x : micros) (void)(x ? b.Append(*x) : b.AppendNull());
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Dates(std::vector<std::optional<int32_t>> days) {
  arrow::Date32Builder b;
  for (auto x : days) (void)(x ? b.Append(*x) : b.AppendNull());
  return *b.Finish();
}

// The named columns of every row of the latest version, as "a|b|..." strings.
std::multiset<std::string> Read(const std::string& path, const std::vector<std::string>& columns) {
  auto table = DeltaTable::Open(path);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  auto scan = (*snap)->NewScan().Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  auto t = *(*scan)->ToTable();
  std::multiset<std::string> out;
  for (int64_t r = 0; r < t->num_rows(); ++r) {
    std::string row;
    for (size_t c = 0; c < columns.size(); ++c) {
      auto col = t->GetColumnByName(columns[c]);
      EXPECT_TRUE(col) << columns[c];
      if (!col) return {};
      auto s = *col->GetScalar(r);
      row += (c ? "|" : "") + (s->is_valid ? s->ToString() : std::string("null"));
    }
    out.insert(row);
  }
  return out;
}

std::set<std::string> LogFiles(const std::string& path) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path + "/_delta_log")) {
    out.insert(e.path().filename().string());
  }
  return out;
}

std::string CommitText(const std::string& path, int64_t version) {
  std::ifstream in(path + "/_delta_log/" + fmt::format("{:020}.json", version));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<Snapshot> Latest(const std::string& path) {
  return *(*DeltaTable::Open(path))->Latest();
}

// A field metadata value of the latest schema, or "" when absent.
std::string FieldMeta(const std::string& path, const std::string& column, const std::string& key) {
  auto field = Latest(path)->schema()->GetFieldByName(column);
  if (!field || !field->metadata() || !field->metadata()->Contains(key)) return "";
  return *field->metadata()->Get(key);
}

// A copy of corpus table `name` in `dir`; empty when the corpus does not have it.
std::string CopyOfCorpusTable(const TempDir& dir, const std::string& name) {
  const std::filesystem::path source = std::filesystem::path(ConformanceDir()) / "tables" / name;
  if (!std::filesystem::exists(source / "_delta_log")) return "";
  const auto target = dir.path() / name;
  std::filesystem::copy(source, target, std::filesystem::copy_options::recursive);
  return target.string();
}

arrow::Status Create(const std::string& path, const std::string& ddl,
                     std::vector<std::string> partition_columns = {}) {
  CreateTableOptions opts;
  ARROW_ASSIGN_OR_RAISE(opts.schema, SchemaFromDdl(ddl));
  opts.partition_columns = std::move(partition_columns);
  // The definition holds no rows yet, so no identity value is owed.
  opts.transaction.enforced_features = {"identityColumns"};
  return CreateTable(path, opts).status();
}

// ---------------------------------------------------------------------------------------------
// DDL

TEST(ColumnRulesDdl, IdentityClausesBecomeFieldMetadata) {
  auto schema = SchemaFromDdl(
      "a BIGINT GENERATED ALWAYS AS IDENTITY, "
      "b long NOT NULL GENERATED BY DEFAULT AS IDENTITY (START WITH -5 INCREMENT BY -2), "
      "c BIGINT GENERATED ALWAYS AS IDENTITY (INCREMENT BY 10) COMMENT 'x', "
      "d INT GENERATED ALWAYS AS (1 + 2)");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  auto meta = [&](const std::string& col, const std::string& key) {
    auto f = (*schema)->GetFieldByName(col);
    return f->metadata() && f->metadata()->Contains(key) ? *f->metadata()->Get(key) : "";
  };
  EXPECT_EQ(meta("a", "delta.identity.start"), "1");
  EXPECT_EQ(meta("a", "delta.identity.step"), "1");
  EXPECT_EQ(meta("a", "delta.identity.allowExplicitInsert"), "false");
  EXPECT_EQ(meta("a", "delta.identity.highWaterMark"), "");
  EXPECT_EQ(meta("b", "delta.identity.start"), "-5");
  EXPECT_EQ(meta("b", "delta.identity.step"), "-2");
  EXPECT_EQ(meta("b", "delta.identity.allowExplicitInsert"), "true");
  EXPECT_FALSE((*schema)->GetFieldByName("b")->nullable());
  EXPECT_EQ(meta("c", "delta.identity.start"), "1");
  EXPECT_EQ(meta("c", "delta.identity.step"), "10");
  EXPECT_EQ(meta("c", "comment"), "\"x\"");
  EXPECT_EQ(meta("d", "delta.generationExpression"), "\"1 + 2\"");

  for (const char* bad : {"a INT GENERATED ALWAYS AS IDENTITY",
                          "a BIGINT GENERATED ALWAYS AS IDENTITY (INCREMENT BY 0)",
                          "a BIGINT GENERATED ALWAYS AS IDENTITY (START 1)",
                          "a BIGINT GENERATED BY DEFAULT AS (1)",
                          "a BIGINT GENERATED ALWAYS AS IDENTITY GENERATED ALWAYS AS (1)"}) {
    auto r = SchemaFromDdl(bad);
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kInvalidExpression)) << bad;
  }
}

// ---------------------------------------------------------------------------------------------
// Generated columns

TEST(GeneratedColumns, ComputedWhenTheInputLacksThem) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(),
                     "id BIGINT, ts TIMESTAMP, name STRING, "
                     "d DATE NOT NULL GENERATED ALWAYS AS (CAST(ts AS DATE)), "
                     "y INT GENERATED ALWAYS AS (year(ts)), "
                     "up STRING GENERATED ALWAYS AS (upper(name)), "
                     "total BIGINT GENERATED ALWAYS AS (id * 10 + length(name)), "
                     "label STRING GENERATED ALWAYS AS (CAST(month(ts) * 100 + day(ts) AS STRING))",
                     {"d"})
                  .ok());
  auto input = arrow::schema({arrow::field("id", arrow::int64()),
                              arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                              arrow::field("name", arrow::utf8())});
  // 2021-03-04T05:06:07Z and 1969-12-31T23:59:59Z.
  const int64_t t1 = 18690 * kDayMicros + ((5 * 60 + 6) * 60 + 7) * 1000000LL;
  auto r = WriteTable(dir.str(),
                      Rows(input, {Longs({1, 2}), Timestamps({t1, -1000000}), Strings({"ab", "xyz"})}),
                      {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"id", "d", "y", "up", "total", "label"}),
            (std::multiset<std::string>{"1|2021-03-04|2021|AB|12|304",
                                        "2|1969-12-31|1969|XYZ|23|1231"}));
  EXPECT_EQ(r->num_files, 2);  // partitioned by the generated date
}

TEST(GeneratedColumns, SuppliedValuesAreCheckedNullSafely) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(), "a INT, b INT GENERATED ALWAYS AS (a + 1)").ok());
  auto both = arrow::schema({arrow::field("a", arrow::int32()), arrow::field("b", arrow::int32())});
  auto ok = WriteTable(dir.str(), Rows(both, {Ints({1, std::nullopt}), Ints({2, std::nullopt})}), {});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const auto before = LogFiles(dir.str());

  auto bad = WriteTable(dir.str(), Rows(both, {Ints({5, 7}), Ints({6, 9})}), {});
  ASSERT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kConstraintViolation))
      << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("'b'"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("a + 1"), std::string::npos) << bad.status().message();
  auto null_given = WriteTable(dir.str(), Rows(both, {Ints({3}), Ints({std::nullopt})}), {});
  EXPECT_TRUE(IsDeltaError(null_given.status(), DeltaErrorCode::kConstraintViolation))
      << null_given.status().ToString();
  EXPECT_EQ(LogFiles(dir.str()), before);
  EXPECT_EQ(Read(dir.str(), {"a", "b"}), (std::multiset<std::string>{"1|2", "null|null"}));
}

TEST(GeneratedColumns, ReplaceWhereSeesTheGeneratedPartition) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(), "ts TIMESTAMP, d DATE GENERATED ALWAYS AS (CAST(ts AS DATE))",
                     {"d"})
                  .ok());
  auto input = arrow::schema({arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  ASSERT_TRUE(WriteTable(dir.str(), Rows(input, {Timestamps({0, kDayMicros})}), {}).ok());
  WriteOptions replace;
  replace.mode = WriteMode::kOverwrite;
  replace.replace_where = "d = DATE '1970-01-02'";
  auto r = WriteTable(dir.str(), Rows(input, {Timestamps({kDayMicros + 5})}), replace);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"d"}), (std::multiset<std::string>{"1970-01-01", "1970-01-02"}));
  auto outside = WriteTable(dir.str(), Rows(input, {Timestamps({5 * kDayMicros})}), replace);
  EXPECT_TRUE(IsDeltaError(outside.status(), DeltaErrorCode::kConstraintViolation))
      << outside.status().ToString();
}

TEST(GeneratedColumns, UnsupportedExpressionsRefuseTheWrite) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(), "s STRING, p STRING GENERATED ALWAYS AS (substring(s, 1, 2))").ok());
  const auto before = LogFiles(dir.str());
  auto input = arrow::schema({arrow::field("s", arrow::utf8())});
  auto r = WriteTable(dir.str(), Rows(input, {Strings({"abc"})}), {});
  ASSERT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kUnsupportedFeature)) << r.status().ToString();
  EXPECT_NE(r.status().message().find("substring(s, 1, 2)"), std::string::npos);
  EXPECT_EQ(LogFiles(dir.str()), before);

  TempDir dir2;
  ASSERT_TRUE(Create(dir2.str(), "x DOUBLE, s STRING GENERATED ALWAYS AS (CAST(x AS STRING))").ok());
  auto doubles = arrow::schema({arrow::field("x", arrow::float64())});
  arrow::DoubleBuilder db;
  (void)db.Append(1.5);
  auto r2 = WriteTable(dir2.str(), Rows(doubles, {*db.Finish()}), {});
  ASSERT_TRUE(IsDeltaError(r2.status(), DeltaErrorCode::kUnsupportedFeature)) << r2.status().ToString();
  EXPECT_NE(r2.status().message().find("CAST from DOUBLE to STRING"), std::string::npos)
      << r2.status().message();
}

TEST(GeneratedColumns, CastsAndNestedCasts) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(),
                     "x DOUBLE, d DATE, "
                     "i BIGINT GENERATED ALWAYS AS (CAST(x AS BIGINT)), "
                     "s STRING GENERATED ALWAYS AS (CAST(CAST(x AS INT) AS STRING)), "
                     "t TIMESTAMP GENERATED ALWAYS AS (CAST(d AS TIMESTAMP)), "
                     "n INT GENERATED ALWAYS AS (cast(NULL as int))")
                  .ok());
  auto input = arrow::schema({arrow::field("x", arrow::float64()), arrow::field("d", arrow::date32())});
  arrow::DoubleBuilder db;
  (void)db.AppendValues({-1.7, 2.9});
  auto r = WriteTable(dir.str(), Rows(input, {*db.Finish(), Dates({0, 1})}), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"i", "s", "t", "n"}),
            (std::multiset<std::string>{"-1|-1|1970-01-01 00:00:00.000000Z|null",
                                        "2|2|1970-01-02 00:00:00.000000Z|null"}));
}

TEST(GeneratedColumns, SparkTableWithANonDeterministicExpressionIsRefused) {
  TempDir dir;
  // Written by Delta 3.1: creation DATE GENERATED ALWAYS AS (CAST(now() AS DATE)).
  const std::string path = CopyOfCorpusTable(dir, "dat-generated_columns");
  if (path.empty()) GTEST_SKIP() << "corpus table dat-generated_columns not present";
  const auto before = LogFiles(path);
  auto input = arrow::schema({arrow::field("letter", arrow::utf8()),
                              arrow::field("int", arrow::int64()),
                              arrow::field("date", arrow::date32())});
  auto r = WriteTable(path, Rows(input, {Strings({"z"}), Longs({1}), Dates({0})}), {});
  ASSERT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kUnsupportedFeature)) << r.status().ToString();
  EXPECT_NE(r.status().message().find("CAST(now() AS DATE)"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(LogFiles(path), before);
}

// ---------------------------------------------------------------------------------------------
// Invariants

TEST(Invariants, ViolatingRowsAreRejected) {
  TempDir dir;
  // delta-spark stores the invariant as a JSON string holding the object; both forms are read.
  auto v_meta = arrow::key_value_metadata(
      {"delta.invariants"}, {R"("{\"expression\":{\"expression\":\"v > 0\"}}")"});
  auto x_meta = arrow::key_value_metadata({"delta.invariants"},
                                          {R"({"expression":{"expression":"s.x < 100"}})"});
  auto schema = arrow::schema(
      {arrow::field("v", arrow::int64(), true, v_meta),
       arrow::field("s", arrow::struct_({arrow::field("x", arrow::int32(), true, x_meta)}))});
  CreateTableOptions opts;
  opts.schema = schema;
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  auto input = arrow::schema({arrow::field("v", arrow::int64()),
                              arrow::field("s", arrow::struct_({arrow::field("x", arrow::int32())}))});
  auto structs = [&](std::vector<std::optional<int32_t>> xs) {
    auto x = Ints(xs);
    return *arrow::StructArray::Make({x}, {arrow::field("x", arrow::int32())});
  };
  auto ok = WriteTable(dir.str(), Rows(input, {Longs({1, 2}), structs({5, 99})}), {});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const auto before = LogFiles(dir.str());

  auto bad_v = WriteTable(dir.str(), Rows(input, {Longs({3, 0}), structs({1, 2})}), {});
  ASSERT_TRUE(IsDeltaError(bad_v.status(), DeltaErrorCode::kConstraintViolation))
      << bad_v.status().ToString();
  EXPECT_NE(bad_v.status().message().find("invariant on column 'v' (v > 0)"), std::string::npos)
      << bad_v.status().message();
  auto null_v = WriteTable(dir.str(), Rows(input, {Longs({std::nullopt}), structs({1})}), {});
  EXPECT_TRUE(IsDeltaError(null_v.status(), DeltaErrorCode::kConstraintViolation));
  auto bad_x = WriteTable(dir.str(), Rows(input, {Longs({4}), structs({100})}), {});
  ASSERT_TRUE(IsDeltaError(bad_x.status(), DeltaErrorCode::kConstraintViolation))
      << bad_x.status().ToString();
  EXPECT_NE(bad_x.status().message().find("invariant on column 's.x' (s.x < 100)"),
            std::string::npos)
      << bad_x.status().message();
  EXPECT_EQ(LogFiles(dir.str()), before);
  EXPECT_EQ(Read(dir.str(), {"v"}), (std::multiset<std::string>{"1", "2"}));
}

// ---------------------------------------------------------------------------------------------
// Identity columns

TEST(IdentityColumns, ValuesContinueFromTheHighWaterMark) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(),
                     "id BIGINT NOT NULL GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5), "
                     "v STRING")
                  .ok());
  EXPECT_EQ(Latest(dir.str())->protocol().min_writer_version, 6);
  auto input = arrow::schema({arrow::field("v", arrow::utf8())});
  // Two batches in one write: values follow row order across batches.
  auto reader = *arrow::RecordBatchReader::Make(
      {Batch(input, {Strings({"a", "b"})}), Batch(input, {Strings({"c"})})}, input);
  auto first = WriteTable(dir.str(), reader, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(FieldMeta(dir.str(), "id", "delta.identity.highWaterMark"), "20");
  auto second = WriteTable(dir.str(), Rows(input, {Strings({"d", "e"})}), {});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"id", "v"}),
            (std::multiset<std::string>{"10|a", "15|b", "20|c", "25|d", "30|e"}));
  // The new mark is committed with the data, in the same version.
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->version(), *second->version);
  EXPECT_EQ(FieldMeta(dir.str(), "id", "delta.identity.highWaterMark"), "30");
  EXPECT_EQ(FieldMeta(dir.str(), "id", "delta.identity.start"), "10");
  EXPECT_EQ(FieldMeta(dir.str(), "id", "delta.identity.step"), "5");
  EXPECT_FALSE(snap->schema()->GetFieldByName("id")->nullable());
  const std::string commit = CommitText(dir.str(), snap->version());
  EXPECT_NE(commit.find(R"(\"delta.identity.highWaterMark\":30)"), std::string::npos) << commit;
  EXPECT_NE(commit.find(R"("add":)"), std::string::npos);
}

TEST(IdentityColumns, UnalignedMarkAndTableFeatureProtocol) {
  TempDir dir;
  // A mark between two values of the sequence (e.g. left by an explicit SYNC): the next value is
  // the first of the sequence beyond it. TIMESTAMP_NTZ makes the protocol list its features.
  auto id_meta = arrow::key_value_metadata(
      {"delta.identity.start", "delta.identity.step", "delta.identity.highWaterMark",
       "delta.identity.allowExplicitInsert"},
      {"10", "5", "12", "false"});
  CreateTableOptions opts;
  opts.schema = arrow::schema({arrow::field("id", arrow::int64(), true, id_meta),
                               arrow::field("t", arrow::timestamp(arrow::TimeUnit::MICRO))});
  opts.transaction.enforced_features = {"identityColumns"};
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  auto protocol = Latest(dir.str())->protocol();
  EXPECT_EQ(protocol.min_writer_version, 7);
  ASSERT_TRUE(protocol.writer_features);
  EXPECT_NE(std::find(protocol.writer_features->begin(), protocol.writer_features->end(),
                      "identityColumns"),
            protocol.writer_features->end());
  auto input = arrow::schema({arrow::field("t", arrow::timestamp(arrow::TimeUnit::MICRO))});
  arrow::TimestampBuilder tb(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  (void)tb.AppendValues({0, 1});
  auto r = WriteTable(dir.str(), Rows(input, {*tb.Finish()}), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"id"}), (std::multiset<std::string>{"15", "20"}));
  EXPECT_EQ(FieldMeta(dir.str(), "id", "delta.identity.highWaterMark"), "20");
}

TEST(IdentityColumns, ExplicitValuesRejectedForAlwaysAcceptedForByDefault) {
  TempDir always, by_default;
  ASSERT_TRUE(Create(always.str(), "id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING").ok());
  ASSERT_TRUE(Create(by_default.str(), "id BIGINT GENERATED BY DEFAULT AS IDENTITY, v STRING").ok());
  auto with_id = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::utf8())});
  auto without_id = arrow::schema({arrow::field("v", arrow::utf8())});

  const auto before = LogFiles(always.str());
  auto rejected = WriteTable(always.str(), Rows(with_id, {Longs({100}), Strings({"x"})}), {});
  ASSERT_TRUE(IsDeltaError(rejected.status(), DeltaErrorCode::kConstraintViolation))
      << rejected.status().ToString();
  EXPECT_NE(rejected.status().message().find("'id'"), std::string::npos);
  EXPECT_EQ(LogFiles(always.str()), before);

  auto accepted = WriteTable(by_default.str(), Rows(with_id, {Longs({100}), Strings({"x"})}), {});
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(FieldMeta(by_default.str(), "id", "delta.identity.highWaterMark"), "");
  auto generated = WriteTable(by_default.str(), Rows(without_id, {Strings({"y", "z"})}), {});
  ASSERT_TRUE(generated.ok()) << generated.status().ToString();
  EXPECT_EQ(Read(by_default.str(), {"id", "v"}),
            (std::multiset<std::string>{"100|x", "1|y", "2|z"}));
  EXPECT_EQ(FieldMeta(by_default.str(), "id", "delta.identity.highWaterMark"), "2");
}

TEST(IdentityColumns, NegativeStepsAndOverflow) {
  TempDir down, full;
  ASSERT_TRUE(Create(down.str(),
                     "id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH -1 INCREMENT BY -2), v STRING")
                  .ok());
  auto input = arrow::schema({arrow::field("v", arrow::utf8())});
  ASSERT_TRUE(WriteTable(down.str(), Rows(input, {Strings({"a", "b"})}), {}).ok());
  ASSERT_TRUE(WriteTable(down.str(), Rows(input, {Strings({"c"})}), {}).ok());
  EXPECT_EQ(Read(down.str(), {"id", "v"}), (std::multiset<std::string>{"-1|a", "-3|b", "-5|c"}));
  EXPECT_EQ(FieldMeta(down.str(), "id", "delta.identity.highWaterMark"), "-5");

  ASSERT_TRUE(Create(full.str(),
                     "id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 9223372036854775806), "
                     "v STRING")
                  .ok());
  auto too_many = WriteTable(full.str(), Rows(input, {Strings({"a", "b", "c"})}), {});
  EXPECT_TRUE(IsDeltaError(too_many.status(), DeltaErrorCode::kConstraintViolation))
      << too_many.status().ToString();
  EXPECT_EQ(LogFiles(full.str()).size(), 1u);
  ASSERT_TRUE(WriteTable(full.str(), Rows(input, {Strings({"a", "b"})}), {}).ok());
  EXPECT_EQ(FieldMeta(full.str(), "id", "delta.identity.highWaterMark"), "9223372036854775807");
  auto exhausted = WriteTable(full.str(), Rows(input, {Strings({"c"})}), {});
  EXPECT_TRUE(IsDeltaError(exhausted.status(), DeltaErrorCode::kConstraintViolation))
      << exhausted.status().ToString();
  // An empty write needs no value and leaves the mark alone.
  auto empty = WriteTable(full.str(), Rows(input, {Strings({})}), {});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(FieldMeta(full.str(), "id", "delta.identity.highWaterMark"), "9223372036854775807");
}

TEST(IdentityColumns, SparkWrittenTableContinuesFromItsMark) {
  TempDir dir;
  // Written by Databricks Runtime 17: id BIGINT GENERATED ALWAYS AS IDENTITY, high-water mark 44
  // after 44 rows, V2 checkpoints.
  const std::string path = CopyOfCorpusTable(dir, "delta-rs-checkpoint-v2-table");
  if (path.empty()) GTEST_SKIP() << "corpus table delta-rs-checkpoint-v2-table not present";
  ASSERT_EQ(FieldMeta(path, "id", "delta.identity.highWaterMark"), "44");
  auto input = arrow::schema({arrow::field("name", arrow::utf8()),
                              arrow::field("created_at",
                                           arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  auto r = WriteTable(path, Rows(input, {Strings({"p", "q"}), Timestamps({0, 1})}), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FieldMeta(path, "id", "delta.identity.highWaterMark"), "46");
  auto ids = Read(path, {"id"});
  EXPECT_EQ(ids.size(), 46u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 46u);  // all distinct
  EXPECT_EQ(Read(path, {"id", "name"}).count("45|p"), 1u);
  EXPECT_EQ(Read(path, {"id", "name"}).count("46|q"), 1u);
  auto explicit_ids = WriteTable(
      path, Rows(arrow::schema({arrow::field("id", arrow::int64())}), {Longs({7})}), {});
  EXPECT_TRUE(IsDeltaError(explicit_ids.status(), DeltaErrorCode::kConstraintViolation))
      << explicit_ids.status().ToString();
}

// Runs `hook` before handing out the first batch, i.e. after the write read its snapshot.
class HookedReader final : public arrow::RecordBatchReader {
 public:
  HookedReader(std::shared_ptr<arrow::RecordBatch> batch, std::function<void()> hook)
      : batch_(std::move(batch)), hook_(std::move(hook)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return batch_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    if (hook_) {
      auto hook = std::move(hook_);
      hook_ = nullptr;
      hook();
    }
    *out = std::move(batch_);
    batch_ = nullptr;
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::function<void()> hook_;
};

TEST(IdentityColumns, ConcurrentIdentityWritesConflictOnTheMetadata) {
  TempDir dir;
  ASSERT_TRUE(Create(dir.str(), "id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING").ok());
  auto input = arrow::schema({arrow::field("v", arrow::utf8())});
  arrow::Status winner;
  auto reader = std::make_shared<HookedReader>(Batch(input, {Strings({"late"})}), [&] {
    winner = WriteTable(dir.str(), Rows(input, {Strings({"early"})}), {}).status();
  });
  auto loser = WriteTable(dir.str(), reader, {});
  ASSERT_TRUE(winner.ok()) << winner.ToString();
  EXPECT_TRUE(IsDeltaError(loser.status(), DeltaErrorCode::kMetadataChanged))
      << loser.status().ToString();
  EXPECT_EQ(Read(dir.str(), {"id", "v"}), (std::multiset<std::string>{"1|early"}));
  // Retried from the new snapshot, the write continues after the winner's values.
  ASSERT_TRUE(WriteTable(dir.str(), Rows(input, {Strings({"late"})}), {}).ok());
  EXPECT_EQ(Read(dir.str(), {"id", "v"}), (std::multiset<std::string>{"1|early", "2|late"}));
}

}  // namespace
}  // namespace deltacpp
