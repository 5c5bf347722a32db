#include "output_format.h"

#include "masked_nulls.h"

#include <arrow/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/base64.h>
#include <arrow/util/float16.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <arrow/util/parallel.h>
#include <arrow/util/thread_pool.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace deltacpp::cli {

namespace {

// Text for a top-level cell (CSV / table) or JSON for any value.
enum class Mode { kText, kJson };

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void AppendPadded(int64_t v, int width, std::string* out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  const int len = static_cast<int>(res.ptr - buf);
  for (int i = len; i < width; ++i) out->push_back('0');
  out->append(buf, res.ptr);
}

// Proleptic Gregorian date of `days` since 1970-01-01 as yyyy-mm-dd (years outside 0..9999 get
// a sign and as many digits as needed, as ISO-8601 expanded years do).
void AppendDate(int64_t days, std::string* out) {
  // Shift to a 400-year era starting on 0000-03-01 so leap days fall at the end of each year.
  const int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;                                   // [0, 146096]
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);             // [0, 365]
  const int64_t mp = (5 * doy + 2) / 153;                                  // [0, 11], March = 0
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0) {
    out->push_back('-');
    AppendPadded(-year, 4, out);
  } else {
    if (year > 9999) out->push_back('+');
    AppendPadded(year, 4, out);
  }
  out->push_back('-');
  AppendPadded(month, 2, out);
  out->push_back('-');
  AppendPadded(day, 2, out);
}

struct UnitScale {
  int64_t per_second;
  int digits;
};

UnitScale ScaleOf(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return {1, 0};
    case arrow::TimeUnit::MILLI: return {1000, 3};
    case arrow::TimeUnit::MICRO: return {1000000, 6};
    case arrow::TimeUnit::NANO: return {1000000000, 9};
  }
  return {1, 0};
}

// hh:mm:ss plus a fraction of `scale.digits` digits when `fraction` is non-zero.
void AppendTimeOfDay(int64_t second_of_day, int64_t fraction, UnitScale scale, std::string* out) {
  AppendPadded(second_of_day / 3600, 2, out);
  out->push_back(':');
  AppendPadded(second_of_day / 60 % 60, 2, out);
  out->push_back(':');
  AppendPadded(second_of_day % 60, 2, out);
  if (fraction != 0) {
    out->push_back('.');
    AppendPadded(fraction, scale.digits, out);
  }
}

void AppendTimestamp(int64_t value, arrow::TimeUnit::type unit, bool zoned, std::string* out) {
  const UnitScale scale = ScaleOf(unit);
  int64_t seconds = value / scale.per_second;
  int64_t fraction = value % scale.per_second;
  if (fraction < 0) {
    fraction += scale.per_second;
    --seconds;
  }
  const int64_t days = FloorDiv(seconds, 86400);
  AppendDate(days, out);
  out->push_back('T');
  AppendTimeOfDay(seconds - days * 86400, fraction, scale, out);
  if (zoned) out->push_back('Z');
}

void AppendTime(int64_t value, arrow::TimeUnit::type unit, std::string* out) {
  const UnitScale scale = ScaleOf(unit);
  const int64_t seconds = FloorDiv(value, scale.per_second);
  AppendTimeOfDay(seconds, value - seconds * scale.per_second, scale, out);
}

template <typename Int>
void AppendInt(Int v, std::string* out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, res.ptr);
}

template <typename Float>
void AppendFloat(Float v, Mode mode, std::string* out) {
  const char* special = nullptr;
  if (std::isnan(v)) {
    special = "NaN";
  } else if (std::isinf(v)) {
    special = v > 0 ? "Infinity" : "-Infinity";
  }
  if (special != nullptr) {
    if (mode == Mode::kJson) out->push_back('"');
    out->append(special);
    if (mode == Mode::kJson) out->push_back('"');
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, res.ptr);
}

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[(c >> 4) & 0xF]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A string-like value: raw in text mode, quoted and escaped in JSON.
void AppendStringValue(std::string_view s, Mode mode, std::string* out) {
  if (mode == Mode::kJson) {
    AppendJsonString(s, out);
  } else {
    out->append(s);
  }
}

bool IsStringType(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::STRING_VIEW;
}

void AppendValue(const arrow::Array& array, int64_t i, Mode mode, std::string* out);

template <typename ListArrayType>
void AppendList(const ListArrayType& list, int64_t i, std::string* out) {
  const arrow::Array& values = *list.values();
  const int64_t begin = list.value_offset(i);
  const int64_t length = list.value_length(i);
  out->push_back('[');
  for (int64_t k = 0; k < length; ++k) {
    if (k > 0) out->push_back(',');
    AppendValue(values, begin + k, Mode::kJson, out);
  }
  out->push_back(']');
}

void AppendMap(const arrow::MapArray& map, int64_t i, std::string* out) {
  const arrow::Array& keys = *map.keys();
  const arrow::Array& items = *map.items();
  const int64_t begin = map.value_offset(i);
  const int64_t length = map.value_length(i);
  const bool string_keys = IsStringType(keys.type_id());
  out->push_back(string_keys ? '{' : '[');
  for (int64_t k = 0; k < length; ++k) {
    if (k > 0) out->push_back(',');
    if (string_keys) {
      // Map keys are never null.
      AppendValue(keys, begin + k, Mode::kJson, out);
      out->push_back(':');
      AppendValue(items, begin + k, Mode::kJson, out);
    } else {
      out->append("{\"key\":");
      AppendValue(keys, begin + k, Mode::kJson, out);
      out->append(",\"value\":");
      AppendValue(items, begin + k, Mode::kJson, out);
      out->push_back('}');
    }
  }
  out->push_back(string_keys ? '}' : ']');
}

void AppendStruct(const arrow::StructArray& st, int64_t i, std::string* out) {
  const auto& type = static_cast<const arrow::StructType&>(*st.type());
  out->push_back('{');
  for (int f = 0; f < type.num_fields(); ++f) {
    if (f > 0) out->push_back(',');
    AppendJsonString(type.field(f)->name(), out);
    out->push_back(':');
    AppendValue(*st.field(f), i, Mode::kJson, out);
  }
  out->push_back('}');
}

// Appends value `i` of `array`. In text mode a null appends nothing (callers decide how a NULL
// cell looks); in JSON mode it is `null`. Nested values are always JSON.
void AppendValue(const arrow::Array& array, int64_t i, Mode mode, std::string* out) {
  using arrow::Type;
  if (array.IsNull(i)) {
    if (mode == Mode::kJson) out->append("null");
    return;
  }
  switch (array.type_id()) {
    case Type::NA:
      if (mode == Mode::kJson) out->append("null");
      return;
    case Type::BOOL:
      out->append(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false");
      return;
    case Type::INT8: AppendInt(static_cast<const arrow::Int8Array&>(array).Value(i), out); return;
    case Type::INT16: AppendInt(static_cast<const arrow::Int16Array&>(array).Value(i), out); return;
    case Type::INT32: AppendInt(static_cast<const arrow::Int32Array&>(array).Value(i), out); return;
    case Type::INT64: AppendInt(static_cast<const arrow::Int64Array&>(array).Value(i), out); return;
    case Type::UINT8: AppendInt(static_cast<const arrow::UInt8Array&>(array).Value(i), out); return;
    case Type::UINT16:
      AppendInt(static_cast<const arrow::UInt16Array&>(array).Value(i), out);
      return;
    case Type::UINT32:
      AppendInt(static_cast<const arrow::UInt32Array&>(array).Value(i), out);
      return;
    case Type::UINT64:
      AppendInt(static_cast<const arrow::UInt64Array&>(array).Value(i), out);
      return;
    case Type::HALF_FLOAT: {
      auto bits = static_cast<const arrow::HalfFloatArray&>(array).Value(i);
      AppendFloat(arrow::util::Float16::FromBits(bits).ToFloat(), mode, out);
      return;
    }
    case Type::FLOAT:
      AppendFloat(static_cast<const arrow::FloatArray&>(array).Value(i), mode, out);
      return;
    case Type::DOUBLE:
      AppendFloat(static_cast<const arrow::DoubleArray&>(array).Value(i), mode, out);
      return;
    case Type::DECIMAL32:
      out->append(static_cast<const arrow::Decimal32Array&>(array).FormatValue(i));
      return;
    case Type::DECIMAL64:
      out->append(static_cast<const arrow::Decimal64Array&>(array).FormatValue(i));
      return;
    case Type::DECIMAL128:
      out->append(static_cast<const arrow::Decimal128Array&>(array).FormatValue(i));
      return;
    case Type::DECIMAL256:
      out->append(static_cast<const arrow::Decimal256Array&>(array).FormatValue(i));
      return;
    case Type::STRING:
      AppendStringValue(static_cast<const arrow::StringArray&>(array).GetView(i), mode, out);
      return;
    case Type::LARGE_STRING:
      AppendStringValue(static_cast<const arrow::LargeStringArray&>(array).GetView(i), mode, out);
      return;
    case Type::STRING_VIEW:
      AppendStringValue(static_cast<const arrow::StringViewArray&>(array).GetView(i), mode, out);
      return;
    case Type::BINARY:
      AppendStringValue(
          arrow::util::base64_encode(static_cast<const arrow::BinaryArray&>(array).GetView(i)),
          mode, out);
      return;
    case Type::LARGE_BINARY:
      AppendStringValue(arrow::util::base64_encode(
                            static_cast<const arrow::LargeBinaryArray&>(array).GetView(i)),
                        mode, out);
      return;
    case Type::BINARY_VIEW:
      AppendStringValue(
          arrow::util::base64_encode(static_cast<const arrow::BinaryViewArray&>(array).GetView(i)),
          mode, out);
      return;
    case Type::FIXED_SIZE_BINARY:
      AppendStringValue(arrow::util::base64_encode(
                            static_cast<const arrow::FixedSizeBinaryArray&>(array).GetView(i)),
                        mode, out);
      return;
    case Type::DATE32: {
      if (mode == Mode::kJson) out->push_back('"');
      AppendDate(static_cast<const arrow::Date32Array&>(array).Value(i), out);
      if (mode == Mode::kJson) out->push_back('"');
      return;
    }
    case Type::DATE64: {
      if (mode == Mode::kJson) out->push_back('"');
      AppendDate(FloorDiv(static_cast<const arrow::Date64Array&>(array).Value(i), 86400000), out);
      if (mode == Mode::kJson) out->push_back('"');
      return;
    }
    case Type::TIMESTAMP: {
      const auto& type = static_cast<const arrow::TimestampType&>(*array.type());
      if (mode == Mode::kJson) out->push_back('"');
      AppendTimestamp(static_cast<const arrow::TimestampArray&>(array).Value(i), type.unit(),
                      !type.timezone().empty(), out);
      if (mode == Mode::kJson) out->push_back('"');
      return;
    }
    case Type::TIME32: {
      const auto& type = static_cast<const arrow::Time32Type&>(*array.type());
      if (mode == Mode::kJson) out->push_back('"');
      AppendTime(static_cast<const arrow::Time32Array&>(array).Value(i), type.unit(), out);
      if (mode == Mode::kJson) out->push_back('"');
      return;
    }
    case Type::TIME64: {
      const auto& type = static_cast<const arrow::Time64Type&>(*array.type());
      if (mode == Mode::kJson) out->push_back('"');
      AppendTime(static_cast<const arrow::Time64Array&>(array).Value(i), type.unit(), out);
      if (mode == Mode::kJson) out->push_back('"');
      return;
    }
    case Type::DURATION:
      AppendInt(static_cast<const arrow::DurationArray&>(array).Value(i), out);
      return;
    case Type::STRUCT:
      AppendStruct(static_cast<const arrow::StructArray&>(array), i, out);
      return;
    case Type::LIST:
      AppendList(static_cast<const arrow::ListArray&>(array), i, out);
      return;
    case Type::LARGE_LIST:
      AppendList(static_cast<const arrow::LargeListArray&>(array), i, out);
      return;
    case Type::FIXED_SIZE_LIST:
      AppendList(static_cast<const arrow::FixedSizeListArray&>(array), i, out);
      return;
    case Type::LIST_VIEW:
      AppendList(static_cast<const arrow::ListViewArray&>(array), i, out);
      return;
    case Type::LARGE_LIST_VIEW:
      AppendList(static_cast<const arrow::LargeListViewArray&>(array), i, out);
      return;
    case Type::MAP:
      AppendMap(static_cast<const arrow::MapArray&>(array), i, out);
      return;
    case Type::DICTIONARY: {
      const auto& dict = static_cast<const arrow::DictionaryArray&>(array);
      AppendValue(*dict.dictionary(), dict.GetValueIndex(i), mode, out);
      return;
    }
    case Type::EXTENSION:
      AppendValue(*static_cast<const arrow::ExtensionArray&>(array).storage(), i, mode, out);
      return;
    default: {
      // Unions, intervals, run-end encoded: Arrow's own scalar text.
      auto scalar = array.GetScalar(i);
      AppendStringValue(scalar.ok() ? (*scalar)->ToString() : std::string("?"), mode, out);
      return;
    }
  }
}

bool IsNumericType(const arrow::DataType& type) {
  const arrow::DataType* t = &type;
  if (t->id() == arrow::Type::DICTIONARY) {
    t = static_cast<const arrow::DictionaryType&>(type).value_type().get();
  }
  return arrow::is_integer(t->id()) || arrow::is_floating(t->id()) ||
         arrow::is_decimal(t->id()) || t->id() == arrow::Type::DURATION;
}

// Number of Unicode code points in UTF-8 `s` (continuation bytes are not counted).
size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string EscapeForTable(std::string s) {
  if (s.find_first_of("\t\r\n") == std::string::npos) return s;
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '\t': out.append("\\t"); break;
      case '\r': out.append("\\r"); break;
      case '\n': out.append("\\n"); break;
      default: out.push_back(c);
    }
  }
  return out;
}

void AppendCsvField(std::string_view field, std::string* out) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(field);
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// Calls `fn(batch)` for each batch of `reader`, sliced so that at most `limit` rows are seen.
template <typename Fn>
arrow::Status ForEachBatch(arrow::RecordBatchReader& reader, const OutputOptions& opts, Fn&& fn) {
  int64_t remaining = opts.limit.value_or(INT64_MAX);
  while (remaining > 0) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() > remaining) batch = batch->Slice(0, remaining);
    remaining -= batch->num_rows();
    ARROW_RETURN_NOT_OK(fn(std::move(batch)));
  }
  return arrow::Status::OK();
}

arrow::Status CheckStream(const std::ostream& out) {
  if (!out) return arrow::Status::IOError("failed writing query output");
  return arrow::Status::OK();
}

// The text of cell (r, c) of a table output, into `text` (cleared first).
void TableCell(const arrow::RecordBatch& batch, int c, int64_t r, std::string* text) {
  text->clear();
  const arrow::Array& column = *batch.column(c);
  if (column.IsNull(r)) {
    text->append("NULL");
    return;
  }
  AppendValue(column, r, Mode::kText, text);
  if (text->find_first_of("\t\r\n") != std::string::npos) *text = EscapeForTable(std::move(*text));
}

// An aligned table. The widths depend on every row, so the batches are held (as Arrow data,
// far smaller than their text) and formatted twice: once for the widths, once for the lines,
// each pass in pieces on every core, the lines written in order.
arrow::Status WriteTable(arrow::RecordBatchReader& reader, std::ostream& out,
                         const OutputOptions& opts) {
  const auto schema = reader.schema();
  const int ncols = schema->num_fields();
  std::vector<size_t> widths(ncols);
  std::vector<bool> right(ncols);
  for (int c = 0; c < ncols; ++c) {
    widths[c] = DisplayWidth(schema->field(c)->name());
    right[c] = IsNumericType(*schema->field(c)->type());
  }
  // Pieces of at most 16Ki rows of one batch.
  struct Piece {
    std::shared_ptr<arrow::RecordBatch> batch;
    int64_t begin, end;
  };
  constexpr int64_t kPieceRows = 16 * 1024;
  std::vector<Piece> pieces;
  ARROW_RETURN_NOT_OK(ForEachBatch(reader, opts, [&](std::shared_ptr<arrow::RecordBatch> batch) {
    for (int64_t begin = 0; begin < batch->num_rows(); begin += kPieceRows) {
      pieces.push_back({batch, begin, std::min(batch->num_rows(), begin + kPieceRows)});
    }
    return arrow::Status::OK();
  }));
  const int npieces = static_cast<int>(pieces.size());
  std::vector<std::vector<size_t>> piece_widths(npieces, std::vector<size_t>(ncols, 0));
  ARROW_RETURN_NOT_OK(arrow::internal::ParallelFor(npieces, [&](int k) {
    std::string text;
    const Piece& p = pieces[k];
    for (int64_t r = p.begin; r < p.end; ++r) {
      for (int c = 0; c < ncols; ++c) {
        TableCell(*p.batch, c, r, &text);
        piece_widths[k][c] = std::max(piece_widths[k][c], DisplayWidth(text));
      }
    }
    return arrow::Status::OK();
  }));
  for (const auto& w : piece_widths) {
    for (int c = 0; c < ncols; ++c) widths[c] = std::max(widths[c], w[c]);
  }

  auto append_cell = [&](int c, std::string_view cell, bool header, std::string* line) {
    if (c > 0) line->append(" | ");
    const size_t pad = widths[c] - DisplayWidth(cell);
    const bool pad_left = right[c] && !header;
    if (pad_left) line->append(pad, ' ');
    line->append(cell);
    // No trailing spaces after the last column.
    if (!pad_left && c + 1 < ncols) line->append(pad, ' ');
  };
  std::string head;
  for (int c = 0; c < ncols; ++c) append_cell(c, schema->field(c)->name(), true, &head);
  head.push_back('\n');
  for (int c = 0; c < ncols; ++c) {
    if (c > 0) head.append("-+-");
    head.append(widths[c], '-');
  }
  head.push_back('\n');
  out << head;

  constexpr int kPiecesAtOnce = 16;
  for (int first = 0; first < npieces; first += kPiecesAtOnce) {
    const int count = std::min(kPiecesAtOnce, npieces - first);
    std::vector<std::string> lines(count);
    ARROW_RETURN_NOT_OK(arrow::internal::ParallelFor(count, [&](int k) {
      std::string text;
      const Piece& p = pieces[first + k];
      for (int64_t r = p.begin; r < p.end; ++r) {
        for (int c = 0; c < ncols; ++c) {
          TableCell(*p.batch, c, r, &text);
          append_cell(c, text, false, &lines[k]);
        }
        lines[k].push_back('\n');
      }
      return arrow::Status::OK();
    }));
    for (const auto& piece : lines) {
      out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    }
    ARROW_RETURN_NOT_OK(CheckStream(out));
    for (int k = first; k < first + count; ++k) pieces[k].batch.reset();  // written: let go
  }
  return CheckStream(out);
}

// True when a column's text can hold a character CSV must quote (strings, binary, nested
// values as JSON); numbers, booleans, dates and times never do.
bool TextMayNeedQuotes(const arrow::DataType& type) {
  if (arrow::is_integer(type.id()) || arrow::is_floating(type.id()) ||
      arrow::is_decimal(type.id()) || arrow::is_temporal(type.id())) {
    return false;
  }
  return type.id() != arrow::Type::BOOL && type.id() != arrow::Type::NA;
}

bool NeedsCsvQuotes(std::string_view field) {
  for (char c : field) {
    if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
  }
  return false;
}

// The CSV lines of rows [begin, end) of `batch`.
std::string CsvLines(const arrow::RecordBatch& batch, int64_t begin, int64_t end) {
  const int ncols = batch.num_columns();
  std::vector<const arrow::Array*> columns(ncols);
  std::vector<bool> check(ncols);
  for (int c = 0; c < ncols; ++c) {
    columns[c] = batch.column(c).get();
    check[c] = TextMayNeedQuotes(*columns[c]->type());
  }
  std::string text;
  text.reserve(static_cast<size_t>(end - begin) * (24 * ncols + 1));
  std::string quoted;
  for (int64_t r = begin; r < end; ++r) {
    for (int c = 0; c < ncols; ++c) {
      if (c > 0) text.push_back(',');
      const arrow::Array& column = *columns[c];
      if (column.IsNull(r)) continue;
      const size_t start = text.size();
      AppendValue(column, r, Mode::kText, &text);
      if (text.size() == start) {
        text.append("\"\"");  // an empty value, told apart from NULL
      } else if (check[c] && NeedsCsvQuotes(std::string_view(text).substr(start))) {
        quoted.clear();
        AppendCsvField(std::string_view(text).substr(start), &quoted);
        text.resize(start);
        text.append(quoted);
      }
    }
    text.push_back('\n');
  }
  return text;
}

// The JSON Lines of rows [begin, end) of `batch`; `keys[c]` is `"name":` of column c.
std::string JsonLines(const arrow::RecordBatch& batch, int64_t begin, int64_t end,
                      const std::vector<std::string>& keys) {
  const int ncols = batch.num_columns();
  std::vector<const arrow::Array*> columns(ncols);
  for (int c = 0; c < ncols; ++c) columns[c] = batch.column(c).get();
  std::string text;
  text.reserve(static_cast<size_t>(end - begin) * (40 * ncols + 3));
  for (int64_t r = begin; r < end; ++r) {
    text.push_back('{');
    for (int c = 0; c < ncols; ++c) {
      if (c > 0) text.push_back(',');
      text.append(keys[c]);
      AppendValue(*columns[c], r, Mode::kJson, &text);
    }
    text.append("}\n");
  }
  return text;
}

// Formats batches into text on Arrow's CPU pool, a few batches ahead (each cut into pieces of
// at most 16k rows formatted at once), and writes the text to `out` in order.
class ParallelTextWriter {
 public:
  using Format = std::function<std::string(const arrow::RecordBatch&, int64_t, int64_t)>;
  ParallelTextWriter(std::ostream& out, Format format) : out_(out), format_(std::move(format)) {}

  arrow::Status Add(std::shared_ptr<arrow::RecordBatch> batch) {
    constexpr int64_t kPiece = 16 * 1024;
    auto* pool = arrow::internal::GetCpuThreadPool();
    for (int64_t begin = 0; begin < batch->num_rows(); begin += kPiece) {
      const int64_t end = std::min(batch->num_rows(), begin + kPiece);
      ARROW_ASSIGN_OR_RAISE(auto piece, pool->Submit([this, batch, begin, end] {
        return format_(*batch, begin, end);
      }));
      pending_.push_back(std::move(piece));
      if (pending_.size() > kAhead) ARROW_RETURN_NOT_OK(WriteOldest());
    }
    return arrow::Status::OK();
  }

  arrow::Status Finish() {
    while (!pending_.empty()) ARROW_RETURN_NOT_OK(WriteOldest());
    return CheckStream(out_);
  }

  ~ParallelTextWriter() {
    for (auto& f : pending_) f.Wait();  // nothing may outlive the batches' owner
  }

 private:
  static constexpr size_t kAhead = 8;

  arrow::Status WriteOldest() {
    auto piece = std::move(pending_.front());
    pending_.pop_front();
    const arrow::Result<std::string>& text = piece.result();  // no copy of the text
    ARROW_RETURN_NOT_OK(text.status());
    out_.write(text->data(), static_cast<std::streamsize>(text->size()));
    return CheckStream(out_);
  }

  std::ostream& out_;
  Format format_;
  std::deque<arrow::Future<std::string>> pending_;
};

arrow::Status WriteCsv(arrow::RecordBatchReader& reader, std::ostream& out,
                       const OutputOptions& opts) {
  const auto schema = reader.schema();
  std::string line;
  for (int c = 0; c < schema->num_fields(); ++c) {
    if (c > 0) line.push_back(',');
    AppendCsvField(schema->field(c)->name(), &line);
  }
  line.push_back('\n');
  out << line;
  ParallelTextWriter writer(out, CsvLines);
  auto st = ForEachBatch(reader, opts, [&](std::shared_ptr<arrow::RecordBatch> batch) {
    return writer.Add(std::move(batch));
  });
  auto finished = writer.Finish();
  return st.ok() ? finished : st;
}

arrow::Status WriteJsonLines(arrow::RecordBatchReader& reader, std::ostream& out,
                             const OutputOptions& opts) {
  const auto schema = reader.schema();
  std::vector<std::string> keys(schema->num_fields());
  for (int c = 0; c < schema->num_fields(); ++c) {
    AppendJsonString(schema->field(c)->name(), &keys[c]);
    keys[c].push_back(':');
  }
  ParallelTextWriter writer(out, [keys](const arrow::RecordBatch& b, int64_t begin,
                                        int64_t end) { return JsonLines(b, begin, end, keys); });
  auto st = ForEachBatch(reader, opts, [&](std::shared_ptr<arrow::RecordBatch> batch) {
    return writer.Add(std::move(batch));
  });
  auto finished = writer.Finish();
  return st.ok() ? finished : st;
}

// An arrow::io::OutputStream writing through to a std::ostream.
class OstreamOutputStream : public arrow::io::OutputStream {
 public:
  explicit OstreamOutputStream(std::ostream& out) : out_(out) {}

  arrow::Status Close() override {
    closed_ = true;
    out_.flush();
    return CheckStream(out_);
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Write(const void* data, int64_t nbytes) override {
    if (closed_) return arrow::Status::Invalid("write to a closed output stream");
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(nbytes));
    position_ += nbytes;
    return CheckStream(out_);
  }
  using arrow::io::OutputStream::Write;

 private:
  std::ostream& out_;
  int64_t position_ = 0;
  bool closed_ = false;
};

arrow::Status WriteParquet(arrow::RecordBatchReader& reader, std::ostream& out,
                           const OutputOptions& opts) {
  auto sink = std::make_shared<OstreamOutputStream>(out);
  auto properties =
      parquet::WriterProperties::Builder().compression(arrow::Compression::SNAPPY)->build();
  auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  ARROW_ASSIGN_OR_RAISE(auto writer,
                        parquet::arrow::FileWriter::Open(*reader.schema(),
                                                         arrow::default_memory_pool(), sink,
                                                         properties, arrow_properties));
  ARROW_RETURN_NOT_OK(ForEachBatch(reader, opts, [&](std::shared_ptr<arrow::RecordBatch> owned) {
    const arrow::RecordBatch& batch = *owned;
    // Keeps the declared nullability: peers compare it, and a required field stays required.
    ARROW_ASSIGN_OR_RAISE(auto writable, WithMaskedNullsCleared(batch));
    return writer->WriteRecordBatch(*writable);
  }));
  ARROW_RETURN_NOT_OK(writer->Close());
  return sink->Close();
}

}  // namespace

arrow::Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "table") return OutputFormat::kTable;
  if (lower == "csv") return OutputFormat::kCsv;
  if (lower == "json" || lower == "jsonl") return OutputFormat::kJson;
  if (lower == "parquet") return OutputFormat::kParquet;
  return arrow::Status::Invalid("unknown output format '", name,
                                "' (expected table, csv, json or parquet)");
}

arrow::Status WriteRecordBatches(arrow::RecordBatchReader& reader, OutputFormat format,
                                 std::ostream& out, const OutputOptions& opts) {
  if (opts.limit && *opts.limit < 0) {
    return arrow::Status::Invalid("output row limit must not be negative, got ", *opts.limit);
  }
  switch (format) {
    case OutputFormat::kTable: return WriteTable(reader, out, opts);
    case OutputFormat::kCsv: return WriteCsv(reader, out, opts);
    case OutputFormat::kJson: return WriteJsonLines(reader, out, opts);
    case OutputFormat::kParquet: return WriteParquet(reader, out, opts);
  }
  return arrow::Status::Invalid("unknown output format");
}

}  // namespace deltacpp::cli
