// Shared CLI plumbing: error reporting and output destinations.
#include <arrow/util/io_util.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iostream>

#include "commands.h"
#include "row_order.h"
#include "deltacpp/error.h"
#include "output_format.h"

namespace deltacpp::cli {

arrow::Result<std::pair<std::string, std::string>> SplitKeyValue(const std::string& text,
                                                                  const char* what) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("{} '{}' must look like name=value", what, text));
  }
  std::string value = text.substr(eq + 1);
  // Allow name='expr' with the quotes kept by the shell.
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    value = value.substr(1, value.size() - 2);
  }
  return std::make_pair(text.substr(0, eq), value);
}

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

arrow::Status CheckTablePath(const std::string& path) {
  if (path.find("://") != std::string::npos) return arrow::Status::OK();
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return arrow::Status::OK();
  // The nearest existing ancestor (or the path itself) must be a directory.
  for (; !p.empty(); p = p.parent_path()) {
    const auto st = std::filesystem::status(p, ec);
    if (st.type() == std::filesystem::file_type::not_found) {
      if (p == p.parent_path()) break;
      continue;
    }
    if (st.type() != std::filesystem::file_type::directory) {
      return arrow::Status::IOError(fmt::format("cannot use {} as a table path: {}: {}", path,
                                                p.string(), std::strerror(ENOTDIR)));
    }
    break;
  }
  return arrow::Status::OK();
}

int PrintOperationOutcome(const std::optional<int64_t>& version,
                          const std::vector<std::pair<std::string, int64_t>>& metrics) {
  if (version) {
    std::cout << fmt::format("committed version {}\n", *version);
  } else {
    std::cout << "no row matched; nothing committed\n";
  }
  for (const auto& [name, value] : metrics) std::cout << fmt::format("{}: {}\n", name, value);
  return 0;
}

std::string HumanBytes(int64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  if (n < 1024LL * 1024 * 1024) return fmt::format("{:.1f} MiB", n / 1048576.0);
  return fmt::format("{:.2f} GiB", n / 1073741824.0);
}

int ReportError(const arrow::Status& status) {
  std::string kind;
  if (auto code = GetDeltaErrorCode(status)) {
    kind = std::string(DeltaErrorCodeName(*code)) + ": ";
  } else {
    // Arrow's own kinds: IOError, Invalid, ...
    kind = status.CodeAsString() + ": ";
  }
  std::string message = status.message();
  // Arrow keeps the system's reason for a failed file operation beside the message.
  if (const int error = arrow::internal::ErrnoFromStatus(status); error > 0) {
    const std::string reason = std::strerror(error);
    if (message.find(reason) == std::string::npos) message += ": " + reason;
  }
  std::cerr << "deltacpp: error: " << kind << message << std::endl;
  return 1;
}

void OutputChoice::AddOptions(CLI::App* cmd, bool with_limit) {
  cmd->add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json", "parquet"}));
  cmd->add_option("--output", output, "Write to this file instead of stdout");
  if (!with_limit) return;
  cmd->add_option("--limit", limit, "At most this many rows")->check(CLI::NonNegativeNumber);
  cmd->add_option("--order-by", order_by,
                  "Sort the rows first: columns, each optionally ASC or DESC (e.g. 'id' or "
                  "'_commit_version, id DESC'); holds every row in memory");
}

arrow::Status OutputChoice::Write(arrow::RecordBatchReader& unsorted) const {
  std::shared_ptr<arrow::RecordBatchReader> sorted;
  if (!order_by.empty()) {
    // The reader is borrowed: wrap it without taking ownership.
    std::shared_ptr<arrow::RecordBatchReader> borrowed(&unsorted, [](arrow::RecordBatchReader*) {});
    ARROW_ASSIGN_OR_RAISE(sorted, SortedRows(borrowed, order_by));
  }
  arrow::RecordBatchReader& reader = sorted ? *sorted : unsorted;
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
  // A device or pipe (/dev/null, a FIFO) is written as it is.
  std::error_code ec;
  std::filesystem::path target = std::filesystem::weakly_canonical(output, ec);
  if (ec) target = output;
  const auto kind = std::filesystem::status(target, ec).type();
  using std::filesystem::file_type;
  if (!ec && kind != file_type::not_found && kind != file_type::regular &&
      kind != file_type::directory) {
    std::ofstream device(target, std::ios::binary);
    if (!device) {
      return arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                                std::strerror(errno)));
    }
    errno = 0;
    auto written = WriteRecordBatches(reader, f, device, opts);
    device.flush();
    if (!device) {
      return arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                                std::strerror(errno ? errno : EIO)));
    }
    ARROW_RETURN_NOT_OK(written);
    return arrow::Status::OK();
  }
  // Written under a temporary name in the same directory and renamed when complete: a
  // failed command leaves no output file, and an existing one untouched. (A symbolic link is
  // followed: the file it points to is replaced.)
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                              std::strerror(errno)));
  }
  // mkstemp makes the file private; give it the mode a new file would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  auto discard = [&](arrow::Status st) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return st;
  };
  std::ofstream file(temp, std::ios::binary | std::ios::trunc);
  if (!file) {
    return discard(arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                                      std::strerror(errno))));
  }
  errno = 0;
  auto written = WriteRecordBatches(reader, f, file, opts);
  if (!written.ok() && file) return discard(written);
  file.close();
  if (!file) {
    return discard(arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                                      std::strerror(errno ? errno : EIO))));
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    return discard(arrow::Status::IOError(fmt::format("cannot write output {}: {}", output,
                                                      std::strerror(errno))));
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::cli
