// Typed Delta errors carried inside arrow::Status so callers can match on the kind of failure.
#pragma once

#include <arrow/status.h>

#include <memory>
#include <optional>
#include <string>

namespace deltacpp {

/// The kinds of failure deltacpp reports. Every error the library returns that is about the
/// table (not a plain I/O or Arrow error) carries one of these in a DeltaErrorDetail.
enum class DeltaErrorCode {
  kTableNotFound,          ///< no `_delta_log` (or no commit) at the path
  kVersionNotFound,        ///< requested version is not reconstructable / does not exist
  kTimestampOutOfRange,    ///< time travel to a timestamp before the first or after the last commit
  kVersionExists,          ///< put-if-absent lost: the log file is already there
  kCorruptLog,             ///< malformed JSON, missing protocol/metaData, non-contiguous versions
  kUnsupportedFeature,     ///< reader/writer feature or protocol version deltacpp does not support
  kUnsupportedStorage,     ///< URI scheme without a LogStore
  kInvalidExpression,      ///< filter / predicate text that does not parse or bind
  kSchemaMismatch,         ///< data does not fit the table schema
  kMissingFile,            ///< a file the log references is absent
  kInvalidArgument,        ///< bad option values
  kConcurrentAppend,
  kConcurrentDeleteRead,
  kConcurrentDeleteDelete,
  kMetadataChanged,
  kProtocolChanged,
  kConcurrentTransaction,
  kConstraintViolation,    ///< NOT NULL, CHECK constraint or replaceWhere violated by new rows
  kTableAlreadyExists,     ///< CREATE TABLE where a table exists
  kCommitStateUnknown,     ///< a commit write failed and whether it landed cannot be told
  kAppendOnlyViolation,    ///< a data-changing remove on a `delta.appendOnly` table
};

/// Human-readable name of an error code, e.g. "UnsupportedFeature".
const char* DeltaErrorCodeName(DeltaErrorCode code);

/// The detail attached to a Status returned by deltacpp for table-level failures.
class DeltaErrorDetail : public arrow::StatusDetail {
 public:
  explicit DeltaErrorDetail(DeltaErrorCode code) : code_(code) {}
  const char* type_id() const override;
  std::string ToString() const override;
  DeltaErrorCode code() const { return code_; }

 private:
  DeltaErrorCode code_;
};

/// Builds a Status of the Arrow code matching `code`, with a DeltaErrorDetail and `message`.
arrow::Status DeltaError(DeltaErrorCode code, std::string message);

/// The Delta error code a Status carries, if any.
std::optional<DeltaErrorCode> GetDeltaErrorCode(const arrow::Status& status);

/// True when `status` carries `code`.
inline bool IsDeltaError(const arrow::Status& status, DeltaErrorCode code) {
  auto c = GetDeltaErrorCode(status);
  return c.has_value() && *c == code;
}

}  // namespace deltacpp
