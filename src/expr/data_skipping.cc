#include "expr/data_skipping.h"

#include <arrow/compute/cast.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "expr/coerce.h"
#include "expr/scalar_compare.h"

namespace deltacpp::internal {

namespace {

// The set of values a boolean sub-expression may take over a file's rows.
using Outcomes = uint8_t;
constexpr Outcomes kTrue = 1;
constexpr Outcomes kFalse = 2;
constexpr Outcomes kNull = 4;
constexpr Outcomes kAny = kTrue | kFalse | kNull;

enum class Truth { kTrue, kFalse, kNull };

Truth KleeneAnd(Truth a, Truth b) {
  if (a == Truth::kFalse || b == Truth::kFalse) return Truth::kFalse;
  if (a == Truth::kTrue && b == Truth::kTrue) return Truth::kTrue;
  return Truth::kNull;
}

Truth KleeneOr(Truth a, Truth b) {
  if (a == Truth::kTrue || b == Truth::kTrue) return Truth::kTrue;
  if (a == Truth::kFalse && b == Truth::kFalse) return Truth::kFalse;
  return Truth::kNull;
}

Outcomes Bit(Truth t) {
  return t == Truth::kTrue ? kTrue : t == Truth::kFalse ? kFalse : kNull;
}

// Every combination of a value from `a` and one from `b` (rows may pair them arbitrarily).
template <typename Combine>
Outcomes CombineSets(Outcomes a, Outcomes b, Combine combine) {
  Outcomes out = 0;
  for (Truth x : {Truth::kTrue, Truth::kFalse, Truth::kNull}) {
    if (!(a & Bit(x))) continue;
    for (Truth y : {Truth::kTrue, Truth::kFalse, Truth::kNull}) {
      if (b & Bit(y)) out |= Bit(combine(x, y));
    }
  }
  return out;
}

Outcomes NegateSet(Outcomes s) {
  Outcomes out = s & kNull;
  if (s & kTrue) out |= kFalse;
  if (s & kFalse) out |= kTrue;
  return out;
}

// What is known about the values of an expression over the file's rows. NaN (floating-point
// columns only) is kept apart from the ordered values: writers disagree on whether a NaN makes
// the maximum NaN (Spark's order) or is left out of min/max (Parquet), so bounds describe the
// other values only and `may_be_nan` says whether a NaN may be present.
struct ValueRange {
  std::shared_ptr<arrow::Scalar> lo;  // no non-null, non-NaN value is below this (or unknown)
  std::shared_ptr<arrow::Scalar> hi;  // no non-null, non-NaN value is above this (or unknown)
  bool may_be_null = true;
  bool may_be_non_null = true;  // a non-null value other than NaN may be present
  bool may_be_nan = false;
  // When lo == hi, all non-null values equal it (false for possibly truncated string bounds).
  bool point_is_exact = false;
};

CompareOp Negated(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return CompareOp::kNe;
    case CompareOp::kNe: return CompareOp::kEq;
    case CompareOp::kLt: return CompareOp::kGe;
    case CompareOp::kLe: return CompareOp::kGt;
    case CompareOp::kGt: return CompareOp::kLe;
    case CompareOp::kGe: return CompareOp::kLt;
    case CompareOp::kNullSafeEq: return CompareOp::kNe;
  }
  return op;
}

bool IsNan(const arrow::Scalar& s);

// Whether some non-null value v in the range (NaN excluded) can satisfy `v op c`.
bool SomeValueSatisfies(CompareOp op, const ValueRange& r, const arrow::Scalar& c) {
  if (IsNan(c)) {
    // Every value other than NaN is below NaN, whatever the bounds.
    return op == CompareOp::kNe || op == CompareOp::kLt || op == CompareOp::kLe;
  }
  std::optional<int> lo = r.lo ? CompareScalars(*r.lo, c) : std::nullopt;  // sign of lo - c
  std::optional<int> hi = r.hi ? CompareScalars(*r.hi, c) : std::nullopt;  // sign of hi - c
  switch (op) {
    case CompareOp::kEq:
    case CompareOp::kNullSafeEq:
      return !(lo && *lo > 0) && !(hi && *hi < 0);
    case CompareOp::kNe:
      return !(r.point_is_exact && lo && hi && *lo == 0 && *hi == 0);
    case CompareOp::kLt: return !(lo && *lo >= 0);
    case CompareOp::kLe: return !(lo && *lo > 0);
    case CompareOp::kGt: return !(hi && *hi <= 0);
    case CompareOp::kGe: return !(hi && *hi < 0);
  }
  return true;
}

Outcomes CompareConstants(CompareOp op, const arrow::Scalar& a, const arrow::Scalar& b);

bool IsNan(const arrow::Scalar& s) {
  if (!s.is_valid) return false;
  if (s.type->id() == arrow::Type::DOUBLE) {
    return std::isnan(static_cast<const arrow::DoubleScalar&>(s).value);
  }
  if (s.type->id() == arrow::Type::FLOAT) {
    return std::isnan(static_cast<const arrow::FloatScalar&>(s).value);
  }
  return false;
}

// A NaN of the floating-point type of `like`.
std::shared_ptr<arrow::Scalar> NanLike(const arrow::Scalar& like) {
  if (like.type->id() == arrow::Type::FLOAT) {
    return std::make_shared<arrow::FloatScalar>(std::numeric_limits<float>::quiet_NaN());
  }
  return std::make_shared<arrow::DoubleScalar>(std::numeric_limits<double>::quiet_NaN());
}

// Outcomes of `x op c` for x described by `r` and a literal c.
Outcomes CompareWithLiteral(CompareOp op, const ValueRange& r, const arrow::Scalar& c) {
  const bool null_safe = op == CompareOp::kNullSafeEq;
  if (!c.is_valid) {
    if (!null_safe) return kNull;
    return static_cast<Outcomes>((r.may_be_null ? kTrue : 0) |
                                 (r.may_be_non_null || r.may_be_nan ? kFalse : 0));
  }
  Outcomes out = 0;
  if (r.may_be_null) out |= null_safe ? kFalse : kNull;
  if (r.may_be_nan) out |= CompareConstants(op, *NanLike(c), c);
  if (r.may_be_non_null) {
    const CompareOp value_op = null_safe ? CompareOp::kEq : op;
    if (SomeValueSatisfies(value_op, r, c)) out |= kTrue;
    if (SomeValueSatisfies(Negated(value_op), r, c)) out |= kFalse;
  }
  return out;
}

// Exact outcome of comparing two constants.
Outcomes CompareConstants(CompareOp op, const arrow::Scalar& a, const arrow::Scalar& b) {
  if (!a.is_valid || !b.is_valid) {
    if (op != CompareOp::kNullSafeEq) return kNull;
    return (!a.is_valid && !b.is_valid) ? kTrue : kFalse;
  }
  auto cmp = CompareScalars(a, b);
  if (!cmp) return kAny;
  bool result = false;
  switch (op) {
    case CompareOp::kEq:
    case CompareOp::kNullSafeEq: result = *cmp == 0; break;
    case CompareOp::kNe: result = *cmp != 0; break;
    case CompareOp::kLt: result = *cmp < 0; break;
    case CompareOp::kLe: result = *cmp <= 0; break;
    case CompareOp::kGt: result = *cmp > 0; break;
    case CompareOp::kGe: result = *cmp >= 0; break;
  }
  return result ? kTrue : kFalse;
}

// Writers truncate timestamp maximums to milliseconds: the true maximum may be up to 999 µs
// larger than the recorded one.
std::shared_ptr<arrow::Scalar> WidenTruncatedMax(std::shared_ptr<arrow::Scalar> max) {
  if (!max || max->type->id() != arrow::Type::TIMESTAMP) return max;
  const auto& type = static_cast<const arrow::TimestampType&>(*max->type);
  int64_t slack = 0;
  if (type.unit() == arrow::TimeUnit::MICRO) slack = 999;
  if (type.unit() == arrow::TimeUnit::NANO) slack = 999'999;
  int64_t widened;
  if (__builtin_add_overflow(static_cast<const arrow::TimestampScalar&>(*max).value, slack,
                             &widened)) {
    return nullptr;
  }
  return std::make_shared<arrow::TimestampScalar>(widened, max->type);
}

bool IsTemporal(const arrow::DataType& t) {
  return t.id() == arrow::Type::DATE32 || t.id() == arrow::Type::DATE64 ||
         t.id() == arrow::Type::TIMESTAMP;
}

// Casts the binder inserts (numeric widening, DATE -> TIMESTAMP, string widening) preserve
// order, so bounds can be converted through them.
bool IsOrderPreservingCast(const arrow::DataType& from, const arrow::DataType& to) {
  return (IsNumericType(from) && IsNumericType(to)) || (IsTemporal(from) && IsTemporal(to)) ||
         (IsStringType(from) && IsStringType(to));
}

std::shared_ptr<arrow::Scalar> CastBound(const std::shared_ptr<arrow::Scalar>& bound,
                                         const std::shared_ptr<arrow::DataType>& type) {
  if (!bound) return nullptr;
  auto result = arrow::compute::Cast(arrow::Datum(bound), type, arrow::compute::CastOptions::Unsafe());
  if (!result.ok()) return nullptr;
  return result->scalar();
}

class SkippingEvaluator {
 public:
  SkippingEvaluator(const FileStats& stats, const PartitionValuesView& partitions)
      : stats_(stats), partitions_(partitions) {}

  Outcomes Eval(const BoundExpr& e) const {
    if (!e.type || (e.type->id() != arrow::Type::BOOL && e.type->id() != arrow::Type::NA)) {
      return kAny;
    }
    switch (e.kind) {
      case BoundKind::kLiteral:
        if (!e.literal->is_valid) return kNull;
        if (e.literal->type->id() != arrow::Type::BOOL) return kAny;
        return static_cast<const arrow::BooleanScalar&>(*e.literal).value ? kTrue : kFalse;
      case BoundKind::kColumn:
      case BoundKind::kCast: {
        // A boolean column used as a predicate behaves like `column = TRUE`.
        auto range = RangeOf(e);
        if (!range) return kAny;
        return CompareWithLiteral(CompareOp::kEq, *range, arrow::BooleanScalar(true));
      }
      case BoundKind::kComparison:
        return Compare(e.compare_op, e.children[0], e.children[1]);
      case BoundKind::kAnd:
        return CombineSets(Eval(e.children[0]), Eval(e.children[1]), KleeneAnd);
      case BoundKind::kOr:
        return CombineSets(Eval(e.children[0]), Eval(e.children[1]), KleeneOr);
      case BoundKind::kNot:
        return NegateSet(Eval(e.children[0]));
      case BoundKind::kIsNull:
      case BoundKind::kIsNotNull: {
        const bool want_null = e.kind == BoundKind::kIsNull;
        const BoundExpr& operand = e.children[0];
        bool may_be_null = true, may_be_non_null = true;
        if (operand.kind == BoundKind::kLiteral) {
          may_be_null = !operand.literal->is_valid;
          may_be_non_null = operand.literal->is_valid;
        } else if (auto range = RangeOf(operand)) {
          may_be_null = range->may_be_null;
          may_be_non_null = range->may_be_non_null || range->may_be_nan;
        }
        Outcomes out = 0;
        if (may_be_null) out |= want_null ? kTrue : kFalse;
        if (may_be_non_null) out |= want_null ? kFalse : kTrue;
        return out;
      }
      case BoundKind::kIn: {
        Outcomes out = kFalse;  // the empty disjunction
        for (size_t i = 1; i < e.children.size(); ++i) {
          out = CombineSets(out, Compare(CompareOp::kEq, e.children[0], e.children[i]), KleeneOr);
        }
        return out;
      }
      default:
        return kAny;
    }
  }

 private:
  Outcomes Compare(CompareOp op, const BoundExpr& left, const BoundExpr& right) const {
    const bool left_literal = left.kind == BoundKind::kLiteral;
    const bool right_literal = right.kind == BoundKind::kLiteral;
    if (left_literal && right_literal) return CompareConstants(op, *left.literal, *right.literal);
    if (right_literal) {
      if (auto range = RangeOf(left)) return CompareWithLiteral(op, *range, *right.literal);
    } else if (left_literal) {
      if (auto range = RangeOf(right)) {
        return CompareWithLiteral(FlipCompareOp(op), *range, *left.literal);
      }
    }
    return kAny;
  }

  std::optional<ValueRange> RangeOf(const BoundExpr& e) const {
    if (e.kind == BoundKind::kCast) {
      // A cast the user wrote may truncate, fail or parse text; only the binder's widening
      // conversions carry bounds across.
      if (e.explicit_cast) return std::nullopt;
      const BoundExpr& inner = e.children[0];
      if (!IsOrderPreservingCast(*inner.type, *e.type)) return std::nullopt;
      auto range = RangeOf(inner);
      if (!range) return std::nullopt;
      if (range->may_be_nan && !arrow::is_floating(e.type->id())) return std::nullopt;
      range->lo = CastBound(range->lo, e.type);
      range->hi = CastBound(range->hi, e.type);
      // Distinct values may become equal after a widening cast; equality to a point then
      // no longer proves anything about the original values.
      range->point_is_exact = false;
      return range;
    }
    if (e.kind != BoundKind::kColumn) return std::nullopt;
    const BoundColumn& column = e.column;
    const std::string key = column.PhysicalName();
    if (column.physical_path.size() == 1) {
      if (auto it = partitions_.find(key); it != partitions_.end()) {
        return PartitionRange(it->second, column.type);
      }
    }
    auto it = stats_.columns.find(key);
    if (it == stats_.columns.end()) return std::nullopt;
    const ColumnStats& cs = it->second;
    ValueRange r;
    // A NaN bound (Spark writes NaN as the maximum of a column holding one, and as the minimum
    // when all values are NaN) bounds nothing else; a bound that is not NaN does not rule NaN
    // out, since Parquet statistics leave NaN out of min/max.
    r.may_be_nan = arrow::is_floating(column.type->id());
    if (cs.min && cs.min->is_valid && cs.min->type->Equals(*column.type) && !IsNan(*cs.min)) {
      r.lo = cs.min;
    }
    if (cs.max && cs.max->is_valid && cs.max->type->Equals(*column.type) && !IsNan(*cs.max)) {
      r.hi = WidenTruncatedMax(cs.max);
    }
    r.may_be_null = !(cs.null_count && *cs.null_count == 0);
    r.may_be_non_null =
        !(cs.null_count && stats_.num_records && *cs.null_count >= *stats_.num_records);
    r.may_be_nan = r.may_be_nan && r.may_be_non_null;
    r.point_is_exact = !IsStringType(*column.type) && !IsBinaryType(*column.type);
    return r;
  }

  static ValueRange PartitionRange(const std::shared_ptr<arrow::Scalar>& value,
                                   const std::shared_ptr<arrow::DataType>& type) {
    ValueRange r;
    if (!value || !value->is_valid) {
      r.may_be_null = true;
      r.may_be_non_null = false;
      return r;
    }
    r.may_be_null = false;
    r.may_be_non_null = true;
    std::shared_ptr<arrow::Scalar> typed = value;
    if (!value->type->Equals(*type)) {
      arrow::Result<std::shared_ptr<arrow::Scalar>> converted =
          IsStringType(*value->type)
              ? ScalarFromText(static_cast<const arrow::BaseBinaryScalar&>(*value).view(), type)
              : ConvertLiteral(value, type);
      typed = converted.ok() ? *converted : nullptr;
    }
    if (typed && IsNan(*typed)) {
      r.may_be_nan = true;
      r.may_be_non_null = false;
      return r;
    }
    r.lo = typed;
    r.hi = typed;
    r.point_is_exact = typed != nullptr;
    // A partition value that does not convert is unknown, NaN included.
    r.may_be_nan = !typed && arrow::is_floating(type->id());
    return r;
  }

  const FileStats& stats_;
  const PartitionValuesView& partitions_;
};

}  // namespace

bool CanSkipFile(const BoundExpr& predicate, const FileStats& stats,
                 const PartitionValuesView& partitions) {
  if (stats.num_records && *stats.num_records == 0) return true;
  return (SkippingEvaluator(stats, partitions).Eval(predicate) & kTrue) == 0;
}

bool AllRowsMatch(const BoundExpr& predicate, const FileStats& stats,
                  const PartitionValuesView& partitions) {
  if (stats.num_records && *stats.num_records == 0) return true;
  // Every outcome set over-approximates the values the rows can take, FALSE and NULL included,
  // so a set holding TRUE alone proves every row is TRUE.
  return SkippingEvaluator(stats, partitions).Eval(predicate) == kTrue;
}

}  // namespace deltacpp::internal
