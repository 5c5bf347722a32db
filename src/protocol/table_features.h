// The table-feature registry: which reader/writer features deltacpp supports.
#pragma once

#include <arrow/status.h>

#include <string>
#include <string_view>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// True when deltacpp can read tables that list `feature` in readerFeatures.
bool IsSupportedReaderFeature(std::string_view feature);

/// Checks the protocol before anything else of the table is trusted. minReaderVersion > 3 or
/// an unsupported/unknown reader feature is UnsupportedFeature naming it, the table and version.
arrow::Status CheckReadSupported(const Protocol& protocol, const std::string& table_root,
                                 int64_t version);

/// All features in force for a protocol: listed ones for (3,7), implied legacy ones otherwise.
std::vector<std::string> EffectiveFeatures(const Protocol& protocol);

}  // namespace deltacpp::internal
