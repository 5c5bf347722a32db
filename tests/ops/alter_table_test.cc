// ALTER TABLE operations (columns, properties, constraints) checked through the snapshots and
// history they produce; every failure must leave `_delta_log` exactly as it was. Also log
// cleanup after automatic checkpoints.
#include <arrow/array/concatenate.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/ops/alter_table.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Ints;
using testing::Latest;
using testing::LogListing;
using testing::Longs;
using testing::Rows;
using testing::Strings;
using testing::TempDir;

std::shared_ptr<arrow::Table> ReadTable(const std::string& path) {
  auto scan = Latest(path)->NewScan().Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  auto t = (*scan)->ToTable();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// Values of one top-level column of the latest version as text, sorted ("null" for nulls).
std::vector<std::string> ColumnValues(const std::string& path, const std::string& column) {
  auto t = ReadTable(path);
  auto col = t->GetColumnByName(column);
  EXPECT_TRUE(col) << column;
  std::vector<std::string> out;
  if (!col) return out;
  for (int64_t r = 0; r < col->length(); ++r) {
    auto s = *col->GetScalar(r);
    out.push_back(s->is_valid ? s->ToString() : "null");
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The newest history entry's operation and parameters.
HistoryEntry LastCommit(const std::string& path) {
  auto history = (*DeltaTable::Open(path))->History(1);
  EXPECT_TRUE(history.ok() && !history->empty());
  return history->front();
}

// operationParameters[key] (a string) of the newest commit.
std::string Param(const std::string& path, const std::string& key) {
  rapidjson::Document doc;
  doc.Parse(LastCommit(path).operation_parameters.c_str());
  if (!doc.IsObject() || !doc.HasMember(key.c_str()) || !doc[key.c_str()].IsString()) {
    return "<missing>";
  }
  return doc[key.c_str()].GetString();
}

std::string MetadataValue(const arrow::Field& field, const std::string& key) {
  if (!field.metadata()) return "";
  auto v = field.metadata()->Get(key);
  return v.ok() ? *v : "";
}

bool HasFeature(const std::optional<std::vector<std::string>>& list, const std::string& f) {
  return list && std::find(list->begin(), list->end(), f) != list->end();
}

// A table `id long NOT NULL, name string` holding ids 1..3.
std::string PeopleTable(const TempDir& dir, std::map<std::string, std::string> properties = {}) {
  CreateTableOptions opts;
  opts.schema = *SchemaFromDdl("id long NOT NULL, name string");
  opts.properties = std::move(properties);
  EXPECT_TRUE(CreateTable(dir.str(), opts).ok());
  auto rows = Rows(opts.schema, {Longs({1, 2, 3}), Strings({"a", "b", std::nullopt})});
  auto written = WriteTable(dir.str(), rows, {});
  EXPECT_TRUE(written.ok()) << written.status().ToString();
  return dir.str();
}

NewColumn Column(std::string name, std::shared_ptr<arrow::DataType> type, std::string parent = "",
                 bool nullable = true) {
  return NewColumn{arrow::field(std::move(name), std::move(type), nullable), std::move(parent)};
}

// ---------------------------------------------------------------------------------------------
// ADD COLUMNS

TEST(AddColumns, AddsTopLevelAndNestedColumnsThatReadAsNull) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = *SchemaFromDdl("id long NOT NULL, s STRUCT<a: INT>");
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  auto s_type = arrow::struct_({arrow::field("a", arrow::int32())});
  auto s = *arrow::StructArray::Make({Ints({10, 20})}, s_type->fields());
  ASSERT_TRUE(WriteTable(dir.str(), Rows(opts.schema, {Longs({1, 2}), s}), {}).ok());

  auto r = AddColumns(dir.str(), {Column("note", arrow::utf8()), Column("b", arrow::int64(), "S")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->schema()->ToString(),
            arrow::schema({arrow::field("id", arrow::int64(), false),
                           arrow::field("s", arrow::struct_({arrow::field("a", arrow::int32()),
                                                             arrow::field("b", arrow::int64())})),
                           arrow::field("note", arrow::utf8())})
                ->ToString());
  EXPECT_EQ(snap->protocol().min_writer_version, 2);
  EXPECT_EQ(LastCommit(dir.str()).operation, "ADD COLUMNS");
  rapidjson::Document cols;
  cols.Parse(Param(dir.str(), "columns").c_str());
  ASSERT_TRUE(cols.IsArray());
  ASSERT_EQ(cols.Size(), 2u);
  EXPECT_STREQ(cols[0]["column"]["name"].GetString(), "note");
  EXPECT_STREQ(cols[0]["column"]["type"].GetString(), "string");
  EXPECT_TRUE(cols[0]["column"]["nullable"].GetBool());
  EXPECT_TRUE(cols[0]["column"]["metadata"].IsObject());
  EXPECT_STREQ(cols[1]["column"]["name"].GetString(), "s.b");
  EXPECT_STREQ(cols[1]["column"]["type"].GetString(), "long");

  // Old rows read the new columns as null.
  auto t = ReadTable(dir.str());
  ASSERT_EQ(t->num_rows(), 2);
  EXPECT_EQ(t->GetColumnByName("note")->null_count(), 2);
  auto s_read = std::static_pointer_cast<arrow::StructArray>(
      *arrow::Concatenate(t->GetColumnByName("s")->chunks()));
  EXPECT_EQ(s_read->GetFieldByName("b")->null_count(), 2);
  EXPECT_EQ(s_read->GetFieldByName("a")->null_count(), 0);

  // New rows can fill them.
  auto s2 = *arrow::StructArray::Make({Ints({30}), Longs({300})},
                                      snap->schema()->field(1)->type()->fields());
  auto w = WriteTable(dir.str(), Rows(snap->schema(), {Longs({3}), s2, Strings({"new"})}), {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(ColumnValues(dir.str(), "note"), (std::vector<std::string>{"new", "null", "null"}));
}

TEST(AddColumns, RejectedRequestsLeaveTheLogUnchanged) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = *SchemaFromDdl("id long NOT NULL, s STRUCT<a: INT>");
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  const auto before = LogListing(dir.str());
  auto code = [&](const std::vector<NewColumn>& cols) {
    auto r = AddColumns(dir.str(), cols);
    EXPECT_FALSE(r.ok());
    return GetDeltaErrorCode(r.status()).value_or(DeltaErrorCode::kCorruptLog);
  };
  EXPECT_EQ(code({Column("ID", arrow::utf8())}), DeltaErrorCode::kSchemaMismatch);
  EXPECT_EQ(code({Column("x", arrow::utf8()), Column("X", arrow::int32())}),
            DeltaErrorCode::kSchemaMismatch);
  EXPECT_EQ(code({Column("A", arrow::utf8(), "s")}), DeltaErrorCode::kSchemaMismatch);
  EXPECT_EQ(code({Column("x", arrow::utf8(), "", false)}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({Column("x", arrow::utf8(), "nope")}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({Column("x", arrow::utf8(), "id")}), DeltaErrorCode::kSchemaMismatch);
  EXPECT_EQ(code({Column("x", arrow::uint32())}), DeltaErrorCode::kSchemaMismatch);
  EXPECT_EQ(code({}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(LogListing(dir.str()), before);
  EXPECT_EQ(Latest(dir.str())->version(), 0);

  TempDir missing;
  auto nf = AddColumns(missing.str() + "/none", {Column("x", arrow::utf8())});
  EXPECT_TRUE(IsDeltaError(nf.status(), DeltaErrorCode::kTableNotFound)) << nf.status().ToString();
}

TEST(AddColumns, TimestampNtzColumnUpgradesTheProtocol) {
  TempDir dir;
  PeopleTable(dir);
  ASSERT_TRUE(AddColumns(dir.str(), {Column("t", arrow::timestamp(arrow::TimeUnit::MICRO))}).ok());
  auto snap = Latest(dir.str());
  const auto& p = snap->protocol();
  EXPECT_EQ(p.min_reader_version, 3);
  EXPECT_EQ(p.min_writer_version, 7);
  EXPECT_TRUE(HasFeature(p.reader_features, "timestampNtz"));
  EXPECT_TRUE(HasFeature(p.writer_features, "timestampNtz"));
  // The legacy features (1,2) implied stay supported.
  EXPECT_TRUE(HasFeature(p.writer_features, "appendOnly"));
  EXPECT_TRUE(HasFeature(p.writer_features, "invariants"));
}

TEST(AddColumns, ColumnMappedTableGetsIdsAndKeepsReadingOldData) {
  TempDir dir;
  PeopleTable(dir, {{"delta.columnMapping.mode", "name"}});
  auto before = Latest(dir.str());
  ASSERT_EQ(before->column_mapping_mode(), ColumnMappingMode::kName);
  ASSERT_EQ(before->properties().at("delta.columnMapping.maxColumnId"), "2");

  auto info = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("y", arrow::utf8())});
  auto r = AddColumns(dir.str(), {Column("extra", arrow::utf8()), Column("info", info)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->properties().at("delta.columnMapping.maxColumnId"), "6");
  std::set<std::string> ids, physical;
  auto collect = [&](const std::shared_ptr<arrow::Field>& f) {
    ids.insert(MetadataValue(*f, "delta.columnMapping.id"));
    physical.insert(MetadataValue(*f, "delta.columnMapping.physicalName"));
  };
  for (const auto& f : snap->schema()->fields()) collect(f);
  for (const auto& f : snap->schema()->GetFieldByName("info")->type()->fields()) collect(f);
  EXPECT_EQ(ids, (std::set<std::string>{"1", "2", "3", "4", "5", "6"}));
  EXPECT_EQ(physical.size(), 6u);
  auto extra = snap->schema()->GetFieldByName("extra");
  EXPECT_EQ(MetadataValue(*extra, "delta.columnMapping.physicalName").rfind("\"col-", 0), 0u);

  // Old files read on; new files carry the new column.
  EXPECT_EQ(ColumnValues(dir.str(), "id"), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(ColumnValues(dir.str(), "extra"), (std::vector<std::string>{"null", "null", "null"}));
  auto input = arrow::schema({arrow::field("id", arrow::int64(), false),
                              arrow::field("name", arrow::utf8()),
                              arrow::field("extra", arrow::utf8())});
  auto w = WriteTable(dir.str(), Rows(input, {Longs({4}), Strings({"d"}), Strings({"e"})}), {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(ColumnValues(dir.str(), "extra"),
            (std::vector<std::string>{"e", "null", "null", "null"}));
  EXPECT_EQ(ColumnValues(dir.str(), "name"), (std::vector<std::string>{"a", "b", "d", "null"}));
}

// ---------------------------------------------------------------------------------------------
// SET / UNSET TBLPROPERTIES

TEST(SetTableProperties, StoresPropertiesAndUpgradesTheProtocol) {
  TempDir dir;
  PeopleTable(dir);
  auto r = SetTableProperties(dir.str(), {{"owner", "me"}, {"DELTA.appendonly", "TRUE"},
                                          {"comment", "people"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->properties().at("owner"), "me");
  EXPECT_EQ(snap->properties().at("delta.appendOnly"), "true");
  EXPECT_EQ(snap->properties().count("comment"), 0u);
  EXPECT_EQ(snap->metadata().description, "people");
  EXPECT_EQ(snap->protocol().min_writer_version, 2);  // appendOnly comes with writer version 2
  EXPECT_EQ(LastCommit(dir.str()).operation, "SET TBLPROPERTIES");
  rapidjson::Document props;
  props.Parse(Param(dir.str(), "properties").c_str());
  ASSERT_TRUE(props.IsObject());
  EXPECT_STREQ(props["owner"].GetString(), "me");

  ASSERT_TRUE(SetTableProperties(dir.str(), {{"delta.enableDeletionVectors", "true"}}).ok());
  snap = Latest(dir.str());
  EXPECT_EQ(snap->protocol().min_reader_version, 3);
  EXPECT_EQ(snap->protocol().min_writer_version, 7);
  EXPECT_TRUE(HasFeature(snap->protocol().reader_features, "deletionVectors"));
  EXPECT_TRUE(HasFeature(snap->protocol().writer_features, "deletionVectors"));
  EXPECT_TRUE(HasFeature(snap->protocol().writer_features, "appendOnly"));

  ASSERT_TRUE(SetTableProperties(dir.str(), {{"delta.feature.domainMetadata", "supported"}}).ok());
  snap = Latest(dir.str());
  EXPECT_TRUE(HasFeature(snap->protocol().writer_features, "domainMetadata"));
  EXPECT_EQ(snap->properties().count("delta.feature.domainMetadata"), 0u);
  EXPECT_EQ(snap->properties().at("owner"), "me");
}

TEST(SetTableProperties, ExplicitVersionsRaiseButNeverLowerTheProtocol) {
  TempDir dir;
  PeopleTable(dir);
  ASSERT_TRUE(SetTableProperties(dir.str(), {{"delta.minWriterVersion", "4"}}).ok());
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->protocol().min_reader_version, 1);
  EXPECT_EQ(snap->protocol().min_writer_version, 4);
  EXPECT_EQ(snap->properties().count("delta.minWriterVersion"), 0u);
  ASSERT_TRUE(SetTableProperties(dir.str(), {{"delta.minWriterVersion", "2"}}).ok());
  EXPECT_EQ(Latest(dir.str())->protocol().min_writer_version, 4);
  ASSERT_TRUE(SetTableProperties(dir.str(), {{"delta.minWriterVersion", "7"}}).ok());
  snap = Latest(dir.str());
  EXPECT_EQ(snap->protocol().min_writer_version, 7);
  EXPECT_TRUE(HasFeature(snap->protocol().writer_features, "changeDataFeed"));
  EXPECT_TRUE(HasFeature(snap->protocol().writer_features, "generatedColumns"));
}

TEST(SetTableProperties, RejectedRequestsLeaveTheLogUnchanged) {
  TempDir dir;
  PeopleTable(dir);
  const auto before = LogListing(dir.str());
  auto code = [&](const std::map<std::string, std::string>& props) {
    auto r = SetTableProperties(dir.str(), props);
    EXPECT_FALSE(r.ok());
    return GetDeltaErrorCode(r.status()).value_or(DeltaErrorCode::kCorruptLog);
  };
  EXPECT_EQ(code({}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.noSuchThing", "1"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.appendOnly", "maybe"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.checkpointInterval", "0"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.logRetentionDuration", "interval 2 months"}}),
            DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.constraints.positive", "id > 0"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.columnMapping.maxColumnId", "10"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.columnMapping.mode", "id"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.feature.noSuchFeature", "supported"}}),
            DeltaErrorCode::kUnsupportedFeature);
  EXPECT_EQ(code({{"delta.feature.appendOnly", "yes"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"delta.minWriterVersion", "8"}}), DeltaErrorCode::kInvalidArgument);
  EXPECT_EQ(LogListing(dir.str()), before);
}

TEST(SetTableProperties, TurningOnNameColumnMappingKeepsOldFilesReadable) {
  TempDir dir;
  PeopleTable(dir);
  auto r = SetTableProperties(dir.str(), {{"delta.columnMapping.mode", "Name"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->column_mapping_mode(), ColumnMappingMode::kName);
  EXPECT_EQ(snap->properties().at("delta.columnMapping.mode"), "name");
  EXPECT_EQ(snap->properties().at("delta.columnMapping.maxColumnId"), "2");
  EXPECT_GE(snap->protocol().min_reader_version, 2);
  EXPECT_GE(snap->protocol().min_writer_version, 5);
  EXPECT_EQ(MetadataValue(*snap->schema()->field(1), "delta.columnMapping.physicalName"),
            "\"name\"");
  EXPECT_EQ(ColumnValues(dir.str(), "name"), (std::vector<std::string>{"a", "b", "null"}));
  ASSERT_TRUE(AddColumns(dir.str(), {Column("extra", arrow::utf8())}).ok());
  EXPECT_EQ(Latest(dir.str())->properties().at("delta.columnMapping.maxColumnId"), "3");
  EXPECT_EQ(ColumnValues(dir.str(), "id"), (std::vector<std::string>{"1", "2", "3"}));
}

TEST(UnsetTableProperties, RemovesPropertiesAndHonoursIfExists) {
  TempDir dir;
  PeopleTable(dir, {{"owner", "me"}, {"delta.appendOnly", "true"}});
  auto r = UnsetTableProperties(dir.str(), {"owner"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->properties().count("owner"), 0u);
  EXPECT_EQ(snap->properties().at("delta.appendOnly"), "true");
  EXPECT_EQ(LastCommit(dir.str()).operation, "UNSET TBLPROPERTIES");
  EXPECT_EQ(Param(dir.str(), "properties"), "[\"owner\"]");
  EXPECT_EQ(Param(dir.str(), "ifExists"), "false");

  const auto before = LogListing(dir.str());
  auto missing = UnsetTableProperties(dir.str(), {"owner"});
  EXPECT_TRUE(IsDeltaError(missing.status(), DeltaErrorCode::kInvalidArgument))
      << missing.status().ToString();
  auto empty = UnsetTableProperties(dir.str(), {});
  EXPECT_TRUE(IsDeltaError(empty.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_EQ(LogListing(dir.str()), before);

  auto tolerant = UnsetTableProperties(dir.str(), {"owner", "DELTA.APPENDONLY"}, true);
  ASSERT_TRUE(tolerant.ok()) << tolerant.status().ToString();
  EXPECT_EQ(Latest(dir.str())->properties().count("delta.appendOnly"), 0u);
  EXPECT_EQ(Param(dir.str(), "properties"), "[\"owner\",\"delta.appendOnly\"]");
  EXPECT_EQ(Param(dir.str(), "ifExists"), "true");
}

TEST(UnsetTableProperties, ColumnMappingModeStaysOnAMappedTable) {
  TempDir dir;
  PeopleTable(dir, {{"delta.columnMapping.mode", "name"}});
  const auto before = LogListing(dir.str());
  auto r = UnsetTableProperties(dir.str(), {"delta.columnMapping.mode"});
  EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kInvalidArgument)) << r.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
}

// ---------------------------------------------------------------------------------------------
// ADD / DROP CONSTRAINT

TEST(AddConstraint, ChecksExistingRowsThenGuardsLaterWrites) {
  TempDir dir;
  PeopleTable(dir);
  auto r = AddConstraint(dir.str(), "Positive", "id > 0");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->properties().at("delta.constraints.positive"), "id > 0");
  EXPECT_EQ(snap->protocol().min_writer_version, 3);
  EXPECT_EQ(LastCommit(dir.str()).operation, "ADD CONSTRAINT");
  EXPECT_EQ(Param(dir.str(), "name"), "Positive");
  EXPECT_EQ(Param(dir.str(), "expr"), "id > 0");

  const auto before = LogListing(dir.str());
  auto bad = WriteTable(dir.str(), Rows(snap->schema(), {Longs({-1}), Strings({"x"})}), {});
  EXPECT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kConstraintViolation))
      << bad.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
  auto good = WriteTable(dir.str(), Rows(snap->schema(), {Longs({7}), Strings({"x"})}), {});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(ColumnValues(dir.str(), "id"), (std::vector<std::string>{"1", "2", "3", "7"}));
}

TEST(AddConstraint, ExistingViolationIsRejectedAndNamed) {
  TempDir dir;
  PeopleTable(dir);
  const auto before = LogListing(dir.str());
  auto r = AddConstraint(dir.str(), "small", "id < 3");
  ASSERT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kConstraintViolation))
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("small"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("id=3"), std::string::npos) << r.status().message();
  // NULL is not TRUE either.
  auto n = AddConstraint(dir.str(), "named", "name IS NOT NULL AND name <> ''");
  EXPECT_TRUE(IsDeltaError(n.status(), DeltaErrorCode::kConstraintViolation))
      << n.status().ToString();
  auto nullable = AddConstraint(dir.str(), "named2", "name <> 'zzz'");
  EXPECT_TRUE(IsDeltaError(nullable.status(), DeltaErrorCode::kConstraintViolation))
      << nullable.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
  EXPECT_EQ(Latest(dir.str())->protocol().min_writer_version, 2);
}

TEST(AddConstraint, BadNamesAndExpressionsLeaveTheLogUnchanged) {
  TempDir dir;
  PeopleTable(dir);
  ASSERT_TRUE(AddConstraint(dir.str(), "positive", "id > 0").ok());
  const auto before = LogListing(dir.str());
  auto dup = AddConstraint(dir.str(), "POSITIVE", "id > -5");
  EXPECT_TRUE(IsDeltaError(dup.status(), DeltaErrorCode::kInvalidArgument))
      << dup.status().ToString();
  auto empty = AddConstraint(dir.str(), "", "id > 0");
  EXPECT_TRUE(IsDeltaError(empty.status(), DeltaErrorCode::kInvalidArgument));
  auto unknown = AddConstraint(dir.str(), "c", "nope > 1");
  EXPECT_TRUE(IsDeltaError(unknown.status(), DeltaErrorCode::kInvalidExpression))
      << unknown.status().ToString();
  auto not_bool = AddConstraint(dir.str(), "c", "id + 1");
  EXPECT_TRUE(IsDeltaError(not_bool.status(), DeltaErrorCode::kInvalidExpression))
      << not_bool.status().ToString();
  auto syntax = AddConstraint(dir.str(), "c", "id >");
  EXPECT_TRUE(IsDeltaError(syntax.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_EQ(LogListing(dir.str()), before);
}

TEST(DropConstraint, RemovesTheConstraintAndHonoursIfExists) {
  TempDir dir;
  PeopleTable(dir);
  ASSERT_TRUE(AddConstraint(dir.str(), "positive", "id > 0").ok());
  auto r = DropConstraint(dir.str(), "POSITIVE");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_EQ(snap->properties().count("delta.constraints.positive"), 0u);
  EXPECT_EQ(snap->protocol().min_writer_version, 3);  // the protocol is not lowered
  EXPECT_EQ(LastCommit(dir.str()).operation, "DROP CONSTRAINT");
  EXPECT_EQ(Param(dir.str(), "name"), "POSITIVE");
  EXPECT_EQ(Param(dir.str(), "expr"), "id > 0");
  EXPECT_EQ(Param(dir.str(), "existed"), "true");
  // Rows the constraint used to refuse are accepted again.
  ASSERT_TRUE(WriteTable(dir.str(), Rows(snap->schema(), {Longs({-1}), Strings({"x"})}), {}).ok());

  const auto before = LogListing(dir.str());
  auto missing = DropConstraint(dir.str(), "positive");
  EXPECT_TRUE(IsDeltaError(missing.status(), DeltaErrorCode::kInvalidArgument))
      << missing.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
  auto tolerant = DropConstraint(dir.str(), "positive", true);
  ASSERT_TRUE(tolerant.ok()) << tolerant.status().ToString();
  EXPECT_EQ(Param(dir.str(), "existed"), "false");
  EXPECT_EQ(Param(dir.str(), "expr"), "<missing>");
}

// ---------------------------------------------------------------------------------------------
// Log cleanup after automatic checkpoints

TEST(LogCleanup, AutomaticCheckpointDeletesExpiredCommits) {
  TempDir dir;
  PeopleTable(dir, {{"delta.checkpointInterval", "2"}});  // versions 0 and 1
  auto schema = Latest(dir.str())->schema();
  auto append = [&](int64_t id) {
    auto w = WriteTable(dir.str(), Rows(schema, {Longs({id}), Strings({"x"})}), {});
    EXPECT_TRUE(w.ok()) << w.status().ToString();
  };
  append(4);  // version 2: checkpoint, nothing old enough to delete
  const std::string log = dir.str() + "/_delta_log/";
  EXPECT_TRUE(std::filesystem::exists(log + "00000000000000000002.checkpoint.parquet"));
  EXPECT_TRUE(std::filesystem::exists(log + "00000000000000000000.json"));
  // Age everything so far beyond the default 30-day retention.
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 40);
  for (const auto& name : LogListing(dir.str())) {
    std::filesystem::last_write_time(log + name, old);
  }
  append(5);  // version 3
  append(6);  // version 4: checkpoint, then cleanup below the expired checkpoint 2
  auto files = LogListing(dir.str());
  EXPECT_FALSE(files.count("00000000000000000000.json"));
  EXPECT_FALSE(files.count("00000000000000000001.json"));
  EXPECT_TRUE(files.count("00000000000000000002.json"));
  EXPECT_TRUE(files.count("00000000000000000002.checkpoint.parquet"));
  EXPECT_TRUE(files.count("00000000000000000004.checkpoint.parquet"));
  EXPECT_EQ(ColumnValues(dir.str(), "id"),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6"}));
  auto v2 = (*DeltaTable::Open(dir.str()))->SnapshotAt(2);
  EXPECT_TRUE(v2.ok()) << v2.status().ToString();
}

}  // namespace
}  // namespace deltacpp
