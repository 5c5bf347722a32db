// DESCRIBE DETAIL from a snapshot; clustering columns decoded from their domain.
#include "deltacpp/ops/describe_detail.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "deltacpp/error.h"
#include "expr/physical_name.h"
#include "protocol/path_encoding.h"

namespace deltacpp {

namespace {

// `{"clusteringColumns":[["a"],["s","x"]]}` (physical names) as logical, dotted names.
arrow::Result<std::vector<std::string>> ClusteringColumns(const Snapshot& snapshot) {
  std::vector<std::string> out;
  auto domain = snapshot.domain_metadata().find("delta.clustering");
  if (domain == snapshot.domain_metadata().end() || domain->second.removed) return out;
  const std::string& conf = domain->second.configuration;
  rapidjson::Document doc;
  doc.Parse(conf.c_str(), conf.size());
  auto bad = [&] {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("table {} version {}: domain delta.clustering has a "
                                  "configuration that is not a list of column paths: {}",
                                  snapshot.table_root(), snapshot.version(), conf));
  };
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("clusteringColumns") ||
      !doc["clusteringColumns"].IsArray()) {
    return bad();
  }
  for (const auto& path : doc["clusteringColumns"].GetArray()) {
    if (!path.IsArray() || path.Empty()) return bad();
    std::string name;
    const arrow::FieldVector* level = &snapshot.schema()->fields();
    for (const auto& part : path.GetArray()) {
      if (!part.IsString()) return bad();
      std::string physical(part.GetString(), part.GetStringLength());
      std::string logical = physical;
      const arrow::FieldVector* next = nullptr;
      if (level) {
        for (const auto& f : *level) {
          if (internal::PhysicalFieldName(*f) == physical) {
            logical = f->name();
            if (f->type()->id() == arrow::Type::STRUCT) next = &f->type()->fields();
            break;
          }
        }
      }
      level = next;
      name += (name.empty() ? "" : ".") + logical;
    }
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

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
  ARROW_ASSIGN_OR_RAISE(d.clustering_columns, ClusteringColumns(snapshot));
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
