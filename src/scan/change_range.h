// Which versions a change data feed read covers: versions and timestamps resolved as
// delta-spark resolves `startingVersion` / `startingTimestamp` / `endingVersion` /
// `endingTimestamp`.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <optional>
#include <string>

#include "log/commit_timeline.h"

namespace deltacpp::internal {

/// The bounds as given (each a version or a timestamp in ms, at most one of the two).
struct ChangeRangeRequest {
  std::optional<int64_t> start_version;
  std::optional<int64_t> start_timestamp_ms;
  std::optional<int64_t> end_version;
  std::optional<int64_t> end_timestamp_ms;
};

/// An inclusive version range; empty when end < start.
struct ChangeRange {
  int64_t start = 0;
  int64_t end = -1;
  bool empty() const { return end < start; }
};

/// Resolves `request` against the table's commits:
/// - starting timestamp: the first commit at or after it (the earliest commit when it is
///   before all of them); TimestampOutOfRange when it is after the latest commit;
/// - ending timestamp: the last commit at or before it; TimestampOutOfRange outside the commits;
/// - an ending version beyond the latest is the latest; no ending bound is the latest;
/// - both bounds by timestamp and no commit between them: the empty range (start = end + 1);
/// Errors: InvalidArgument for no starting bound, both kinds for one bound, a negative version,
/// an end before the start (or a starting timestamp after the ending one); VersionNotFound for a
/// starting version after the latest.
arrow::Result<ChangeRange> ResolveChangeRange(const CommitTimeline& timeline,
                                              const ChangeRangeRequest& request,
                                              const std::string& table_root);

}  // namespace deltacpp::internal
