// Type names, literal conversion and common-type rules shared by binding and statistics.
#pragma once

#include <arrow/result.h>
#include <arrow/scalar.h>
#include <arrow/type.h>

#include <memory>
#include <string>
#include <string_view>

namespace deltacpp::internal {

/// Spark SQL name of an Arrow type: INT, BIGINT, DECIMAL(10,2), STRING, TIMESTAMP_NTZ, ...
std::string SqlTypeName(const arrow::DataType& type);

/// utf8, large_utf8 or utf8_view.
bool IsStringType(const arrow::DataType& type);
/// binary, large_binary, binary_view or fixed_size_binary.
bool IsBinaryType(const arrow::DataType& type);
/// Signed or unsigned integer types.
bool IsIntegralType(const arrow::DataType& type);
/// float16, float32 or float64.
bool IsFloatingType(const arrow::DataType& type);
/// Any decimal width.
bool IsDecimalType(const arrow::DataType& type);
/// Integral, floating or decimal.
bool IsNumericType(const arrow::DataType& type);
/// Types whose values can be ordered and compared with = < > (not nested types).
bool IsComparableType(const arrow::DataType& type);

/// Converts `value` to an equal value of `target`, failing (Invalid, with the reason) when the
/// value cannot be represented exactly: e.g. INT 5 -> BIGINT 5 or DECIMAL(10,2) 5.00, STRING
/// '2021-01-01' -> DATE, DATE -> TIMESTAMP midnight UTC; but not 1.5 -> INT, 1e300 -> FLOAT,
/// or a STRING to BOOLEAN. A NULL converts to a NULL of `target`.
arrow::Result<std::shared_ptr<arrow::Scalar>> ConvertLiteral(
    const std::shared_ptr<arrow::Scalar>& value, const std::shared_ptr<arrow::DataType>& target);

/// Parses `text` as a value of `type`: numbers (decimals exactly), `yyyy-mm-dd` dates, ISO
/// timestamps (with `T` or space; a zone suffix is converted to UTC and is rejected for
/// timestamps without time zone), true/false, and strings/binaries verbatim.
arrow::Result<std::shared_ptr<arrow::Scalar>> ScalarFromText(
    std::string_view text, const std::shared_ptr<arrow::DataType>& type);

/// The type two operands are brought to before comparing or combining them, following Spark's
/// widening rules (INT+BIGINT -> BIGINT, INT+DECIMAL -> DECIMAL, DECIMAL+DOUBLE -> DOUBLE,
/// DATE+TIMESTAMP -> TIMESTAMP, ...). nullptr when the types do not mix (e.g. STRING and INT).
std::shared_ptr<arrow::DataType> CommonType(const std::shared_ptr<arrow::DataType>& a,
                                            const std::shared_ptr<arrow::DataType>& b);

/// Converts a count of `from` units to `to` units; nullopt when not exact or out of range.
std::optional<int64_t> ConvertTimeUnit(int64_t value, arrow::TimeUnit::type from,
                                       arrow::TimeUnit::type to);

}  // namespace deltacpp::internal
