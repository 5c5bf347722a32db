// Log replay: reconciles a log segment (checkpoint + commits) into snapshot state.
#pragma once

#include "deltacpp/snapshot.h"
#include "log/log_segment.h"

namespace deltacpp::internal {

/// Reads the segment's checkpoint and commits (in parallel) and reconciles them per the
/// protocol: newest protocol/metaData win, latest txn per appId, live domains, and live files
/// keyed by (decoded path, deletion vector id). The protocol is checked before anything else
/// is trusted. A checkpoint that cannot be read (corrupt, truncated, not a regular file) is
/// replayed around from an older checkpoint or commit 0 when every commit needed for that is
/// there. Errors: CorruptLog (no protocol/metaData, malformed commit, an unreadable checkpoint
/// without the commits to replace it, conflicting file actions in one commit),
/// UnsupportedFeature.
arrow::Result<Snapshot::State> ReplayLogSegment(const std::shared_ptr<LogStore>& store,
                                                const LogSegment& segment);

/// The state after `commits` (the commits directly following `base.version`, ascending), as
/// replaying the whole log would give it, computed from `base` and those commits only. Errors:
/// CorruptLog (a gap, an unreadable or malformed commit), UnsupportedFeature.
arrow::Result<Snapshot::State> ReplayCommitsOnto(const Snapshot::State& base,
                                                 const std::vector<LogFile>& commits);

}  // namespace deltacpp::internal
