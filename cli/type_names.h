// Delta's names for column types, as `describe` shows them and CLI messages use them.
#pragma once

#include <arrow/type.h>

#include <string>

namespace deltacpp::cli {

/// The Delta name of `type`: `long`, `decimal(10,2)`, `timestamp_ntz`, `array<string>`, ...
/// Types without a Delta name are spelled as Arrow spells them.
std::string DeltaTypeName(const arrow::DataType& type);

}  // namespace deltacpp::cli
