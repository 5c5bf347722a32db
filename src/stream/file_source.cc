// The landing-folder source: new files found by listing, recorded per batch in the source's
// state directory before the batch runs, read with Arrow's JSON, CSV and Parquet readers.
#include "deltacpp/stream/file_source.h"

#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/json/api.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "stream/checkpoint_dir.h"
#include "util/random_uuid.h"
#include "util/utf8.h"

namespace fs = std::filesystem;

namespace deltacpp {

using namespace internal;  // NOLINT: the source glues internal helpers together

namespace {

constexpr int64_t kDefaultMaxFiles = 1000;

struct LandedFile {
  std::string path;  ///< relative to the landing folder
  int64_t size = 0;
  int64_t mtime_ns = 0;
};

struct BadRecord {
  std::string file;
  std::optional<int64_t> line;
  std::optional<std::string> record;
  std::string error;
};

std::string FormatName(FileFormat f) {
  switch (f) {
    case FileFormat::kJson:
      return "JSON";
    case FileFormat::kCsv:
      return "CSV";
    case FileFormat::kParquet:
      return "Parquet";
  }
  return "?";
}

std::string FilesToJson(const std::vector<LandedFile>& files) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& f : files) {
    w.StartObject();
    w.Key("path");
    w.String(f.path.data(), static_cast<rapidjson::SizeType>(f.path.size()));
    w.Key("size");
    w.Int64(f.size);
    w.Key("mtimeNs");
    w.Int64(f.mtime_ns);
    w.EndObject();
  }
  w.EndArray();
  return buf.GetString();
}

arrow::Result<std::vector<LandedFile>> FilesFromJson(const std::string& text,
                                                     const std::string& where) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  auto corrupt = [&] {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("file source state {} is not a list of files", where));
  };
  if (doc.HasParseError() || !doc.IsArray()) return corrupt();
  std::vector<LandedFile> out;
  for (const auto& f : doc.GetArray()) {
    if (!f.IsObject() || !f.HasMember("path") || !f["path"].IsString() || !f.HasMember("size") ||
        !f["size"].IsInt64() || !f.HasMember("mtimeNs") || !f["mtimeNs"].IsInt64()) {
      return corrupt();
    }
    out.push_back({f["path"].GetString(), f["size"].GetInt64(), f["mtimeNs"].GetInt64()});
  }
  return out;
}

std::optional<int64_t> LogOffsetOf(const std::string& offset) {
  rapidjson::Document doc;
  doc.Parse(offset.data(), offset.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("logOffset") ||
      !doc["logOffset"].IsInt64()) {
    return std::nullopt;
  }
  return doc["logOffset"].GetInt64();
}

bool Hidden(const std::string& name) { return name.empty() || name[0] == '_' || name[0] == '.'; }

// Regular files under `root` (not hidden, not below hidden folders, links not followed).
arrow::Result<std::vector<LandedFile>> ListLanding(const std::string& root) {
  std::vector<LandedFile> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("cannot list landing folder {}: {}", root, ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      return arrow::Status::IOError(
          fmt::format("cannot list landing folder {}: {}", root, ec.message()));
    }
    const auto name = it->path().filename().string();
    const auto status = it->symlink_status(ec);
    if (Hidden(name)) {
      if (fs::is_directory(status)) it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(status)) continue;
    LandedFile f;
    f.path = fs::relative(it->path(), root, ec).string();
    f.size = static_cast<int64_t>(it->file_size(ec));
    const auto mtime = it->last_write_time(ec);
    f.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     mtime.time_since_epoch())
                     .count();
    if (!ec) out.push_back(std::move(f));
  }
  return out;
}

// A table of `schema` whose columns are all null, `rows` long.
arrow::Result<std::shared_ptr<arrow::Array>> NullColumn(const std::shared_ptr<arrow::DataType>& t,
                                                        int64_t rows) {
  return arrow::MakeArrayOfNull(t, rows);
}

// The columns of `schema` taken from `table` by name (ignoring case), cast to their types;
// missing ones null.
arrow::Result<std::shared_ptr<arrow::Table>> Conform(const std::shared_ptr<arrow::Table>& table,
                                                     const std::shared_ptr<arrow::Schema>& schema) {
  arrow::ChunkedArrayVector columns;
  for (const auto& field : schema->fields()) {
    int found = -1;
    for (int c = 0; c < table->num_columns(); ++c) {
      const auto& name = table->field(c)->name();
      if (name.size() == field->name().size() &&
          std::equal(name.begin(), name.end(), field->name().begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          })) {
        found = c;
        break;
      }
    }
    if (found < 0) {
      ARROW_ASSIGN_OR_RAISE(auto nulls, NullColumn(field->type(), table->num_rows()));
      columns.push_back(std::make_shared<arrow::ChunkedArray>(nulls));
      continue;
    }
    auto column = table->column(found);
    if (!column->type()->Equals(*field->type())) {
      ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(column, field->type()));
      column = cast.chunked_array();
    }
    columns.push_back(column);
  }
  return arrow::Table::Make(schema, columns, table->num_rows());
}

class FileSource : public StreamSource {
 public:
  explicit FileSource(FileSourceOptions options) : options_(std::move(options)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return options_.schema; }

  arrow::Status Open(const std::string& state_dir) override {
    if (!options_.schema || options_.schema->num_fields() == 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument, "a file source needs a schema");
    }
    if (options_.bad_records == BadRecordPolicy::kRoute && options_.bad_records_location.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "routing bad records needs a bad-records table location");
    }
    std::error_code ec;
    if (!fs::is_directory(options_.location, ec)) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("landing folder {} is not a directory", options_.location));
    }
    state_dir_ = state_dir;
    const std::string id_path = (fs::path(state_dir) / "id").string();
    if (fs::exists(id_path, ec)) {
      ARROW_ASSIGN_OR_RAISE(source_id_, ReadSmallFile(id_path));
      while (!source_id_.empty() && source_id_.back() == '\n') source_id_.pop_back();
    } else {
      source_id_ = RandomUuidV4();
      ARROW_RETURN_NOT_OK(WriteFileAtomically(id_path, source_id_ + "\n"));
    }
    // Every file of every planned batch has been taken.
    for (const auto& e : fs::directory_iterator(state_dir, ec)) {
      const auto name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      ARROW_ASSIGN_OR_RAISE(auto files, LoadBatch(std::stoll(name)));
      for (auto& f : files) seen_.insert(std::move(f.path));
    }
    return arrow::Status::OK();
  }

  arrow::Result<std::optional<std::string>> PlanBatch(int64_t batch_id,
                                                      const std::optional<std::string>& start,
                                                      bool unlimited) override {
    (void)start;
    const std::string offset = fmt::format("{{\"logOffset\":{}}}", batch_id);
    std::error_code ec;
    if (fs::exists(BatchPath(batch_id), ec)) return offset;  // planned before a crash
    ARROW_ASSIGN_OR_RAISE(auto pending, Pending());
    if (pending.empty()) return std::nullopt;
    const int64_t max_files = options_.limits.max_files.value_or(kDefaultMaxFiles);
    std::vector<LandedFile> batch;
    int64_t bytes = 0;
    for (auto& f : pending) {
      if (!batch.empty() && !unlimited) {
        if (static_cast<int64_t>(batch.size()) >= max_files) break;
        if (options_.limits.max_bytes && bytes + f.size > *options_.limits.max_bytes) break;
      }
      bytes += f.size;
      batch.push_back(std::move(f));
    }
    ARROW_RETURN_NOT_OK(WriteFileAtomically(BatchPath(batch_id), FilesToJson(batch)));
    for (const auto& f : batch) seen_.insert(f.path);
    backlog_after_plan_ = static_cast<int64_t>(pending.size() - batch.size());
    return offset;
  }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadBatch(
      int64_t batch_id, const std::optional<std::string>& start,
      const std::string& end) override {
    (void)start;
    const auto log_offset = LogOffsetOf(end);
    if (!log_offset) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("batch {}: '{}' is not a file source offset", batch_id, end));
    }
    ARROW_ASSIGN_OR_RAISE(auto files, LoadBatch(*log_offset));
    std::vector<std::shared_ptr<arrow::Table>> tables(files.size());
    std::vector<std::vector<BadRecord>> bad(files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(tables[i], ReadFile(files[i].path, &bad[i]));
    }
    std::vector<BadRecord> all_bad;
    for (auto& b : bad) {
      for (auto& r : b) all_bad.push_back(std::move(r));
    }
    rejected_ = static_cast<int64_t>(all_bad.size());
    if (!all_bad.empty() && options_.bad_records == BadRecordPolicy::kRoute) {
      ARROW_RETURN_NOT_OK(RouteBadRecords(batch_id, all_bad));
    }
    std::shared_ptr<arrow::Table> rows;
    if (tables.empty()) {
      ARROW_ASSIGN_OR_RAISE(rows, arrow::Table::MakeEmpty(options_.schema));
    } else {
      ARROW_ASSIGN_OR_RAISE(rows, arrow::ConcatenateTables(tables));
    }
    return std::make_shared<arrow::TableBatchReader>(rows);
  }

  arrow::Status LimitToAvailableNow() override {
    ARROW_ASSIGN_OR_RAISE(auto pending, Pending());
    std::set<std::string> available;
    for (auto& f : pending) available.insert(std::move(f.path));
    available_ = std::move(available);
    return arrow::Status::OK();
  }

  std::optional<int64_t> Backlog(const std::optional<std::string>& end) override {
    (void)end;
    // Known from the listing the batch was planned from; a replayed batch lists again.
    if (auto known = std::exchange(backlog_after_plan_, std::nullopt)) return known;
    auto pending = Pending();
    if (!pending.ok()) return std::nullopt;
    return static_cast<int64_t>(pending->size());
  }

  int64_t rejected_records() const override { return rejected_; }

 private:
  std::string BatchPath(int64_t batch_id) const {
    return (fs::path(state_dir_) / std::to_string(batch_id)).string();
  }

  arrow::Result<std::vector<LandedFile>> LoadBatch(int64_t batch_id) const {
    const auto path = BatchPath(batch_id);
    ARROW_ASSIGN_OR_RAISE(auto text, ReadSmallFile(path));
    return FilesFromJson(text, path);
  }

  // Files not taken yet, oldest first.
  arrow::Result<std::vector<LandedFile>> Pending() const {
    ARROW_ASSIGN_OR_RAISE(auto listed, ListLanding(options_.location));
    std::vector<LandedFile> out;
    for (auto& f : listed) {
      if (seen_.count(f.path) || (available_ && !available_->count(f.path))) continue;
      out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), [](const LandedFile& a, const LandedFile& b) {
      return std::tie(a.mtime_ns, a.path) < std::tie(b.mtime_ns, b.path);
    });
    return out;
  }

  arrow::Status Rejected(BadRecord record, std::vector<BadRecord>* bad) const {
    if (options_.bad_records == BadRecordPolicy::kFail) {
      const std::string where =
          record.line ? fmt::format("line {} of {}", *record.line, record.file) : record.file;
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("malformed {} record at {} in landing folder {}: {}",
                                    FormatName(options_.format), where, options_.location,
                                    record.error));
    }
    bad->push_back(std::move(record));
    return arrow::Status::OK();
  }

  arrow::Result<std::shared_ptr<arrow::Table>> ParseText(std::string_view text) const {
    auto buffer = std::make_shared<arrow::Buffer>(reinterpret_cast<const uint8_t*>(text.data()),
                                                  static_cast<int64_t>(text.size()));
    auto input = std::make_shared<arrow::io::BufferReader>(buffer);
    if (options_.format == FileFormat::kJson) {
      auto read = arrow::json::ReadOptions::Defaults();
      read.use_threads = false;
      auto parse = arrow::json::ParseOptions::Defaults();
      parse.explicit_schema = options_.schema;
      parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::Ignore;
      ARROW_ASSIGN_OR_RAISE(auto reader, arrow::json::TableReader::Make(
                                             arrow::default_memory_pool(), input, read, parse));
      return reader->Read();
    }
    auto read = arrow::csv::ReadOptions::Defaults();
    read.use_threads = false;
    if (!options_.csv_header) {
      for (const auto& f : options_.schema->fields()) read.column_names.push_back(f->name());
    }
    auto convert = arrow::csv::ConvertOptions::Defaults();
    for (const auto& f : options_.schema->fields()) {
      convert.column_types[f->name()] = f->type();
      convert.include_columns.push_back(f->name());
    }
    convert.include_missing_columns = true;
    convert.strings_can_be_null = true;
    ARROW_ASSIGN_OR_RAISE(auto reader, arrow::csv::TableReader::Make(
                                           arrow::io::default_io_context(), input, read,
                                           arrow::csv::ParseOptions::Defaults(), convert));
    return reader->Read();
  }

  // A JSON or CSV file: parsed whole when it can be; otherwise line by line, setting aside the
  // lines that do not parse.
  arrow::Result<std::shared_ptr<arrow::Table>> ReadTextFile(const std::string& rel,
                                                            std::vector<BadRecord>* bad) const {
    const auto full = (fs::path(options_.location) / rel).string();
    auto content = ReadSmallFile(full);
    if (!content.ok()) {
      ARROW_RETURN_NOT_OK(Rejected({rel, std::nullopt, std::nullopt,
                                    content.status().message()},
                                   bad));
      return arrow::Table::MakeEmpty(options_.schema);
    }
    const std::string& text = *content;
    if (IsValidUtf8(text)) {
      auto whole = ParseText(text);
      if (whole.ok()) return Conform(*whole, options_.schema);
    }
    // Line by line: the header (CSV) goes with every line.
    std::string header;
    size_t pos = 0;
    int64_t line_no = 0;
    if (options_.format == FileFormat::kCsv && options_.csv_header) {
      const size_t eol = text.find('\n');
      header = text.substr(0, eol == std::string::npos ? text.size() : eol + 1);
      if (header.empty() || header.back() != '\n') header += '\n';
      pos = eol == std::string::npos ? text.size() : eol + 1;
      line_no = 1;
    }
    std::string good = header;
    bool any_good = false;
    while (pos < text.size()) {
      const size_t eol = text.find('\n', pos);
      const size_t stop = eol == std::string::npos ? text.size() : eol;
      std::string_view line(text.data() + pos, stop - pos);
      pos = eol == std::string::npos ? text.size() : eol + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (!IsValidUtf8(line)) {
        ARROW_RETURN_NOT_OK(Rejected({rel, line_no, PrintableText(line, 1 << 20),
                                      "not valid UTF-8: " + DescribeInvalidUtf8(line)},
                                     bad));
        continue;
      }
      std::string one = header;
      one.append(line);
      one += '\n';
      auto parsed = ParseText(one);
      if (!parsed.ok() || (*parsed)->num_rows() != 1) {
        ARROW_RETURN_NOT_OK(Rejected({rel, line_no, std::string(line),
                                      parsed.ok() ? "not one record" : parsed.status().message()},
                                     bad));
        continue;
      }
      good.append(line);
      good += '\n';
      any_good = true;
    }
    if (!any_good) return arrow::Table::MakeEmpty(options_.schema);
    ARROW_ASSIGN_OR_RAISE(auto table, ParseText(good));
    return Conform(table, options_.schema);
  }

  arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(const std::string& rel,
                                                               std::vector<BadRecord>* bad) const {
    const auto full = (fs::path(options_.location) / rel).string();
    auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
      ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(full));
      ARROW_ASSIGN_OR_RAISE(auto reader,
                            parquet::arrow::OpenFile(file, arrow::default_memory_pool()));
      ARROW_ASSIGN_OR_RAISE(auto table, reader->ReadTable());
      return Conform(table, options_.schema);
    };
    auto table = read();
    if (table.ok()) return table;
    ARROW_RETURN_NOT_OK(
        Rejected({rel, std::nullopt, std::nullopt, table.status().message()}, bad));
    return arrow::Table::MakeEmpty(options_.schema);
  }

  arrow::Result<std::shared_ptr<arrow::Table>> ReadFile(const std::string& rel,
                                                        std::vector<BadRecord>* bad) const {
    if (options_.format == FileFormat::kParquet) return ReadParquetFile(rel, bad);
    return ReadTextFile(rel, bad);
  }

  arrow::Status RouteBadRecords(int64_t batch_id, const std::vector<BadRecord>& records) const {
    arrow::StringBuilder file, record, error;
    arrow::Int64Builder line;
    for (const auto& r : records) {
      ARROW_RETURN_NOT_OK(file.Append(PrintableText(r.file, 4096)));
      ARROW_RETURN_NOT_OK(r.line ? line.Append(*r.line) : line.AppendNull());
      ARROW_RETURN_NOT_OK(r.record ? record.Append(PrintableText(*r.record, 1 << 20))
                                   : record.AppendNull());
      ARROW_RETURN_NOT_OK(error.Append(PrintableText(r.error, 4096)));
    }
    auto schema = arrow::schema({arrow::field("file", arrow::utf8(), false),
                                 arrow::field("line", arrow::int64()),
                                 arrow::field("record", arrow::utf8()),
                                 arrow::field("error", arrow::utf8(), false)});
    ARROW_ASSIGN_OR_RAISE(auto a, file.Finish());
    ARROW_ASSIGN_OR_RAISE(auto b, line.Finish());
    ARROW_ASSIGN_OR_RAISE(auto c, record.Finish());
    ARROW_ASSIGN_OR_RAISE(auto d, error.Finish());
    auto table = arrow::Table::Make(schema, {a, b, c, d});
    WriteOptions write = IdempotentWrite(source_id_, batch_id);
    return WriteTable(options_.bad_records_location, table, write).status();
  }

  FileSourceOptions options_;
  std::string state_dir_;
  std::string source_id_;
  std::set<std::string> seen_;
  std::optional<std::set<std::string>> available_;  ///< Trigger::AvailableNow's files
  int64_t rejected_ = 0;
  std::optional<int64_t> backlog_after_plan_;  ///< files left by the last PlanBatch
};

}  // namespace

std::shared_ptr<StreamSource> MakeFileSource(FileSourceOptions options) {
  return std::make_shared<FileSource>(std::move(options));
}

}  // namespace deltacpp
