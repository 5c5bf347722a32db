// `deltacpp changes`: the change data feed of a version or timestamp range.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "commands.h"
#include "deltacpp/api.h"

namespace deltacpp::cli {

namespace {

struct ChangesArgs {
  std::string path;
  std::string from;
  std::string to;
  std::string columns;
  std::string where;
  OutputChoice out;
};

// A bound is a version when it is all digits, otherwise a timestamp (as `read --timestamp`).
struct Bound {
  std::optional<int64_t> version;
  std::optional<int64_t> timestamp_ms;
};

arrow::Result<Bound> ParseBound(const std::string& text, const char* option) {
  Bound b;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isdigit(c) != 0;
  });
  if (digits) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{} {}: the version is too large", option, text));
    }
    b.version = v;
    return b;
  }
  auto ms = ParseTimestampMillis(text);
  if (!ms.ok()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("{} {}: neither a version nor a timestamp: {}", option, text,
                                  ms.status().message()));
  }
  b.timestamp_ms = *ms;
  return b;
}

arrow::Status Run(const ChangesArgs& args) {
  ARROW_ASSIGN_OR_RAISE(Bound from, ParseBound(args.from, "--from"));
  std::optional<Bound> to;
  if (!args.to.empty()) {
    ARROW_ASSIGN_OR_RAISE(to, ParseBound(args.to, "--to"));
  }
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  TableChangesBuilder builder(table);
  if (from.version) builder.StartingVersion(*from.version);
  if (from.timestamp_ms) builder.StartingTimestamp(*from.timestamp_ms);
  if (to && to->version) builder.EndingVersion(*to->version);
  if (to && to->timestamp_ms) builder.EndingTimestamp(*to->timestamp_ms);
  if (!args.columns.empty()) builder.Columns(SplitList(args.columns));
  if (!args.where.empty()) builder.Filter(args.where);
  ARROW_ASSIGN_OR_RAISE(auto changes, builder.Build());
  ARROW_ASSIGN_OR_RAISE(auto reader, changes->Execute());
  return args.out.Write(*reader);
}

}  // namespace

Action AddChangesCommand(CLI::App& app) {
  auto args = std::make_shared<ChangesArgs>();
  auto* cmd = app.add_subcommand(
      "changes", "Read the change data feed of a range of versions (both ends inclusive)");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--from", args->from,
                  "First version, or an ISO-8601 time (zone-less = UTC): the first commit at "
                  "or after it")
      ->required();
  cmd->add_option("--to", args->to,
                  "Last version (default: latest), or an ISO-8601 time: the last commit at or "
                  "before it");
  cmd->add_option("--columns", args->columns,
                  "Comma-separated columns to return (table columns, _change_type, "
                  "_commit_version, _commit_timestamp)");
  cmd->add_option("--where", args->where,
                  "Row filter, e.g. \"_change_type = 'delete' AND id > 5\"");
  args->out.AddOptions(cmd, true);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
