#include "scan/change_range.h"

#include <fmt/core.h>

#include "deltacpp/error.h"
#include "util/temporal.h"

namespace deltacpp::internal {

namespace {

std::string TimestampText(int64_t ms) { return FormatTimestampMicros(ms * 1000) + " UTC"; }

// The last version whose timestamp is <= `ts`, or the earliest version when `ts` is before it.
arrow::Result<int64_t> LastCommitAtOrBefore(const CommitTimeline& timeline, int64_t ts) {
  int64_t lo = timeline.earliest(), hi = timeline.latest();
  ARROW_ASSIGN_OR_RAISE(int64_t first_ts, timeline.TimestampOf(lo));
  if (ts < first_ts) return lo;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    ARROW_ASSIGN_OR_RAISE(int64_t mts, timeline.TimestampOf(mid));
    if (mts <= ts) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

arrow::Result<int64_t> StartFromTimestamp(const CommitTimeline& timeline, int64_t ts,
                                          const std::string& table_root) {
  ARROW_ASSIGN_OR_RAISE(int64_t version, LastCommitAtOrBefore(timeline, ts));
  ARROW_ASSIGN_OR_RAISE(int64_t version_ts, timeline.TimestampOf(version));
  if (version_ts >= ts) return version;
  if (version + 1 <= timeline.latest()) return version + 1;
  return DeltaError(DeltaErrorCode::kTimestampOutOfRange,
                    fmt::format("table {}: starting timestamp {} for the change data feed is "
                                "after the table's latest version {} ({}); use a timestamp at or "
                                "before {}",
                                table_root, TimestampText(ts), version,
                                TimestampText(version_ts), TimestampText(version_ts)));
}

arrow::Result<int64_t> EndFromTimestamp(const CommitTimeline& timeline, int64_t ts,
                                        const std::string& table_root) {
  auto version = timeline.VersionAt(ts);
  if (!version.ok()) {
    return arrow::Status(version.status().code(),
                         fmt::format("table {}: ending timestamp {} for the change data feed: {}",
                                     table_root, TimestampText(ts), version.status().message()),
                         version.status().detail());
  }
  return version;
}

}  // namespace

arrow::Result<ChangeRange> ResolveChangeRange(const CommitTimeline& timeline,
                                              const ChangeRangeRequest& request,
                                              const std::string& table_root) {
  if (request.start_version && request.start_timestamp_ms) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {}: give a starting version or a starting timestamp for "
                                  "the change data feed, not both",
                                  table_root));
  }
  if (request.end_version && request.end_timestamp_ms) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {}: give an ending version or an ending timestamp for "
                                  "the change data feed, not both",
                                  table_root));
  }
  if (!request.start_version && !request.start_timestamp_ms) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {}: no starting version or timestamp given for the "
                                  "change data feed",
                                  table_root));
  }
  for (const auto& v : {request.start_version, request.end_version}) {
    if (v && *v < 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("table {}: version {} for the change data feed is negative",
                                    table_root, *v));
    }
  }
  // Both bounds are resolved before either is checked, as delta-spark does: a timestamp that
  // cannot be resolved is reported first.
  ChangeRange range;
  if (request.start_version) {
    range.start = *request.start_version;
  } else {
    ARROW_ASSIGN_OR_RAISE(range.start,
                          StartFromTimestamp(timeline, *request.start_timestamp_ms, table_root));
  }
  std::optional<int64_t> end;
  if (request.end_version) {
    end = request.end_version;
  } else if (request.end_timestamp_ms) {
    ARROW_ASSIGN_OR_RAISE(end, EndFromTimestamp(timeline, *request.end_timestamp_ms, table_root));
  }
  if (range.start > timeline.latest()) {
    return DeltaError(DeltaErrorCode::kVersionNotFound,
                      fmt::format("table {}: start version {} for the change data feed exceeds "
                                  "the latest table version {}",
                                  table_root, range.start, timeline.latest()));
  }
  if (end && request.start_timestamp_ms && request.end_timestamp_ms) {
    if (*request.start_timestamp_ms > *request.end_timestamp_ms) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("table {}: change data feed range from start {} to end {} "
                                    "is invalid: the end cannot be before the start",
                                    table_root, range.start, *end));
    }
    // Two timestamps between the same two commits: nothing changed in between.
    if (*end == range.start - 1) {
      range.end = *end;
      return range;
    }
  }
  if (end && *end < range.start) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {}: change data feed range from start {} to end {} is "
                                  "invalid: the end cannot be before the start",
                                  table_root, range.start, *end));
  }
  range.end = end ? std::min(*end, timeline.latest()) : timeline.latest();
  return range;
}

}  // namespace deltacpp::internal
