#include "ops/op_util.h"

#include <fmt/core.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "util/clock.h"
#include "deltacpp/error.h"
#include "log/file_action_schema.h"
#include "protocol/table_features.h"

namespace deltacpp::internal {

std::string JsonStringArray(const std::vector<std::string>& values) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& v : values) w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  w.EndArray();
  return buf.GetString();
}

std::string JsonStringObject(const std::map<std::string, std::string>& values) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  for (const auto& [k, v] : values) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  return buf.GetString();
}

std::string JsonQuote(const std::string& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  return buf.GetString();
}

RemoveFile RemoveForLiveFile(const arrow::RecordBatch& files, int64_t row, int64_t now_ms) {
  RemoveFile r;
  r.path = std::string(static_cast<const arrow::StringArray&>(*files.column(kPathCol)).GetView(row));
  r.deletion_timestamp = now_ms;
  r.data_change = true;
  r.extended_file_metadata = true;
  r.partition_values = PartitionValuesAt(files, row);
  const auto& size = static_cast<const arrow::Int64Array&>(*files.column(kSizeCol));
  if (size.IsValid(row)) r.size = size.Value(row);
  const auto& stats = static_cast<const arrow::StringArray&>(*files.column(kStatsCol));
  if (stats.IsValid(row)) r.stats = std::string(stats.GetView(row));
  const auto& tags = static_cast<const arrow::MapArray&>(*files.column(kTagsCol));
  if (tags.IsValid(row)) {
    const auto& k = static_cast<const arrow::StringArray&>(*tags.keys());
    const auto& v = static_cast<const arrow::StringArray&>(*tags.items());
    for (int64_t j = tags.value_offset(row); j < tags.value_offset(row + 1); ++j) {
      if (v.IsValid(j)) r.tags.emplace(std::string(k.GetView(j)), std::string(v.GetView(j)));
    }
  }
  const auto& dv = static_cast<const arrow::StructArray&>(*files.column(kDeletionVectorCol));
  if (dv.IsValid(row)) {
    DeletionVectorDescriptor d;
    d.storage_type = std::string(
        static_cast<const arrow::StringArray&>(*dv.field(kDvStorageType)).GetView(row));
    d.path_or_inline_dv = std::string(
        static_cast<const arrow::StringArray&>(*dv.field(kDvPathOrInlineDv)).GetView(row));
    const auto& off = static_cast<const arrow::Int32Array&>(*dv.field(kDvOffset));
    if (off.IsValid(row)) d.offset = off.Value(row);
    d.size_in_bytes = static_cast<const arrow::Int32Array&>(*dv.field(kDvSizeInBytes)).Value(row);
    d.cardinality = static_cast<const arrow::Int64Array&>(*dv.field(kDvCardinality)).Value(row);
    r.deletion_vector = std::move(d);
  }
  const auto& base = static_cast<const arrow::Int64Array&>(*files.column(kBaseRowIdCol));
  if (base.IsValid(row)) r.base_row_id = base.Value(row);
  const auto& drcv =
      static_cast<const arrow::Int64Array&>(*files.column(kDefaultRowCommitVersionCol));
  if (drcv.IsValid(row)) r.default_row_commit_version = drcv.Value(row);
  return r;
}

AddFile AddForLiveFile(const arrow::RecordBatch& files, int64_t row) {
  RemoveFile r = RemoveForLiveFile(files, row, 0);
  AddFile a;
  a.path = std::move(r.path);
  a.partition_values = std::move(r.partition_values);
  a.size = r.size.value_or(0);
  const auto& mtime = static_cast<const arrow::Int64Array&>(*files.column(kModificationTimeCol));
  if (mtime.IsValid(row)) a.modification_time = mtime.Value(row);
  a.data_change = true;
  a.stats = std::move(r.stats);
  a.tags = std::move(r.tags);
  a.deletion_vector = std::move(r.deletion_vector);
  a.base_row_id = r.base_row_id;
  a.default_row_commit_version = r.default_row_commit_version;
  const auto& provider =
      static_cast<const arrow::StringArray&>(*files.column(kClusteringProviderCol));
  if (provider.IsValid(row)) a.clustering_provider = std::string(provider.GetView(row));
  return a;
}

std::string RowText(const arrow::RecordBatch& batch, int64_t row) {
  std::string out;
  for (int c = 0; c < batch.num_columns(); ++c) {
    auto scalar = batch.column(c)->GetScalar(row);
    out += fmt::format("{}{}={}", c ? ", " : "", batch.schema()->field(c)->name(),
                       scalar.ok() ? (*scalar)->ToString() : "?");
  }
  return out;
}

bool SameProtocol(const Protocol& a, const Protocol& b) {
  auto fa = EffectiveFeatures(a), fb = EffectiveFeatures(b);
  std::sort(fa.begin(), fa.end());
  std::sort(fb.begin(), fb.end());
  return a.min_reader_version == b.min_reader_version &&
         a.min_writer_version == b.min_writer_version && fa == fb;
}

}  // namespace deltacpp::internal
