#include "expr/coerce.h"

#include <arrow/compute/cast.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "util/temporal.h"

namespace deltacpp::internal {

namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

arrow::Result<std::shared_ptr<arrow::Scalar>> CastScalar(
    const std::shared_ptr<arrow::Scalar>& value, const std::shared_ptr<arrow::DataType>& target) {
  ARROW_ASSIGN_OR_RAISE(auto datum, arrow::compute::Cast(arrow::Datum(value), target,
                                                          arrow::compute::CastOptions::Safe()));
  return datum.scalar();
}

arrow::Status CannotConvert(const arrow::Scalar& value,
                            const std::shared_ptr<arrow::DataType>& target,
                            std::string_view why = "") {
  std::string msg = "cannot convert " + SqlTypeName(*value.type) + " value " + value.ToString() +
                    " to " + SqlTypeName(*target);
  if (!why.empty()) msg += ": " + std::string(why);
  return arrow::Status::Invalid(msg);
}

int64_t UnitsPerSecond(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return 1;
    case arrow::TimeUnit::MILLI: return 1'000;
    case arrow::TimeUnit::MICRO: return 1'000'000;
    case arrow::TimeUnit::NANO: return 1'000'000'000;
  }
  return 1;
}

// Decimal digits needed for any value of an integral type.
int32_t IntegralDigits(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::UINT8: return 3;
    case arrow::Type::INT16:
    case arrow::Type::UINT16: return 5;
    case arrow::Type::INT32:
    case arrow::Type::UINT32: return 10;
    default: return 20;
  }
}

// Bits of a signed integer able to hold every value of the integral type.
int SignedBits(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8: return 8;
    case arrow::Type::INT16:
    case arrow::Type::UINT8: return 16;
    case arrow::Type::INT32:
    case arrow::Type::UINT16: return 32;
    case arrow::Type::INT64:
    case arrow::Type::UINT32: return 64;
    default: return 128;  // UINT64
  }
}

std::shared_ptr<arrow::DataType> SignedIntegerOfBits(int bits) {
  switch (bits) {
    case 8: return arrow::int8();
    case 16: return arrow::int16();
    case 32: return arrow::int32();
    case 64: return arrow::int64();
    default: return arrow::decimal128(20, 0);
  }
}

std::shared_ptr<arrow::DataType> WidenDecimals(int32_t p1, int32_t s1, int32_t p2, int32_t s2,
                                               bool wide) {
  const int32_t max_precision = wide ? 76 : 38;
  int32_t scale = std::max(s1, s2);
  const int32_t range = std::max(p1 - s1, p2 - s2);
  int32_t precision = range + scale;
  if (precision > max_precision) {
    scale = std::max(0, max_precision - range);
    precision = max_precision;
  }
  precision = std::max(precision, 1);
  if (wide) return arrow::decimal256(precision, scale);
  return arrow::decimal128(precision, scale);
}

std::shared_ptr<arrow::DataType> AsDecimal(const std::shared_ptr<arrow::DataType>& t) {
  if (IsDecimalType(*t)) return t;
  return arrow::decimal128(IntegralDigits(*t), 0);
}

arrow::Result<std::shared_ptr<arrow::Scalar>> TimestampFromMicros(
    int64_t micros, const std::shared_ptr<arrow::DataType>& type) {
  const auto& ts = static_cast<const arrow::TimestampType&>(*type);
  auto v = ConvertTimeUnit(micros, arrow::TimeUnit::MICRO, ts.unit());
  if (!v) {
    return arrow::Status::Invalid("timestamp not representable in unit of ", type->ToString());
  }
  return std::make_shared<arrow::TimestampScalar>(*v, type);
}

}  // namespace

std::optional<int64_t> ConvertTimeUnit(int64_t value, arrow::TimeUnit::type from,
                                       arrow::TimeUnit::type to) {
  const int64_t f = UnitsPerSecond(from), t = UnitsPerSecond(to);
  if (f == t) return value;
  if (t > f) {
    int64_t out;
    if (__builtin_mul_overflow(value, t / f, &out)) return std::nullopt;
    return out;
  }
  const int64_t div = f / t;
  if (value % div != 0) return std::nullopt;
  return value / div;
}

std::string SqlTypeName(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::NA: return "VOID";
    case arrow::Type::BOOL: return "BOOLEAN";
    case arrow::Type::INT8: return "TINYINT";
    case arrow::Type::INT16: return "SMALLINT";
    case arrow::Type::INT32: return "INT";
    case arrow::Type::INT64: return "BIGINT";
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT: return "FLOAT";
    case arrow::Type::DOUBLE: return "DOUBLE";
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: return "STRING";
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY: return "BINARY";
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: return "DATE";
    case arrow::Type::TIMESTAMP:
      return static_cast<const arrow::TimestampType&>(type).timezone().empty() ? "TIMESTAMP_NTZ"
                                                                              : "TIMESTAMP";
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(type);
      return "DECIMAL(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    case arrow::Type::STRUCT: {
      std::string out = "STRUCT<";
      for (int i = 0; i < type.num_fields(); ++i) {
        if (i > 0) out += ", ";
        out += type.field(i)->name() + ": " + SqlTypeName(*type.field(i)->type());
      }
      return out + ">";
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::LIST_VIEW:
    case arrow::Type::LARGE_LIST_VIEW:
    case arrow::Type::FIXED_SIZE_LIST:
      return "ARRAY<" + SqlTypeName(*type.field(0)->type()) + ">";
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(type);
      return "MAP<" + SqlTypeName(*m.key_type()) + ", " + SqlTypeName(*m.item_type()) + ">";
    }
    default: {
      std::string out = type.ToString();
      std::transform(out.begin(), out.end(), out.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      return out;
    }
  }
}

bool IsStringType(const arrow::DataType& t) {
  return t.id() == arrow::Type::STRING || t.id() == arrow::Type::LARGE_STRING ||
         t.id() == arrow::Type::STRING_VIEW;
}
bool IsBinaryType(const arrow::DataType& t) {
  return t.id() == arrow::Type::BINARY || t.id() == arrow::Type::LARGE_BINARY ||
         t.id() == arrow::Type::BINARY_VIEW || t.id() == arrow::Type::FIXED_SIZE_BINARY;
}
bool IsIntegralType(const arrow::DataType& t) { return arrow::is_integer(t.id()); }
bool IsFloatingType(const arrow::DataType& t) { return arrow::is_floating(t.id()); }
bool IsDecimalType(const arrow::DataType& t) { return arrow::is_decimal(t.id()); }
bool IsNumericType(const arrow::DataType& t) {
  return IsIntegralType(t) || IsFloatingType(t) || IsDecimalType(t);
}
bool IsComparableType(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
      return true;
    default:
      return IsNumericType(t) || IsStringType(t) || IsBinaryType(t);
  }
}

arrow::Result<std::shared_ptr<arrow::Scalar>> ConvertLiteral(
    const std::shared_ptr<arrow::Scalar>& value, const std::shared_ptr<arrow::DataType>& target) {
  const auto& src = value->type;
  if (!value->is_valid) return arrow::MakeNullScalar(target);
  if (src->Equals(*target)) return value;

  if (IsStringType(*src)) {
    if (IsStringType(*target) || IsBinaryType(*target)) return CastScalar(value, target);
    if (target->id() == arrow::Type::BOOL) return CannotConvert(*value, target);
    auto text = static_cast<const arrow::BaseBinaryScalar&>(*value).view();
    auto parsed = ScalarFromText(text, target);
    if (!parsed.ok()) return CannotConvert(*value, target, parsed.status().message());
    return parsed;
  }
  if (IsBinaryType(*src)) {
    if (IsBinaryType(*target)) return CastScalar(value, target);
    return CannotConvert(*value, target);
  }
  if (IsNumericType(*src) && IsNumericType(*target)) {
    if (IsFloatingType(*src)) {
      if (IsDecimalType(*target)) return CannotConvert(*value, target, "not exact");
      if (IsFloatingType(*target) && target->id() != arrow::Type::DOUBLE) {
        ARROW_ASSIGN_OR_RAISE(auto as_double, CastScalar(value, arrow::float64()));
        double d = static_cast<const arrow::DoubleScalar&>(*as_double).value;
        if (static_cast<double>(static_cast<float>(d)) != d && !std::isnan(d)) {
          return CannotConvert(*value, target, "not exact");
        }
      }
      auto out = CastScalar(value, target);
      if (!out.ok()) return CannotConvert(*value, target, out.status().message());
      return out;
    }
    if (IsFloatingType(*target)) {
      ARROW_ASSIGN_OR_RAISE(auto as_double, CastScalar(value, arrow::float64()));
      if (target->id() == arrow::Type::DOUBLE) return as_double;
      double d = static_cast<const arrow::DoubleScalar&>(*as_double).value;
      if (static_cast<double>(static_cast<float>(d)) != d) {
        return CannotConvert(*value, target, "not exact");
      }
      return CastScalar(as_double, target);
    }
    if (IsIntegralType(*src) && IsDecimalType(*target)) {
      // Arrow checks integer-to-decimal casts against the type's range, not the value's.
      auto out = ScalarFromText(value->ToString(), target);
      if (!out.ok()) return CannotConvert(*value, target, "does not fit");
      return out;
    }
    auto out = CastScalar(value, target);
    if (!out.ok()) return CannotConvert(*value, target, out.status().message());
    return out;
  }
  if (src->id() == arrow::Type::DATE32 || src->id() == arrow::Type::DATE64) {
    int64_t days = src->id() == arrow::Type::DATE32
                       ? static_cast<const arrow::Date32Scalar&>(*value).value
                       : static_cast<const arrow::Date64Scalar&>(*value).value / 86'400'000LL;
    if (target->id() == arrow::Type::DATE32) {
      return std::make_shared<arrow::Date32Scalar>(static_cast<int32_t>(days));
    }
    if (target->id() == arrow::Type::DATE64) {
      return std::make_shared<arrow::Date64Scalar>(days * 86'400'000LL);
    }
    if (target->id() == arrow::Type::TIMESTAMP) return TimestampFromMicros(days * kMicrosPerDay, target);
    return CannotConvert(*value, target);
  }
  if (src->id() == arrow::Type::TIMESTAMP) {
    const auto& st = static_cast<const arrow::TimestampType&>(*src);
    int64_t v = static_cast<const arrow::TimestampScalar&>(*value).value;
    if (target->id() == arrow::Type::TIMESTAMP) {
      auto out = ConvertTimeUnit(v, st.unit(),
                                 static_cast<const arrow::TimestampType&>(*target).unit());
      if (!out) return CannotConvert(*value, target, "not exact");
      return std::make_shared<arrow::TimestampScalar>(*out, target);
    }
    if (target->id() == arrow::Type::DATE32 || target->id() == arrow::Type::DATE64) {
      auto micros = ConvertTimeUnit(v, st.unit(), arrow::TimeUnit::MICRO);
      if (!micros || *micros % kMicrosPerDay != 0) {
        return CannotConvert(*value, target, "not a whole day");
      }
      int64_t days = *micros / kMicrosPerDay;
      if (target->id() == arrow::Type::DATE32) {
        return std::make_shared<arrow::Date32Scalar>(static_cast<int32_t>(days));
      }
      return std::make_shared<arrow::Date64Scalar>(days * 86'400'000LL);
    }
    return CannotConvert(*value, target);
  }
  if ((src->id() == arrow::Type::TIME32 || src->id() == arrow::Type::TIME64) &&
      (target->id() == arrow::Type::TIME32 || target->id() == arrow::Type::TIME64)) {
    auto out = CastScalar(value, target);
    if (!out.ok()) return CannotConvert(*value, target, out.status().message());
    return out;
  }
  return CannotConvert(*value, target);
}

arrow::Result<std::shared_ptr<arrow::Scalar>> ScalarFromText(
    std::string_view text, const std::shared_ptr<arrow::DataType>& type) {
  auto as_string = [&] { return std::make_shared<arrow::StringScalar>(std::string(text)); };
  if (IsStringType(*type) || IsBinaryType(*type)) return CastScalar(as_string(), type);
  const std::string_view trimmed = TrimSpaces(text);
  auto invalid = [&](std::string_view what) {
    return arrow::Status::Invalid("'", text, "' is not a valid ", what);
  };
  switch (type->id()) {
    case arrow::Type::BOOL: {
      std::string lower(trimmed);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (lower == "true") return std::make_shared<arrow::BooleanScalar>(true);
      if (lower == "false") return std::make_shared<arrow::BooleanScalar>(false);
      return invalid("BOOLEAN");
    }
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: {
      auto days = ParseDate(trimmed);
      if (!days) return invalid("DATE (expected yyyy-mm-dd)");
      if (type->id() == arrow::Type::DATE32) return std::make_shared<arrow::Date32Scalar>(*days);
      return std::make_shared<arrow::Date64Scalar>(int64_t{*days} * 86'400'000LL);
    }
    case arrow::Type::TIMESTAMP: {
      auto ts = ParseTimestamp(trimmed);
      const bool ntz = static_cast<const arrow::TimestampType&>(*type).timezone().empty();
      if (!ts) return invalid(ntz ? "TIMESTAMP_NTZ" : "TIMESTAMP");
      if (ntz && ts->has_zone) {
        return arrow::Status::Invalid("'", text, "' carries a time zone, not valid for TIMESTAMP_NTZ");
      }
      return TimestampFromMicros(ts->micros, type);
    }
    default:
      break;
  }
  if (IsIntegralType(*type)) {
    int64_t v = 0;
    auto res = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), v);
    if (res.ec != std::errc() || res.ptr != trimmed.data() + trimmed.size()) {
      // Integral values written with a fraction or exponent ("5.0", "1e3").
      auto as_decimal = CastScalar(as_string(), arrow::decimal128(38, 10));
      if (!as_decimal.ok()) return invalid(SqlTypeName(*type));
      auto out = CastScalar(*as_decimal, type);
      if (!out.ok()) return invalid(SqlTypeName(*type));
      return out;
    }
    auto out = CastScalar(std::make_shared<arrow::Int64Scalar>(v), type);
    if (!out.ok()) return arrow::Status::Invalid("'", text, "' is out of range for ", SqlTypeName(*type));
    return out;
  }
  if (IsFloatingType(*type)) {
    double v = 0;
    std::string_view digits = trimmed;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (res.ec != std::errc() || res.ptr != digits.data() + digits.size() || digits.empty()) {
      return invalid(SqlTypeName(*type));
    }
    if (type->id() == arrow::Type::DOUBLE) return std::make_shared<arrow::DoubleScalar>(v);
    return CastScalar(std::make_shared<arrow::DoubleScalar>(v), type);
  }
  if (IsDecimalType(*type)) {
    auto out = CastScalar(std::make_shared<arrow::StringScalar>(std::string(trimmed)), type);
    if (!out.ok()) return invalid(SqlTypeName(*type));
    return out;
  }
  return arrow::Status::Invalid("values of type ", SqlTypeName(*type),
                                " cannot be written as text");
}

std::shared_ptr<arrow::DataType> CommonType(const std::shared_ptr<arrow::DataType>& a,
                                            const std::shared_ptr<arrow::DataType>& b) {
  if (a->Equals(*b)) return a;
  if (a->id() == arrow::Type::NA) return b;
  if (b->id() == arrow::Type::NA) return a;
  if (IsIntegralType(*a) && IsIntegralType(*b)) {
    return SignedIntegerOfBits(std::max(SignedBits(*a), SignedBits(*b)));
  }
  if (IsFloatingType(*a) || IsFloatingType(*b)) {
    if (!IsNumericType(*a) || !IsNumericType(*b)) return nullptr;
    const auto& f = IsFloatingType(*a) ? *a : *b;
    const auto& other = IsFloatingType(*a) ? *b : *a;
    if (f.id() != arrow::Type::DOUBLE && IsIntegralType(other)) return arrow::float32();
    return arrow::float64();
  }
  if (IsNumericType(*a) && IsNumericType(*b)) {  // decimal with decimal or integral
    auto da = AsDecimal(a), db = AsDecimal(b);
    const auto& ta = static_cast<const arrow::DecimalType&>(*da);
    const auto& tb = static_cast<const arrow::DecimalType&>(*db);
    bool wide = da->id() == arrow::Type::DECIMAL256 || db->id() == arrow::Type::DECIMAL256;
    return WidenDecimals(ta.precision(), ta.scale(), tb.precision(), tb.scale(), wide);
  }
  if (IsStringType(*a) && IsStringType(*b)) return arrow::large_utf8();
  if (IsBinaryType(*a) && IsBinaryType(*b)) return arrow::large_binary();
  const bool a_date = a->id() == arrow::Type::DATE32 || a->id() == arrow::Type::DATE64;
  const bool b_date = b->id() == arrow::Type::DATE32 || b->id() == arrow::Type::DATE64;
  if (a_date && b_date) return arrow::date32();
  if (a_date && b->id() == arrow::Type::TIMESTAMP) return b;
  if (b_date && a->id() == arrow::Type::TIMESTAMP) return a;
  if (a->id() == arrow::Type::TIMESTAMP && b->id() == arrow::Type::TIMESTAMP) {
    const auto& ta = static_cast<const arrow::TimestampType&>(*a);
    const auto& tb = static_cast<const arrow::TimestampType&>(*b);
    auto unit = UnitsPerSecond(ta.unit()) >= UnitsPerSecond(tb.unit()) ? ta.unit() : tb.unit();
    const std::string& tz = !ta.timezone().empty() ? ta.timezone() : tb.timezone();
    return arrow::timestamp(unit, tz);
  }
  return nullptr;
}

}  // namespace deltacpp::internal
