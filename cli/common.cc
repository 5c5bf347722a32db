// Shared CLI plumbing: error reporting and output destinations.
#include <fmt/core.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "commands.h"
#include "deltacpp/error.h"
#include "output_format.h"

namespace deltacpp::cli {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    std::string c = s.substr(start, comma - start);
    auto b = c.find_first_not_of(' ');
    auto e = c.find_last_not_of(' ');
    if (b != std::string::npos) items.push_back(c.substr(b, e - b + 1));
    start = comma + 1;
  }
  return items;
}

int ReportError(const arrow::Status& status) {
  std::string kind;
  if (auto code = GetDeltaErrorCode(status)) kind = std::string(DeltaErrorCodeName(*code)) + ": ";
  std::cerr << "deltacpp: error: " << kind << status.message() << std::endl;
  return 1;
}

void OutputChoice::AddOptions(CLI::App* cmd, bool with_limit) {
  cmd->add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json", "parquet"}));
  cmd->add_option("--output", output, "Write to this file instead of stdout");
  if (with_limit) cmd->add_option("--limit", limit, "At most this many rows")->check(CLI::NonNegativeNumber);
}

arrow::Status OutputChoice::Write(arrow::RecordBatchReader& reader) const {
  OutputFormat f = OutputFormat::kTable;
  if (format == "csv") f = OutputFormat::kCsv;
  if (format == "json") f = OutputFormat::kJson;
  if (format == "parquet") f = OutputFormat::kParquet;
  OutputOptions opts;
  opts.limit = limit;
  if (output.empty()) {
    if (f == OutputFormat::kParquet && isatty(STDOUT_FILENO)) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "--format parquet writes binary data: give --output FILE or redirect stdout");
    }
    ARROW_RETURN_NOT_OK(WriteRecordBatches(reader, f, std::cout, opts));
    std::cout.flush();
    return arrow::Status::OK();
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  if (!file) return arrow::Status::IOError("cannot open ", output, " for writing");
  ARROW_RETURN_NOT_OK(WriteRecordBatches(reader, f, file, opts));
  file.close();
  if (!file) return arrow::Status::IOError("cannot write ", output);
  return arrow::Status::OK();
}

}  // namespace deltacpp::cli
