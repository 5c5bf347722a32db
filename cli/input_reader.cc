#include "input_reader.h"

#include <arrow/io/api.h>
#include <arrow/io/stdio.h>
#include <arrow/json/api.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <parquet/arrow/reader.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "csv_input.h"
#include "deltacpp/error.h"
#include "line_tracking_stream.h"
#include "prefixed_input_stream.h"
#include "text_values.h"
#include "deltacpp/schema.h"

namespace deltacpp::cli {

namespace {

std::string FormatOf(const std::string& file, const std::string& format) {
  if (!format.empty()) return format;
  auto ends = [&](const char* s) { return file.ends_with(s); };
  if (ends(".csv") || ends(".CSV")) return "csv";
  if (ends(".json") || ends(".jsonl") || ends(".ndjson")) return "json";
  if (ends(".parquet")) return "parquet";
  return "";
}

std::string DisplayName(const std::string& file) { return file == "-" ? "stdin" : file; }

bool IsZonedTimestamp(const arrow::DataType& t) {
  return t.id() == arrow::Type::TIMESTAMP &&
         !static_cast<const arrow::TimestampType&>(t).timezone().empty();
}

bool IsFlat(const arrow::DataType& t) {
  return t.id() != arrow::Type::STRUCT && t.id() != arrow::Type::LIST && t.id() != arrow::Type::MAP;
}

// Zoned timestamp columns are read as text and parsed by deltacpp, because Arrow's parsers
// require every value to have (or every value to lack) a zone offset; here an offset is
// honoured and a value without one is UTC, as everywhere else in deltacpp.
// Dates are read as text too: Arrow's JSON reader does not turn strings into dates.
std::shared_ptr<arrow::DataType> ParseType(const std::shared_ptr<arrow::DataType>& t) {
  if (IsZonedTimestamp(*t) || t->id() == arrow::Type::DATE32) return arrow::utf8();
  return t;
}

bool SameName(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The declared columns followed by the table's columns not declared.
std::shared_ptr<arrow::Schema> ColumnTypes(const InputOptions& options) {
  arrow::FieldVector fields;
  if (options.declared) fields = options.declared->fields();
  if (options.table_schema) {
    for (const auto& t : options.table_schema->fields()) {
      bool declared = false;
      for (size_t i = 0; options.declared && i < options.declared->fields().size(); ++i) {
        declared |= SameName(options.declared->field(static_cast<int>(i))->name(), t->name());
      }
      if (!declared) fields.push_back(t);
    }
  }
  if (fields.empty()) return nullptr;
  return arrow::schema(std::move(fields));
}

// The keys the JSON lines of `block` use (up to its last complete line), as Arrow's reader
// infers them. Empty when the block has no complete line.
arrow::Result<std::set<std::string>> JsonKeys(const std::shared_ptr<arrow::Buffer>& block) {
  std::string_view text(block->data_as<char>(), static_cast<size_t>(block->size()));
  const auto last_newline = text.rfind('\n');
  if (last_newline == std::string_view::npos) {
    // A single line without a newline: all of it, if it is the whole input.
    if (text.empty()) return std::set<std::string>{};
  } else {
    text = text.substr(0, last_newline + 1);
  }
  auto lines = std::make_shared<arrow::io::BufferReader>(
      arrow::Buffer::FromString(std::string(text)));
  auto options = arrow::json::ReadOptions::Defaults();
  options.use_threads = false;
  options.block_size = static_cast<int32_t>(
      std::min<size_t>(std::max<size_t>(text.size() + 1, options.block_size), INT32_MAX));
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::json::TableReader::Make(
                                         arrow::default_memory_pool(), lines, options,
                                         arrow::json::ParseOptions::Defaults()));
  ARROW_ASSIGN_OR_RAISE(auto table, reader->Read());
  std::set<std::string> keys;
  for (const auto& f : table->schema()->fields()) keys.insert(f->name());
  return keys;
}

// Arrow's JSON errors end in "in row N", N counting from the start of the block that failed:
// `rows_before` rows precede that block. Returns `message` without it and the line it means.
std::pair<std::string, int64_t> JsonErrorLine(const std::string& message, int64_t rows_before,
                                              const LineMap& lines) {
  const auto at = message.rfind(" in row ");
  if (at == std::string::npos) return {message, -1};
  const std::string digits = message.substr(at + 8);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return {message, -1};
  }
  return {message.substr(0, at), lines.LineOfRow(rows_before + std::stoll(digits))};
}

arrow::Status JsonReadError(const std::string& name, const arrow::Status& status,
                            int64_t rows_before, const LineMap& lines) {
  auto [message, line] = JsonErrorLine(status.message(), rows_before, lines);
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    line < 0 ? fmt::format("cannot read input {}: {}", name, message)
                             : fmt::format("cannot read input {} at line {}: {}", name, line,
                                           message));
}

// Reads JSON lines: turns the text of zoned timestamp and date columns into their types and
// names the line of a value that does not convert (one object per line; blank lines count).
class JsonReader : public arrow::RecordBatchReader {
 public:
  JsonReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::string name,
             std::shared_ptr<arrow::Schema> types, std::shared_ptr<LineMap> lines)
      : inner_(std::move(inner)), name_(std::move(name)), lines_(std::move(lines)) {
    arrow::FieldVector fields;
    for (const auto& f : inner_->schema()->fields()) {
      std::shared_ptr<arrow::Field> out = f;
      if (types) {
        auto tf = types->GetFieldByName(f->name());
        if (tf && (IsZonedTimestamp(*tf->type()) || tf->type()->id() == arrow::Type::DATE32) &&
            f->type()->id() == arrow::Type::STRING) {
          out = f->WithType(tf->type());
        }
      }
      fields.push_back(out);
    }
    schema_ = arrow::schema(fields);
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    // Arrow's reader makes one batch of each block, so a failing block starts after the rows
    // of the batches before it.
    auto st = inner_->ReadNext(out);
    if (!st.ok()) return JsonReadError(name_, st, rows_before_, *lines_);
    if (!*out) return arrow::Status::OK();
    std::vector<std::shared_ptr<arrow::Array>> cols;
    for (int i = 0; i < (*out)->num_columns(); ++i) {
      auto col = (*out)->column(i);
      const auto& target = schema_->field(i)->type();
      if (!col->type()->Equals(*target)) {
        BadValue bad;
        auto converted = ConvertText(col, target, &bad);
        if (!converted.ok()) {
          if (bad.index < 0) return converted.status();
          return DeltaError(
              DeltaErrorCode::kInvalidArgument,
              fmt::format("cannot convert \"{}\" in column \"{}\" at line {} of {} to {}{}",
                          static_cast<const arrow::StringArray&>(*col).GetView(bad.index),
                          schema_->field(i)->name(), lines_->LineOfRow(rows_before_ + bad.index),
                          name_,
                          DeltaTypeName(*target), bad.reason.empty() ? "" : ": " + bad.reason));
        }
        col = *converted;
      }
      cols.push_back(col);
    }
    rows_before_ += (*out)->num_rows();
    *out = arrow::RecordBatch::Make(schema_, (*out)->num_rows(), std::move(cols));
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::string name_;
  std::shared_ptr<LineMap> lines_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t rows_before_ = 0;
};

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJson(
    std::shared_ptr<arrow::io::InputStream> stream, const std::string& name,
    const std::shared_ptr<arrow::Schema>& types) {
  auto read = arrow::json::ReadOptions::Defaults();
  auto parse = arrow::json::ParseOptions::Defaults();
  if (types) {
    // Table types for the columns the input has; columns it leaves out stay out (rather than
    // becoming all-null columns), so generated and identity columns are computed, as with a
    // DataFrame that lacks them. Which keys the input has is read from its first block, the
    // same block Arrow's reader infers other columns from.
    // (A first line longer than a block is read on until it ends.)
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> head, stream->Read(read.block_size));
    while (head->size() > 0 &&
           std::string_view(head->data_as<char>(), head->size()).find('\n') ==
               std::string_view::npos) {
      ARROW_ASSIGN_OR_RAISE(auto more, stream->Read(read.block_size));
      if (more->size() == 0) break;
      head = arrow::Buffer::FromString(head->ToString() + more->ToString());
    }
    // Arrow's reader needs every line to fit in a block: make blocks twice the first line.
    const auto first_line = std::string_view(head->data_as<char>(), head->size()).find('\n');
    if (first_line != std::string_view::npos &&
        2 * (first_line + 1) > static_cast<size_t>(read.block_size)) {
      read.block_size = static_cast<int32_t>(std::min<size_t>(2 * (first_line + 1), INT32_MAX));
    }
    auto keys = JsonKeys(head);
    if (!keys.ok()) {
      LineTrackingStream scan(std::make_shared<arrow::io::BufferReader>(head));
      ARROW_RETURN_NOT_OK(scan.Read(head->size()).status());
      return JsonReadError(name, keys.status(), 0, *scan.lines());
    }
    stream = std::make_shared<PrefixedInputStream>(head, stream);
    arrow::FieldVector fields;
    for (const auto& f : types->fields()) {
      if (IsFlat(*f->type()) && keys->count(f->name())) {
        // Nullable for parsing: a null in a NOT NULL column is the write's constraint
        // check to report (naming the column), not a parse error.
        fields.push_back(f->WithType(ParseType(f->type()))->WithNullable(true));
      }
    }
    parse.explicit_schema = arrow::schema(fields);
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
  }
  auto tracked = std::make_shared<LineTrackingStream>(stream);
  auto r = arrow::json::StreamingReader::Make(tracked, read, parse);
  if (!r.ok()) return JsonReadError(name, r.status(), 0, *tracked->lines());
  return std::make_shared<JsonReader>(*r, name, types, tracked->lines());
}

// Parquet needs random access: stdin is read into memory first.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenParquet(
    std::shared_ptr<arrow::io::RandomAccessFile> file, const std::string& name) {
  // Columns decoded on every core while the writer encodes beside it (measured: a 10M-row
  // write from one Parquet file 2.2 s -> 1.6 s). No pre-buffering: it would hold the whole
  // input in memory (+220 MiB on 283 MB) for no measurable gain.
  parquet::ArrowReaderProperties properties;
  properties.set_use_threads(true);
  properties.set_batch_size(128 * 1024);
  parquet::arrow::FileReaderBuilder builder;
  std::unique_ptr<parquet::arrow::FileReader> opened;
  arrow::Status st = builder.Open(file);
  if (st.ok()) st = builder.properties(properties)->Build(&opened);
  if (!st.ok()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("cannot read input {}: {}", name, st.message()));
  }
  std::shared_ptr<parquet::arrow::FileReader> pq = std::move(opened);
  ARROW_ASSIGN_OR_RAISE(auto batches, pq->GetRecordBatchReader());
  // Keeps the file reader alive as long as its batch reader and names the file in errors.
  struct Holder : arrow::RecordBatchReader {
    std::shared_ptr<parquet::arrow::FileReader> file;
    std::unique_ptr<arrow::RecordBatchReader> inner;
    std::string name;
    std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
    arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
      auto st = inner->ReadNext(out);
      if (st.ok()) return st;
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {}: {}", name, st.message()));
    }
  };
  auto holder = std::make_shared<Holder>();
  holder->file = pq;
  holder->inner = std::move(batches);
  holder->name = name;
  return holder;
}

arrow::Status OsError(const std::string& what, const std::string& path, int error) {
  return arrow::Status::IOError(fmt::format("{} {}: {}", what, path, std::strerror(error)));
}

// Opens a local input file; a missing file, a directory or one that cannot be read is an
// IOError naming it with the system's reason.
arrow::Result<std::shared_ptr<arrow::io::ReadableFile>> OpenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OsError("cannot open input", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return OsError("cannot open input", path, error);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return OsError("cannot read input", path, EISDIR);
  }
  auto file = arrow::io::ReadableFile::Open(fd);
  if (!file.ok()) {
    ::close(fd);
    return arrow::Status::IOError(
        fmt::format("cannot open input {}: {}", path, file.status().message()));
  }
  return *file;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAll(arrow::io::InputStream& stream,
                                                      const std::string& name) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  while (true) {
    auto chunk = stream.Read(1 << 20);
    if (!chunk.ok()) {
      return arrow::Status::IOError(
          fmt::format("cannot read input {}: {}", name, chunk.status().message()));
    }
    if ((*chunk)->size() == 0) break;
    ARROW_RETURN_NOT_OK(sink->Write(*chunk));
  }
  return sink->Finish();
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenOne(const std::string& file,
                                                                 const InputOptions& options) {
  const std::string format = FormatOf(file, options.format);
  const std::string name = DisplayName(file);
  if (format.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("cannot tell the format of input {}: give --input-format "
                                  "csv|json|parquet",
                                  file));
  }
  if (format != "csv" && !options.header) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("--no-header applies to CSV input, not to {} input {}", format,
                                  name));
  }
  if (format == "parquet" && options.declared) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("--schema applies to CSV and JSON input; Parquet input {} "
                                  "carries its own types",
                                  name));
  }
  std::shared_ptr<arrow::io::InputStream> stream;
  std::shared_ptr<arrow::io::RandomAccessFile> random;
  if (file == "-") {
    stream = std::make_shared<arrow::io::StdinStream>();
  } else {
    ARROW_ASSIGN_OR_RAISE(auto opened, OpenFile(file));
    random = opened;
    stream = opened;
  }
  if (format == "csv") {
    CsvInputOptions csv;
    csv.header = options.header;
    csv.types = ColumnTypes(options);
    csv.table_schema = options.table_schema;
    csv.merge_schema = options.merge_schema;
    if (options.declared) {
      for (const auto& f : options.declared->fields()) csv.declared_names.push_back(f->name());
    }
    const auto& source = options.declared ? options.declared : options.table_schema;
    if (source) {
      for (const auto& f : source->fields()) csv.column_names.push_back(f->name());
    }
    if (!csv.header && csv.column_names.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "--no-header needs the columns of the input: give --schema 'name TYPE, "
                        "...' (or write to an existing table, whose columns are used in order)");
    }
    return OpenCsvInput(stream, name, csv);
  }
  if (format == "json") return OpenJson(stream, name, ColumnTypes(options));
  if (!random) {
    ARROW_ASSIGN_OR_RAISE(auto all, ReadAll(*stream, name));
    random = std::make_shared<arrow::io::BufferReader>(all);
  }
  return OpenParquet(random, name);
}

// Reads the inputs one after another.
class ChainedReader : public arrow::RecordBatchReader {
 public:
  ChainedReader(std::vector<std::string> files, InputOptions options,
                std::shared_ptr<arrow::RecordBatchReader> first)
      : files_(std::move(files)), options_(std::move(options)), current_(std::move(first)),
        first_schema_(current_->schema()) {}
  std::shared_ptr<arrow::Schema> schema() const override { return first_schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (true) {
      ARROW_RETURN_NOT_OK(current_->ReadNext(out));
      if (*out) return arrow::Status::OK();
      if (++index_ >= files_.size()) return arrow::Status::OK();
      ARROW_ASSIGN_OR_RAISE(current_, OpenOne(files_[index_], options_));
      if (!current_->schema()->Equals(*first_schema_, false)) {
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("input {} has columns {} but the first input has {}",
                                      DisplayName(files_[index_]), current_->schema()->ToString(),
                                      first_schema_->ToString()));
      }
    }
  }

 private:
  std::vector<std::string> files_;
  InputOptions options_;
  std::shared_ptr<arrow::RecordBatchReader> current_;
  std::shared_ptr<arrow::Schema> first_schema_;
  size_t index_ = 0;
};

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputs(
    const std::vector<std::string>& files, const InputOptions& options) {
  if (files.empty()) return DeltaError(DeltaErrorCode::kInvalidArgument, "no input files given");
  size_t stdin_count = 0;
  for (const auto& f : files) {
    if (f != "-") continue;
    ++stdin_count;
    if (options.format.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "reading stdin ('-') needs --input-format");
    }
  }
  if (stdin_count > 1) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "stdin ('-') can be given only once");
  }
  // Every file is opened (and a CSV header checked) before any row is read, so that a bad
  // later file is refused before anything is written.
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i] != "-") ARROW_RETURN_NOT_OK(OpenOne(files[i], options).status());
  }
  ARROW_ASSIGN_OR_RAISE(auto first, OpenOne(files[0], options));
  if (files.size() == 1) return first;
  return std::make_shared<ChainedReader>(files, options, first);
}

}  // namespace deltacpp::cli
