// The clustering columns of a table, decoded from its `delta.clustering` domain.
#include "ops/clustering_columns.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "deltacpp/error.h"
#include "expr/physical_name.h"

namespace deltacpp::internal {

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
          if (PhysicalFieldName(*f) == physical) {
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


}  // namespace deltacpp::internal
