// Row tracking for commits: fresh row-id ranges above the table's high-water mark, the
// `delta.rowTracking` domain that records it, and the materialised row-tracking column names.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/actions.h"

namespace deltacpp::internal {

/// The system domain holding `{"rowIdHighWaterMark":N}`.
inline constexpr std::string_view kRowTrackingDomain = "delta.rowTracking";
/// Table property naming the hidden column that materialises stable row ids.
inline constexpr std::string_view kMaterializedRowIdColumnProperty =
    "delta.rowTracking.materializedRowIdColumnName";
/// Table property naming the hidden column that materialises row commit versions.
inline constexpr std::string_view kMaterializedRowCommitVersionColumnProperty =
    "delta.rowTracking.materializedRowCommitVersionColumnName";

/// True when the protocol supports the `rowTracking` feature.
bool RowTrackingSupported(const Protocol& protocol);

/// True when commits must give new files row ids: `rowTracking` is supported and the table
/// property `delta.rowTrackingSuspended` is not true.
bool RowIdAssignmentRequired(const Protocol& protocol, const Metadata& metadata);

/// Checks a metaData about to be committed against the protocol it will live under:
/// `delta.enableRowTracking=true` together with `delta.rowTrackingSuspended=true`, or
/// `delta.enableRowTracking=true` without the `rowTracking` feature, is InvalidArgument.
arrow::Status ValidateRowTrackingMetadata(const Protocol& protocol, const Metadata& metadata,
                                          const std::string& table_root);

/// The high-water mark in a `delta.rowTracking` domain configuration. Anything other than a
/// JSON object with an integer `rowIdHighWaterMark` is CorruptLog naming `where`.
arrow::Result<int64_t> ParseRowIdHighWaterMark(std::string_view configuration,
                                               const std::string& where);

/// The high-water mark among a snapshot's live domains; -1 when the domain is absent.
arrow::Result<int64_t> RowIdHighWaterMark(const std::map<std::string, DomainMetadata>& domains,
                                          const std::string& where);

/// The high-water mark a commit's domain actions set (the last non-removed `delta.rowTracking`
/// action), or nullopt when it sets none.
arrow::Result<std::optional<int64_t>> RowIdHighWaterMarkSetBy(
    const std::vector<DomainMetadata>& domains, const std::string& where);

/// The `numRecords` of an add's stats JSON, or nullopt when absent or not an integer.
std::optional<int64_t> NumRecordsFromStats(const std::optional<std::string>& stats);

/// The adds of one commit attempt with row tracking applied, and the domain action to commit.
struct RowIdAssignment {
  std::vector<AddFile> adds;
  /// `delta.rowTracking` with the new high-water mark; nullopt when it did not grow.
  std::optional<DomainMetadata> high_water_mark_domain;
};

/// Gives every add without a baseRowId the next free range above `high_water_mark`, sized by its
/// stats' numRecords, in order, and sets defaultRowCommitVersion = `version` on every add that
/// has none. Adds that already carry a baseRowId (rows kept from an earlier file) keep it.
/// Errors: InvalidArgument naming the file when an add needing ids has no numRecords (or a
/// negative one), or when the ids would overflow.
arrow::Result<RowIdAssignment> AssignRowIds(const std::vector<AddFile>& adds,
                                            int64_t high_water_mark, int64_t version,
                                            const std::string& table_root);

/// A fresh materialised column name: `<prefix><random uuid>`.
std::string NewMaterializedColumnName(std::string_view prefix);

/// Fills the two materialised column-name properties of `metadata` when the protocol supports
/// row tracking: the previous metadata's value when it had one, else the value `metadata`
/// already carries, else `row_id_name` / `row_commit_version_name`. Leaves `metadata` alone
/// otherwise.
void SetMaterializedColumnNames(const Protocol& protocol, const Metadata* previous,
                                const std::string& row_id_name,
                                const std::string& row_commit_version_name, Metadata* metadata);

}  // namespace deltacpp::internal
