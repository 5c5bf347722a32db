// The `delta.*` table properties deltacpp knows: which values each takes and which ones a user
// may set. SET TBLPROPERTIES, CREATE TABLE and writes that create a table all check
// user-supplied properties here, so a value a later write could not honour is refused up front;
// TableConfig::Parse reads a table's properties with the same rules.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp::internal {

enum class PropertyKind {
  kText,         ///< any value
  kBool,         ///< true / false (stored lower-case)
  kInt,          ///< integer >= min
  kInterval,     ///< `interval 7 days`
  kChoice,       ///< one of `choices` (case-insensitive, stored as listed)
  kManaged,      ///< maintained by the table itself, not settable
  kUnsupported,  ///< needs a feature deltacpp does not write
};

struct KnownProperty {
  std::string_view key;
  PropertyKind kind;
  int64_t min = 0;
  std::vector<std::string_view> choices = {};
};

/// Every `delta.*` property deltacpp accepts or deliberately refuses.
const std::vector<KnownProperty>& KnownProperties();

/// The entry for `key` (case-insensitive), or nullptr.
const KnownProperty* FindKnownProperty(std::string_view key);

/// Milliseconds of a Delta interval property value such as `interval 7 days`, `2 weeks`,
/// `interval 1 hour 30 minutes` (case-insensitive; units millisecond, second, minute, hour,
/// day, week, singular or plural). Months and years are rejected (their length varies), as are
/// negative totals. Errors are InvalidArgument naming `property` and the value.
arrow::Result<int64_t> ParseIntervalMs(std::string_view text, std::string_view property);

/// A whole decimal integer (optional sign, nothing else), or InvalidArgument naming `property`.
arrow::Result<int64_t> ParseIntegerProperty(std::string_view text, std::string_view property);

/// Validates `value` for `p` and returns the value to store: InvalidArgument for a malformed
/// value or a managed property, UnsupportedFeature for a property deltacpp does not write.
arrow::Result<std::string> CheckPropertyValue(const KnownProperty& p, const std::string& value);

/// User-supplied properties of a new table definition, checked like SET TBLPROPERTIES: each
/// known `delta.*` key is validated and stored in its canonical spelling; an unknown `delta.*`
/// key is InvalidArgument (as delta-spark refuses them). `delta.feature.*`,
/// `delta.minReaderVersion`, `delta.minWriterVersion` and `delta.constraints.*` are left for the
/// caller; keys outside `delta.` are kept as given.
arrow::Result<std::map<std::string, std::string>> ValidateUserProperties(
    const std::map<std::string, std::string>& properties);

}  // namespace deltacpp::internal
