#include "scan/data_files_reader.h"

#include <arrow/util/thread_pool.h>
#include <fmt/core.h>

#include <set>

#include "deltacpp/error.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "protocol/schema_json.h"
#include "scan/data_file_reader.h"
#include "scan/ordered_task_reader.h"
#include "util/uri.h"
#include "util/thread_pools.h"

namespace deltacpp::internal {

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadDataFiles(
    const Snapshot& schema_snapshot, std::vector<AddedDataFile> files, int64_t version) {
  const std::string root = schema_snapshot.table_root();
  auto plan = std::make_shared<FileReadPlan>();
  plan->table_root = root;
  plan->version = version;
  plan->mode = schema_snapshot.column_mapping_mode();
  plan->read_schema = schema_snapshot.schema();
  std::set<std::string> partition_lower;
  for (const auto& p : schema_snapshot.partition_columns()) partition_lower.insert(AsciiLower(p));
  std::vector<std::string> partition_key;
  for (const auto& f : plan->read_schema->fields()) {
    const bool is_partition = partition_lower.count(AsciiLower(f->name())) > 0;
    plan->is_partition.push_back(is_partition);
    partition_key.push_back(plan->mode == ColumnMappingMode::kNone ? f->name() : PhysicalName(*f));
  }
  for (int k = 0; k < plan->read_schema->num_fields(); ++k) plan->output_fields.push_back(k);
  plan->output_schema = plan->read_schema;

  auto tasks = std::make_shared<std::vector<FileTask>>();
  for (auto& file : files) {
    FileTask task;
    auto resolved = ResolveFileInTable(root, root, file.path);
    if (!resolved.ok()) {
      return arrow::Status(resolved.status().code(),
                           fmt::format("table {} version {}: file {}: {}", root, version,
                                       file.path, resolved.status().message()),
                           resolved.status().detail());
    }
    task.path = *resolved;
    task.uri = task.path;
    task.size = file.size;
    task.deletion_vector = std::move(file.deletion_vector);
    task.partition_values.resize(plan->read_schema->num_fields());
    for (int k = 0; k < plan->read_schema->num_fields(); ++k) {
      if (!plan->is_partition[k]) continue;
      std::optional<std::string_view> raw;
      auto it = file.partition_values.find(partition_key[k]);
      if (it != file.partition_values.end() && it->second) raw = *it->second;
      auto scalar = ParsePartitionValue(raw, plan->read_schema->field(k)->type());
      if (!scalar.ok()) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("table {} version {}: file {}: partition column '{}': {}",
                                      root, version, file.path,
                                      plan->read_schema->field(k)->name(),
                                      scalar.status().message()));
      }
      task.partition_values[k] = *scalar;
    }
    tasks->push_back(std::move(task));
  }
  auto fs = schema_snapshot.store()->filesystem();
  const int parallelism = std::max(2, arrow::internal::GetCpuThreadPool()->GetCapacity());
  return std::make_shared<OrderedTaskReader>(
      plan->output_schema, tasks->size(), parallelism,
      [plan, tasks, fs](size_t i) { return ReadDataFile(*plan, (*tasks)[i], *fs); });
}

}  // namespace deltacpp::internal
