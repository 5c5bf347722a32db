// DESCRIBE DETAIL: one table's facts as delta-spark reports them.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/snapshot.h"

namespace deltacpp {

/// The columns of delta-spark's `DESCRIBE DETAIL`, for one snapshot.
struct TableDetail {
  std::string format = "delta";
  std::string id;                          ///< metaData.id
  std::optional<std::string> name;         ///< metaData.name
  std::optional<std::string> description;  ///< metaData.description
  std::string location;                    ///< `file:` URI of the table root
  std::optional<int64_t> created_at_ms;    ///< metaData.createdTime
  int64_t last_modified_ms = 0;            ///< the snapshot's commit timestamp
  std::vector<std::string> partition_columns;
  /// Logical names of the clustering columns (the `delta.clustering` domain), nested ones
  /// dotted; empty for a table that is not clustered.
  std::vector<std::string> clustering_columns;
  int64_t num_files = 0;
  int64_t size_in_bytes = 0;
  std::map<std::string, std::string> properties;
  int32_t min_reader_version = 0;
  int32_t min_writer_version = 0;
  /// Features in force, sorted (implied ones for legacy protocol versions, as delta-spark).
  std::vector<std::string> table_features;
};

/// The detail of `snapshot`. Errors: CorruptLog for a clustering domain whose configuration
/// is not the JSON delta-spark writes.
arrow::Result<TableDetail> DescribeDetail(const Snapshot& snapshot);

}  // namespace deltacpp
