// `deltacpp stream`: a landing folder (JSON Lines, CSV, Parquet) or a Delta table (its new
// rows, or its change data feed) into a Delta table in micro-batches, exactly once, with a
// checkpoint directory; stops cleanly on SIGINT/SIGTERM.
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include "commands.h"
#include "deltacpp/error.h"
#include "deltacpp/schema.h"
#include "deltacpp/stream/delta_source.h"
#include "deltacpp/stream/file_source.h"
#include "deltacpp/table.h"

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
    std::string starting_version, starting_timestamp;
    bool skip_change_commits = false, ignore_deletes = false, ignore_changes = false;
    bool read_change_feed = false;
    std::string output_mode = "append", bad_records = "fail";
    std::optional<int64_t> max_files, max_bytes;
    std::vector<std::string> partition_by;
    bool no_header = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "stream", "Stream a landing folder or a Delta table into a table in micro-batches, "
                "each input exactly once");
  cmd->add_option("--source", o->source, "json:DIR, csv:DIR, parquet:DIR or delta:TABLE")
      ->required();
  cmd->add_option("--schema", o->schema,
                  "Columns of the records of a folder source: 'id long, name string'");
  cmd->add_option("--starting-version", o->starting_version,
                  "Delta source, first run: commits from version N on, or 'latest'");
  cmd->add_option("--starting-timestamp", o->starting_timestamp,
                  "Delta source, first run: commits from the first at or after TS");
  cmd->add_flag("--skip-change-commits", o->skip_change_commits,
                "Delta source: skip commits that change or remove rows");
  cmd->add_flag("--ignore-deletes", o->ignore_deletes,
                "Delta source: skip commits that only remove files");
  cmd->add_flag("--ignore-changes", o->ignore_changes,
                "Delta source: emit the files changing commits rewrite (rows may repeat)");
  cmd->add_flag("--read-change-feed", o->read_change_feed,
                "Delta source: stream the change data feed (_change_type, ...)");
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
    auto refuse = [](std::string message) {
      return ReportError(DeltaError(DeltaErrorCode::kInvalidArgument, std::move(message)));
    };
    std::shared_ptr<StreamSource> source;
    std::string backlog_unit = "file";
    const auto colon = o->source.find(':');
    const std::string kind = colon == std::string::npos ? "" : o->source.substr(0, colon);
    const std::string location = colon == std::string::npos ? "" : o->source.substr(colon + 1);
    if (kind == "delta") {
      DeltaSourceOptions delta;
      delta.location = location;
      if (o->starting_version == "latest") {
        delta.starting_latest = true;
      } else if (!o->starting_version.empty()) {
        if (o->starting_version.find_first_not_of("0123456789") != std::string::npos ||
            o->starting_version.size() > 18) {
          return refuse(fmt::format("--starting-version '{}': expected a version or 'latest'",
                                    o->starting_version));
        }
        delta.starting_version = std::stoll(o->starting_version);
      }
      if (!o->starting_timestamp.empty()) {
        auto ms = ParseTimestampMillis(o->starting_timestamp);
        if (!ms.ok()) return ReportError(ms.status());
        delta.starting_timestamp_ms = *ms;
      }
      delta.limits.max_files = o->max_files;
      delta.limits.max_bytes = o->max_bytes;
      delta.skip_change_commits = o->skip_change_commits;
      delta.ignore_deletes = o->ignore_deletes;
      delta.ignore_changes = o->ignore_changes;
      delta.read_change_feed = o->read_change_feed;
      source = MakeDeltaSource(std::move(delta));
      backlog_unit = "commit";
    } else {
      FileSourceOptions files;
      if (kind == "json") {
        files.format = FileFormat::kJson;
      } else if (kind == "csv") {
        files.format = FileFormat::kCsv;
      } else if (kind == "parquet") {
        files.format = FileFormat::kParquet;
      } else {
        return refuse(fmt::format(
            "--source '{}': expected json:DIR, csv:DIR, parquet:DIR or delta:TABLE", o->source));
      }
      if (o->schema.empty()) {
        return refuse("a folder source needs --schema");
      }
      files.location = location;
      auto schema = SchemaFromDdl(o->schema);
      if (!schema.ok()) return ReportError(schema.status());
      files.schema = *schema;
      files.limits.max_files = o->max_files;
      files.limits.max_bytes = o->max_bytes;
      files.csv_header = !o->no_header;
      if (o->bad_records == "fail") {
        files.bad_records = BadRecordPolicy::kFail;
      } else if (o->bad_records == "drop") {
        files.bad_records = BadRecordPolicy::kDrop;
      } else if (o->bad_records.rfind("route=", 0) == 0 && o->bad_records.size() > 6) {
        files.bad_records = BadRecordPolicy::kRoute;
        files.bad_records_location = o->bad_records.substr(6);
      } else {
        return refuse(fmt::format("--bad-records '{}': expected fail, drop or route=TABLE",
                                  o->bad_records));
      }
      source = MakeFileSource(std::move(files));
    }
    DeltaSinkOptions sink;
    sink.location = o->sink;
    sink.partition_by = o->partition_by;
    if (o->output_mode == "complete") {
      sink.mode = OutputMode::kComplete;
    } else if (o->output_mode == "update") {
      sink.mode = OutputMode::kUpdate;  // refused by the query, with the reason
    } else if (o->output_mode != "append") {
      return refuse(
          fmt::format("--output-mode '{}': expected append or complete", o->output_mode));
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
            .Source(std::move(source))
            .Sink(std::move(sink))
            .Checkpoint(o->checkpoint)
            .Trigger(*trigger)
            .StopFlag(&g_stop)
            .OnBatch([terminal, backlog_unit](const BatchReport& b) {
              std::string line = fmt::format(
                  "batch {}: {} row{}", b.batch_id, b.rows, b.rows == 1 ? "" : "s");
              if (b.rejected_records) line += fmt::format(", {} rejected", b.rejected_records);
              if (b.skipped_by_sink) {
                line += ", already in the table (skipped)";
              } else if (b.sink_version) {
                line += fmt::format(" -> version {}", *b.sink_version);
              }
              if (b.replayed) line += " (replayed)";
              if (b.backlog) {
                line += fmt::format(", {} {}{} waiting", *b.backlog, backlog_unit,
                                    *b.backlog == 1 ? "" : "s");
              }
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
