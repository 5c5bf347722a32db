// Parses newline-delimited JSON action files (commits, JSON V2 checkpoints) into actions, with
// file actions (add/remove) gathered columnar.
#pragma once

#include <arrow/api.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// Everything one JSON action file holds. Unknown action types and fields are ignored.
struct ParsedActions {
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::optional<CommitInfo> commit_info;
  std::vector<Txn> txns;
  std::vector<DomainMetadata> domains;
  std::vector<CdcFile> cdc_files;
  std::vector<Sidecar> sidecars;
  std::optional<CheckpointMetadata> checkpoint_metadata;
  /// Adds and removes in file order, ReplayBatchSchema() layout; null when there are none.
  std::shared_ptr<arrow::RecordBatch> file_actions;
  int64_t num_adds = 0;
  int64_t num_removes = 0;
};

/// Parses `content` (the bytes of `file_name`, used in error messages). Malformed JSON is a
/// CorruptLog error naming the file and the 1-based line.
arrow::Result<ParsedActions> ParseActionFile(std::string_view content, const std::string& file_name);

}  // namespace deltacpp::internal
