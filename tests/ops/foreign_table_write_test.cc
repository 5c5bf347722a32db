// Writing to tables other engines made (copies of the conformance corpus): appends of rows
// shaped by each table's own schema read back together with the old rows, keep the table's
// features working (column mapping, deletion vectors, V2 checkpoints, in-commit timestamps,
// CHECK constraints, partition values that need escaping), and tables deltacpp cannot write
// are refused without a trace.
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {
namespace {

std::string Corpus(const std::string& name) { return ConformanceDir() + "/tables/" + name; }

std::shared_ptr<Snapshot> LatestSnapshot(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto snapshot = (*table)->Latest();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  return snapshot.ok() ? *snapshot : nullptr;
}

// What an append of existing rows did.
struct Appended {
  int64_t before = -1;                  ///< latest version before the write
  int64_t version = -1;                 ///< version the write committed
  std::set<std::string> new_files;      ///< data files the write added (relative paths)
  std::multiset<std::string> old_rows;  ///< rows before the write
};

// Appends the first `rows` rows (or all, when fewer) of the latest version again (the input is built from what the
// table itself returns, so it has the table's schema) and checks the new version holds the old
// rows plus those, the old version is unchanged, the table's protocol and metadata are kept and
// the only new data files are the ones the commit adds.
Appended AppendExistingRows(const std::string& root, int64_t rows = 2) {
  Appended out;
  auto before = LatestSnapshot(root);
  if (!before) return out;
  out.before = before->version();
  auto scan = before->NewScan().Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  if (!scan.ok()) return out;
  auto old_table = (*scan)->ToTable();
  EXPECT_TRUE(old_table.ok()) << old_table.status().ToString();
  if (!old_table.ok()) return out;
  rows = std::min(rows, (*old_table)->num_rows());
  EXPECT_GT(rows, 0) << root;
  out.old_rows = RowStrings(**old_table);
  auto sample = (*old_table)->Slice(0, rows);
  const auto files_before = DataFiles(root);

  auto written = WriteTable(root, sample, {});
  EXPECT_TRUE(written.ok()) << root << ": " << written.status().ToString();
  if (!written.ok()) return out;
  out.version = written->version.value_or(-1);
  EXPECT_EQ(out.version, out.before + 1);
  EXPECT_EQ(written->num_rows, rows);

  EXPECT_EQ(ReadRows(root), Union(out.old_rows, RowStrings(*sample)));
  EXPECT_EQ(ReadRows(root, out.before), out.old_rows);
  auto after = LatestSnapshot(root);
  if (!after) return out;
  EXPECT_EQ(after->version(), out.version);
  EXPECT_EQ(after->protocol().min_reader_version, before->protocol().min_reader_version);
  EXPECT_EQ(after->protocol().min_writer_version, before->protocol().min_writer_version);
  EXPECT_EQ(after->table_features(), before->table_features());
  EXPECT_EQ(after->metadata().id, before->metadata().id);
  EXPECT_EQ(after->metadata().schema_string, before->metadata().schema_string);
  EXPECT_EQ(after->properties(), before->properties());
  EXPECT_EQ(after->partition_columns(), before->partition_columns());
  EXPECT_TRUE(after->commit_info().has_value());
  if (after->commit_info()) {
    EXPECT_EQ(after->commit_info()->operation, "WRITE");
  }

  out.new_files = Minus(DataFiles(root), files_before);
  EXPECT_EQ(out.new_files, Minus(LiveFiles(root, out.version), LiveFiles(root, out.before)));
  EXPECT_FALSE(out.new_files.empty());
  return out;
}

// Every field of a schema, nested ones included, as "path=field id" ("a.b", list elements as
// "[]", map keys and values as "{key}" / "{value}"; the id empty when there is none).
void CollectFields(const std::shared_ptr<arrow::Field>& field, const std::string& path,
                   std::vector<std::string>* out) {
  std::string id;
  if (field->metadata()) {
    auto found = field->metadata()->Get("PARQUET:field_id");
    if (found.ok()) id = *found;
  }
  out->push_back(path + "=" + id);
  const auto& type = field->type();
  if (type->id() == arrow::Type::STRUCT) {
    for (const auto& child : type->fields()) CollectFields(child, path + "." + child->name(), out);
  } else if (type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST) {
    CollectFields(type->field(0), path + ".[]", out);
  } else if (type->id() == arrow::Type::MAP) {
    const auto& map = static_cast<const arrow::MapType&>(*type);
    CollectFields(map.key_field(), path + ".{key}", out);
    CollectFields(map.item_field(), path + ".{value}", out);
  }
}

std::vector<std::string> AllFields(const arrow::Schema& schema) {
  std::vector<std::string> out;
  for (const auto& f : schema.fields()) CollectFields(f, f->name(), &out);
  return out;
}

// The Arrow schema of a Parquet file.
std::shared_ptr<arrow::Schema> ParquetSchema(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  std::shared_ptr<arrow::Schema> schema;
  EXPECT_TRUE((*reader)->GetSchema(&schema).ok());
  return schema;
}

// The snapshot's non-partition columns as "physical name=column mapping id", from the metadata.
std::vector<std::string> MappedColumns(const Snapshot& snapshot) {
  std::vector<std::string> out;
  const auto& parts = snapshot.partition_columns();
  for (const auto& f : snapshot.schema()->fields()) {
    if (std::find(parts.begin(), parts.end(), f->name()) != parts.end()) continue;
    auto id = FieldId(*f);
    out.push_back(PhysicalName(*f) + "=" + (id ? std::to_string(*id) : std::string()));
  }
  return out;
}

class ForeignTableWrite : public ::testing::Test {
 protected:
  std::string Copy(const std::string& name) { return CopyTable(Corpus(name), dir_, name); }
  TempDir dir_;
};

// Plain appends to each corpus table keep old and new rows readable.
class AppendToCorpusTable : public ::testing::TestWithParam<const char*> {};

TEST_P(AppendToCorpusTable, OldAndNewRowsReadBack) {
  TempDir dir;
  const std::string root = CopyTable(Corpus(GetParam()), dir, GetParam());
  auto appended = AppendExistingRows(root);
  ASSERT_GE(appended.version, 0);
  // A second append on top of the first.
  AppendExistingRows(root, 1);
}

INSTANTIATE_TEST_SUITE_P(ForeignTables, AppendToCorpusTable,
                         ::testing::Values("dat-basic_append", "dat-deletion_vectors",
                                           "dat-column_mapping",
                                           "delta-golden-table-with-columnmapping-mode-id",
                                           "delta-golden-table-with-columnmapping-mode-name",
                                           "dat-timestamp_ntz", "delta-golden-v2-checkpoint-parquet",
                                           "delta-rs-cdc_ict_table", "dat-check_constraints",
                                           "dat-multi_partitioned", "dat-partitioned_with_null",
                                           "dat-nested_types", "delta-golden-dv-with-columnmapping",
                                           "dat-cdf", "kernel-rs-cdf-table-with-dv",
                                           "delta-golden-basic-with-vacuum-protocol-check-feature",
                                           "kernel-rs-type-widening",
                                           "delta-golden-type-widening-nested"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (auto& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST_F(ForeignTableWrite, ColumnMappingFilesUsePhysicalNamesAndIds) {
  for (const char* name : {"dat-column_mapping", "delta-golden-table-with-columnmapping-mode-id",
                           "delta-kernel-data-reader-partition-values-column-mapping-name"}) {
    SCOPED_TRACE(name);
    const std::string root = Copy(name);
    auto appended = AppendExistingRows(root);
    auto snapshot = LatestSnapshot(root);
    ASSERT_TRUE(snapshot);
    const auto mode = snapshot->column_mapping_mode();
    ASSERT_NE(mode, ColumnMappingMode::kNone);
    // Top-level columns: physical names (and, in id mode, the ids) the metadata gives. Name mode
    // does not need field ids (writing them anyway is allowed).
    auto names_only = [&](std::vector<std::string> fields) {
      if (mode == ColumnMappingMode::kName) {
        for (auto& c : fields) c = c.substr(0, c.find('=') + 1);
      }
      return fields;
    };
    auto expected_top = names_only(MappedColumns(*snapshot));
    // Nested fields as the physical schema has them.
    arrow::FieldVector data_fields;
    for (const auto& f : snapshot->schema()->fields()) {
      const auto& parts = snapshot->partition_columns();
      if (std::find(parts.begin(), parts.end(), f->name()) == parts.end()) data_fields.push_back(f);
    }
    auto expected_all = names_only(AllFields(*PhysicalSchema(arrow::Schema(data_fields), mode)));
    ASSERT_FALSE(appended.new_files.empty());
    for (const auto& file : appended.new_files) {
      auto schema = ParquetSchema(root + "/" + file);
      ASSERT_TRUE(schema);
      std::vector<std::string> top;
      for (const auto& f : schema->fields()) {
        std::string id;
        if (f->metadata() && f->metadata()->Get("PARQUET:field_id").ok()) {
          id = *f->metadata()->Get("PARQUET:field_id");
        }
        top.push_back(f->name() + "=" + id);
      }
      EXPECT_EQ(names_only(top), expected_top) << file;
      EXPECT_EQ(names_only(AllFields(*schema)), expected_all) << file;
    }
    // Statistics and partition values are keyed by physical names too.
    const auto& files = *snapshot->files();
    const auto& paths = static_cast<const arrow::StringArray&>(*files.GetColumnByName("path"));
    const auto& stats = static_cast<const arrow::StringArray&>(*files.GetColumnByName("stats"));
    int checked = 0;
    for (int64_t i = 0; i < files.num_rows(); ++i) {
      const std::string path(paths.GetView(i));
      if (!appended.new_files.count(path)) continue;
      ASSERT_TRUE(stats.IsValid(i)) << path;
      const std::string text(stats.GetView(i));
      for (const auto& f : snapshot->schema()->fields()) {
        if (PhysicalName(*f) == f->name()) continue;
        EXPECT_EQ(text.find("\"" + f->name() + "\":"), std::string::npos)
            << "stats keyed by logical name " << f->name() << ": " << text;
      }
      EXPECT_NE(text.find("\"minValues\""), std::string::npos) << text;
      ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(appended.new_files.size()));
    for (const auto& part : snapshot->partition_columns()) {
      auto f = snapshot->schema()->GetFieldByName(part);
      ASSERT_TRUE(f);
      auto pv = files.GetColumnByName("partitionValues");
      ASSERT_TRUE(pv);
      const auto& map = static_cast<const arrow::MapArray&>(*pv);
      const auto& keys = static_cast<const arrow::StringArray&>(*map.keys());
      for (int64_t i = 0; i < files.num_rows(); ++i) {
        if (!appended.new_files.count(std::string(paths.GetView(i)))) continue;
        bool found = false;
        for (int64_t j = map.value_offset(i); j < map.value_offset(i + 1); ++j) {
          found = found || keys.GetView(j) == PhysicalName(*f);
        }
        EXPECT_TRUE(found) << "partition value of " << part << " not keyed by "
                           << PhysicalName(*f);
      }
    }
  }
}

TEST_F(ForeignTableWrite, DeletionVectorsStayAppliedToOldFiles) {
  const std::string root = Copy("dat-deletion_vectors");
  auto before = LatestSnapshot(root);
  ASSERT_TRUE(before);
  auto scan = before->NewScan().Build();
  ASSERT_TRUE(scan.ok());
  int64_t deleted = 0;
  for (const auto& f : (*scan)->files()) deleted += f.deleted_rows;
  ASSERT_GT(deleted, 0) << "the corpus table should have a deletion vector";
  auto appended = AppendExistingRows(root, 1);
  auto after_scan = LatestSnapshot(root)->NewScan().Build();
  ASSERT_TRUE(after_scan.ok());
  int64_t still_deleted = 0;
  for (const auto& f : (*after_scan)->files()) still_deleted += f.deleted_rows;
  EXPECT_EQ(still_deleted, deleted);
}

TEST_F(ForeignTableWrite, V2CheckpointTableGetsAV2Checkpoint) {
  const std::string root = Copy("delta-golden-v2-checkpoint-parquet");
  ASSERT_EQ(LatestVersion(root), 2);
  AppendExistingRows(root);     // version 3
  AppendExistingRows(root, 1);  // version 4: delta.checkpointInterval=2 checkpoints it
  std::vector<std::string> checkpoints;
  for (const auto& name : LogListing(root)) {
    if (name.starts_with(CommitName(4).substr(0, 20) + ".checkpoint.")) checkpoints.push_back(name);
  }
  ASSERT_EQ(checkpoints.size(), 1u);
  // UUID-named (V2), not a classic checkpoint: the table asks for delta.checkpointPolicy=v2.
  EXPECT_NE(checkpoints[0], CommitName(4).substr(0, 20) + ".checkpoint.parquet");
  std::ifstream hint(root + "/_delta_log/_last_checkpoint");
  std::stringstream ss;
  ss << hint.rdbuf();
  EXPECT_NE(ss.str().find("\"version\":4"), std::string::npos) << ss.str();
  auto latest = LatestSnapshot(root);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->state().checkpoint_version, 4);
  auto rows = ReadRows(root);
  EXPECT_EQ(rows.size(), ReadRows(root, 2).size() + 3);
}

TEST_F(ForeignTableWrite, InCommitTimestampsContinue) {
  const std::string root = Copy("delta-rs-cdc_ict_table");
  auto before = LatestSnapshot(root);
  ASSERT_TRUE(before);
  ASSERT_TRUE(before->commit_info() && before->commit_info()->in_commit_timestamp);
  auto appended = AppendExistingRows(root);
  auto after = LatestSnapshot(root);
  ASSERT_TRUE(after && after->commit_info());
  ASSERT_TRUE(after->commit_info()->in_commit_timestamp.has_value())
      << after->commit_info()->raw_json;
  EXPECT_GT(*after->commit_info()->in_commit_timestamp, before->timestamp_ms());
  EXPECT_EQ(after->timestamp_ms(), *after->commit_info()->in_commit_timestamp);
  // Time travel by timestamp resolves through the in-commit timestamps.
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->VersionAtTimestamp(after->timestamp_ms()).ValueOr(-1), appended.version);
  EXPECT_EQ((*table)->VersionAtTimestamp(after->timestamp_ms() - 1).ValueOr(-1), appended.before);
}

TEST_F(ForeignTableWrite, CheckConstraintsOfAnotherEngineAreEnforced) {
  const std::string root = Copy("dat-check_constraints");
  ASSERT_EQ(LatestSnapshot(root)->properties().at("delta.constraints.const1"), "int > 0");
  AppendExistingRows(root);
  const auto log_before = LogListing(root);
  const auto files_before = DataFiles(root);
  const auto rows_before = ReadRows(root);
  // The same rows with `int` negated break `int > 0`.
  auto table = ReadTable(root);
  ASSERT_TRUE(table.ok());
  auto sample = (*table)->Slice(0, 2);
  auto ints = *sample->GetColumnByName("int")->chunk(0)->View(arrow::int64());
  arrow::Int64Builder negated;
  const auto& values = static_cast<const arrow::Int64Array&>(*ints);
  for (int64_t i = 0; i < values.length(); ++i) ASSERT_TRUE(negated.Append(-values.Value(i)).ok());
  const int col = sample->schema()->GetFieldIndex("int");
  auto bad = *sample->SetColumn(col, sample->schema()->field(col),
                                std::make_shared<arrow::ChunkedArray>(*negated.Finish()));
  auto r = WriteTable(root, bad, {});
  EXPECT_EQ(Code(r.status()), "ConstraintViolation") << r.status().ToString();
  EXPECT_NE(r.status().message().find("const1"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), files_before);
  EXPECT_EQ(ReadRows(root), rows_before);
}

TEST_F(ForeignTableWrite, PartitionValuesNeedingEscapesRoundTrip) {
  // Partition values such as "/%20%f", an emoji in a binary column and NULLs.
  const std::string root = Copy("dat-multi_partitioned");
  auto table = ReadTable(root);
  ASSERT_TRUE(table.ok());
  const auto all = (*table)->num_rows();
  auto r = WriteTable(root, *table, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto twice = RowStrings(**table);
  auto once = twice;
  twice.insert(once.begin(), once.end());
  EXPECT_EQ(ReadRows(root), twice);
  EXPECT_EQ(r->num_rows, all);
  // Partition pruning finds the new files by value too.
  auto snapshot = LatestSnapshot(root);
  auto pruned = snapshot->NewScan().Filter("letter = '/%20%f'").Build();
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  auto rows = (*pruned)->ToTable();
  ASSERT_TRUE(rows.ok());
  int64_t expected = 0;
  for (const auto& row : once) expected += row.starts_with("/%20%f|") ? 2 : 0;
  EXPECT_GT(expected, 0);
  EXPECT_EQ((*rows)->num_rows(), expected);
}

// --- Tables deltacpp must not write --------------------------------------------------------

// Writing fails with UnsupportedFeature naming one of `features` (what deltacpp cannot write there),
// and nothing changes.
void ExpectRefused(const std::string& root, const std::vector<std::string>& features) {
  const auto log_before = LogListing(root);
  const auto files_before = DataFiles(root);
  auto table = ReadTable(root);
  ASSERT_TRUE(table.ok()) << "the table should stay readable: " << table.status().ToString();
  const auto rows_before = RowStrings(**table);
  ASSERT_GT((*table)->num_rows(), 0);
  auto r = WriteTable(root, (*table)->Slice(0, 1), {});
  EXPECT_EQ(Code(r.status()), "UnsupportedFeature") << r.status().ToString();
  bool named = false;
  for (const auto& f : features) named = named || r.status().message().find(f) != std::string::npos;
  EXPECT_TRUE(named) << r.status().ToString();
  EXPECT_EQ(LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), files_before);
  EXPECT_EQ(ReadRows(root), rows_before);
}

TEST_F(ForeignTableWrite, UnknownWriterFeatureAddedByALaterCommitIsRefused) {
  const std::string root = Copy("dat-basic_append");
  const int64_t latest = *LatestVersion(root);
  std::ofstream(root + "/_delta_log/" + CommitName(latest + 1))
      << R"({"commitInfo":{"timestamp":1712091400000,"operation":"SET TBLPROPERTIES"}})" << "\n"
      << R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,)"
      << R"("writerFeatures":["appendOnly","invariants","someFutureFeature"]}})" << "\n";
  ASSERT_EQ(LatestVersion(root), latest + 1);
  ExpectRefused(root, {"'someFutureFeature'"});

  // The CLI reports it the same way.
  const std::string csv = (std::filesystem::path(root).parent_path() / "row.csv").string();
  std::ofstream(csv) << "letter,number,a_float\nz,9,9.5\n";
  const auto log_before = LogListing(root);
  const std::string cmd =
      std::string(DELTACPP_CLI_PATH) + " write " + root + " " + csv + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  EXPECT_EQ(LogListing(root), log_before);
}

TEST_F(ForeignTableWrite, CorpusTablesWithUnsupportedWriterFeaturesAreRefused) {
  // Liquid clustering (with row tracking), Iceberg compatibility, and a generated column whose
  // expression (CAST(now() AS DATE)) cannot be computed.
  ExpectRefused(Copy("delta-rs-table_with_liquid_clustering"), {"'liquid'", "'rowTracking'"});
  ExpectRefused(Copy("dat-iceberg_compat_v1"), {"'icebergCompatV1'"});
  ExpectRefused(Copy("dat-generated_columns"), {"generatedColumns", "generated column"});
}

}  // namespace
}  // namespace deltacpp::testing
