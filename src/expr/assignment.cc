#include "expr/assignment.h"

#include <arrow/array/builder_decimal.h>
#include <arrow/compute/api.h>
#include <arrow/util/decimal.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/coerce.h"
#include "expr/to_arrow.h"
#include "util/temporal.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

namespace cp = arrow::compute;

constexpr int32_t kMaxDecimalDigits = 38;

enum class Assignable { kYes, kRefused, kUnsupported };

bool IsDatetime(const arrow::DataType& t) {
  return t.id() == arrow::Type::DATE32 || t.id() == arrow::Type::TIMESTAMP;
}

bool IsNested(const arrow::DataType& t) { return t.num_fields() > 0 || arrow::is_nested(t.id()); }

bool IsDecimal256(const arrow::DataType& t) { return t.id() == arrow::Type::DECIMAL256; }

bool IsBool(const arrow::DataType& t) { return t.id() == arrow::Type::BOOL; }

// What delta-spark's UPDATE and MERGE accept under the default ANSI policy: any pair Spark's
// ANSI CAST converts (text is parsed when stored, failing on malformed text; numbers and
// booleans convert both ways), with overflow checked when stored. Spark's own table-insertion
// rule (canANSIStoreAssign) is stricter, but Delta casts assigned values itself.
Assignable StoreAssignable(const arrow::DataType& from, const arrow::DataType& to) {
  if (from.Equals(to) || from.id() == arrow::Type::NA) return Assignable::kYes;
  if (IsNested(from) || IsNested(to)) {
    // Spark converts nested values field by field; only equal types are stored here.
    return IsNested(from) && IsNested(to) && from.id() == to.id() ? Assignable::kUnsupported
                                                                 : Assignable::kRefused;
  }
  if (IsDecimal256(from) || IsDecimal256(to)) return Assignable::kUnsupported;
  const bool from_number = IsNumericType(from) || IsBool(from);
  if (from_number && (IsNumericType(to) || IsBool(to))) return Assignable::kYes;
  if (IsStringType(to)) {
    if (from.id() == arrow::Type::HALF_FLOAT) return Assignable::kUnsupported;
    const bool atomic = from_number || IsStringType(from) || IsBinaryType(from) ||
                        IsDatetime(from);
    return atomic ? Assignable::kYes : Assignable::kRefused;
  }
  if (IsStringType(from)) {
    const bool parsed = IsNumericType(to) || IsBool(to) || IsDatetime(to) || IsBinaryType(to);
    return parsed ? Assignable::kYes : Assignable::kRefused;
  }
  if (IsDatetime(from) && IsDatetime(to)) return Assignable::kYes;
  if (IsBinaryType(from) && IsBinaryType(to)) return Assignable::kYes;
  return Assignable::kRefused;
}

// Text parsed into a non-text column goes through the expression layer's CAST, which reads
// text as Spark's ANSI CAST does (surrounding spaces, Spark's boolean words, errors on malformed
// text). Decimals are parsed when stored instead, so that they round like every other value.
bool ParsedByCast(const arrow::DataType& from, const arrow::DataType& to) {
  return IsStringType(from) && !IsStringType(to) && !IsBinaryType(to) && !IsDecimalType(to);
}

// A FLOAT or DOUBLE as Java's Float/Double.toString write it, which is how Spark casts them to
// STRING: the shortest digits that read back to the same value, plain between 10^-3 and 10^7
// (`1.9`, `100.0`, `0.001`), otherwise `d.dddE<n>` (`1.0E20`, `1.0E-4`).
std::string JavaFloatingText(double value, bool single) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  auto result = single ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value),
                                       std::chars_format::scientific)
                       : std::to_chars(buf, buf + sizeof(buf), value,
                                       std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(result.ptr - buf));  // e.g. -1.25e-05
  std::string sign;
  if (text.front() == '-') {
    sign = "-";
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(text.data() + e + (text[e + 1] == '+' ? 2 : 1), text.data() + text.size(),
                  exponent);
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    std::string whole, fraction;
    if (exponent >= 0) {
      const size_t point = static_cast<size_t>(exponent) + 1;
      if (digits.size() < point) digits.append(point - digits.size(), '0');
      whole = digits.substr(0, point);
      fraction = digits.substr(point);
    } else {
      whole = "0";
      fraction = std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    return sign + whole + "." + (fraction.empty() ? "0" : fraction);
  }
  return sign + digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "E" +
         std::to_string(exponent);
}

// Spark's text of a timestamp: `yyyy-mm-dd hh:mm:ss` and the fraction without trailing zeros.
std::string SparkTimestampText(int64_t micros) {
  std::string text = FormatTimestampMicros(micros);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
  }
  return text;
}

// A decimal as plain text with all its scale digits ("0.0000000001", "-1.50"), as Spark 4
// casts decimals to STRING (Arrow would write 1E-10).
std::string PlainDecimalText(const arrow::Decimal128& value, int32_t scale) {
  std::string digits = value.ToIntegerString();
  std::string sign;
  if (!digits.empty() && digits[0] == '-') {
    sign = "-";
    digits.erase(0, 1);
  }
  if (scale <= 0) return sign + digits + std::string(static_cast<size_t>(-scale), '0');
  if (digits.size() <= static_cast<size_t>(scale)) {
    digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
  }
  digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  return sign + digits;
}

// The value of row `i` of a numeric array as an unscaled decimal and its scale, exactly as Spark
// takes it before changing the precision: integers and decimals as they are, floating-point
// values through their shortest decimal text (Spark goes through the double's text too).
arrow::Status DecimalOf(const arrow::Array& array, int64_t i, arrow::Decimal128* value,
                        int32_t* scale) {
  *scale = 0;
  switch (array.type_id()) {
    case arrow::Type::INT8:
      *value = arrow::Decimal128(static_cast<const arrow::Int8Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::INT16:
      *value = arrow::Decimal128(static_cast<const arrow::Int16Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::INT32:
      *value = arrow::Decimal128(static_cast<const arrow::Int32Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::INT64:
      *value = arrow::Decimal128(static_cast<const arrow::Int64Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::UINT8:
      *value = arrow::Decimal128(static_cast<const arrow::UInt8Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::UINT16:
      *value = arrow::Decimal128(static_cast<const arrow::UInt16Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::UINT32:
      *value = arrow::Decimal128(static_cast<const arrow::UInt32Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::UINT64:
      *value = arrow::Decimal128(0, static_cast<const arrow::UInt64Array&>(array).Value(i));
      return arrow::Status::OK();
    case arrow::Type::DECIMAL128:
      *value = arrow::Decimal128(static_cast<const arrow::Decimal128Array&>(array).GetValue(i));
      *scale = static_cast<const arrow::Decimal128Type&>(*array.type()).scale();
      return arrow::Status::OK();
    case arrow::Type::BOOL:
      *value = arrow::Decimal128(static_cast<const arrow::BooleanArray&>(array).Value(i) ? 1 : 0);
      return arrow::Status::OK();
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: {
      auto scalar = array.GetScalar(i);
      if (!scalar.ok()) return scalar.status();
      std::string_view text = static_cast<const arrow::BaseBinaryScalar&>(**scalar).view();
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
        text.remove_prefix(1);
      }
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
      }
      int32_t precision = 0;
      if (!arrow::Decimal128::FromString(text, value, &precision, scale).ok()) {
        return arrow::Status::Invalid("not a number");
      }
      return arrow::Status::OK();
    }
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE: {
      const double d = array.type_id() == arrow::Type::FLOAT
                           ? static_cast<const arrow::FloatArray&>(array).Value(i)
                           : static_cast<const arrow::DoubleArray&>(array).Value(i);
      if (!std::isfinite(d)) return arrow::Status::Invalid("not a finite number");
      char text[64];
      auto [end, ec] = std::to_chars(text, text + sizeof(text), d);
      if (ec != std::errc()) return arrow::Status::Invalid("cannot print the number");
      int32_t precision = 0;
      auto st = arrow::Decimal128::FromString(std::string_view(text, end - text), value,
                                              &precision, scale);
      if (!st.ok()) return arrow::Status::Invalid("out of the range of DECIMAL");
      return arrow::Status::OK();
    }
    default:
      return arrow::Status::NotImplemented("no DECIMAL conversion from ",
                                           SqlTypeName(*array.type()));
  }
}

// Spark's Decimal.changePrecision with ROUND_HALF_UP: round to the target scale, then fail when
// the digits exceed the target precision.
arrow::Result<arrow::Decimal128> ChangePrecision(arrow::Decimal128 value, int32_t scale,
                                                 const arrow::Decimal128Type& to) {
  auto overflow = [&]() {
    return arrow::Status::Invalid("out of the range of ", SqlTypeName(to));
  };
  const int32_t delta = to.scale() - scale;
  if (delta >= 0) {
    if (value == 0) return value;
    const int32_t room = to.precision() - delta;
    if (delta > kMaxDecimalDigits || room <= 0 || !value.FitsInPrecision(room)) return overflow();
    return arrow::Decimal128(value.IncreaseScaleBy(delta));
  }
  // Dropping more digits than a DECIMAL(38) holds leaves less than half a unit: zero.
  arrow::Decimal128 rounded = -delta > kMaxDecimalDigits
                                  ? arrow::Decimal128(0)
                                  : arrow::Decimal128(value.ReduceScaleBy(-delta, true));
  if (!rounded.FitsInPrecision(to.precision())) return overflow();
  return rounded;
}

arrow::Result<std::shared_ptr<arrow::Array>> ToDecimal(const std::shared_ptr<arrow::Array>& from,
                                                       const std::shared_ptr<arrow::DataType>& to) {
  const auto& type = static_cast<const arrow::Decimal128Type&>(*to);
  arrow::Decimal128Builder builder(to);
  ARROW_RETURN_NOT_OK(builder.Reserve(from->length()));
  for (int64_t i = 0; i < from->length(); ++i) {
    if (from->IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    arrow::Decimal128 value;
    int32_t scale = 0;
    ARROW_RETURN_NOT_OK(DecimalOf(*from, i, &value, &scale));
    ARROW_ASSIGN_OR_RAISE(value, ChangePrecision(value, scale, type));
    builder.UnsafeAppend(value);
  }
  return builder.Finish();
}

// Converts values of an assignable type to the target type as Spark's ANSI cast stores them.
arrow::Result<std::shared_ptr<arrow::Array>> StoreAs(const std::shared_ptr<arrow::Array>& from,
                                                     const std::shared_ptr<arrow::DataType>& to) {
  const auto& type = *from->type();
  if (type.Equals(*to)) return from;
  if (type.id() == arrow::Type::NA) return arrow::MakeArrayOfNull(to, from->length());
  if (IsDecimalType(*to)) return ToDecimal(from, to);
  if (IsBool(*to) && IsNumericType(type)) {
    // Spark: a number is TRUE when it is not zero (NaN included).
    std::shared_ptr<arrow::Scalar> zero;
    if (type.id() == arrow::Type::DECIMAL128) {
      zero = std::make_shared<arrow::Decimal128Scalar>(arrow::Decimal128(0), from->type());
    } else {
      ARROW_ASSIGN_OR_RAISE(zero, arrow::MakeScalar(int8_t{0})->CastTo(from->type()));
    }
    ARROW_ASSIGN_OR_RAISE(auto nonzero,
                          cp::CallFunction("not_equal", {arrow::Datum(from), arrow::Datum(zero)}));
    return nonzero.make_array();
  }
  if (IsStringType(*to) && (IsFloatingType(type) || type.id() == arrow::Type::TIMESTAMP)) {
    std::shared_ptr<arrow::Array> values = from;
    if (type.id() == arrow::Type::TIMESTAMP &&
        static_cast<const arrow::TimestampType&>(type).unit() != arrow::TimeUnit::MICRO) {
      ARROW_ASSIGN_OR_RAISE(auto micros,
                            cp::Cast(from, cp::CastOptions::Safe(arrow::timestamp(
                                               arrow::TimeUnit::MICRO))));
      values = micros.make_array();
    }
    arrow::StringBuilder builder;
    for (int64_t i = 0; i < values->length(); ++i) {
      if (values->IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
      } else if (values->type_id() == arrow::Type::TIMESTAMP) {
        ARROW_RETURN_NOT_OK(builder.Append(
            SparkTimestampText(static_cast<const arrow::TimestampArray&>(*values).Value(i))));
      } else if (values->type_id() == arrow::Type::FLOAT) {
        ARROW_RETURN_NOT_OK(builder.Append(JavaFloatingText(
            static_cast<const arrow::FloatArray&>(*values).Value(i), /*single=*/true)));
      } else {
        ARROW_RETURN_NOT_OK(builder.Append(JavaFloatingText(
            static_cast<const arrow::DoubleArray&>(*values).Value(i), /*single=*/false)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto text, builder.Finish());
    if (to->Equals(*text->type())) return text;
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(text, cp::CastOptions::Safe(to)));
    return cast.make_array();
  }
  if (IsStringType(*to) && type.id() == arrow::Type::DECIMAL128) {
    const auto& decimals = static_cast<const arrow::Decimal128Array&>(*from);
    const int32_t scale = static_cast<const arrow::Decimal128Type&>(type).scale();
    arrow::StringBuilder builder;
    for (int64_t i = 0; i < decimals.length(); ++i) {
      if (decimals.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
      } else {
        ARROW_RETURN_NOT_OK(builder.Append(
            PlainDecimalText(arrow::Decimal128(decimals.GetValue(i)), scale)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto text, builder.Finish());
    if (to->Equals(*text->type())) return text;
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(text, cp::CastOptions::Safe(to)));
    return cast.make_array();
  }
  auto options = cp::CastOptions::Safe(to);
  std::shared_ptr<arrow::Array> input = from;
  if (IsIntegralType(*to) && IsFloatingType(type)) {
    // Truncated toward zero first, so that only NaN, infinities and out-of-range values fail.
    ARROW_ASSIGN_OR_RAISE(auto truncated, cp::CallFunction("trunc", {from}));
    input = truncated.make_array();
  }
  if (IsIntegralType(*to) && IsDecimalType(type)) options.allow_decimal_truncate = true;
  if (IsFloatingType(*to)) options.allow_float_truncate = true;  // rounded, as in Spark
  if (to->id() == arrow::Type::DATE32) options.allow_time_truncate = true;
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(input, options));
  return cast.make_array();
}

// The first row of `length` rows for which `fails(offset, count)` reports an error, given that
// the whole range fails and the failure of a range is the failure of any of its rows.
arrow::Result<int64_t> FirstFailingRow(int64_t length,
                                       const std::function<arrow::Status(int64_t, int64_t)>& fails) {
  int64_t lo = 0, hi = length - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (!fails(lo, mid - lo + 1).ok()) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

std::string Prefixed(const std::string& context, std::string message) {
  if (context.empty()) return message;
  return context + ": " + message;
}

std::string ValueText(const arrow::Array& array, int64_t row) {
  auto scalar = array.GetScalar(row);
  if (!scalar.ok()) return "?";
  if (!(*scalar)->is_valid) return "NULL";
  std::string text = (*scalar)->ToString();
  if (IsStringType(*array.type())) return "'" + text + "'";
  return text;
}

// "a = 5, b = 0": the top-level columns the value reads, as found in row `row`.
std::string InputText(const BoundExpr& value, const arrow::RecordBatch& rows, int64_t row) {
  std::string out;
  std::vector<std::string> seen;
  for (const auto& column : ReferencedColumns(value)) {
    const std::string& name = column.logical_path[0];
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    auto array = rows.GetColumnByName(name);
    if (!array) continue;
    if (!out.empty()) out += ", ";
    out += QuoteIdentifier(name) + " = " + ValueText(*array, row);
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> Compute(const arrow::compute::Expression& bound,
                                                     const arrow::RecordBatch& rows) {
  ARROW_ASSIGN_OR_RAISE(auto datum, cp::ExecuteScalarExpression(bound, cp::ExecBatch(rows)));
  if (datum.is_scalar()) return arrow::MakeArrayFromScalar(*datum.scalar(), rows.num_rows());
  return datum.make_array();
}

}  // namespace

arrow::Result<BoundAssignment> BindAssignment(const std::string& column, const ExprPtr& value,
                                              const arrow::Schema& schema,
                                              bool allow_current_time) {
  auto invalid = [&](std::string message) {
    return DeltaError(DeltaErrorCode::kInvalidExpression, std::move(message));
  };
  std::vector<int> matches;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (EqualsIgnoreCase(schema.field(i)->name(), column)) matches.push_back(i);
  }
  if (matches.empty()) {
    const auto dot = column.find('.');
    if (dot != std::string::npos) {
      const std::string top = column.substr(0, dot);
      for (const auto& f : schema.fields()) {
        if (EqualsIgnoreCase(f->name(), top) && f->type()->id() == arrow::Type::STRUCT) {
          return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                            "cannot assign the nested field '" + column +
                                "': only top-level columns can be assigned; assign the whole "
                                "struct '" + f->name() + "'");
        }
      }
    }
    std::string names;
    for (const auto& f : schema.fields()) names += (names.empty() ? "" : ", ") + f->name();
    return invalid("cannot assign column '" + column + "': no such column; available: " +
                   (names.empty() ? "(none)" : names));
  }
  if (matches.size() > 1) {
    return invalid("cannot assign column '" + column + "': the name is ambiguous, it matches '" +
                   schema.field(matches[0])->name() + "' and '" +
                   schema.field(matches[1])->name() + "'");
  }
  BoundAssignment out;
  out.field_index = matches[0];
  out.target = schema.field(out.field_index);
  const std::string shown = "SET " + QuoteIdentifier(out.target->name()) + " = " +
                            (value ? value->ToString() : "?");
  auto bound = Bind(value, schema, allow_current_time);
  if (!bound.ok()) {
    return arrow::Status(bound.status().code(), shown + ": " + bound.status().message(),
                         bound.status().detail());
  }
  out.value = std::move(*bound);
  const auto& from = *out.value.type;
  const auto& to = *out.target->type();
  switch (StoreAssignable(from, to)) {
    case Assignable::kYes: break;
    case Assignable::kRefused:
      return invalid(shown + ": a " + SqlTypeName(from) + " value cannot be stored in column '" +
                     out.target->name() + "' of type " + SqlTypeName(to));
    case Assignable::kUnsupported:
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        shown + ": storing a " + SqlTypeName(from) + " value in column '" +
                            out.target->name() + "' of type " + SqlTypeName(to) +
                            " is not supported");
  }
  if (ParsedByCast(from, to)) {
    BoundExpr cast;
    cast.kind = BoundKind::kCast;
    cast.type = out.target->type();
    cast.explicit_cast = true;
    cast.children.push_back(std::move(out.value));
    out.value = std::move(cast);
  }
  ARROW_ASSIGN_OR_RAISE(out.expression, ToArrowExpression(out.value));
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> EvaluateAssignment(
    const BoundAssignment& assignment, const std::shared_ptr<arrow::RecordBatch>& rows,
    int64_t first_row, const std::string& context) {
  const auto& target = assignment.target->type();
  const std::string& name = assignment.target->name();
  if (rows->num_rows() == 0) return arrow::MakeEmptyArray(target);
  auto bound = assignment.expression.Bind(*rows->schema());
  if (!bound.ok()) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      Prefixed(context, "cannot compute the value of column '" + name +
                                            "': " + bound.status().message()));
  }
  auto values = Compute(*bound, *rows);
  if (!values.ok()) {
    ARROW_ASSIGN_OR_RAISE(int64_t row, FirstFailingRow(rows->num_rows(), [&](int64_t o, int64_t n) {
                            return Compute(*bound, *rows->Slice(o, n)).status();
                          }));
    auto why = Compute(*bound, *rows->Slice(row, 1)).status();
    if (why.ok()) why = values.status();
    std::string input = InputText(assignment.value, *rows, row);
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      Prefixed(context, "cannot compute " + assignment.value.ToString() +
                                            " for column '" + name + "' in row " +
                                            std::to_string(first_row + row + 1) +
                                            (input.empty() ? "" : " {" + input + "}") + ": " +
                                            why.message()));
  }
  auto stored = StoreAs(*values, target);
  if (stored.ok()) return stored;
  const auto& computed = *values;
  ARROW_ASSIGN_OR_RAISE(int64_t row, FirstFailingRow(computed->length(), [&](int64_t o, int64_t n) {
                          return StoreAs(computed->Slice(o, n), target).status();
                        }));
  // Arrow's own reasons spell out floating-point values in full; say it in SQL terms.
  std::string why = "out of the range of " + SqlTypeName(*target);
  auto scalar = computed->GetScalar(row);
  if (IsBinaryType(*computed->type())) {
    why = "not valid UTF-8";
  } else if (IsStringType(*computed->type())) {
    why = "not a number";
  } else if (scalar.ok() && IsFloatingType(*computed->type())) {
    auto as_double = (*scalar)->CastTo(arrow::float64());
    if (as_double.ok() &&
        !std::isfinite(static_cast<const arrow::DoubleScalar&>(**as_double).value)) {
      why = "not a finite number";
    }
  }
  return DeltaError(DeltaErrorCode::kSchemaMismatch,
                    Prefixed(context, "cannot store the " + SqlTypeName(*computed->type()) +
                                          " value " + ValueText(*computed, row) + " of row " +
                                          std::to_string(first_row + row + 1) + " in column '" +
                                          name + "' of type " + SqlTypeName(*target) + ": " +
                                          why));
}

}  // namespace deltacpp::internal
