// Classifies the names found in `_delta_log/` (commits, checkpoints, compactions, checksums).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deltacpp::internal {

enum class LogFileKind {
  kCommit,               ///< V.json
  kClassicCheckpoint,    ///< V.checkpoint.parquet
  kMultiPartCheckpoint,  ///< V.checkpoint.P.N.parquet
  kUuidCheckpoint,       ///< V.checkpoint.<uuid>.json|parquet (always V2)
  kCompaction,           ///< X.Y.compacted.json
  kChecksum,             ///< V.crc
};

/// A recognised log file name.
struct LogFileName {
  LogFileKind kind;
  int64_t version = 0;
  int32_t part = 0;        ///< multi-part: 1-based part number
  int32_t num_parts = 0;   ///< multi-part: total parts
  int64_t end_version = 0; ///< compaction: last version covered
  bool is_json = false;    ///< UUID checkpoints may be JSON
};

/// Parses a bare file name; nullopt for anything that is not a log file (dot files, temp files,
/// `_last_checkpoint`, unknown suffixes, versions not of exactly 20 digits).
std::optional<LogFileName> ParseLogFileName(std::string_view name);

/// `00000000000000000012.json` for version 12.
std::string CommitFileName(int64_t version);

/// Zero-padded 20-digit version prefix.
std::string VersionPrefix(int64_t version);

}  // namespace deltacpp::internal
