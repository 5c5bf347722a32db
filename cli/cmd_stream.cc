// `deltacpp stream`: a landing folder (JSON Lines, CSV, Parquet) into a Delta table in
// micro-batches, exactly once, with a checkpoint directory; stops cleanly on SIGINT/SIGTERM.
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include "commands.h"
#include "deltacpp/error.h"
#include "deltacpp/schema.h"
#include "deltacpp/stream/file_source.h"

namespace deltacpp::cli {

namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) {
  g_stop.store(true);
  // A second signal ends the process at once (the batch in progress runs again next time).
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

arrow::Result<Trigger> ParseTrigger(const std::string& text) {
  if (text == "once") return Trigger::Once();
  if (text == "available-now") return Trigger::AvailableNow();
  if (text.rfind("interval=", 0) == 0) {
    std::string v = text.substr(9);
    int64_t scale = 1000;
    if (v.size() > 2 && v.substr(v.size() - 2) == "ms") {
      scale = 1;
      v.resize(v.size() - 2);
    } else if (!v.empty() && v.back() == 's') {
      v.pop_back();
    } else if (!v.empty() && v.back() == 'm') {
      scale = 60000;
      v.pop_back();
    }
    if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() < 10) {
      const int64_t n = std::stoll(v) * scale;
      if (n > 0) return Trigger::ProcessingTime(std::chrono::milliseconds(n));
    }
  }
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("--trigger '{}': expected once, available-now or "
                                "interval=<N>[ms|s|m]",
                                text));
}

}  // namespace

Action AddStreamCommand(CLI::App& app) {
  struct Options {
    std::string source, schema, sink, checkpoint, trigger = "available-now";
    std::string output_mode = "append", bad_records = "fail";
    std::optional<int64_t> max_files, max_bytes;
    std::vector<std::string> partition_by;
    bool no_header = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "stream", "Ingest a landing folder into a table in micro-batches, each file exactly once");
  cmd->add_option("--source", o->source, "json:DIR, csv:DIR or parquet:DIR")->required();
  cmd->add_option("--schema", o->schema, "Columns of the records: 'id long, name string'")
      ->required();
  cmd->add_option("--sink", o->sink, "Table path (created by the first batch)")->required();
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint directory of this query")
      ->required();
  cmd->add_option("--trigger", o->trigger, "once | available-now (default) | interval=5s");
  cmd->add_option("--max-files", o->max_files, "Files per batch (default 1000)");
  cmd->add_option("--max-bytes", o->max_bytes, "Bytes per batch");
  cmd->add_option("--output-mode", o->output_mode, "append (default) or complete");
  cmd->add_option("--bad-records", o->bad_records,
                  "fail (default) | drop | route=TABLE: what becomes of malformed records");
  cmd->add_option("--partition-by", o->partition_by, "Partition columns of a new sink table")
      ->delimiter(',');
  cmd->add_flag("--no-header", o->no_header, "CSV files have no header line");
  return [o] {
    FileSourceOptions source;
    const auto colon = o->source.find(':');
    const std::string kind = colon == std::string::npos ? "" : o->source.substr(0, colon);
    if (kind == "json") {
      source.format = FileFormat::kJson;
    } else if (kind == "csv") {
      source.format = FileFormat::kCsv;
    } else if (kind == "parquet") {
      source.format = FileFormat::kParquet;
    } else {
      return ReportError(DeltaError(
          DeltaErrorCode::kInvalidArgument,
          fmt::format("--source '{}': expected json:DIR, csv:DIR or parquet:DIR", o->source)));
    }
    source.location = o->source.substr(colon + 1);
    auto schema = SchemaFromDdl(o->schema);
    if (!schema.ok()) return ReportError(schema.status());
    source.schema = *schema;
    source.limits.max_files = o->max_files;
    source.limits.max_bytes = o->max_bytes;
    source.csv_header = !o->no_header;
    if (o->bad_records == "fail") {
      source.bad_records = BadRecordPolicy::kFail;
    } else if (o->bad_records == "drop") {
      source.bad_records = BadRecordPolicy::kDrop;
    } else if (o->bad_records.rfind("route=", 0) == 0 && o->bad_records.size() > 6) {
      source.bad_records = BadRecordPolicy::kRoute;
      source.bad_records_location = o->bad_records.substr(6);
    } else {
      return ReportError(DeltaError(
          DeltaErrorCode::kInvalidArgument,
          fmt::format("--bad-records '{}': expected fail, drop or route=TABLE", o->bad_records)));
    }
    DeltaSinkOptions sink;
    sink.location = o->sink;
    sink.partition_by = o->partition_by;
    if (o->output_mode == "complete") {
      sink.mode = OutputMode::kComplete;
    } else if (o->output_mode != "append") {
      return ReportError(DeltaError(
          DeltaErrorCode::kInvalidArgument,
          fmt::format("--output-mode '{}': expected append or complete", o->output_mode)));
    }
    auto trigger = ParseTrigger(o->trigger);
    if (!trigger.ok()) return ReportError(trigger.status());

    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    // On a terminal one live status line (stderr); otherwise a line per batch (stdout).
    const bool terminal = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
    auto result =
        StreamQueryBuilder()
            .Source(MakeFileSource(std::move(source)))
            .Sink(std::move(sink))
            .Checkpoint(o->checkpoint)
            .Trigger(*trigger)
            .StopFlag(&g_stop)
            .OnBatch([terminal](const BatchReport& b) {
              std::string line = fmt::format(
                  "batch {}: {} row{}", b.batch_id, b.rows, b.rows == 1 ? "" : "s");
              if (b.rejected_records) line += fmt::format(", {} rejected", b.rejected_records);
              if (b.skipped_by_sink) {
                line += ", already in the table (skipped)";
              } else if (b.sink_version) {
                line += fmt::format(" -> version {}", *b.sink_version);
              }
              if (b.replayed) line += " (replayed)";
              if (b.backlog) line += fmt::format(", {} file{} waiting", *b.backlog,
                                                 *b.backlog == 1 ? "" : "s");
              line += fmt::format(", {} ms", b.duration.count());
              if (terminal) {
                std::cerr << "\r\033[K" << line << std::flush;
              } else {
                std::cout << line << "\n" << std::flush;
              }
            })
            .Run();
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    if (!result.ok()) return ReportError(result.status());
    std::cout << fmt::format("query {}: {} batch{}, {} row{}{}\n", result->query_id,
                             result->batches, result->batches == 1 ? "" : "es", result->rows,
                             result->rows == 1 ? "" : "s", g_stop.load() ? " (stopped)" : "");
    return 0;
  };
}

}  // namespace deltacpp::cli
