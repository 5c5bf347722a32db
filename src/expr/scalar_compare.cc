#include "expr/scalar_compare.h"

#include <arrow/util/decimal.h>

#include <cmath>
#include <string_view>

namespace deltacpp::internal {

namespace {

template <typename T>
int Order(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename ScalarType>
int OrderValues(const arrow::Scalar& a, const arrow::Scalar& b) {
  return Order(static_cast<const ScalarType&>(a).value, static_cast<const ScalarType&>(b).value);
}

template <typename ScalarType>
int OrderFloats(const arrow::Scalar& a, const arrow::Scalar& b) {
  const double x = static_cast<double>(static_cast<const ScalarType&>(a).value);
  const double y = static_cast<double>(static_cast<const ScalarType&>(b).value);
  // Spark's order: NaN equals NaN and is above every other value; -0.0 equals 0.0.
  if (std::isnan(x) || std::isnan(y)) return Order(std::isnan(x), std::isnan(y));
  return Order(x, y);
}

int OrderBytes(const arrow::Scalar& a, const arrow::Scalar& b) {
  std::string_view x = static_cast<const arrow::BaseBinaryScalar&>(a).view();
  std::string_view y = static_cast<const arrow::BaseBinaryScalar&>(b).view();
  // std::string_view compares char, whose signedness varies; compare as unsigned bytes.
  const size_t n = std::min(x.size(), y.size());
  for (size_t i = 0; i < n; ++i) {
    auto cx = static_cast<unsigned char>(x[i]);
    auto cy = static_cast<unsigned char>(y[i]);
    if (cx != cy) return cx < cy ? -1 : 1;
  }
  return Order(x.size(), y.size());
}

}  // namespace

std::optional<int> CompareScalars(const arrow::Scalar& a, const arrow::Scalar& b) {
  if (!a.is_valid || !b.is_valid) return std::nullopt;
  if (!a.type->Equals(*b.type)) return std::nullopt;
  switch (a.type->id()) {
    case arrow::Type::BOOL: return OrderValues<arrow::BooleanScalar>(a, b);
    case arrow::Type::INT8: return OrderValues<arrow::Int8Scalar>(a, b);
    case arrow::Type::INT16: return OrderValues<arrow::Int16Scalar>(a, b);
    case arrow::Type::INT32: return OrderValues<arrow::Int32Scalar>(a, b);
    case arrow::Type::INT64: return OrderValues<arrow::Int64Scalar>(a, b);
    case arrow::Type::UINT8: return OrderValues<arrow::UInt8Scalar>(a, b);
    case arrow::Type::UINT16: return OrderValues<arrow::UInt16Scalar>(a, b);
    case arrow::Type::UINT32: return OrderValues<arrow::UInt32Scalar>(a, b);
    case arrow::Type::UINT64: return OrderValues<arrow::UInt64Scalar>(a, b);
    case arrow::Type::FLOAT: return OrderFloats<arrow::FloatScalar>(a, b);
    case arrow::Type::DOUBLE: return OrderFloats<arrow::DoubleScalar>(a, b);
    case arrow::Type::DECIMAL32: return OrderValues<arrow::Decimal32Scalar>(a, b);
    case arrow::Type::DECIMAL64: return OrderValues<arrow::Decimal64Scalar>(a, b);
    case arrow::Type::DECIMAL128: return OrderValues<arrow::Decimal128Scalar>(a, b);
    case arrow::Type::DECIMAL256: return OrderValues<arrow::Decimal256Scalar>(a, b);
    case arrow::Type::DATE32: return OrderValues<arrow::Date32Scalar>(a, b);
    case arrow::Type::DATE64: return OrderValues<arrow::Date64Scalar>(a, b);
    case arrow::Type::TIMESTAMP: return OrderValues<arrow::TimestampScalar>(a, b);
    case arrow::Type::TIME32: return OrderValues<arrow::Time32Scalar>(a, b);
    case arrow::Type::TIME64: return OrderValues<arrow::Time64Scalar>(a, b);
    case arrow::Type::DURATION: return OrderValues<arrow::DurationScalar>(a, b);
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY:
      return OrderBytes(a, b);
    default:
      return std::nullopt;
  }
}

}  // namespace deltacpp::internal
