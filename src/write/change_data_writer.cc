#include "write/change_data_writer.h"

#include <fmt/core.h>

#include "deltacpp/error.h"
#include "util/uri.h"

namespace deltacpp::internal {

arrow::Result<std::unique_ptr<ChangeDataWriter>> ChangeDataWriter::Make(
    DataWriterOptions data_options) {
  for (const auto& f : data_options.table_schema->fields()) {
    if (EqualsIgnoreCase(f->name(), kChangeTypeColumn)) {
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("table {}: column '{}' has the name the change data feed "
                                    "reserves for its change type, so change data files "
                                    "cannot be written",
                                    data_options.table_root, f->name()));
    }
  }
  auto out = std::unique_ptr<ChangeDataWriter>(new ChangeDataWriter());
  arrow::FieldVector fields = data_options.table_schema->fields();
  fields.push_back(arrow::field(kChangeTypeColumn, arrow::utf8()));
  out->schema_ = arrow::schema(std::move(fields));
  data_options.table_schema = out->schema_;
  data_options.base_folder = "_change_data";
  data_options.file_name_prefix = "cdc";
  data_options.data_change = false;
  data_options.num_indexed_cols = 0;  // cdc actions carry no statistics
  data_options.stats_columns.reset();
  ARROW_ASSIGN_OR_RAISE(out->writer_, DataWriter::Make(std::move(data_options)));
  return out;
}

arrow::Status ChangeDataWriter::Write(const std::shared_ptr<arrow::RecordBatch>& rows,
                                      const std::string& change_type) {
  if (rows->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto tag, arrow::MakeArrayFromScalar(arrow::StringScalar(change_type),
                                                             rows->num_rows()));
  auto columns = rows->columns();
  columns.push_back(std::move(tag));
  written_ = true;
  return writer_->Write(arrow::RecordBatch::Make(schema_, rows->num_rows(), std::move(columns)));
}

arrow::Result<std::vector<CdcFile>> ChangeDataWriter::Finish() {
  ARROW_ASSIGN_OR_RAISE(auto files, writer_->Finish());
  std::vector<CdcFile> out;
  out.reserve(files.size());
  for (auto& f : files) {
    CdcFile cdc;
    cdc.path = std::move(f.path);
    cdc.partition_values = std::move(f.partition_values);
    cdc.size = f.size;
    cdc.data_change = false;
    out.push_back(std::move(cdc));
  }
  return out;
}

arrow::Status ChangeDataWriter::Abort() { return writer_->Abort(); }

}  // namespace deltacpp::internal
