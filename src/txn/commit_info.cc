#include "txn/commit_info.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>

#include "deltacpp/table_config.h"
#include "util/clock.h"
#include "util/uri.h"

namespace deltacpp::internal {

const char* IsolationLevelName(IsolationLevel level) {
  switch (level) {
    case IsolationLevel::kSerializable: return "Serializable";
    case IsolationLevel::kWriteSerializable: return "WriteSerializable";
    case IsolationLevel::kSnapshotIsolation: return "SnapshotIsolation";
  }
  return "Serializable";
}

bool InCommitTimestampsEnabled(const Metadata& metadata) {
  return TableConfig::Parse(metadata.configuration).in_commit_timestamps;
}

int64_t NextInCommitTimestamp(int64_t now_ms, std::optional<int64_t> previous_ms) {
  if (!previous_ms) return now_ms;
  return std::max(now_ms, *previous_ms + 1);
}

CommitInfoSummary SummarizeCommitInfo(const CommitInfo& commit_info) {
  CommitInfoSummary out;
  if (commit_info.raw_json.empty()) return out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(commit_info.raw_json).get(doc) != simdjson::SUCCESS) return out;
  bool blind = false;
  if (doc["isBlindAppend"].get(blind) == simdjson::SUCCESS) out.is_blind_append = blind;
  std::string_view txn_id;
  if (doc["txnId"].get(txn_id) == simdjson::SUCCESS) out.txn_id = std::string(txn_id);
  return out;
}

}  // namespace deltacpp::internal
