#include "protocol/partition_values.h"

#include "util/uri.h"

#include <arrow/api.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "deltacpp/error.h"

namespace deltacpp::internal {

namespace {

arrow::Status BadValue(std::string_view raw, const arrow::DataType& type, std::string_view why = "") {
  std::string msg = "invalid partition value '" + std::string(raw) + "' for type " + type.ToString();
  if (!why.empty()) {
    msg += ": ";
    msg += why;
  }
  return DeltaError(DeltaErrorCode::kCorruptLog, std::move(msg));
}

arrow::Status BadText(std::string_view text, std::string_view what) {
  return DeltaError(DeltaErrorCode::kCorruptLog, "invalid " + std::string(what) + " '" + std::string(text) + "'");
}

// Reads exactly `n` digits at `pos`.
bool ReadDigits(std::string_view s, size_t& pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  pos += n;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

// Parses `[+-]y{4,}-mm-dd` at the start of `s`; leaves `pos` after it.
bool ParseDatePart(std::string_view s, size_t& pos, int64_t& days) {
  bool negative = false;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    negative = s[pos] == '-';
    ++pos;
  }
  size_t start = pos;
  int64_t year = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 9) {
    year = year * 10 + (s[pos] - '0');
    ++pos;
  }
  if (pos - start < 4) return false;
  if (negative) year = -year;
  int month = 0;
  int day = 0;
  if (!Expect(s, pos, '-') || !ReadDigits(s, pos, 2, month) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, day)) {
    return false;
  }
  if (year < -32767 || year > 32767) return false;
  std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(year)},
                                  std::chrono::month{static_cast<unsigned>(month)},
                                  std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return false;
  days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return true;
}

template <typename CType>
arrow::Result<std::shared_ptr<arrow::Scalar>> ParseInteger(std::string_view raw,
                                                           const std::shared_ptr<arrow::DataType>& type) {
  CType v{};
  auto [ptr, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || ptr != raw.data() + raw.size()) return BadValue(raw, *type);
  return arrow::MakeScalar(type, v);
}

template <typename CType>
arrow::Result<std::shared_ptr<arrow::Scalar>> ParseFloating(std::string_view raw,
                                                            const std::shared_ptr<arrow::DataType>& type) {
  CType v{};
  if (raw == "NaN") {
    v = std::numeric_limits<CType>::quiet_NaN();
  } else if (raw == "Infinity" || raw == "+Infinity") {
    v = std::numeric_limits<CType>::infinity();
  } else if (raw == "-Infinity") {
    v = -std::numeric_limits<CType>::infinity();
  } else {
    std::string_view digits = raw;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    // Only plain decimal or scientific notation (from_chars would also take "inf", "nan", hex digits...).
    if (digits.find_first_not_of("0123456789+-.eE") != std::string_view::npos) return BadValue(raw, *type);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) return BadValue(raw, *type);
  }
  return arrow::MakeScalar(type, v);
}

template <typename DecimalValue>
arrow::Result<std::shared_ptr<arrow::Scalar>> ParseDecimalValue(std::string_view raw,
                                                                const std::shared_ptr<arrow::DataType>& type) {
  const auto& dec = static_cast<const arrow::DecimalType&>(*type);
  DecimalValue value;
  int32_t precision = 0;
  int32_t scale = 0;
  if (!DecimalValue::FromString(raw, &value, &precision, &scale).ok()) return BadValue(raw, *type);
  if (scale != dec.scale()) {
    auto rescaled = value.Rescale(scale, dec.scale());
    if (!rescaled.ok()) return BadValue(raw, *type, "does not fit the scale");
    value = *rescaled;
  }
  if (!value.FitsInPrecision(dec.precision())) return BadValue(raw, *type, "does not fit the precision");
  return arrow::MakeScalar(type, value);
}

bool CheckedMulAdd(int64_t a, int64_t mul, int64_t add, int64_t& out) {
  int64_t t;
  if (__builtin_mul_overflow(a, mul, &t)) return false;
  return !__builtin_add_overflow(t, add, &out);
}

// Floor division and modulo for converting epoch values to calendar fields.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// Splits std::to_chars scientific output ("-1.25e+10") into significant digits without trailing zeros
// and the decimal exponent.
void SplitScientific(std::string_view sci, std::string& digits, int& exp) {
  if (!sci.empty() && sci.front() == '-') sci.remove_prefix(1);
  size_t e = sci.find('e');
  digits.clear();
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
  exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

// Java Double.toString / Float.toString formatting: the shortest digits that round-trip, plain notation
// for 1e-3 <= |v| < 1e7 and `d.dddE<exp>` otherwise, always with a digit after the point.
template <typename T>
std::string JavaFloatingString(T v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string digits;
  int exp = 0;
  SplitScientific(std::string_view(buf, static_cast<size_t>(res.ptr - buf)), digits, exp);
  if (digits.size() == 1) {
    // Java never settles for one significant digit: it takes the two-digit decimal nearest to the value
    // (this only differs for subnormals, e.g. 4.9E-324 where the shortest form is 5e-324).
    res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific, 1);
    SplitScientific(std::string_view(buf, static_cast<size_t>(res.ptr - buf)), digits, exp);
  }
  std::string out = std::signbit(v) ? "-" : "";
  if (exp >= -3 && exp < 7) {
    if (exp >= 0) {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      out += digits.substr(0, int_len);
      out += '.';
      out += digits.size() > int_len ? digits.substr(int_len) : "0";
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    }
  } else {
    out += digits[0];
    out += '.';
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += 'E';
    out += std::to_string(exp);
  }
  return out;
}

std::string PlainDecimal(std::string integer, int32_t scale) {
  if (scale <= 0) {
    if (scale < 0 && integer != "0") integer.append(static_cast<size_t>(-scale), '0');
    return integer;
  }
  bool negative = !integer.empty() && integer.front() == '-';
  if (negative) integer.erase(0, 1);
  if (integer.size() <= static_cast<size_t>(scale)) {
    integer.insert(0, static_cast<size_t>(scale) + 1 - integer.size(), '0');
  }
  integer.insert(integer.size() - static_cast<size_t>(scale), ".");
  return negative ? "-" + integer : integer;
}

}  // namespace

arrow::Result<int32_t> ParseDateDays(std::string_view text) {
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDatePart(text, pos, days) || pos != text.size()) return BadText(text, "date");
  return static_cast<int32_t>(days);
}

arrow::Result<std::pair<int64_t, int32_t>> ParseTimestampText(std::string_view text, bool allow_zone) {
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDatePart(text, pos, days)) return BadText(text, "timestamp");
  int hour = 0;
  int minute = 0;
  int second = 0;
  int32_t nanos = 0;
  if (pos < text.size() && (text[pos] == ' ' || text[pos] == 'T')) {
    ++pos;
    if (!ReadDigits(text, pos, 2, hour) || !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, minute)) {
      return BadText(text, "timestamp");
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!ReadDigits(text, pos, 2, second)) return BadText(text, "timestamp");
      if (pos < text.size() && text[pos] == '.') {
        ++pos;
        size_t start = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          if (pos - start >= 9) return BadText(text, "timestamp");
          nanos = nanos * 10 + (text[pos] - '0');
          ++pos;
        }
        if (pos == start) return BadText(text, "timestamp");
        for (size_t i = pos - start; i < 9; ++i) nanos *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return BadText(text, "timestamp");
  }
  int64_t offset_seconds = 0;
  if (pos < text.size()) {
    if (!allow_zone) return BadText(text, "timestamp without time zone");
    if (text[pos] == 'Z' && pos + 1 == text.size()) {
      ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
      int sign = text[pos] == '-' ? -1 : 1;
      ++pos;
      int oh = 0;
      int om = 0;
      if (!ReadDigits(text, pos, 2, oh)) return BadText(text, "timestamp");
      if (pos < text.size()) {
        Expect(text, pos, ':');
        if (!ReadDigits(text, pos, 2, om)) return BadText(text, "timestamp");
      }
      if (oh > 18 || om > 59) return BadText(text, "timestamp");
      offset_seconds = sign * (oh * 3600 + om * 60);
    }
    if (pos != text.size()) return BadText(text, "timestamp");
  }
  int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return std::make_pair(seconds, nanos);
}

std::string FormatDateDays(int64_t days) {
  std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  int year = static_cast<int>(ymd.year());
  char buf[32];
  if (year < 0) {
    std::snprintf(buf, sizeof(buf), "-%04d-%02u-%02u", -year, static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
  } else {
    std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", year, static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
  }
  return buf;
}

std::string FormatTimestamp(int64_t seconds, int32_t nanos) {
  int64_t days = FloorDiv(seconds, 86400);
  int64_t of_day = FloorMod(seconds, 86400);
  std::string out = FormatDateDays(days);
  char buf[32];
  std::snprintf(buf, sizeof(buf), " %02d:%02d:%02d", static_cast<int>(of_day / 3600),
                static_cast<int>(of_day / 60 % 60), static_cast<int>(of_day % 60));
  out += buf;
  if (nanos != 0) {
    std::snprintf(buf, sizeof(buf), ".%09d", nanos);
    std::string frac(buf);
    while (frac.back() == '0') frac.pop_back();
    out += frac;
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Scalar>> ParsePartitionValue(const std::optional<std::string_view>& raw,
                                                                  const std::shared_ptr<arrow::DataType>& type) {
  if (!raw.has_value() || raw->empty() || type->id() == arrow::Type::NA) return arrow::MakeNullScalar(type);
  std::string_view s = *raw;
  using arrow::Type;
  switch (type->id()) {
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
      return arrow::MakeScalar(type, arrow::Buffer::FromString(std::string(s)));
    case Type::FIXED_SIZE_BINARY: {
      if (static_cast<int32_t>(s.size()) != static_cast<const arrow::FixedSizeBinaryType&>(*type).byte_width()) {
        return BadValue(s, *type, "wrong length");
      }
      return arrow::MakeScalar(type, arrow::Buffer::FromString(std::string(s)));
    }
    case Type::BOOL:
      if (EqualsIgnoreCase(s, "true")) return arrow::MakeScalar(type, true);
      if (EqualsIgnoreCase(s, "false")) return arrow::MakeScalar(type, false);
      return BadValue(s, *type);
    case Type::INT8: return ParseInteger<int8_t>(s, type);
    case Type::INT16: return ParseInteger<int16_t>(s, type);
    case Type::INT32: return ParseInteger<int32_t>(s, type);
    case Type::INT64: return ParseInteger<int64_t>(s, type);
    case Type::UINT8: return ParseInteger<uint8_t>(s, type);
    case Type::UINT16: return ParseInteger<uint16_t>(s, type);
    case Type::UINT32: return ParseInteger<uint32_t>(s, type);
    case Type::UINT64: return ParseInteger<uint64_t>(s, type);
    case Type::FLOAT: return ParseFloating<float>(s, type);
    case Type::DOUBLE: return ParseFloating<double>(s, type);
    case Type::DECIMAL32: return ParseDecimalValue<arrow::Decimal32>(s, type);
    case Type::DECIMAL64: return ParseDecimalValue<arrow::Decimal64>(s, type);
    case Type::DECIMAL128: return ParseDecimalValue<arrow::Decimal128>(s, type);
    case Type::DECIMAL256: return ParseDecimalValue<arrow::Decimal256>(s, type);
    case Type::DATE32: {
      auto days = ParseDateDays(s);
      if (!days.ok()) return BadValue(s, *type);
      return arrow::MakeScalar(type, *days);
    }
    case Type::DATE64: {
      auto days = ParseDateDays(s);
      if (!days.ok()) return BadValue(s, *type);
      return arrow::MakeScalar(type, static_cast<int64_t>(*days) * 86400000);
    }
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(*type);
      auto parsed = ParseTimestampText(s, /*allow_zone=*/!ts.timezone().empty());
      if (!parsed.ok()) return BadValue(s, *type);
      auto [seconds, nanos] = *parsed;
      int64_t value = 0;
      bool ok = true;
      switch (ts.unit()) {
        case arrow::TimeUnit::SECOND: value = seconds; break;
        case arrow::TimeUnit::MILLI: ok = CheckedMulAdd(seconds, 1000, nanos / 1000000, value); break;
        case arrow::TimeUnit::MICRO: ok = CheckedMulAdd(seconds, 1000000, nanos / 1000, value); break;
        case arrow::TimeUnit::NANO: ok = CheckedMulAdd(seconds, 1000000000, nanos, value); break;
      }
      if (!ok) return BadValue(s, *type, "out of range");
      return arrow::MakeScalar(type, value);
    }
    default:
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        "partition values of type " + type->ToString() + " are not supported");
  }
}

arrow::Result<std::optional<std::string>> SerializePartitionValue(const arrow::Scalar& scalar) {
  if (!scalar.is_valid) return std::optional<std::string>();
  using arrow::Type;
  const auto& type = *scalar.type;
  switch (type.id()) {
    case Type::NA: return std::optional<std::string>();
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
    case Type::FIXED_SIZE_BINARY:
      return std::optional<std::string>(std::string(static_cast<const arrow::BaseBinaryScalar&>(scalar).view()));
    case Type::BOOL:
      return std::optional<std::string>(static_cast<const arrow::BooleanScalar&>(scalar).value ? "true" : "false");
    case Type::INT8: return std::optional<std::string>(std::to_string(static_cast<const arrow::Int8Scalar&>(scalar).value));
    case Type::INT16: return std::optional<std::string>(std::to_string(static_cast<const arrow::Int16Scalar&>(scalar).value));
    case Type::INT32: return std::optional<std::string>(std::to_string(static_cast<const arrow::Int32Scalar&>(scalar).value));
    case Type::INT64: return std::optional<std::string>(std::to_string(static_cast<const arrow::Int64Scalar&>(scalar).value));
    case Type::UINT8: return std::optional<std::string>(std::to_string(static_cast<const arrow::UInt8Scalar&>(scalar).value));
    case Type::UINT16: return std::optional<std::string>(std::to_string(static_cast<const arrow::UInt16Scalar&>(scalar).value));
    case Type::UINT32: return std::optional<std::string>(std::to_string(static_cast<const arrow::UInt32Scalar&>(scalar).value));
    case Type::UINT64: return std::optional<std::string>(std::to_string(static_cast<const arrow::UInt64Scalar&>(scalar).value));
    case Type::FLOAT: return std::optional<std::string>(JavaFloatingString(static_cast<const arrow::FloatScalar&>(scalar).value));
    case Type::DOUBLE: return std::optional<std::string>(JavaFloatingString(static_cast<const arrow::DoubleScalar&>(scalar).value));
    case Type::DECIMAL32: {
      const auto& s = static_cast<const arrow::Decimal32Scalar&>(scalar);
      return std::optional<std::string>(PlainDecimal(s.value.ToIntegerString(), static_cast<const arrow::DecimalType&>(type).scale()));
    }
    case Type::DECIMAL64: {
      const auto& s = static_cast<const arrow::Decimal64Scalar&>(scalar);
      return std::optional<std::string>(PlainDecimal(s.value.ToIntegerString(), static_cast<const arrow::DecimalType&>(type).scale()));
    }
    case Type::DECIMAL128: {
      const auto& s = static_cast<const arrow::Decimal128Scalar&>(scalar);
      return std::optional<std::string>(PlainDecimal(s.value.ToIntegerString(), static_cast<const arrow::DecimalType&>(type).scale()));
    }
    case Type::DECIMAL256: {
      const auto& s = static_cast<const arrow::Decimal256Scalar&>(scalar);
      return std::optional<std::string>(PlainDecimal(s.value.ToIntegerString(), static_cast<const arrow::DecimalType&>(type).scale()));
    }
    case Type::DATE32:
      return std::optional<std::string>(FormatDateDays(static_cast<const arrow::Date32Scalar&>(scalar).value));
    case Type::DATE64:
      return std::optional<std::string>(
          FormatDateDays(FloorDiv(static_cast<const arrow::Date64Scalar&>(scalar).value, 86400000)));
    case Type::TIMESTAMP: {
      int64_t v = static_cast<const arrow::TimestampScalar&>(scalar).value;
      int64_t per_second = 1;
      switch (static_cast<const arrow::TimestampType&>(type).unit()) {
        case arrow::TimeUnit::SECOND: per_second = 1; break;
        case arrow::TimeUnit::MILLI: per_second = 1000; break;
        case arrow::TimeUnit::MICRO: per_second = 1000000; break;
        case arrow::TimeUnit::NANO: per_second = 1000000000; break;
      }
      int64_t seconds = FloorDiv(v, per_second);
      int64_t sub = FloorMod(v, per_second);
      auto nanos = static_cast<int32_t>(sub * (1000000000 / per_second));
      return std::optional<std::string>(FormatTimestamp(seconds, nanos));
    }
    case Type::DICTIONARY: {
      ARROW_ASSIGN_OR_RAISE(auto value, static_cast<const arrow::DictionaryScalar&>(scalar).GetEncodedValue());
      return SerializePartitionValue(*value);
    }
    default:
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        "partition values of type " + type.ToString() + " are not supported");
  }
}

}  // namespace deltacpp::internal
