// Ordering of two Arrow scalars of the same type, as SQL compares them.
#pragma once

#include <arrow/scalar.h>

#include <optional>

namespace deltacpp::internal {

/// -1, 0 or 1 as `a` is less than, equal to or greater than `b`. nullopt when either is NULL,
/// the types differ, or the type has no supported ordering. Strings and binaries compare
/// bytewise (unsigned), booleans as false < true. Floating-point values follow Spark: NaN
/// equals NaN and is greater than every other value, and -0.0 equals 0.0.
std::optional<int> CompareScalars(const arrow::Scalar& a, const arrow::Scalar& b);

}  // namespace deltacpp::internal
