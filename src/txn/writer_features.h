// Which tables deltacpp may write: the writer side of the table-feature registry.
#pragma once

#include <arrow/status.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// The features whose writer duties concern only the rows a commit adds: invariants,
/// checkConstraints, generatedColumns and identityColumns. An operation that adds no rows (alter
/// table, checkpoint, a new definition), or one that checks and completes every row it adds,
/// lists them as enforced.
const std::vector<std::string>& RowLevelWriterFeatures();

/// True when deltacpp fulfils the writer duties of `feature` (for features such as invariants
/// only while the table does not use them; see CheckWriteSupported).
bool IsSupportedWriterFeature(std::string_view feature);

/// Checks that deltacpp can commit to a table with this protocol and metadata. Errors, all
/// UnsupportedFeature naming the table, the version and the feature: minWriterVersion outside
/// 1..7 or minReaderVersion outside 1..3; any listed or implied feature deltacpp cannot write
/// (unknown names included); `invariants` with a column carrying `delta.invariants`;
/// `checkConstraints` with a `delta.constraints.*` property; `generatedColumns` with a column
/// carrying `delta.generationExpression`; identity columns (`delta.identity.*` column metadata).
/// The invariants, checkConstraints and generatedColumns checks are skipped for features named
/// in `enforced_by_caller` (the caller validates the rows it commits). A schemaString that does
/// not parse is CorruptLog.
arrow::Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                                  const std::string& table_root, int64_t version,
                                  const std::vector<std::string>& enforced_by_caller = {});

}  // namespace deltacpp::internal
