#include "support/hostile_tables.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "deltacpp/api.h"
#include "support/fixture_writer.h"

namespace deltacpp::testing {

namespace {

namespace fs = std::filesystem;

std::string LogFile(const std::string& root, const std::string& name) {
  return root + "/_delta_log/" + name;
}

std::string CommitName(int64_t version) { return fmt::format("{:020d}.json", version); }

arrow::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return arrow::Status::IOError("cannot write ", path);
  return arrow::Status::OK();
}

arrow::Status MakeFifo(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (::mkfifo(path.c_str(), 0644) != 0) return arrow::Status::IOError("mkfifo ", path);
  return arrow::Status::OK();
}

arrow::Status MakeDirectory(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  fs::create_directories(path, ec);
  if (ec) return arrow::Status::IOError("mkdir ", path, ": ", ec.message());
  return arrow::Status::OK();
}

// A symbolic link to itself: open(2) fails with ELOOP whatever the user, root included, so it
// stands for a file that cannot be read (chmod 000 does not stop root).
arrow::Status MakeUnreadable(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (::symlink(path.c_str(), path.c_str()) != 0) return arrow::Status::IOError("symlink ", path);
  return arrow::Status::OK();
}

arrow::Status Truncate(const std::string& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return arrow::Status::IOError("size of ", path, ": ", ec.message());
  fs::resize_file(path, size / 2, ec);
  if (ec) return arrow::Status::IOError("truncate ", path, ": ", ec.message());
  return arrow::Status::OK();
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string AddLine(const std::string& path, const std::string& extra = "",
                    const std::string& partition_values = R"({"p":"a"})",
                    const std::string& size = "100") {
  return fmt::format(
      R"({{"add":{{"path":"{}","partitionValues":{},"size":{},"modificationTime":1,)"
      R"("dataChange":true{}}}}})",
      path, partition_values, size, extra);
}

std::string RemoveLine(const std::string& path, const std::string& extra = "") {
  return fmt::format(
      R"({{"remove":{{"path":"{}","deletionTimestamp":1,"dataChange":true{}}}}})", path, extra);
}

std::string DvJson(const std::string& storage, const std::string& path_or_inline,
                   const std::string& offset = "1", const std::string& size = "10",
                   const std::string& cardinality = "1") {
  return fmt::format(
      R"(,"deletionVector":{{"storageType":"{}","pathOrInlineDv":"{}","offset":{},)"
      R"("sizeInBytes":{},"cardinality":{}}})",
      storage, path_or_inline, offset, size, cardinality);
}

const char kProtocolLine[] =
    R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,)"
    R"("readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}})";

std::string MetadataLine(const std::string& schema_string) {
  return fmt::format(
      R"({{"metaData":{{"id":"hostile","format":{{"provider":"parquet","options":{{}}}},)"
      R"("schemaString":"{}","partitionColumns":["p"],)"
      R"("configuration":{{"delta.enableDeletionVectors":"true"}},"createdTime":1}}}})",
      JsonEscape(schema_string));
}

// Version 2 written verbatim (the base ends at version 1).
arrow::Status WriteCommit2(const std::string& root, const std::vector<std::string>& lines) {
  std::string body;
  for (const auto& l : lines) body += l + "\n";
  return WriteText(LogFile(root, CommitName(2)), body);
}

// The base table plus `lines` as version 2.
std::function<arrow::Status(const std::string&)> WithCommit2(std::vector<std::string> lines) {
  return [lines](const std::string& root) -> arrow::Status {
    ARROW_RETURN_NOT_OK(BuildHostileBase(root));
    return WriteCommit2(root, lines);
  };
}

// Version 2 as a remove of the base file plus its add with the DV `dv_json`.
std::function<arrow::Status(const std::string&)> WithDvUpdate(
    std::function<std::string(const std::string&)> dv_json) {
  return [dv_json](const std::string& root) -> arrow::Status {
    ARROW_RETURN_NOT_OK(BuildHostileBase(root));
    const std::string file = HostileDataFile(root);
    std::string body = RemoveLine(file) + "\n" + AddLine(file, dv_json(root)) + "\n";
    return WriteText(LogFile(root, CommitName(2)), body);
  };
}

arrow::Status BuildWithCheckpoint(const std::string& root) {
  return BuildHostileBaseWithCheckpoint(root);
}

std::string CheckpointPath(const std::string& root) {
  return LogFile(root, fmt::format("{:020d}.checkpoint.parquet", 1));
}

// Rewrites the checkpoint of version 1 with the child `child` of struct column `column`
// replaced by what `replace` makes of it.
arrow::Status RewriteCheckpointChild(
    const std::string& root, const std::string& column, const std::string& child,
    std::function<arrow::Result<std::shared_ptr<arrow::Array>>(const arrow::Array&)> replace) {
  const std::string path = CheckpointPath(root);
  std::shared_ptr<arrow::Table> table;
  {
    ARROW_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
    ARROW_RETURN_NOT_OK(reader->ReadTable(&table));
  }
  const int index = table->schema()->GetFieldIndex(column);
  if (index < 0) return arrow::Status::Invalid("no column ", column);
  arrow::ArrayVector chunks;
  std::shared_ptr<arrow::DataType> type;
  for (const auto& chunk : table->column(index)->chunks()) {
    const auto& s = static_cast<const arrow::StructArray&>(*chunk);
    if (s.offset() != 0) return arrow::Status::Invalid("sliced struct");
    arrow::ArrayVector children;
    std::vector<std::string> names;
    for (int i = 0; i < s.num_fields(); ++i) {
      names.push_back(s.struct_type()->field(i)->name());
      if (names.back() == child) {
        ARROW_ASSIGN_OR_RAISE(auto replaced, replace(*s.field(i)));
        children.push_back(replaced);
      } else {
        children.push_back(s.field(i));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto rebuilt, arrow::StructArray::Make(children, names, s.null_bitmap(),
                                                                 s.null_count()));
    type = rebuilt->type();
    chunks.push_back(rebuilt);
  }
  ARROW_ASSIGN_OR_RAISE(
      table, table->SetColumn(index, arrow::field(column, type),
                              std::make_shared<arrow::ChunkedArray>(chunks, type)));
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::io::FileOutputStream::Open(path));
  ARROW_RETURN_NOT_OK(
      parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1024));
  return out->Close();
}

// The same values in a float64 column.
arrow::Result<std::shared_ptr<arrow::Array>> AsDouble(const arrow::Array& a) {
  ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(a, arrow::float64()));
  return cast;
}

// An int64 column whose non-null values are all `value`.
std::function<arrow::Result<std::shared_ptr<arrow::Array>>(const arrow::Array&)> Int64Of(
    int64_t value) {
  return [value](const arrow::Array& a) -> arrow::Result<std::shared_ptr<arrow::Array>> {
    arrow::Int64Builder b;
    for (int64_t i = 0; i < a.length(); ++i) {
      ARROW_RETURN_NOT_OK(a.IsNull(i) ? b.AppendNull() : b.Append(value));
    }
    return b.Finish();
  };
}

std::vector<HostileCase> MakeCases() {
  const std::string v2 = "version 2";
  const std::string commit2 = CommitName(2);
  std::vector<HostileCase> cases;
  auto add = [&](HostileCase c) { cases.push_back(std::move(c)); };

  // --- Paths leading out of the table.
  for (const auto& [name, path] : std::vector<std::pair<std::string, std::string>>{
           {"add_path_dotdot", "../x.parquet"},
           {"add_path_dotdot_inside", "a/../../x.parquet"},
           {"add_path_encoded_dots", "%2E%2E/x.parquet"},
           {"add_path_encoded_slash", "..%2Fx.parquet"},
           {"add_path_absolute_outside", "/etc/passwd"},
           {"add_path_file_uri_outside", "file:///tmp/x.parquet"},
           {"add_path_other_scheme", "s3://bucket/x.parquet"}}) {
    add({name, "version 2 adds a file at '" + path + "'",
         WithCommit2({AddLine(path)}), DeltaErrorCode::kCorruptLog,
         {"{root}", v2, "'" + path + "'", "outside the table root"}});
  }
  add({"dv_absolute_path_outside",
       "version 2 gives the data file a `p` deletion vector at file:///etc/passwd",
       WithDvUpdate([](const std::string&) { return DvJson("p", "file:///etc/passwd"); }),
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, "file:///etc/passwd", "outside the table root"}});
  add({"dv_other_scheme", "version 2 gives the data file a `p` deletion vector at s3://b/dv.bin",
       WithDvUpdate([](const std::string&) { return DvJson("p", "s3://b/dv.bin"); }),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, "s3://b/dv.bin"}});
  add({"dv_relative_prefix_outside",
       "version 2 gives the data file a `u` deletion vector whose prefix is ../../../x",
       WithDvUpdate([](const std::string&) {
         return DvJson("u", "../../../xITfmIXOK!>U^L:if1E+a");
       }),
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, "../../../xITfmIXOK!>U^L:if1E+a", "outside the table root"}});
  add({"sidecar_path_outside",
       "a V2 checkpoint of version 1 names the sidecar ../../../../x.parquet; commit 0 is gone",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         const std::string schema =
             R"({"type":"struct","fields":[)"
             R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
             R"({"name":"p","type":"string","nullable":true,"metadata":{}}]})";
         std::string body = std::string(R"({"checkpointMetadata":{"version":1}})") + "\n" +
                            kProtocolLine + "\n" + MetadataLine(schema) + "\n" +
                            R"({"sidecar":{"path":"../../../../x.parquet","sizeInBytes":10,)"
                            R"("modificationTime":1}})" + "\n";
         ARROW_RETURN_NOT_OK(WriteText(
             LogFile(root, "00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-"
                           "64bd76c43a11.json"),
             body));
         fs::remove(LogFile(root, CommitName(0)));
         return arrow::Status::OK();
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "sidecar", "'../../../../x.parquet'", "outside the table root"}});

  // --- Numbers beyond their declared width or range.
  add({"add_size_beyond_long", "version 2 adds a file of size 9223372036854775808",
       WithCommit2({AddLine("x.parquet", "", R"({"p":"a"})", "9223372036854775808")}),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "add.size", "9223372036854775808"}});
  add({"add_size_negative", "version 2 adds a file of size -1",
       WithCommit2({AddLine("x.parquet", "", R"({"p":"a"})", "-1")}), DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "add.size is -1"}});
  add({"add_size_float", "version 2 adds a file of size 100.0",
       WithCommit2({AddLine("x.parquet", "", R"({"p":"a"})", "100.0")}),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "add.size is 100"}});
  add({"add_modification_time_string", "version 2 adds a file with modificationTime \"1\"",
       WithCommit2({R"({"add":{"path":"x.parquet","partitionValues":{"p":"a"},"size":1,)"
                    R"("modificationTime":"1","dataChange":true}})"}),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "add.modificationTime"}});
  add({"dv_offset_beyond_int", "version 2 gives a deletion vector the offset 2147483648",
       WithDvUpdate([](const std::string&) {
         return DvJson("u", "ITfmIXOK!>U^L:if1E+a", "2147483648");
       }),
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "add.deletionVector.offset is 2147483648"}});
  add({"dv_size_float", "version 2 gives a deletion vector the sizeInBytes 1.5",
       WithDvUpdate([](const std::string&) {
         return DvJson("u", "ITfmIXOK!>U^L:if1E+a", "1", "1.5");
       }),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "add.deletionVector.sizeInBytes"}});
  add({"dv_cardinality_negative", "version 2 gives a deletion vector the cardinality -3",
       WithDvUpdate([](const std::string&) {
         return DvJson("u", "ITfmIXOK!>U^L:if1E+a", "1", "10", "-3");
       }),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "add.deletionVector.cardinality"}});
  add({"protocol_version_beyond_int",
       "version 2 sets minReaderVersion 4294967299 (which wraps to 3 as a 32-bit int)",
       WithCommit2({R"({"protocol":{"minReaderVersion":4294967299,"minWriterVersion":7,)"
                    R"("readerFeatures":["deletionVectors"],)"
                    R"("writerFeatures":["deletionVectors"]}})"}),
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "protocol.minReaderVersion is 4294967299"}});
  add({"txn_version_float", "version 2 records a txn of version 1e3",
       WithCommit2({R"({"txn":{"appId":"app","version":1e3}})"}), DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "txn.version"}});
  add({"in_commit_timestamp_string", "version 2 has commitInfo.inCommitTimestamp \"5\"",
       WithCommit2({R"({"commitInfo":{"inCommitTimestamp":"5"}})"}), DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "commitInfo.inCommitTimestamp"}});
  add({"checkpointed_commit_malformed",
       "the commit of version 1, which a checkpoint covers, has inCommitTimestamp 1.5",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         return WriteText(LogFile(root, CommitName(1)),
                          R"({"commitInfo":{"inCommitTimestamp":1.5}})" "\n");
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", CommitName(1), "commitInfo.inCommitTimestamp is 1.5"}});
  add({"checkpoint_add_size_double",
       "the checkpoint of version 1 holds add.size as a float64 column; commit 0 is gone",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         ARROW_RETURN_NOT_OK(RewriteCheckpointChild(root, "add", "size", AsDouble));
         fs::remove(LogFile(root, CommitName(0)));
         return arrow::Status::OK();
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "checkpoint.parquet", "add.size", "double"}});
  add({"checkpoint_reader_version_beyond_int",
       "the checkpoint of version 1 holds protocol.minReaderVersion 4294967299 in an int64 "
       "column; commit 0 is gone",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         ARROW_RETURN_NOT_OK(
             RewriteCheckpointChild(root, "protocol", "minReaderVersion", Int64Of(4294967299)));
         fs::remove(LogFile(root, CommitName(0)));
         return arrow::Status::OK();
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "checkpoint.parquet", "protocol.minReaderVersion is 4294967299"}});

  // --- Files that are not regular files, or cannot be read.
  add({"commit_is_fifo", "version 2's commit is a FIFO",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeFifo(LogFile(root, CommitName(2)));
       },
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "not a regular file"}});
  add({"commit_is_directory", "version 1's commit is a directory",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeDirectory(LogFile(root, CommitName(1)));
       },
       DeltaErrorCode::kCorruptLog, {"{root}", "version 1", CommitName(1), "not a regular file"}});
  add({"commit_unreadable", "version 2's commit cannot be opened (a symbolic link to itself)",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeUnreadable(LogFile(root, CommitName(2)));
       },
       std::nullopt, {"{root}", commit2, "failed to stat"}});
  add({"checkpoint_is_directory", "the checkpoint of version 1 is a directory",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         return MakeDirectory(CheckpointPath(root));
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "checkpoint.parquet", "not a regular file"}});
  add({"last_checkpoint_is_fifo", "_last_checkpoint is a FIFO",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         return MakeFifo(LogFile(root, "_last_checkpoint"));
       },
       DeltaErrorCode::kCorruptLog, {"{root}", "_last_checkpoint", "FIFO"}});
  add({"last_checkpoint_is_directory", "_last_checkpoint is a directory",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         return MakeDirectory(LogFile(root, "_last_checkpoint"));
       },
       DeltaErrorCode::kCorruptLog, {"{root}", "_last_checkpoint", "directory"}});
  add({"data_file_is_fifo", "the data file of version 1 is a FIFO",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeFifo(root + "/" + HostileDataFile(root));
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "part-", "not a regular file (a FIFO)"}});
  add({"data_file_is_directory", "the data file of version 1 is a directory",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeDirectory(root + "/" + HostileDataFile(root));
       },
       DeltaErrorCode::kCorruptLog, {"{root}", "version 1", "part-", "a directory"}});
  add({"data_file_unreadable",
       "the data file of version 1 cannot be opened (a symbolic link to itself)",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         return MakeUnreadable(root + "/" + HostileDataFile(root));
       },
       std::nullopt, {"{root}", "version 1", "part-", "cannot open"}});
  add({"dv_file_is_fifo", "version 2 gives the data file a `p` deletion vector that is a FIFO",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(WithDvUpdate([](const std::string& r) {
           return DvJson("p", "file://" + r + "/dv.bin");
         })(root));
         return MakeFifo(root + "/dv.bin");
       },
       DeltaErrorCode::kCorruptLog, {"{root}", v2, "dv.bin", "not a regular file (a FIFO)"}});

  // --- Checkpoints that cannot be read and cannot be replayed around.
  add({"checkpoint_truncated_without_commit_0",
       "the checkpoint of version 1 is cut to half its size and commit 0 is gone",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildWithCheckpoint(root));
         ARROW_RETURN_NOT_OK(Truncate(CheckpointPath(root)));
         fs::remove(LogFile(root, CommitName(0)));
         return arrow::Status::OK();
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", "version 1", "00000000000000000001.checkpoint.parquet", "cannot be read"}});

  // --- Log content the protocol does not allow.
  const std::string id_p =
      R"({"name":"p","type":"string","nullable":true,"metadata":{}})";
  add({"schema_duplicate_column", "version 2's schema has columns id and ID",
       WithCommit2({MetadataLine(
           R"({"type":"struct","fields":[)"
           R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
           R"({"name":"ID","type":"long","nullable":true,"metadata":{}},)" + id_p + "]}")}),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "duplicate column name 'ID'"}});
  add({"schema_duplicate_nested_field", "version 2's schema has a struct s with fields a and A",
       WithCommit2({MetadataLine(
           R"({"type":"struct","fields":[)"
           R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
           R"({"name":"s","type":{"type":"struct","fields":[)"
           R"({"name":"a","type":"long","nullable":true,"metadata":{}},)"
           R"({"name":"A","type":"long","nullable":true,"metadata":{}}]},"nullable":true,)"
           R"("metadata":{}},)" + id_p + "]}")}),
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "field 's'", "duplicate column name 'A'"}});
  add({"add_without_partition_value", "version 2 adds a file whose partitionValues lack p",
       WithCommit2({AddLine("x.parquet", "", "{}")}), DeltaErrorCode::kCorruptLog,
       {"{root}", v2, "x.parquet", "no entry for partition column 'p'"}});
  add({"add_twice_in_one_commit", "version 2 adds x.parquet twice",
       WithCommit2({AddLine("x.parquet"), AddLine("x.parquet")}), DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "x.parquet is added twice"}});
  add({"add_twice_with_other_dv_in_one_commit",
       "version 2 adds x.parquet twice, once with a deletion vector",
       WithCommit2({AddLine("x.parquet"),
                    AddLine("x.parquet", DvJson("u", "ITfmIXOK!>U^L:if1E+a"))}),
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "x.parquet is added twice"}});
  add({"remove_twice_in_one_commit", "version 2 removes the data file twice",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         const std::string file = HostileDataFile(root);
         return WriteCommit2(root, {RemoveLine(file), RemoveLine(file)});
       },
       DeltaErrorCode::kCorruptLog, {"{root}", v2, commit2, "is removed twice"}});
  add({"add_and_remove_same_file_in_one_commit",
       "version 2 removes and re-adds the data file, both without a deletion vector",
       [](const std::string& root) -> arrow::Status {
         ARROW_RETURN_NOT_OK(BuildHostileBase(root));
         const std::string file = HostileDataFile(root);
         return WriteCommit2(root, {RemoveLine(file), AddLine(file)});
       },
       DeltaErrorCode::kCorruptLog,
       {"{root}", v2, commit2, "both added and removed with the same deletion vector"}});
  return cases;
}

}  // namespace

arrow::Status BuildHostileBase(const std::string& root) {
  FixtureTableWriter w(root);
  return WriteHostileBase(w);
}

arrow::Status BuildHostileBaseWithCheckpoint(const std::string& root) {
  FixtureTableWriter w(root);
  ARROW_RETURN_NOT_OK(WriteHostileBase(w));
  return w.WriteCheckpoint();
}

arrow::Status WriteHostileBase(FixtureTableWriter& w) {
  ARROW_RETURN_NOT_OK(w.Create(arrow::schema({arrow::field("id", arrow::int64()),
                                              arrow::field("p", arrow::utf8())}),
                               {"p"}, {{"delta.enableDeletionVectors", "true"}}, 3, 7,
                               {"deletionVectors"}, {"deletionVectors"}));
  arrow::Int64Builder ids;
  ARROW_RETURN_NOT_OK(ids.AppendValues({1, 2, 3}));
  ARROW_ASSIGN_OR_RAISE(auto id_array, ids.Finish());
  auto data = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}), {id_array});
  ARROW_RETURN_NOT_OK(w.Append({FixtureFile(data, {{"p", "a"}})}).status());
  return arrow::Status::OK();
}

std::string HostileDataFile(const std::string& root) {
  for (const auto& e : fs::recursive_directory_iterator(root + "/p=a")) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("part-") && name.ends_with(".parquet")) return "p=a/" + name;
  }
  return "p=a/missing.parquet";
}

const std::vector<HostileCase>& HostileCases() {
  static const std::vector<HostileCase> cases = MakeCases();
  return cases;
}

const HostileCase& HostileCaseNamed(const std::string& name) {
  for (const auto& c : HostileCases()) {
    if (c.name == name) return c;
  }
  std::cerr << "no hostile table case " << name << "\n";
  std::abort();
}

arrow::Status ReadWholeTable(const std::string& root) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->Latest());
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Build());
  return scan->ToTable().status();
}

}  // namespace deltacpp::testing
