// The data writer settings a table's properties ask for: column mapping, target file size,
// statistics columns (clustering columns included), file prefixes and the Parquet codec.
#pragma once

#include <arrow/api.h>
#include <arrow/filesystem/filesystem.h>

#include <memory>
#include <string>

#include "deltacpp/snapshot.h"
#include "write/data_writer.h"

namespace deltacpp::internal {

/// The DataWriter settings for a table at `root` with `schema` and `metadata`, writing with
/// `compression` (empty: the table's `delta.parquet.compression.codec`, else snappy). A
/// malformed property that steers the files is InvalidArgument naming the table and the
/// property, never a silent default.
arrow::Result<DataWriterOptions> WriterOptionsFor(const std::string& root,
                                                  const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                                  const std::shared_ptr<arrow::Schema>& schema,
                                                  const Metadata& metadata,
                                                  const std::string& compression);

/// Clustered tables need statistics on their clustering columns (the `delta.clustering`
/// domain lists them as physical-name paths). When the default first-N columns miss one, the
/// stats columns become the default ones plus the clustering columns.
arrow::Status IndexClusteringColumns(const Snapshot& snapshot,
                                     const std::shared_ptr<arrow::Schema>& schema,
                                     DataWriterOptions* options);

}  // namespace deltacpp::internal
