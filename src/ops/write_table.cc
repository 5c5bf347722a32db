// WRITE: append / overwrite / replaceWhere / dynamic partition overwrite of Arrow data.
#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <chrono>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/scan.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "log/file_action_schema.h"
#include "ops/data_writer_settings.h"
#include "ops/generated_columns.h"
#include "ops/identity_columns.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/row_constraints.h"
#include "ops/schema_alignment.h"
#include "ops/table_definition.h"
#include "protocol/table_properties.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"
#include "util/uri.h"
#include "write/change_data_writer.h"
#include "write/row_rewriter.h"
#include "write/data_writer.h"
#include "write/stats_collector.h"
#include "write/string_validation.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

// The rows of one live file (deletion vector applied) in the snapshot's logical schema.
// Removes the rows the replaceWhere predicate matches from the live files, through the row
// rewriter DELETE and UPDATE use: files the partition values and statistics prove wholly
// matching go unread, files that may match are read and rewritten without the matching rows
// (copy-on-write, converted to the schema of the commit, `commit_files`, which a mergeSchema
// write may have widened). With the change data feed, a commit that rewrites
// part of a file describes its deletes in cdc files (and the caller then its inserts too); one
// that only removes whole files writes none. Records the predicate and the files read.
arrow::Result<RewriteOutcome> RemoveReplacedRows(const std::shared_ptr<const Snapshot>& snapshot,
                                                 const std::string& predicate,
                                                 DataWriterOptions commit_files,
                                                 std::unique_ptr<RowRewriter>* rewriter_out,
                                                 Transaction& txn) {
  ARROW_ASSIGN_OR_RAISE(auto candidates, snapshot->NewScan().Filter(predicate).Build());
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(predicate));
  ARROW_ASSIGN_OR_RAISE(auto bound, BindPredicate(parsed, *snapshot->schema()));
  // Rows to replace: where the predicate is TRUE (never null); the others are kept.
  ARROW_ASSIGN_OR_RAISE(auto match_expr, ToArrowFilter(bound));
  ARROW_ASSIGN_OR_RAISE(match_expr, match_expr.Bind(*snapshot->schema()));

  RowRewriterOptions rewrite;
  rewrite.snapshot = snapshot;
  // Rows of the snapshot's schema to the commit's, aligned on first use.
  auto to_commit_schema = std::make_shared<std::optional<SchemaAlignment>>();
  rewrite.to_output = [to_commit_schema, schema = commit_files.table_schema](
                          const std::shared_ptr<arrow::RecordBatch>& rows)
      -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    if (!*to_commit_schema) {
      ARROW_ASSIGN_OR_RAISE(*to_commit_schema,
                            AlignSchemas(*schema, *rows->schema(), /*merge_schema=*/false));
    }
    return ConformBatch(**to_commit_schema, rows);
  };
  rewrite.data_options = std::move(commit_files);
  rewrite.mode = RewriteMode::kCopyOnWrite;
  rewrite.change_data_feed = snapshot->config().change_data_feed;
  rewrite.operation = fmt::format("replaceWhere ({})", predicate);
  ARROW_ASSIGN_OR_RAISE(*rewriter_out, RowRewriter::Make(std::move(rewrite)));
  RowRewriter& rewriter = **rewriter_out;

  std::vector<std::string> read;
  for (const auto& file : candidates->files()) {
    read.push_back(file.log_path);
    if (file.all_rows_match) {
      ARROW_RETURN_NOT_OK(rewriter.RemoveWholeFile(file.file_ref));
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto rows, rewriter.Read(file.file_ref));
    ARROW_ASSIGN_OR_RAISE(auto match, arrow::compute::ExecuteScalarExpression(
                                          match_expr, arrow::compute::ExecBatch(*rows.rows)));
    std::shared_ptr<arrow::Array> mask = match.is_array() ? match.make_array() : nullptr;
    if (!mask) {
      ARROW_ASSIGN_OR_RAISE(mask,
                            arrow::MakeArrayFromScalar(*match.scalar(), rows.rows->num_rows()));
    }
    ARROW_RETURN_NOT_OK(rewriter.Delete(rows, static_cast<const arrow::BooleanArray&>(*mask)));
  }
  txn.ReadPredicate(predicate);
  txn.ReadFiles(read);
  return rewriter.Finish();
}

}  // namespace

arrow::Result<WriteResult> WriteTable(std::string_view location,
                                      std::shared_ptr<arrow::RecordBatchReader> input,
                                      const WriteOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Locate(location));
  return WriteTable(table, std::move(input), options);
}

namespace {

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReaderOf(
    const std::shared_ptr<arrow::Table>& input) {
  if (!input) return DeltaError(DeltaErrorCode::kInvalidArgument, "WriteTable: input is null");
  return std::make_shared<arrow::TableBatchReader>(input);
}

}  // namespace

arrow::Result<WriteResult> WriteTable(std::string_view location,
                                      const std::shared_ptr<arrow::Table>& input,
                                      const WriteOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto reader, ReaderOf(input));
  return WriteTable(location, std::move(reader), options);
}

arrow::Result<WriteResult> WriteTable(const std::shared_ptr<DeltaTable>& table,
                                      const std::shared_ptr<arrow::Table>& input,
                                      const WriteOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto reader, ReaderOf(input));
  return WriteTable(table, std::move(reader), options);
}

arrow::Result<WriteResult> WriteTable(const std::shared_ptr<DeltaTable>& table,
                                      std::shared_ptr<arrow::RecordBatchReader> input,
                                      const WriteOptions& options) {
  if (!table) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "WriteTable: table is null");
  }
  if (options.txn_app_id.has_value() != options.txn_version.has_value()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "txnAppId and txnVersion must be given together");
  }
  if (options.overwrite_schema && options.mode != WriteMode::kOverwrite) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "overwriteSchema needs mode overwrite");
  }
  if ((options.replace_where || options.dynamic_partition_overwrite) &&
      options.mode != WriteMode::kOverwrite) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "replaceWhere and dynamic partition overwrite need mode overwrite");
  }
  if (options.replace_where && options.dynamic_partition_overwrite) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "replaceWhere and dynamic partition overwrite cannot be combined");
  }
  // Options and input column names and metadata may reach the log: they must be UTF-8 text.
  const std::string context = fmt::format("table {}: ", table->root());
  if (options.replace_where) {
    ARROW_RETURN_NOT_OK(
        CheckOptionText(*options.replace_where, context, "the replaceWhere predicate"));
  }
  for (const auto& p : options.partition_by) {
    ARROW_RETURN_NOT_OK(CheckOptionText(p, context, "a partition column name (partitionBy)"));
  }
  if (options.txn_app_id) {
    ARROW_RETURN_NOT_OK(
        CheckOptionText(*options.txn_app_id, context, "the txn app id (txnAppId)"));
  }
  ARROW_RETURN_NOT_OK(CheckPropertiesText(options.properties, context, "table property"));
  if (!input) return DeltaError(DeltaErrorCode::kInvalidArgument, "WriteTable: input is null");
  ARROW_RETURN_NOT_OK(
      CheckSchemaText(*input->schema(), DeltaErrorCode::kSchemaMismatch, context, "input column"));
  // No table yet: this write creates it.
  std::shared_ptr<const Snapshot> snapshot;
  {
    auto latest = table->Latest();
    if (latest.ok()) {
      snapshot = *latest;
    } else if (!IsDeltaError(latest.status(), DeltaErrorCode::kTableNotFound)) {
      return latest.status();
    }
  }
  // Every new row is checked below (RowConstraints: NOT NULL, invariants, CHECK constraints;
  // GeneratedColumns), and identity values are generated with their high-water mark committed.
  TransactionOptions txn_options = options.transaction;
  const auto& row_level = internal::RowLevelWriterFeatures();
  txn_options.enforced_features.insert(txn_options.enforced_features.end(), row_level.begin(),
                                       row_level.end());
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(table, snapshot, txn_options));

  WriteResult result;
  if (options.txn_app_id) {
    auto recorded = txn->ReadTxnVersion(*options.txn_app_id);
    if (recorded && *recorded >= *options.txn_version) {
      result.skipped = true;
      return result;
    }
  }

  // The schema and metadata this write commits against.
  Metadata metadata;
  std::shared_ptr<arrow::Schema> table_schema;
  bool metadata_changed = false;
  std::optional<Protocol> new_protocol;
  const auto input_schema = input->schema();
  if (!snapshot || options.overwrite_schema) {
    std::vector<std::string> partitions = options.partition_by;
    if (snapshot && partitions.empty() && !options.overwrite_schema) {
      partitions = snapshot->partition_columns();
    }
    ARROW_ASSIGN_OR_RAISE(auto props, ValidateUserProperties(options.properties));
    if (snapshot) {
      for (const auto& [k, v] : snapshot->properties()) props.emplace(k, v);
    }
    std::optional<std::string> id;
    if (snapshot) id = snapshot->metadata().id;
    ARROW_ASSIGN_OR_RAISE(auto def, BuildTableDefinition(input_schema, partitions, props, {}, {},
                                                         {}, id));
    metadata = def.metadata;
    table_schema = def.schema;
    metadata_changed = true;
    if (!snapshot) new_protocol = def.protocol;
  } else {
    metadata = snapshot->metadata();
    if (!options.partition_by.empty()) {
      bool same = options.partition_by.size() == metadata.partition_columns.size();
      for (size_t i = 0; same && i < options.partition_by.size(); ++i) {
        same = EqualsIgnoreCase(options.partition_by[i], metadata.partition_columns[i]);
      }
      if (!same) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("table {} is partitioned by {}, the write asks for {}",
                                      table->root(), JsonStringArray(metadata.partition_columns),
                                      JsonStringArray(options.partition_by)));
      }
    }
    table_schema = snapshot->schema();
  }

  // Generated and identity columns the input lacks enter the alignment as null columns of the
  // table's type (so NOT NULL ones are not reported missing) and are filled per batch below.
  arrow::FieldVector computed = GeneratedColumns::MissingFrom(*table_schema, *input_schema);
  for (auto& f : IdentityColumns::MissingFrom(*table_schema, *input_schema)) computed.push_back(f);
  arrow::FieldVector widened_fields = input_schema->fields();
  for (const auto& f : computed) widened_fields.push_back(arrow::field(f->name(), f->type()));
  const auto widened_input = arrow::schema(widened_fields, input_schema->metadata());
  ARROW_ASSIGN_OR_RAISE(auto alignment,
                        AlignSchemas(*table_schema, *widened_input, options.merge_schema,
                                     TableConfig::Parse(metadata.configuration).type_widening));
  if (alignment.schema_changed) {
    ARROW_ASSIGN_OR_RAISE(metadata.schema_string, SchemaToDeltaJson(*alignment.table_schema));
    metadata_changed = true;
  }
  if (snapshot && !new_protocol && !alignment.widened_columns.empty()) {
    new_protocol = ProtocolForTypeWidening(snapshot->protocol());
  }
  // A replaced or evolved schema may use types or column rules the table's protocol does not
  // support yet (timestamp_ntz, say): raise it with the metadata, never lower it.
  if (snapshot && metadata_changed) {
    ARROW_ASSIGN_OR_RAISE(auto required, RequiredProtocol(*alignment.table_schema,
                                                          metadata.configuration, {}));
    Protocol merged = MergeProtocols(new_protocol.value_or(snapshot->protocol()), required);
    if (!SameProtocol(merged, snapshot->protocol())) new_protocol = merged;
  }
  ARROW_ASSIGN_OR_RAISE(auto generated,
                        GeneratedColumns::Make(alignment.table_schema, *input_schema));
  ARROW_ASSIGN_OR_RAISE(auto identity,
                        IdentityColumns::Make(alignment.table_schema, *input_schema));
  ARROW_ASSIGN_OR_RAISE(auto constraints,
                        RowConstraints::Make(alignment.table_schema, metadata.configuration,
                                             options.replace_where));

  // One input batch as the data files get it: in the table schema with generated and identity
  // values filled in, its strings valid UTF-8 and its rows within the constraints. `rows_before`
  // is the number of input rows before it (errors name rows of the whole write).
  auto prepare = [&](std::shared_ptr<arrow::RecordBatch> batch, int64_t rows_before)
      -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    if (!computed.empty()) {
      auto columns = batch->columns();
      for (const auto& f : computed) {
        ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(f->type(), batch->num_rows()));
        columns.push_back(std::move(nulls));
      }
      batch = arrow::RecordBatch::Make(widened_input, batch->num_rows(), std::move(columns));
    }
    ARROW_ASSIGN_OR_RAISE(auto conformed, ConformBatch(alignment, batch));
    ARROW_ASSIGN_OR_RAISE(conformed, identity.Assign(conformed));
    ARROW_ASSIGN_OR_RAISE(conformed, generated.Apply(conformed));
    ARROW_RETURN_NOT_OK(
        CheckStringsAreUtf8(*conformed, rows_before, context, metadata.partition_columns));
    ARROW_RETURN_NOT_OK(constraints.Check(*conformed));
    return conformed;
  };
  // The first batch is read and prepared before any file is written (a replaceWhere rewrites
  // files before the new rows are streamed), so input refused there leaves nothing behind.
  // Later batches are prepared as they come; files written before a refusal are deleted.
  std::shared_ptr<arrow::RecordBatch> first_batch;
  ARROW_RETURN_NOT_OK(input->ReadNext(&first_batch));
  if (first_batch) {
    ARROW_ASSIGN_OR_RAISE(first_batch, prepare(first_batch, 0));
  }
  bool first_batch_pending = true;

  ARROW_ASSIGN_OR_RAISE(DataWriterOptions writer_options,
                        WriterOptionsFor(table->root(), table->store()->filesystem(),
                                         alignment.table_schema, metadata, options.compression));
  if (snapshot) {
    ARROW_RETURN_NOT_OK(IndexClusteringColumns(*snapshot, alignment.table_schema, &writer_options));
  }
  // A replaceWhere on a table with the change data feed may need change-data files.
  std::unique_ptr<ChangeDataWriter> change_data;
  if (snapshot && options.replace_where && TableConfig::Parse(metadata.configuration).change_data_feed) {
    ARROW_ASSIGN_OR_RAISE(change_data, ChangeDataWriter::Make(writer_options));
  }
  const DataWriterOptions rewrite_options = writer_options;  // a replaceWhere's kept rows
  ARROW_ASSIGN_OR_RAISE(auto writer, DataWriter::Make(std::move(writer_options)));
  std::unique_ptr<RowRewriter> rewriter;  // of a replaceWhere
  auto abort_files = [&]() {
    (void)writer->Abort();
    if (change_data) (void)change_data->Abort();
    if (rewriter) (void)rewriter->Abort();
  };
  auto fail = [&](const arrow::Status& st) -> arrow::Status {
    abort_files();
    return st;
  };

  // The rows the overwrite replaces are settled before the new rows are streamed, so that the
  // new rows also go to the change data when the replacement needed it.
  std::vector<RemoveFile> removes;
  RewriteOutcome replaced;
  if (snapshot && options.mode == WriteMode::kOverwrite) {
    const int64_t now = WallClockMillis();
    if (options.replace_where) {
      auto outcome = RemoveReplacedRows(snapshot, *options.replace_where, rewrite_options,
                                        &rewriter, *txn);
      if (!outcome.ok()) return fail(outcome.status());
      replaced = std::move(*outcome);
      removes = std::move(replaced.removes);
      // The rows copied out of partly replaced files get fresh row ids: on a row-tracking table
      // the commit says so, as the protocol asks of a writer that does not materialise them.
      const auto features = EffectiveFeatures(snapshot->protocol());
      if (replaced.rows_moved &&
          std::find(features.begin(), features.end(), "rowTracking") != features.end()) {
        txn->SetCommitTag("delta.rowTracking.preserved", "false");
      }
    } else if (!options.dynamic_partition_overwrite) {
      txn->ReadWholeTable();
      snapshot->live_files().ForEach([&](FileRef file) {
        removes.push_back(RemoveForLiveFile(snapshot->live_files(), file, now));
      });
    }
  }
  // Readers ignore the add and remove actions of a commit with cdc files: the inserts go there too.
  const bool inserts_as_change_data = !replaced.change_files.empty();

  auto last_report = std::chrono::steady_clock::now();
  auto report = [&](bool done) {
    if (!options.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (!done && now - last_report < std::chrono::milliseconds(200)) return;
    last_report = now;
    const auto written = writer->WrittenSoFar();
    options.on_progress(WriteProgress{result.num_rows, written.files, written.bytes, done});
  };

  while (true) {
    std::shared_ptr<arrow::RecordBatch> conformed;
    if (first_batch_pending) {
      conformed = std::move(first_batch);
      first_batch_pending = false;
    } else {
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = input->ReadNext(&batch);
      if (!st.ok()) return fail(st);
      if (batch) {
        auto prepared = prepare(batch, result.num_rows);
        if (!prepared.ok()) return fail(prepared.status());
        conformed = std::move(*prepared);
      }
    }
    if (!conformed) break;
    result.num_rows += conformed->num_rows();
    auto st = writer->Write(conformed);
    if (st.ok() && inserts_as_change_data) st = change_data->Write(conformed, "insert");
    if (!st.ok()) return fail(st);
    report(false);
  }

  // Generated identity values move the high-water marks, committed with this write's metaData.
  auto with_hwm = identity.UpdatedSchema(alignment.table_schema);
  if (!with_hwm.ok()) return fail(with_hwm.status());
  if (*with_hwm) {
    auto schema_string = SchemaToDeltaJson(**with_hwm);
    if (!schema_string.ok()) return fail(schema_string.status());
    metadata.schema_string = std::move(*schema_string);
    metadata_changed = true;
  }

  auto added = writer->Finish();
  if (!added.ok()) return fail(added.status());
  report(true);
  std::vector<CdcFile> change_files = std::move(replaced.change_files);
  if (inserts_as_change_data) {
    auto finished = change_data->Finish();
    if (!finished.ok()) return fail(finished.status());
    for (auto& f : *finished) change_files.push_back(std::move(f));
  }
  if (snapshot && options.dynamic_partition_overwrite) {
    if (metadata.partition_columns.empty()) {
      return fail(DeltaError(DeltaErrorCode::kInvalidArgument,
                             "dynamic partition overwrite needs a partitioned table"));
    }
    std::set<std::map<std::string, std::optional<std::string>>> touched;
    for (const auto& a : *added) touched.insert(a.partition_values);
    const int64_t now = WallClockMillis();
    std::vector<std::string> read;
    const LiveFiles& live = snapshot->live_files();
    live.ForEach([&](FileRef file) {
      if (touched.count(PartitionValuesAt(live.actions(file), file.row))) {
        removes.push_back(RemoveForLiveFile(live, file, now));
        read.push_back(removes.back().path);
      }
    });
    // As delta-spark: the files of the replaced partitions were read, and only new files in
    // those partitions conflict.
    txn->ReadFiles(read);
    txn->ReadPartitions({touched.begin(), touched.end()});
  }

  for (const auto& a : *added) result.num_bytes += a.size;
  for (const auto& a : replaced.adds) result.num_bytes += a.size;
  result.num_files = static_cast<int64_t>(added->size() + replaced.adds.size());
  result.num_removed_files = static_cast<int64_t>(removes.size());
  int64_t removed_bytes = 0;
  for (const auto& r : removes) removed_bytes += r.size.value_or(0);

  if (new_protocol) txn->UpdateProtocol(*new_protocol);
  if (metadata_changed) txn->UpdateMetadata(metadata);
  if (options.txn_app_id) txn->SetTxn(*options.txn_app_id, *options.txn_version);
  txn->RemoveFiles(std::move(removes));
  // Files of rows a replaceWhere kept, then the new rows'.
  std::vector<AddFile> adds = std::move(replaced.adds);
  for (auto& a : *added) adds.push_back(std::move(a));
  txn->AddFiles(std::move(adds));
  const auto num_change_files = static_cast<int64_t>(change_files.size());
  txn->AddCdcFiles(std::move(change_files));

  std::map<std::string, std::string> params = {
      {"mode", options.mode == WriteMode::kAppend ? "Append" : "Overwrite"},
      {"partitionBy", JsonStringArray(metadata.partition_columns)},
  };
  if (options.replace_where) params["predicate"] = JsonStringArray({*options.replace_where});
  if (options.dynamic_partition_overwrite) params["partitionOverwriteMode"] = "DYNAMIC";
  std::map<std::string, std::string> metrics = {
      {"numFiles", std::to_string(result.num_files)},
      {"numOutputRows", std::to_string(result.num_rows)},
      {"numOutputBytes", std::to_string(result.num_bytes)},
  };
  if (options.mode == WriteMode::kOverwrite) {
    metrics["numRemovedFiles"] = std::to_string(result.num_removed_files);
    metrics["numRemovedBytes"] = std::to_string(removed_bytes);
  }
  if (options.replace_where && snapshot) {
    metrics["numDeletedRows"] = std::to_string(replaced.deleted_rows);
    metrics["numCopiedRows"] = std::to_string(replaced.copied_rows);
    metrics["numAddedChangeFiles"] = std::to_string(num_change_files);
  }
  std::string operation = "WRITE";
  if (options.streaming_batch) {
    operation = "STREAMING UPDATE";
    params = {{"outputMode", options.streaming_batch->output_mode},
              {"queryId", options.streaming_batch->query_id},
              {"epochId", std::to_string(options.streaming_batch->epoch_id)}};
    metrics = {{"numAddedFiles", std::to_string(result.num_files)},
               {"numRemovedFiles", std::to_string(result.num_removed_files)},
               {"numOutputRows", std::to_string(result.num_rows)},
               {"numOutputBytes", std::to_string(result.num_bytes)}};
  }
  auto committed = txn->Commit(operation, params, metrics);
  if (!committed.ok()) {
    // Files a commit may reference must survive an unknown outcome; VACUUM removes them later
    // if the commit did not land.
    if (!IsDeltaError(committed.status(), DeltaErrorCode::kCommitStateUnknown)) {
      abort_files();
    }
    return committed.status();
  }
  result.version = committed->version;
  return result;
}

}  // namespace deltacpp
