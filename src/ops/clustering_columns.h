// The clustering columns of a clustered table (`CLUSTER BY`): the `delta.clustering` domain
// holds them as lists of physical field names, `{"clusteringColumns":[["a"],["s","x"]]}`.
#pragma once

#include <arrow/result.h>

#include <string>
#include <vector>

#include "deltacpp/snapshot.h"

namespace deltacpp::internal {

/// The clustering columns of `snapshot` as logical, dot-joined names; empty when the table is
/// not clustered (no domain, or a removed one). A configuration that is not a list of column
/// paths is CorruptLog naming the table and version.
arrow::Result<std::vector<std::string>> ClusteringColumns(const Snapshot& snapshot);

}  // namespace deltacpp::internal
