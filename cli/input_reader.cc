#include "input_reader.h"

#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/io/stdio.h>
#include <arrow/json/api.h>
#include <arrow/util/thread_pool.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/table.h"

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

bool IsZonedTimestamp(const arrow::DataType& t) {
  return t.id() == arrow::Type::TIMESTAMP &&
         !static_cast<const arrow::TimestampType&>(t).timezone().empty();
}

// Zoned timestamp columns are read as text and parsed by deltacpp, because Arrow's parsers
// require every value to have (or every value to lack) a zone offset; here an offset is
// honoured and a value without one is UTC, as everywhere else in deltacpp.
// Dates are read as text too: Arrow's JSON reader does not turn strings into dates.
std::shared_ptr<arrow::DataType> ParseType(const std::shared_ptr<arrow::DataType>& t) {
  if (IsZonedTimestamp(*t) || t->id() == arrow::Type::DATE32) return arrow::utf8();
  return t;
}

arrow::Result<std::shared_ptr<arrow::Array>> TextToTimestamps(const arrow::Array& text,
                                                              const std::shared_ptr<arrow::DataType>& type,
                                                              const std::string& column) {
  const auto& strings = static_cast<const arrow::StringArray&>(text);
  arrow::TimestampBuilder b(type, arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(b.Reserve(strings.length()));
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i) || strings.GetView(i).empty()) {
      b.UnsafeAppendNull();
      continue;
    }
    auto us = ParseTimestampMicros(strings.GetView(i));
    if (!us.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("column '{}', value {} of this batch: {}", column, i + 1,
                                    us.status().message()));
    }
    b.UnsafeAppend(*us);
  }
  return b.Finish();
}

bool IsFlat(const arrow::DataType& t) {
  return t.id() != arrow::Type::STRUCT && t.id() != arrow::Type::LIST && t.id() != arrow::Type::MAP;
}

// Serves `head` first and then the rest of `tail`: lets the first block of a (possibly
// unseekable) input be looked at before the real reader starts.
class PrefixedInputStream : public arrow::io::InputStream {
 public:
  PrefixedInputStream(std::shared_ptr<arrow::Buffer> head,
                      std::shared_ptr<arrow::io::InputStream> tail)
      : head_(std::move(head)), tail_(std::move(tail)) {}
  arrow::Status Close() override {
    closed_ = true;
    return tail_->Close();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    int64_t done = 0;
    if (head_offset_ < head_->size()) {
      done = std::min(nbytes, head_->size() - head_offset_);
      std::memcpy(out, head_->data() + head_offset_, static_cast<size_t>(done));
      head_offset_ += done;
    }
    if (done < nbytes) {
      ARROW_ASSIGN_OR_RAISE(int64_t more,
                            tail_->Read(nbytes - done, static_cast<uint8_t*>(out) + done));
      done += more;
    }
    position_ += done;
    return done;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(nbytes));
    ARROW_ASSIGN_OR_RAISE(int64_t n, Read(nbytes, buffer->mutable_data()));
    ARROW_RETURN_NOT_OK(buffer->Resize(n));
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }

 private:
  std::shared_ptr<arrow::Buffer> head_;
  int64_t head_offset_ = 0;
  std::shared_ptr<arrow::io::InputStream> tail_;
  int64_t position_ = 0;
  bool closed_ = false;
};

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

// Relabels zone-less timestamp columns as the table's zoned type and names errors by file.
class FileReader : public arrow::RecordBatchReader {
 public:
  FileReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::string name,
             std::shared_ptr<arrow::Schema> table_schema)
      : inner_(std::move(inner)), name_(std::move(name)), table_schema_(std::move(table_schema)) {
    arrow::FieldVector fields;
    for (const auto& f : inner_->schema()->fields()) {
      std::shared_ptr<arrow::Field> out = f;
      if (table_schema_) {
        auto tf = table_schema_->GetFieldByName(f->name());
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
    auto st = inner_->ReadNext(out);
    if (!st.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {}: {}", name_, st.message()));
    }
    if (!*out) return arrow::Status::OK();
    std::vector<std::shared_ptr<arrow::Array>> cols;
    for (int i = 0; i < (*out)->num_columns(); ++i) {
      auto col = (*out)->column(i);
      if (!col->type()->Equals(*schema_->field(i)->type())) {
        const auto& target = schema_->field(i)->type();
        auto converted =
            target->id() == arrow::Type::DATE32
                ? arrow::compute::Cast(*col, target)
                : TextToTimestamps(*col, target, schema_->field(i)->name());
        if (!converted.ok()) {
          return DeltaError(DeltaErrorCode::kInvalidArgument,
                            fmt::format("cannot read input {}: {}", name_,
                                        converted.status().message()));
        }
        col = *converted;
      }
      cols.push_back(col);
    }
    *out = arrow::RecordBatch::Make(schema_, (*out)->num_rows(), std::move(cols));
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::string name_;
  std::shared_ptr<arrow::Schema> table_schema_;
  std::shared_ptr<arrow::Schema> schema_;
};

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenOne(
    const std::string& file, const std::string& format,
    const std::shared_ptr<arrow::Schema>& table_schema) {
  std::shared_ptr<arrow::io::InputStream> stream;
  std::shared_ptr<arrow::io::RandomAccessFile> random;
  if (file == "-") {
    stream = std::make_shared<arrow::io::StdinStream>();
  } else {
    auto opened = arrow::io::ReadableFile::Open(file);
    if (!opened.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot open input {}: {}", file, opened.status().message()));
    }
    random = *opened;
    stream = random;
  }
  std::shared_ptr<arrow::RecordBatchReader> reader;
  if (format == "csv") {
    auto read = arrow::csv::ReadOptions::Defaults();
    auto parse = arrow::csv::ParseOptions::Defaults();
    auto convert = arrow::csv::ConvertOptions::Defaults();
    if (table_schema) {
      for (const auto& f : table_schema->fields()) {
        if (IsFlat(*f->type())) convert.column_types[f->name()] = ParseType(f->type());
      }
    }
    convert.strings_can_be_null = true;
    auto r = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), stream, read,
                                               parse, convert);
    if (!r.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {}: {}", file, r.status().message()));
    }
    reader = *r;
  } else if (format == "json") {
    auto read = arrow::json::ReadOptions::Defaults();
    auto parse = arrow::json::ParseOptions::Defaults();
    if (table_schema) {
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
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("cannot read input {}: {}", file, keys.status().message()));
      }
      stream = std::make_shared<PrefixedInputStream>(head, stream);
      arrow::FieldVector fields;
      for (const auto& f : table_schema->fields()) {
        if (IsFlat(*f->type()) && keys->count(f->name())) {
          // Nullable for parsing: a null in a NOT NULL column is the write's constraint
          // check to report (naming the column), not a parse error.
          fields.push_back(f->WithType(ParseType(f->type()))->WithNullable(true));
        }
      }
      parse.explicit_schema = arrow::schema(fields);
      parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    }
    auto r = arrow::json::StreamingReader::Make(stream, read, parse);
    if (!r.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {}: {}", file, r.status().message()));
    }
    reader = *r;
  } else if (format == "parquet") {
    if (!random) {
      ARROW_ASSIGN_OR_RAISE(auto all, stream->Read(INT64_MAX));
      random = std::make_shared<arrow::io::BufferReader>(all);
    }
    auto opened = parquet::arrow::OpenFile(random, arrow::default_memory_pool());
    if (!opened.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {}: {}", file, opened.status().message()));
    }
    std::shared_ptr<parquet::arrow::FileReader> pq = std::move(*opened);
    ARROW_ASSIGN_OR_RAISE(auto batches, pq->GetRecordBatchReader());
    // Keep the file reader alive as long as its batch reader.
    struct Holder : arrow::RecordBatchReader {
      std::shared_ptr<parquet::arrow::FileReader> file;
      std::unique_ptr<arrow::RecordBatchReader> inner;
      std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
      arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
        return inner->ReadNext(out);
      }
    };
    auto holder = std::make_shared<Holder>();
    holder->file = pq;
    holder->inner = std::move(batches);
    reader = holder;
  } else {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("cannot tell the format of input {}: give --input-format "
                                  "csv|json|parquet",
                                  file));
  }
  return std::make_shared<FileReader>(reader, file, table_schema);
}

// Reads the inputs one after another.
class ChainedReader : public arrow::RecordBatchReader {
 public:
  ChainedReader(std::vector<std::string> files, std::string format,
                std::shared_ptr<arrow::Schema> table_schema,
                std::shared_ptr<arrow::RecordBatchReader> first)
      : files_(std::move(files)), format_(std::move(format)),
        table_schema_(std::move(table_schema)), current_(std::move(first)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return current_schema_ ? current_schema_ : current_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    if (!current_schema_) current_schema_ = current_->schema();
    while (true) {
      ARROW_RETURN_NOT_OK(current_->ReadNext(out));
      if (*out) return arrow::Status::OK();
      if (++index_ >= files_.size()) return arrow::Status::OK();
      ARROW_ASSIGN_OR_RAISE(current_, OpenOne(files_[index_], FormatOf(files_[index_], format_),
                                              table_schema_));
      if (!current_->schema()->Equals(*current_schema_, false)) {
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("input {} has columns {} but the first input has {}",
                                      files_[index_], current_->schema()->ToString(),
                                      current_schema_->ToString()));
      }
    }
  }

 private:
  std::vector<std::string> files_;
  std::string format_;
  std::shared_ptr<arrow::Schema> table_schema_;
  std::shared_ptr<arrow::RecordBatchReader> current_;
  std::shared_ptr<arrow::Schema> current_schema_;
  size_t index_ = 0;
};

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputs(
    const std::vector<std::string>& files, const std::string& format,
    const std::shared_ptr<arrow::Schema>& table_schema) {
  if (files.empty()) return DeltaError(DeltaErrorCode::kInvalidArgument, "no input files given");
  for (const auto& f : files) {
    if (f == "-" && format.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument, "reading stdin ('-') needs --input-format");
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto first, OpenOne(files[0], FormatOf(files[0], format), table_schema));
  if (files.size() == 1) return first;
  return std::make_shared<ChainedReader>(files, format, table_schema, first);
}


}  // namespace deltacpp::cli
