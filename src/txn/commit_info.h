// commitInfo conventions: isolation level names, in-commit timestamps, and the fields of a
// concurrent commit's commitInfo that conflict detection needs.
#pragma once

#include "util/clock.h"

#include <cstdint>
#include <optional>
#include <string>

#include "deltacpp/transaction.h"
#include "protocol/actions.h"

namespace deltacpp::internal {

/// `Serializable`, `WriteSerializable` or `SnapshotIsolation`, as commitInfo spells them.
const char* IsolationLevelName(IsolationLevel level);

/// True when `delta.enableInCommitTimestamps` is `true` (case-insensitive) in the metadata.
bool InCommitTimestampsEnabled(const Metadata& metadata);

/// The in-commit timestamp of a commit made at wall-clock time `now_ms` after a commit dated
/// `previous_ms`: the later of `now_ms` and `previous_ms + 1`, so timestamps never go backwards
/// even when the clock does.
int64_t NextInCommitTimestamp(int64_t now_ms, std::optional<int64_t> previous_ms);

/// What conflict detection reads from a commitInfo besides the parsed fields.
struct CommitInfoSummary {
  std::optional<bool> is_blind_append;
  std::optional<std::string> txn_id;
};

/// Reads `isBlindAppend` and `txnId` from the commitInfo's JSON text; absent or malformed
/// fields stay unset.
CommitInfoSummary SummarizeCommitInfo(const CommitInfo& commit_info);


}  // namespace deltacpp::internal
