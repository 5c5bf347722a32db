#include "log/typed_stats.h"

#include <arrow/util/bit_util.h>

#include <functional>
#include <map>

#include "expr/physical_name.h"
#include "log/file_action_schema.h"
#include "log/live_file_list.h"
#include "protocol/schema_json.h"

namespace deltacpp::internal {

arrow::FieldVector StatsFields(const arrow::FieldVector& fields, const std::string& prefix,
                               const std::set<std::string>* present, bool counts) {
  arrow::FieldVector out;
  for (const auto& f : fields) {
    if (IsVariantField(*f)) continue;
    const std::string name = PhysicalFieldName(*f);
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (f->type()->id() == arrow::Type::STRUCT) {
      auto children = StatsFields(f->type()->fields(), key, present, counts);
      if (!children.empty()) out.push_back(arrow::field(name, arrow::struct_(children)));
    } else if (!present || present->count(key) > 0) {
      out.push_back(arrow::field(name, counts ? arrow::int64() : f->type()));
    }
  }
  return out;
}

arrow::Status FillStats(arrow::StructBuilder* builder, const arrow::StructType& type,
                        const std::string& prefix, const FileStats& stats, StatKind kind) {
  ARROW_RETURN_NOT_OK(builder->Append());
  for (int i = 0; i < type.num_fields(); ++i) {
    const auto& f = type.field(i);
    const std::string key = prefix.empty() ? f->name() : prefix + "." + f->name();
    arrow::ArrayBuilder* child = builder->field_builder(i);
    if (f->type()->id() == arrow::Type::STRUCT) {
      ARROW_RETURN_NOT_OK(FillStats(static_cast<arrow::StructBuilder*>(child),
                                    static_cast<const arrow::StructType&>(*f->type()), key, stats,
                                    kind));
      continue;
    }
    auto it = stats.columns.find(key);
    if (it == stats.columns.end()) {
      ARROW_RETURN_NOT_OK(child->AppendNull());
    } else if (kind == StatKind::kNullCount) {
      auto* counts = static_cast<arrow::Int64Builder*>(child);
      ARROW_RETURN_NOT_OK(it->second.null_count ? counts->Append(*it->second.null_count)
                                                : counts->AppendNull());
    } else {
      const auto& value = kind == StatKind::kMin ? it->second.min : it->second.max;
      if (value && value->is_valid && value->type->Equals(*f->type())) {
        ARROW_RETURN_NOT_OK(child->AppendScalar(*value));
      } else {
        ARROW_RETURN_NOT_OK(child->AppendNull());
      }
    }
  }
  return arrow::Status::OK();
}


StatsLayout::StatsLayout(std::shared_ptr<arrow::Schema> data_schema)
    : data_schema_(std::move(data_schema)) {
  arrow::FieldVector fields = {arrow::field("numRecords", arrow::int64())};
  fields.push_back(
      arrow::field("minValues", arrow::struct_(StatsFields(data_schema_->fields(), "", nullptr, false))));
  fields.push_back(
      arrow::field("maxValues", arrow::struct_(StatsFields(data_schema_->fields(), "", nullptr, false))));
  fields.push_back(
      arrow::field("nullCount", arrow::struct_(StatsFields(data_schema_->fields(), "", nullptr, true))));
  fields.push_back(arrow::field("tightBounds", arrow::boolean()));
  type_ = arrow::struct_(fields);
}

arrow::Result<std::shared_ptr<arrow::StructArray>> ParseStatsColumn(const arrow::StringArray& stats,
                                                                    const StatsLayout& layout) {
  std::unique_ptr<arrow::ArrayBuilder> raw;
  ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), layout.type(), &raw));
  auto* builder = static_cast<arrow::StructBuilder*>(raw.get());
  ARROW_RETURN_NOT_OK(builder->Reserve(stats.length()));
  const auto& type = static_cast<const arrow::StructType&>(*layout.type());
  auto* num_records = static_cast<arrow::Int64Builder*>(builder->field_builder(0));
  auto* tight = static_cast<arrow::BooleanBuilder*>(builder->field_builder(4));
  const std::pair<int, StatKind> parts[] = {
      {1, StatKind::kMin}, {2, StatKind::kMax}, {3, StatKind::kNullCount}};
  for (int64_t i = 0; i < stats.length(); ++i) {
    std::optional<FileStats> parsed;
    if (stats.IsValid(i)) {
      auto result = ParseStatsJson(stats.GetView(i), *layout.data_schema());
      if (result.ok()) parsed = std::move(*result);
    }
    if (!parsed) {
      ARROW_RETURN_NOT_OK(builder->AppendNull());
      continue;
    }
    ARROW_RETURN_NOT_OK(builder->Append());
    ARROW_RETURN_NOT_OK(parsed->num_records ? num_records->Append(*parsed->num_records)
                                            : num_records->AppendNull());
    for (const auto& [index, kind] : parts) {
      ARROW_RETURN_NOT_OK(FillStats(static_cast<arrow::StructBuilder*>(builder->field_builder(index)),
                                    static_cast<const arrow::StructType&>(*type.field(index)->type()),
                                    "", *parsed, kind));
    }
    ARROW_RETURN_NOT_OK(parsed->tight_bounds ? tight->Append(*parsed->tight_bounds)
                                             : tight->AppendNull());
  }
  std::shared_ptr<arrow::Array> out;
  ARROW_RETURN_NOT_OK(builder->Finish(&out));
  return std::static_pointer_cast<arrow::StructArray>(out);
}

arrow::Result<std::shared_ptr<arrow::StructArray>> ChunkStats(const FileChunk& chunk,
                                                             const StatsLayout& layout) {
  FileChunk::Shared& shared = *chunk.shared();
  std::lock_guard lock(shared.stats_mutex);
  if (shared.stats && shared.stats_type->Equals(*layout.type())) return shared.stats;
  const auto& text = static_cast<const arrow::StringArray&>(*chunk.actions()->column(kStatsCol));
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseStatsColumn(text, layout));
  shared.stats_type = layout.type();
  shared.stats = parsed;
  return parsed;
}

namespace {

// Leaves of `array` (a StructArray of StatsFields) by dot-joined physical path.
void CollectLeaves(const std::shared_ptr<arrow::Array>& array, const std::string& prefix,
                   std::map<std::string, std::shared_ptr<arrow::Array>>* out) {
  const auto& type = static_cast<const arrow::StructType&>(*array->type());
  const auto& st = static_cast<const arrow::StructArray&>(*array);
  for (int i = 0; i < type.num_fields(); ++i) {
    const std::string key = prefix.empty() ? type.field(i)->name() : prefix + "." + type.field(i)->name();
    // field() (not GetFlattenedField) keeps offsets aligned with the parent; a null parent
    // row is checked on the parent.
    const auto& child = st.field(i);
    if (child->type_id() == arrow::Type::STRUCT) {
      CollectLeaves(child, key, out);
    } else {
      (*out)[key] = child;
    }
  }
}

}  // namespace

TypedStatsReader::TypedStatsReader(std::shared_ptr<arrow::StructArray> stats,
                                   const std::vector<std::string>& physical_paths)
    : stats_(std::move(stats)) {
  num_records_ = stats_->GetFieldByName("numRecords");
  tight_bounds_ = stats_->GetFieldByName("tightBounds");
  std::map<std::string, std::shared_ptr<arrow::Array>> mins, maxes, counts;
  CollectLeaves(stats_->GetFieldByName("minValues"), "", &mins);
  CollectLeaves(stats_->GetFieldByName("maxValues"), "", &maxes);
  CollectLeaves(stats_->GetFieldByName("nullCount"), "", &counts);
  for (const auto& path : physical_paths) {
    Column c{path, nullptr, nullptr, nullptr};
    if (auto it = mins.find(path); it != mins.end()) c.min = it->second;
    if (auto it = maxes.find(path); it != maxes.end()) c.max = it->second;
    if (auto it = counts.find(path); it != counts.end()) c.null_count = it->second;
    if (c.min || c.max || c.null_count) columns_.push_back(std::move(c));
  }
}

std::optional<FileStats> TypedStatsReader::At(int64_t row) const {
  if (!stats_->IsValid(row)) return std::nullopt;
  FileStats out;
  if (num_records_->IsValid(row)) {
    out.num_records = static_cast<const arrow::Int64Array&>(*num_records_).Value(row);
  }
  if (tight_bounds_->IsValid(row)) {
    out.tight_bounds = static_cast<const arrow::BooleanArray&>(*tight_bounds_).Value(row);
  }
  for (const auto& c : columns_) {
    ColumnStats s;
    bool known = false;
    if (c.min && c.min->IsValid(row)) {
      auto v = c.min->GetScalar(row);
      if (v.ok()) s.min = std::move(*v), known = true;
    }
    if (c.max && c.max->IsValid(row)) {
      auto v = c.max->GetScalar(row);
      if (v.ok()) s.max = std::move(*v), known = true;
    }
    if (c.null_count && c.null_count->IsValid(row)) {
      s.null_count = static_cast<const arrow::Int64Array&>(*c.null_count).Value(row);
      known = true;
    }
    if (known) out.columns.emplace(c.path, std::move(s));
  }
  return out;
}

}  // namespace deltacpp::internal
