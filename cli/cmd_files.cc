// `deltacpp files`: the live files of a table version with partition values and statistics.
#include <arrow/api.h>

#include "commands.h"
#include "deltacpp/api.h"

namespace deltacpp::cli {

namespace {

struct FilesArgs {
  std::string path;
  std::optional<int64_t> version;
  OutputChoice out;
};

arrow::Status Run(const FilesArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  ARROW_ASSIGN_OR_RAISE(auto snap, table->SnapshotAt(args.version));
  ARROW_ASSIGN_OR_RAISE(auto files, snap->live_files().ToBatch());
  // path, partitionValues, size, modificationTime, stats, deletion vector cardinality
  std::vector<std::string> names = {"path", "partitionValues", "size", "modificationTime", "stats"};
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (const auto& n : names) {
    fields.push_back(files->schema()->GetFieldByName(n));
    cols.push_back(files->GetColumnByName(n));
  }
  auto dv = std::static_pointer_cast<arrow::StructArray>(files->GetColumnByName("deletionVector"));
  auto card = dv->GetFieldByName("cardinality");
  arrow::Int64Builder deleted;
  for (int64_t i = 0; i < files->num_rows(); ++i) {
    ARROW_RETURN_NOT_OK(dv->IsValid(i) && card->IsValid(i)
                            ? deleted.Append(static_cast<const arrow::Int64Array&>(*card).Value(i))
                            : deleted.Append(0));
  }
  std::shared_ptr<arrow::Array> deleted_arr;
  ARROW_RETURN_NOT_OK(deleted.Finish(&deleted_arr));
  fields.push_back(arrow::field("deletedRows", arrow::int64()));
  cols.push_back(deleted_arr);
  auto schema = arrow::schema(fields);
  auto batch = arrow::RecordBatch::Make(schema, files->num_rows(), cols);
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::RecordBatchReader::Make({batch}, schema));
  return args.out.Write(*reader);
}

}  // namespace

Action AddFilesCommand(CLI::App& app) {
  auto args = std::make_shared<FilesArgs>();
  auto* cmd = app.add_subcommand("files", "List the live files of a table version");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--version", args->version, "Version (default: latest)");
  args->out.AddOptions(cmd, true);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
