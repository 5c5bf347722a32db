// A Delta table as a streaming source: its current rows, then the rows each new commit adds;
// or its change data feed.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "deltacpp/stream/stream_query.h"

namespace deltacpp {

struct DeltaSourceOptions {
  std::string location;
  /// Where a new query starts (at most one; they matter only on the first run, later runs
  /// continue from the checkpoint). None: the latest snapshot's rows, then new commits.
  std::optional<int64_t> starting_version;       ///< commits from this version on
  std::optional<int64_t> starting_timestamp_ms;  ///< commits from the first at or after it
  bool starting_latest = false;                  ///< only commits made after the start
  ReadLimits limits;  ///< max_files defaults to 1000 (files of the snapshot and of commits)
  /// A commit that removes data (DELETE, UPDATE, MERGE, OVERWRITE, ...) stops the stream with
  /// an error unless one of these is set:
  bool skip_change_commits = false;  ///< skip such commits entirely
  bool ignore_deletes = false;       ///< skip commits that only remove files
  bool ignore_changes = false;  ///< emit the files such commits add (rows may repeat)
  /// Stream row-level changes with `_change_type`, `_commit_version`, `_commit_timestamp`
  /// (the initial snapshot, if read, as inserts); the policies above do not apply.
  bool read_change_feed = false;
};

/// Offsets are (version, index of the file in that version) positions; the initial snapshot's
/// files are taken in order of modification time, then path. A schema change in the table
/// stops the stream with SchemaMismatch; the next run reads with the new schema. Files read
/// later must still be there: a VACUUM that removes files a stream has not read yet makes the
/// stream fail with MissingFile, as in delta-spark.
std::shared_ptr<StreamSource> MakeDeltaSource(DeltaSourceOptions options);

}  // namespace deltacpp
