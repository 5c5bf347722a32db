// A landing folder as a streaming source: JSON Lines, CSV or Parquet files with a declared
// schema, each new file read once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "deltacpp/stream/stream_query.h"

namespace deltacpp {

enum class FileFormat { kJson, kCsv, kParquet };

/// What becomes of a record that does not parse or does not fit the schema.
enum class BadRecordPolicy {
  kFail,   ///< the batch fails, naming the file and the line (nothing of it is written)
  kDrop,   ///< dropped and counted (BatchReport::rejected_records)
  kRoute,  ///< written, with its file, line, text and error, to the bad-records table
};

struct FileSourceOptions {
  std::string location;  ///< the landing folder (local)
  FileFormat format = FileFormat::kJson;
  std::shared_ptr<arrow::Schema> schema;  ///< the records' columns and types
  ReadLimits limits;                      ///< max_files defaults to 1000
  BadRecordPolicy bad_records = BadRecordPolicy::kFail;
  /// With kRoute: the Delta table receiving malformed records (columns file, line, record,
  /// error; created on first use), written once per batch as the sink is.
  std::string bad_records_location;
  bool csv_header = true;  ///< CSV files start with a header naming the columns
};

/// The files of the folder (subfolders included) are taken in order of modification time,
/// then path; names starting with `_` or `.` are not data (write a file under such a name and
/// rename it when complete, so that no half-written file is read). A file is read once: the
/// files of each batch are recorded in the checkpoint before the batch runs. JSON Lines: one
/// object per line, fields matched to the schema's columns by name (others ignored, missing
/// ones null). CSV: fields by header name (or by position without a header). Parquet: columns
/// by name, cast to the schema's types. A file that cannot be read at all (not Parquet,
/// unreadable) is one bad record.
std::shared_ptr<StreamSource> MakeFileSource(FileSourceOptions options);

}  // namespace deltacpp
