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

#include <arrow/type_fwd.h>

#include <map>
#include <set>

namespace deltacpp::internal {

/// The lowest protocol a table with this schema and configuration needs, as delta-spark picks
/// it for new tables: (1,2) for a plain table, legacy versions while only legacy features are
/// needed ((1,3) CHECK constraints, (1,4) generated columns / change data feed, (2,5) column
/// mapping, (1,6) identity columns), and table features ((3,7) or (1,7)) listing exactly what
/// is needed once a feature without a legacy version is involved. `extra_features` are named
/// explicitly (`delta.feature.<name>=supported`). Unknown feature names are UnsupportedFeature.
arrow::Result<Protocol> RequiredProtocol(const arrow::Schema& schema,
                                         const std::map<std::string, std::string>& configuration,
                                         const std::set<std::string>& extra_features);

/// True when the feature is a reader-writer feature (listed in both lists).
bool IsReaderWriterFeature(std::string_view feature);

/// Raises `base` so that it also supports everything `needed` does (never lowers it).
Protocol MergeProtocols(const Protocol& base, const Protocol& needed);

}  // namespace deltacpp::internal
