// Which concurrent metaData changes a transaction that does not change metadata itself may
// adopt instead of failing with MetadataChanged.
#pragma once

#include <optional>
#include <string>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// Compares the metadata a transaction builds on (`current`) with a concurrent commit's
/// (`winner`). Returns nullopt when the winner's change may be adopted: only `configuration`
/// and `schemaString` differ, no property is removed, every added or changed property is on
/// the allow-list below, and the schemas differ only in column-mapping field metadata
/// (`delta.columnMapping.id`, `.physicalName`, `.nested.ids`). Otherwise a description of the
/// first difference that is not allowed.
///
/// Allow-list: `delta.enableDeletionVectors` set to true; `delta.checkpointPolicy` set to v2;
/// `delta.columnMapping.mode` from none (or absent) to name, with any
/// `delta.columnMapping.maxColumnId`; `delta.enableInCommitTimestamps` set to true, with any
/// `delta.inCommitTimestampEnablementVersion` / `...EnablementTimestamp`;
/// `delta.enableRowTracking` set to true, with any
/// `delta.rowTracking.materializedRowIdColumnName` / `...materializedRowCommitVersionColumnName`.
std::optional<std::string> DisallowedMetadataChange(const Metadata& current, const Metadata& winner);

}  // namespace deltacpp::internal
