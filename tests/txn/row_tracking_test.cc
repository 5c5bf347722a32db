// Row tracking through the transaction layer: fresh row-id ranges above the high-water mark,
// the delta.rowTracking domain, rebasing after a lost race, and tables created with
// delta.enableRowTracking through the operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "protocol/action_json_writer.h"
#include "txn/txn_test_util.h"

namespace deltacpp::testing {
namespace {

// The row-tracking fields of one add in a commit.
struct RowFields {
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
};

// add.path -> row-tracking fields, for every add line of `lines`.
std::map<std::string, RowFields> AddRowFields(const std::vector<std::string>& lines) {
  std::map<std::string, RowFields> out;
  for (const auto& line : lines) {
    if (ActionName(line) != "add") continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    const auto& add = d["add"];
    RowFields f;
    if (add.HasMember("baseRowId")) f.base_row_id = add["baseRowId"].GetInt64();
    if (add.HasMember("defaultRowCommitVersion")) {
      f.default_row_commit_version = add["defaultRowCommitVersion"].GetInt64();
    }
    out[add["path"].GetString()] = f;
  }
  return out;
}

// The configuration of every domainMetadata line of `lines`, by domain.
std::map<std::string, std::string> DomainLines(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> out;
  for (const auto& line : lines) {
    if (ActionName(line) != "domainMetadata") continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    out[d["domainMetadata"]["domain"].GetString()] =
        d["domainMetadata"]["configuration"].GetString();
  }
  return out;
}

// The metaData configuration of a commit, empty when it has none.
std::map<std::string, std::string> MetadataConfiguration(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> out;
  for (const auto& line : lines) {
    if (ActionName(line) != "metaData") continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    for (const auto& m : d["metaData"]["configuration"].GetObject()) {
      out[m.name.GetString()] = m.value.GetString();
    }
  }
  return out;
}

AddFile AddWithRecords(const std::string& path, int64_t num_records) {
  AddFile a = FakeAdd(path);
  a.stats = fmt::format(R"({{"numRecords":{},"minValues":{{}}}})", num_records);
  return a;
}

Protocol RowTrackingProtocol() { return MakeProtocol(1, 7, {}, {"domainMetadata", "rowTracking"}); }

Metadata RowTrackingMetadata(std::map<std::string, std::string> extra = {}) {
  extra.emplace("delta.enableRowTracking", "true");
  return MakeMetadata(TestSchema(), {}, std::move(extra));
}

std::string Hwm(int64_t n) { return fmt::format(R"({{"rowIdHighWaterMark":{}}})", n); }

TEST(RowTracking, AppendsGetConsecutiveDisjointRangesAndAdvanceTheHighWaterMark) {
  TxnTestTable t;
  auto created = t.Create(RowTrackingProtocol(), RowTrackingMetadata(),
                          {AddWithRecords("a.parquet", 10), AddWithRecords("b.parquet", 5)});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto v0 = t.CommitLines(0);
  auto rows0 = AddRowFields(v0);
  EXPECT_EQ(rows0["a.parquet"].base_row_id, 0);
  EXPECT_EQ(rows0["b.parquet"].base_row_id, 10);
  EXPECT_EQ(rows0["a.parquet"].default_row_commit_version, 0);
  EXPECT_EQ(rows0["b.parquet"].default_row_commit_version, 0);
  EXPECT_EQ(DomainLines(v0)["delta.rowTracking"], Hwm(14));

  auto appended = t.Append({AddWithRecords("c.parquet", 3), AddWithRecords("d.parquet", 0),
                            AddWithRecords("e.parquet", 1)});
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  auto v1 = t.CommitLines(1);
  auto rows1 = AddRowFields(v1);
  EXPECT_EQ(rows1["c.parquet"].base_row_id, 15);
  EXPECT_EQ(rows1["d.parquet"].base_row_id, 18);  // an empty range
  EXPECT_EQ(rows1["e.parquet"].base_row_id, 18);
  EXPECT_EQ(rows1["c.parquet"].default_row_commit_version, 1);
  EXPECT_EQ(DomainLines(v1)["delta.rowTracking"], Hwm(18));
  // The domain line comes before the file actions.
  size_t domain_at = 0, first_add = 0;
  for (size_t i = 0; i < v1.size(); ++i) {
    if (ActionName(v1[i]) == "domainMetadata") domain_at = i;
    if (ActionName(v1[i]) == "add" && first_add == 0) first_add = i;
  }
  EXPECT_LT(domain_at, first_add);

  // The snapshot reconciles the domain and keeps the fields on the live files.
  auto table = t.Open();
  ASSERT_TRUE(table.ok());
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const auto& domains = (*snap)->domain_metadata();
  ASSERT_TRUE(domains.count("delta.rowTracking"));
  EXPECT_EQ(domains.at("delta.rowTracking").configuration, Hwm(18));
  const auto& files = *(*snap)->files();
  const auto& paths = static_cast<const arrow::StringArray&>(*files.column(internal::kPathCol));
  const auto& base =
      static_cast<const arrow::Int64Array&>(*files.column(internal::kBaseRowIdCol));
  const auto& drcv =
      static_cast<const arrow::Int64Array&>(*files.column(internal::kDefaultRowCommitVersionCol));
  std::map<std::string, std::pair<int64_t, int64_t>> live;
  for (int64_t i = 0; i < files.num_rows(); ++i) {
    ASSERT_TRUE(base.IsValid(i) && drcv.IsValid(i));
    live[std::string(paths.GetView(i))] = {base.Value(i), drcv.Value(i)};
  }
  EXPECT_EQ(live["a.parquet"], std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(live["e.parquet"], std::make_pair(int64_t{18}, int64_t{1}));
}

TEST(RowTracking, MetadataGetsMaterializedColumnNamesThatLaterCommitsKeep) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata()).ok());
  auto conf = MetadataConfiguration(t.CommitLines(0));
  const std::string row_id = conf["delta.rowTracking.materializedRowIdColumnName"];
  const std::string version = conf["delta.rowTracking.materializedRowCommitVersionColumnName"];
  EXPECT_EQ(row_id.rfind("_row-id-col-", 0), 0u) << row_id;
  EXPECT_EQ(version.rfind("_row-commit-version-col-", 0), 0u) << version;
  EXPECT_EQ(row_id.size(), std::string("_row-id-col-").size() + 36);
  EXPECT_NE(row_id.substr(12), version.substr(24));

  // A later metaData without the names keeps the table's.
  auto txn = t.Begin();
  ASSERT_TRUE(txn.ok());
  (*txn)->UpdateMetadata(RowTrackingMetadata({{"delta.appendOnly", "false"}}));
  ASSERT_TRUE((*txn)->Commit("SET TBLPROPERTIES").ok());
  auto later = MetadataConfiguration(t.CommitLines(1));
  EXPECT_EQ(later["delta.rowTracking.materializedRowIdColumnName"], row_id);
  EXPECT_EQ(later["delta.rowTracking.materializedRowCommitVersionColumnName"], version);
}

TEST(RowTracking, ConcurrentAppendsBothCommitWithDisjointRanges) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata(),
                       {AddWithRecords("base.parquet", 100)})
                  .ok());
  auto first = t.Begin();
  auto second = t.Begin();
  ASSERT_TRUE(first.ok() && second.ok());
  (*first)->AddFiles({AddWithRecords("x.parquet", 10), AddWithRecords("y.parquet", 20)});
  (*second)->AddFiles({AddWithRecords("z.parquet", 7)});
  auto r1 = (*first)->Commit("WRITE", {{"mode", "Append"}});
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  auto r2 = (*second)->Commit("WRITE", {{"mode", "Append"}});
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r1->version, 1);
  EXPECT_EQ(r2->version, 2);
  EXPECT_EQ(r2->attempts, 2);

  auto v1 = AddRowFields(t.CommitLines(1));
  auto v2 = AddRowFields(t.CommitLines(2));
  EXPECT_EQ(v1["x.parquet"].base_row_id, 100);
  EXPECT_EQ(v1["y.parquet"].base_row_id, 110);
  EXPECT_EQ(v1["x.parquet"].default_row_commit_version, 1);
  // Rebased above the winner's high-water mark, with the version it finally got.
  EXPECT_EQ(v2["z.parquet"].base_row_id, 130);
  EXPECT_EQ(v2["z.parquet"].default_row_commit_version, 2);
  EXPECT_EQ(DomainLines(t.CommitLines(1))["delta.rowTracking"], Hwm(129));
  EXPECT_EQ(DomainLines(t.CommitLines(2))["delta.rowTracking"], Hwm(136));

  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->domain_metadata().at("delta.rowTracking").configuration, Hwm(136));
}

TEST(RowTracking, RebasesAboveAHighWaterMarkSetByAnotherWriter) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata()).ok());
  auto loser = t.Begin();
  ASSERT_TRUE(loser.ok());
  (*loser)->AddFiles({AddWithRecords("mine.parquet", 5)});
  AddFile theirs = AddWithRecords("theirs.parquet", 1000);
  theirs.base_row_id = 0;
  theirs.default_row_commit_version = 1;
  DomainMetadata hwm{"delta.rowTracking", Hwm(999), false};
  ASSERT_TRUE(t.WriteRawCommit(1, {internal::DomainMetadataToJson(hwm).ValueOrDie(),
                                   internal::AddFileToJson(theirs).ValueOrDie()})
                  .ok());
  auto r = (*loser)->Commit("WRITE");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  auto rows = AddRowFields(t.CommitLines(2));
  EXPECT_EQ(rows["mine.parquet"].base_row_id, 1000);
  EXPECT_EQ(rows["mine.parquet"].default_row_commit_version, 2);
  EXPECT_EQ(DomainLines(t.CommitLines(2))["delta.rowTracking"], Hwm(1004));
}

TEST(RowTracking, CheckpointsKeepTheIdsAndTheHighWaterMark) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(),
                       RowTrackingMetadata({{"delta.checkpointInterval", "2"}}))
                  .ok());
  ASSERT_TRUE(t.Append({AddWithRecords("a.parquet", 4)}).ok());
  auto r = t.Append({AddWithRecords("b.parquet", 6)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->checkpointed);
  // Only the checkpoint and the commit after it are read from here on.
  std::filesystem::remove(fmt::format("{}/{:020d}.json", t.log_dir(), 0));
  std::filesystem::remove(fmt::format("{}/{:020d}.json", t.log_dir(), 1));
  ASSERT_TRUE(t.Append({AddWithRecords("c.parquet", 1)}).ok());
  auto rows = AddRowFields(t.CommitLines(3));
  EXPECT_EQ(rows["c.parquet"].base_row_id, 10);
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->state().checkpoint_version, 2);
  EXPECT_EQ((*snap)->domain_metadata().at("delta.rowTracking").configuration, Hwm(10));
  const auto& files = *(*snap)->files();
  const auto& base =
      static_cast<const arrow::Int64Array&>(*files.column(internal::kBaseRowIdCol));
  std::set<int64_t> bases;
  for (int64_t i = 0; i < files.num_rows(); ++i) bases.insert(base.Value(i));
  EXPECT_EQ(bases, (std::set<int64_t>{0, 4, 10}));
}

TEST(RowTracking, AnAddWithoutNumRecordsIsRefused) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata()).ok());
  auto listing = t.LogListing();
  AddFile no_stats = FakeAdd("a.parquet");
  no_stats.stats.reset();
  auto r = t.Append({no_stats});
  EXPECT_EQ(CodeName(r.status()), "InvalidArgument");
  EXPECT_NE(r.status().message().find("a.parquet"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("numRecords"), std::string::npos);
  AddFile other_stats = FakeAdd("b.parquet");
  other_stats.stats = R"({"minValues":{}})";
  EXPECT_EQ(CodeName(t.Append({other_stats}).status()), "InvalidArgument");
  EXPECT_EQ(t.LogListing(), listing);
}

TEST(RowTracking, KeepsIdsTheCallerCarriesOver) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata(),
                       {AddWithRecords("a.parquet", 10)})
                  .ok());
  // A recommit of an existing file (e.g. with new stats) keeps its ids; a new file gets fresh
  // ones whatever its dataChange.
  AddFile recommit = AddWithRecords("a.parquet", 10);
  recommit.data_change = false;
  recommit.base_row_id = 0;
  recommit.default_row_commit_version = 0;
  AddFile compacted = AddWithRecords("c.parquet", 4);
  compacted.data_change = false;
  ASSERT_TRUE(t.Append({recommit, compacted}).ok());
  auto rows = AddRowFields(t.CommitLines(1));
  EXPECT_EQ(rows["a.parquet"].base_row_id, 0);
  EXPECT_EQ(rows["a.parquet"].default_row_commit_version, 0);
  EXPECT_EQ(rows["c.parquet"].base_row_id, 10);
  EXPECT_EQ(rows["c.parquet"].default_row_commit_version, 1);
  EXPECT_EQ(DomainLines(t.CommitLines(1))["delta.rowTracking"], Hwm(13));
}

TEST(RowTracking, NothingIsAssignedWhenSuspendedOrUnsupported) {
  {
    TxnTestTable t;
    ASSERT_TRUE(t.Create(RowTrackingProtocol(),
                         MakeMetadata(TestSchema(), {}, {{"delta.rowTrackingSuspended", "true"}}),
                         {AddWithRecords("a.parquet", 10)})
                    .ok());
    auto v0 = t.CommitLines(0);
    EXPECT_FALSE(AddRowFields(v0)["a.parquet"].base_row_id.has_value());
    EXPECT_TRUE(DomainLines(v0).empty());
  }
  {
    TxnTestTable t;
    ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()),
                         {AddWithRecords("a.parquet", 10)})
                    .ok());
    auto v0 = t.CommitLines(0);
    EXPECT_FALSE(AddRowFields(v0)["a.parquet"].base_row_id.has_value());
    EXPECT_FALSE(AddRowFields(v0)["a.parquet"].default_row_commit_version.has_value());
    EXPECT_TRUE(MetadataConfiguration(v0).count("delta.rowTracking.materializedRowIdColumnName") ==
                0);
  }
}

TEST(RowTracking, InconsistentEnablementIsRefused) {
  {
    TxnTestTable t;
    auto r = t.Create(RowTrackingProtocol(),
                      RowTrackingMetadata({{"delta.rowTrackingSuspended", "true"}}));
    EXPECT_EQ(CodeName(r.status()), "InvalidArgument");
    EXPECT_TRUE(t.LogListing().empty());
  }
  {
    TxnTestTable t;
    auto r = t.Create(MakeProtocol(1, 2), RowTrackingMetadata());
    EXPECT_EQ(CodeName(r.status()), "InvalidArgument");
    EXPECT_NE(r.status().message().find("rowTracking"), std::string::npos);
  }
  {  // rowTracking without domainMetadata is not a protocol deltacpp writes.
    TxnTestTable t;
    auto r = t.Create(MakeProtocol(1, 7, {}, {"rowTracking"}), RowTrackingMetadata());
    EXPECT_EQ(CodeName(r.status()), "UnsupportedFeature");
  }
  {  // The system domain cannot be staged directly.
    TxnTestTable t;
    ASSERT_TRUE(t.Create(RowTrackingProtocol(), RowTrackingMetadata()).ok());
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->SetDomainMetadata(DomainMetadata{"delta.rowTracking", Hwm(5), false});
    EXPECT_EQ(CodeName((*txn)->Commit("WRITE").status()), "InvalidArgument");
  }
}

std::shared_ptr<arrow::RecordBatchReader> IdRows(std::vector<int64_t> ids) {
  arrow::Int64Builder b;
  for (auto id : ids) EXPECT_TRUE(b.Append(id).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()), {*b.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

TEST(RowTracking, TablesCreatedWithTheProperty) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = arrow::schema({arrow::field("id", arrow::int64())});
  create.properties = {{"delta.enableRowTracking", "true"}};
  auto created = CreateTable(dir.str(), create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto table = DeltaTable::Open(dir.str());
  ASSERT_TRUE(table.ok());
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok());
  auto features = (*snap)->table_features();
  EXPECT_NE(std::find(features.begin(), features.end(), "rowTracking"), features.end());
  EXPECT_NE(std::find(features.begin(), features.end(), "domainMetadata"), features.end());
  const auto& props = (*snap)->properties();
  ASSERT_TRUE(props.count("delta.rowTracking.materializedRowIdColumnName"));
  ASSERT_TRUE(props.count("delta.rowTracking.materializedRowCommitVersionColumnName"));
  EXPECT_EQ(props.at("delta.rowTracking.materializedRowIdColumnName").rfind("_row-id-col-", 0),
            0u);

  // Appends through WriteTable get ids from the files' real record counts.
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({1, 2, 3}), WriteOptions{}).ok());
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({4, 5}), WriteOptions{}).ok());
  snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->domain_metadata().at("delta.rowTracking").configuration, Hwm(4));
  const auto& files = *(*snap)->files();
  const auto& base =
      static_cast<const arrow::Int64Array&>(*files.column(internal::kBaseRowIdCol));
  const auto& drcv =
      static_cast<const arrow::Int64Array&>(*files.column(internal::kDefaultRowCommitVersionCol));
  std::set<std::pair<int64_t, int64_t>> got;
  for (int64_t i = 0; i < files.num_rows(); ++i) got.emplace(base.Value(i), drcv.Value(i));
  EXPECT_EQ(got, (std::set<std::pair<int64_t, int64_t>>{{0, 1}, {3, 2}}));

  // Tables created by a write get the same.
  TempDir dir2;
  WriteOptions write;
  write.properties = {{"delta.enableRowTracking", "true"}};
  ASSERT_TRUE(WriteTable(dir2.str(), IdRows({7, 8}), write).ok());
  auto snap2 = (*DeltaTable::Open(dir2.str()))->Latest();
  ASSERT_TRUE(snap2.ok());
  EXPECT_EQ((*snap2)->domain_metadata().at("delta.rowTracking").configuration, Hwm(1));
  EXPECT_TRUE((*snap2)->properties().count("delta.rowTracking.materializedRowIdColumnName"));

  // An overwrite removes files with their ids and adds new ones above the mark.
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  ASSERT_TRUE(WriteTable(dir2.str(), IdRows({9}), overwrite).ok());
  auto lines = [&] {
    std::ifstream in(dir2.str() + "/_delta_log/00000000000000000001.json");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
  }();
  bool saw_remove = false;
  for (const auto& line : lines) {
    if (ActionName(line) != "remove") continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    EXPECT_EQ(d["remove"]["baseRowId"].GetInt64(), 0);
    EXPECT_EQ(d["remove"]["defaultRowCommitVersion"].GetInt64(), 0);
    saw_remove = true;
  }
  EXPECT_TRUE(saw_remove);
  EXPECT_EQ(AddRowFields(lines).begin()->second.base_row_id, 2);
}

}  // namespace
}  // namespace deltacpp::testing

namespace deltacpp::testing {
namespace {

// The commitInfo line of commit `version` of the table at `root`.
std::string CommitInfoLine(const std::string& root, int64_t version) {
  std::ifstream in(root + "/_delta_log/" + fmt::format("{:020d}.json", version));
  std::string line;
  while (std::getline(in, line)) {
    if (ActionName(line) == "commitInfo") return line;
  }
  return "";
}

TEST(RowTracking, CopyingRowsWithoutTheirIdsIsTaggedNotPreserved) {
  TempDir dir;
  WriteOptions create;
  create.properties = {{"delta.enableRowTracking", "true"}};
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({1, 2, 3}), create).ok());
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({10}), WriteOptions{}).ok());
  const std::string tag = R"("delta.rowTracking.preserved":"false")";
  EXPECT_EQ(CommitInfoLine(dir.str(), 1).find(tag), std::string::npos);

  // Replacing id 10 removes its whole file: no row is copied, nothing to tag.
  WriteOptions whole;
  whole.mode = WriteMode::kOverwrite;
  whole.replace_where = "id = 10";
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({10}), whole).ok());
  EXPECT_EQ(CommitInfoLine(dir.str(), 2).find(tag), std::string::npos);

  // Replacing id 2 copies ids 1 and 3 into a new file with new row ids: tagged.
  WriteOptions partial;
  partial.mode = WriteMode::kOverwrite;
  partial.replace_where = "id = 2";
  ASSERT_TRUE(WriteTable(dir.str(), IdRows({2}), partial).ok());
  const std::string info = CommitInfoLine(dir.str(), 3);
  EXPECT_NE(info.find(tag), std::string::npos) << info;
}

}  // namespace
}  // namespace deltacpp::testing

