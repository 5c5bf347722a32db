#include "deltacpp/ops/create_table.h"

#include <fmt/core.h>

#include "deltacpp/error.h"
#include "ops/op_util.h"
#include "ops/table_definition.h"
#include "protocol/table_properties.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

arrow::Result<CreateTableResult> CreateTable(std::string_view location,
                                             const CreateTableOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Locate(location));
  ARROW_ASSIGN_OR_RAISE(bool exists, table->Exists());
  std::shared_ptr<const Snapshot> current;
  if (exists) {
    ARROW_ASSIGN_OR_RAISE(auto latest, table->Latest());
    current = latest;
    if (options.mode == CreateMode::kErrorIfExists) {
      return DeltaError(DeltaErrorCode::kTableAlreadyExists,
                        fmt::format("a table already exists at {} (version {})", table->root(),
                                    current->version()));
    }
    if (options.mode == CreateMode::kIfNotExists) {
      return CreateTableResult{current->version(), false};
    }
  }
  std::optional<std::string> id;
  if (current) id = current->metadata().id;
  ARROW_ASSIGN_OR_RAISE(auto properties, ValidateUserProperties(options.properties));
  ARROW_ASSIGN_OR_RAISE(auto def, BuildTableDefinition(options.schema, options.partition_columns,
                                                       properties, options.constraints,
                                                       options.name, options.description, id));
  // A new definition has no rows yet, so its row-level duties hold trivially.
  TransactionOptions txn_options = options.transaction;
  const auto& row_level = internal::RowLevelWriterFeatures();
  txn_options.enforced_features.insert(txn_options.enforced_features.end(), row_level.begin(),
                                       row_level.end());
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(table, current, txn_options));
  Protocol protocol = current ? MergeProtocols(current->protocol(), def.protocol) : def.protocol;
  if (!current || EffectiveFeatures(protocol) != EffectiveFeatures(current->protocol()) ||
      protocol.min_reader_version != current->protocol().min_reader_version ||
      protocol.min_writer_version != current->protocol().min_writer_version) {
    txn->UpdateProtocol(protocol);
  }
  txn->UpdateMetadata(def.metadata);
  int64_t removed = 0;
  if (current && current->num_files() > 0) {
    txn->ReadWholeTable();
    std::vector<RemoveFile> removes;
    const int64_t now = WallClockMillis();
    for (int64_t i = 0; i < current->num_files(); ++i) {
      removes.push_back(RemoveForLiveFile(*current->files(), i, now));
    }
    removed = static_cast<int64_t>(removes.size());
    txn->RemoveFiles(std::move(removes));
  }
  std::map<std::string, std::string> params = {
      {"isManaged", "false"},
      {"partitionBy", JsonStringArray(def.metadata.partition_columns)},
      {"properties", JsonStringObject(def.metadata.configuration)},
  };
  if (def.metadata.description) params["description"] = *def.metadata.description;
  std::map<std::string, std::string> metrics;
  if (current) metrics["numRemovedFiles"] = std::to_string(removed);
  const bool replace = options.mode == CreateMode::kOrReplace;
  ARROW_ASSIGN_OR_RAISE(auto result,
                        txn->Commit(replace ? "CREATE OR REPLACE TABLE" : "CREATE TABLE", params,
                                    metrics));
  return CreateTableResult{result.version, true};
}

}  // namespace deltacpp
