#include "csv_input.h"

#include <arrow/csv/api.h>
#include <arrow/csv/parser.h>
#include <arrow/io/memory.h>
#include <arrow/util/utf8.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "deltacpp/error.h"
#include "prefixed_input_stream.h"
#include "text_values.h"
#include "deltacpp/schema.h"

namespace deltacpp::cli {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Line breaks inside a value: CR LF, LF and a lone CR each end a line, as for the parser.
int64_t LineBreaks(std::string_view text) {
  int64_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) {
      ++n;
    }
  }
  return n;
}

// A number (`12`, `-3.5`, `+4412345`, `1e6`) or a date (`2024-01-31...`): what a data line
// holds and a header line does not.
bool LooksLikeValue(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  auto digit = [&](size_t i) {
    return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
  };
  if (s.size() >= 10 && digit(0) && digit(1) && digit(2) && digit(3) && s[4] == '-' && digit(5) &&
      digit(6) && s[7] == '-' && digit(8) && digit(9)) {
    return true;
  }
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (digit(i)) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (digit(i)) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == s.size();
}

// A value as an error message shows it: at most 60 bytes, and text that is not UTF-8 with its
// bytes above 0x7F written as \xNN (a message must stay printable).
std::string Shown(std::string_view value) {
  constexpr size_t kMax = 60;
  std::string_view head = value.substr(0, std::min(value.size(), kMax));
  std::string out;
  if (arrow::util::ValidateUTF8(value)) {
    out = std::string(head);
  } else {
    for (unsigned char c : head) {
      out += c < 0x80 ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02X}", c);
    }
  }
  return value.size() <= kMax ? out : out + "...";
}

arrow::csv::ParseOptions CsvParseOptions() {
  auto parse = arrow::csv::ParseOptions::Defaults();
  // Quoted values may span lines; blank lines reach the row handler so that they are counted.
  parse.newlines_in_values = true;
  parse.ignore_empty_lines = false;
  return parse;
}

struct Header {
  std::vector<std::string> names;
  int64_t lines = 0;                     // lines the header spans
  std::shared_ptr<arrow::Buffer> after;  // what was read past it
};

// Reads the first record of `stream` with Arrow's CSV parser (quotes and all).
arrow::Result<Header> ReadHeader(arrow::io::InputStream& stream) {
  constexpr int64_t kChunk = 1 << 20;
  std::string head;
  bool eof = false;
  while (true) {
    if (head.empty() && !eof) {
      ARROW_ASSIGN_OR_RAISE(auto first, stream.Read(kChunk));
      if (first->size() == 0) return Header{};
      head.assign(first->data_as<char>(), static_cast<size_t>(first->size()));
    }
    arrow::csv::BlockParser parser(arrow::default_memory_pool(), CsvParseOptions(), -1, 1, 1);
    uint32_t size = 0;
    if (eof) {
      ARROW_RETURN_NOT_OK(parser.ParseFinal(head, &size));
    } else {
      ARROW_RETURN_NOT_OK(parser.Parse(head, &size));
    }
    if (parser.num_rows() == 1) {
      Header header;
      header.lines = 1;
      ARROW_RETURN_NOT_OK(parser.VisitLastRow(
          [&](const uint8_t* data, uint32_t n, bool, bool) -> arrow::Status {
            header.names.emplace_back(reinterpret_cast<const char*>(data), n);
            header.lines += LineBreaks(header.names.back());
            return arrow::Status::OK();
          }));
      header.after = arrow::Buffer::FromString(head.substr(size));
      return header;
    }
    if (eof) return Header{};
    ARROW_ASSIGN_OR_RAISE(auto more, stream.Read(kChunk));
    if (more->size() == 0) {
      eof = true;
    } else {
      head.append(more->data_as<char>(), static_cast<size_t>(more->size()));
    }
  }
}

// Follows the quoting of the CSV text passing through, as Arrow's parser reads it (a field that
// starts with a quote runs to the next lone quote; a doubled quote inside it is one quote), to
// tell an input that ends inside a quoted value: the parser takes the rest of the input as
// that value.
class QuoteTrackingStream : public arrow::io::InputStream {
 public:
  QuoteTrackingStream(std::shared_ptr<arrow::io::InputStream> inner, int64_t first_line)
      : inner_(std::move(inner)), line_(first_line) {}
  arrow::Status Close() override { return inner_->Close(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(int64_t n, inner_->Read(nbytes, out));
    Scan(static_cast<const uint8_t*>(out), n);
    return n;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, inner_->Read(nbytes));
    Scan(buffer->data(), buffer->size());
    return buffer;
  }
  // The line of the quote that opened a value still open, or nullopt.
  std::optional<int64_t> OpenQuoteLine() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::kQuoted) return std::nullopt;
    return open_line_;
  }

 private:
  enum class State { kFieldStart, kUnquoted, kQuoted, kQuoteInQuoted };

  void Scan(const uint8_t* data, int64_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t i = 0; i < size; ++i) {
      const uint8_t c = data[i];
      const bool ends_field = c == ',' || c == '\n' || c == '\r';
      switch (state_) {
        case State::kFieldStart:
          if (c == '"') {
            state_ = State::kQuoted;
            open_line_ = line_;
          } else if (!ends_field) {
            state_ = State::kUnquoted;
          }
          break;
        case State::kUnquoted:
          if (ends_field) state_ = State::kFieldStart;
          break;
        case State::kQuoted:
          if (c == '"') state_ = State::kQuoteInQuoted;
          break;
        case State::kQuoteInQuoted:
          state_ = c == '"' ? State::kQuoted : ends_field ? State::kFieldStart : State::kUnquoted;
          break;
      }
      if (c == '\r' || (c == '\n' && !after_cr_)) ++line_;
      after_cr_ = c == '\r';
    }
  }

  std::shared_ptr<arrow::io::InputStream> inner_;
  mutable std::mutex mutex_;
  State state_ = State::kFieldStart;
  int64_t line_;
  int64_t open_line_ = 0;
  bool after_cr_ = false;
};

// A row Arrow's parser set aside: a blank line, or one with the wrong number of fields.
struct SkippedRow {
  int32_t fields = 0;
  int32_t expected = 0;
  std::string text;
};

using SkippedRows = std::map<int64_t, SkippedRow>;

class CsvReader : public arrow::RecordBatchReader {
 public:
  CsvReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::string name,
            std::vector<std::shared_ptr<arrow::DataType>> targets,
            std::shared_ptr<SkippedRows> skipped, std::shared_ptr<QuoteTrackingStream> quotes,
            int64_t first_line, std::string expected)
      : inner_(std::move(inner)), name_(std::move(name)), targets_(std::move(targets)),
        skipped_(std::move(skipped)), quotes_(std::move(quotes)), next_line_(first_line),
        expected_(std::move(expected)) {
    arrow::FieldVector fields;
    const auto& text = inner_->schema()->fields();
    for (size_t i = 0; i < text.size(); ++i) {
      fields.push_back(arrow::field(text[i]->name(), targets_[i] ? targets_[i] : arrow::utf8()));
    }
    schema_ = arrow::schema(std::move(fields));
  }

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = inner_->ReadNext(&batch);
    if (!st.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read input {} after line {}: {}", name_,
                                    next_line_ - 1, st.message()));
    }
    if (!batch) {
      if (auto line = quotes_->OpenQuoteLine()) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("the quote opened at line {} of {} is never closed", *line,
                                      name_));
      }
      ARROW_RETURN_NOT_OK(PassSkippedRows(/*through_end=*/true));
      *out = nullptr;
      return arrow::Status::OK();
    }
    const int64_t n = batch->num_rows();
    std::vector<int64_t> breaks(static_cast<size_t>(n), 0);
    for (const auto& column : batch->columns()) {
      const auto& strings = static_cast<const arrow::StringArray&>(*column);
      const auto* data = strings.raw_data() + strings.raw_value_offsets()[0];
      const auto size = static_cast<size_t>(strings.total_values_length());
      if (!std::memchr(data, '\n', size) && !std::memchr(data, '\r', size)) continue;
      for (int64_t i = 0; i < n; ++i) {
        if (strings.IsValid(i)) breaks[static_cast<size_t>(i)] += LineBreaks(strings.GetView(i));
      }
    }
    std::vector<int64_t> lines(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      ARROW_RETURN_NOT_OK(PassSkippedRows(/*through_end=*/false));
      lines[static_cast<size_t>(i)] = next_line_;
      next_line_ += 1 + breaks[static_cast<size_t>(i)];
      ++next_row_;
    }
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (int i = 0; i < batch->num_columns(); ++i) {
      auto column = batch->column(i);
      // The line of row `row`'s value in column `i`: its record's first line plus the line
      // breaks in the record's values before it.
      auto line_of = [&](int64_t row) {
        int64_t line = lines[static_cast<size_t>(row)];
        for (int k = 0; k < i; ++k) {
          const auto& before = static_cast<const arrow::StringArray&>(*batch->column(k));
          if (before.IsValid(row)) line += LineBreaks(before.GetView(row));
        }
        return line;
      };
      if (!targets_[static_cast<size_t>(i)]) {
        // Text goes to the table as it is: bytes that are not UTF-8 are refused here, where
        // the line is known.
        const auto& strings = static_cast<const arrow::StringArray&>(*column);
        const auto* data = strings.raw_data() + strings.raw_value_offsets()[0];
        if (!arrow::util::ValidateUTF8(data, strings.total_values_length())) {
          for (int64_t r = 0; r < n; ++r) {
            if (strings.IsNull(r) || arrow::util::ValidateUTF8(strings.GetView(r))) continue;
            return DeltaError(DeltaErrorCode::kInvalidArgument,
                              fmt::format("the text \"{}\" in column \"{}\" at line {} of {} is "
                                          "not valid UTF-8",
                                          Shown(strings.GetView(r)), schema_->field(i)->name(),
                                          line_of(r), name_));
          }
        }
      }
      if (const auto& target = targets_[static_cast<size_t>(i)]) {
        BadValue bad;
        auto converted = ConvertText(column, target, &bad);
        if (!converted.ok()) {
          if (bad.index < 0) return converted.status();
          const auto& strings = static_cast<const arrow::StringArray&>(*column);
          const int64_t line = line_of(bad.index);
          return DeltaError(
              DeltaErrorCode::kInvalidArgument,
              fmt::format("cannot convert \"{}\" in column \"{}\" at line {} of {} to {}{}",
                          Shown(strings.GetView(bad.index)), schema_->field(i)->name(),
                          line, name_, DeltaTypeName(*target),
                          bad.reason.empty() ? "" : ": " + bad.reason));
        }
        column = *converted;
      }
      columns.push_back(std::move(column));
    }
    *out = arrow::RecordBatch::Make(schema_, n, std::move(columns));
    return arrow::Status::OK();
  }

 private:
  // Accounts for the rows the parser set aside before the next row (or, at the end, all of
  // them): a blank line takes a line; a row with the wrong number of fields is an error.
  arrow::Status PassSkippedRows(bool through_end) {
    while (!skipped_->empty() && (through_end || skipped_->begin()->first == next_row_)) {
      const SkippedRow row = std::move(skipped_->begin()->second);
      skipped_->erase(skipped_->begin());
      if (row.fields == 1 && row.text.find_first_not_of(" \t\r") == std::string::npos) {
        next_line_ += 1;
        ++next_row_;
        continue;
      }
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("line {} of {} has {} fields but {} has {}: {}",
                                    next_line_, name_, row.fields, expected_, row.expected,
                                    Shown(row.text)));
    }
    return arrow::Status::OK();
  }

  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::string name_;
  std::vector<std::shared_ptr<arrow::DataType>> targets_;
  std::shared_ptr<SkippedRows> skipped_;
  std::shared_ptr<QuoteTrackingStream> quotes_;
  int64_t next_row_ = 1;  // Arrow's number of the next data row
  int64_t next_line_;
  std::string expected_;  // what decides the number of fields: "the header" or the columns
  std::shared_ptr<arrow::Schema> schema_;
};

std::string NoHeaderHint(const std::string& name, const CsvInputOptions& options) {
  if (!options.column_names.empty()) {
    return fmt::format("; if {} has no header line, give --no-header to read its fields as the "
                       "columns {} in this order",
                       name, fmt::join(options.column_names, ", "));
  }
  return fmt::format("; if {} has no header line, give --no-header with --schema 'name TYPE, "
                     "...' naming its columns in order",
                     name);
}

arrow::Status CheckHeader(const std::vector<std::string>& names, const std::string& name,
                          const CsvInputOptions& options) {
  std::map<std::string, std::string> table_columns;
  if (options.table_schema) {
    for (const auto& f : options.table_schema->fields()) {
      table_columns[Lower(f->name())] = f->name();
    }
  }
  const std::string hint = NoHeaderHint(name, options);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].find_first_not_of(" \t") == std::string::npos) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("the header (line 1) of {} has no name for column {}{}", name,
                                    i + 1, hint));
    }
    if (LooksLikeValue(names[i]) && !table_columns.count(Lower(names[i]))) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("the first line of {} does not look like a header: \"{}\" "
                                    "is a value, not a column name{}",
                                    name, Shown(names[i]), hint));
    }
  }
  if (!table_columns.empty() && !options.merge_schema) {
    bool any = false;
    for (const auto& n : names) any |= table_columns.count(Lower(n)) > 0;
    if (!any) {
      std::vector<std::string> table_names;
      for (const auto& f : options.table_schema->fields()) table_names.push_back(f->name());
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("the header (line 1) of {} names none of the table's columns "
                                    "({}){}",
                                    name, fmt::join(table_names, ", "), hint));
    }
  }
  std::map<std::string, std::string> seen;
  for (const auto& n : names) {
    auto [it, inserted] = seen.emplace(Lower(n), n);
    if (!inserted) {
      const std::string both =
          it->second == n ? "" : fmt::format(" (\"{}\" and \"{}\": column names ignore case)",
                                             it->second, n);
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("the header (line 1) of {} names column \"{}\" twice{}{}",
                                    name, it->second, both, hint));
    }
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsvInput(
    std::shared_ptr<arrow::io::InputStream> stream, const std::string& name,
    const CsvInputOptions& options) {
  std::vector<std::string> names;
  int64_t first_line = 1;
  std::shared_ptr<arrow::Buffer> head = arrow::Buffer::FromString("");
  std::string expected = "the header";
  if (options.header) {
    auto header = ReadHeader(*stream);
    if (!header.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("cannot read the header of input {}: {}", name,
                                    header.status().message()));
    }
    if (header->names.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("input {} is empty: CSV input starts with a header line{}",
                                    name, NoHeaderHint(name, options)));
    }
    ARROW_RETURN_NOT_OK(CheckHeader(header->names, name, options));
    for (const auto& declared : options.declared_names) {
      bool found = false;
      for (const auto& n : header->names) found |= Lower(n) == Lower(declared);
      if (!found) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("--schema names column \"{}\", which the header of {} "
                                      "does not have (it has {})",
                                      declared, name, fmt::join(header->names, ", ")));
      }
    }
    names = std::move(header->names);
    first_line += header->lines;
    head = header->after;
  } else {
    names = options.column_names;
    expected = fmt::format("the {} columns", names.size());
    std::map<std::string, std::string> seen;
    for (const auto& n : names) {
      if (!seen.emplace(Lower(n), n).second) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("--no-header: column \"{}\" is named twice", n));
      }
    }
  }

  std::vector<std::shared_ptr<arrow::DataType>> targets;
  auto convert = arrow::csv::ConvertOptions::Defaults();
  // Only an empty unquoted field is null, as `deltacpp read --format csv` writes it; `""` is
  // an empty string and `NA`, `null` and the like are text.
  convert.null_values = {""};
  convert.strings_can_be_null = true;
  convert.quoted_strings_can_be_null = false;
  // Text is checked for UTF-8 per value, so that the error names the column and the line.
  convert.check_utf8 = false;
  for (const auto& n : names) {
    std::shared_ptr<arrow::DataType> target;
    if (options.types) {
      for (const auto& f : options.types->fields()) {
        if (Lower(f->name()) == Lower(n)) {
          if (IsTextConvertible(*f->type())) target = f->type();
          break;
        }
      }
    }
    targets.push_back(target && target->id() != arrow::Type::STRING ? target : nullptr);
    convert.column_types[n] = arrow::utf8();
  }

  // Nothing after the header: no rows (Arrow's reader refuses an empty stream).
  if (head->size() == 0) {
    ARROW_ASSIGN_OR_RAISE(head, stream->Read(1 << 20));
  }
  if (head->size() == 0) {
    arrow::FieldVector fields;
    for (size_t i = 0; i < names.size(); ++i) {
      fields.push_back(arrow::field(names[i], targets[i] ? targets[i] : arrow::utf8()));
    }
    return arrow::RecordBatchReader::Make({}, arrow::schema(std::move(fields)));
  }

  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = false;  // rows are numbered only when read in order
  read.column_names = names;
  auto parse = CsvParseOptions();
  auto skipped = std::make_shared<SkippedRows>();
  parse.invalid_row_handler = [skipped](const arrow::csv::InvalidRow& row) {
    (*skipped)[row.number] =
        SkippedRow{row.actual_columns, row.expected_columns, std::string(row.text)};
    return arrow::csv::InvalidRowResult::Skip;
  };
  auto body = std::make_shared<QuoteTrackingStream>(
      std::make_shared<PrefixedInputStream>(head, stream), first_line);
  auto inner = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), body, read,
                                                 parse, convert);
  if (!inner.ok()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("cannot read input {}: {}", name, inner.status().message()));
  }
  return std::make_shared<CsvReader>(*inner, name, std::move(targets), skipped, body,
                                     first_line, expected);
}

}  // namespace deltacpp::cli
