// DESCRIBE DETAIL from a snapshot.
#include "deltacpp/ops/describe_detail.h"

#include <fmt/core.h>

#include <algorithm>

#include "deltacpp/error.h"
#include "ops/clustering_columns.h"
#include "protocol/path_encoding.h"

namespace deltacpp {

arrow::Result<TableDetail> DescribeDetail(const Snapshot& snapshot) {
  TableDetail d;
  const Metadata& m = snapshot.metadata();
  d.id = m.id;
  d.name = m.name;
  d.description = m.description;
  d.location = "file:" + snapshot.table_root();
  d.created_at_ms = m.created_time;
  d.last_modified_ms = snapshot.timestamp_ms();
  d.partition_columns = m.partition_columns;
  ARROW_ASSIGN_OR_RAISE(d.clustering_columns, internal::ClusteringColumns(snapshot));
  d.num_files = snapshot.num_files();
  d.size_in_bytes = snapshot.total_size_bytes();
  d.properties = m.configuration;
  d.min_reader_version = snapshot.protocol().min_reader_version;
  d.min_writer_version = snapshot.protocol().min_writer_version;
  d.table_features = snapshot.table_features();
  std::sort(d.table_features.begin(), d.table_features.end());
  return d;
}

}  // namespace deltacpp
