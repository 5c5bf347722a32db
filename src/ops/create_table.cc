#include "deltacpp/ops/create_table.h"

#include <fmt/core.h>

#include "deltacpp/error.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/table_definition.h"
#include "protocol/table_properties.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

// Everything the definition brings into the log is UTF-8 text.
arrow::Status CheckDefinitionText(const CreateTableOptions& options, std::string_view location) {
  const std::string context = fmt::format("CREATE TABLE {}: ", location);
  if (options.schema) {
    ARROW_RETURN_NOT_OK(
        CheckSchemaText(*options.schema, DeltaErrorCode::kInvalidArgument, context, "column"));
  }
  for (const auto& p : options.partition_columns) {
    ARROW_RETURN_NOT_OK(CheckOptionText(p, context, "a partition column name"));
  }
  ARROW_RETURN_NOT_OK(CheckPropertiesText(options.properties, context, "table property"));
  for (const auto& [name, expression] : options.constraints) {
    ARROW_RETURN_NOT_OK(CheckOptionText(name, context, "a CHECK constraint name"));
    ARROW_RETURN_NOT_OK(CheckOptionText(
        expression, context, fmt::format("the expression of CHECK constraint '{}'", name)));
  }
  if (options.name) ARROW_RETURN_NOT_OK(CheckOptionText(*options.name, context, "the table name"));
  if (options.description) {
    ARROW_RETURN_NOT_OK(
        CheckOptionText(*options.description, context, "the table description (comment)"));
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<CreateTableResult> CreateTable(std::string_view location,
                                             const CreateTableOptions& options) {
  ARROW_RETURN_NOT_OK(CheckDefinitionText(options, location));
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
    current->live_files().ForEach([&](FileRef file) {
      removes.push_back(RemoveForLiveFile(current->live_files(), file, now));
    });
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
