// Generates the small demo table `make run` shows, with the library's own writer: a table of
// city temperature readings partitioned by country, created with CREATE TABLE and filled by
// WRITE operations (appends and a replaceWhere overwrite), with a checkpoint along the way.
// Commit file times are set to one commit per day from 2024-01-15 so that time travel by
// timestamp picks meaningful versions.
#include <arrow/api.h>
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"

namespace {

struct Reading {
  int64_t id;
  std::string city;
  double temperature;
  std::string country;
};

std::shared_ptr<arrow::Schema> ReadingSchema() {
  return arrow::schema({arrow::field("id", arrow::int64(), false),
                        arrow::field("city", arrow::utf8()),
                        arrow::field("temperature", arrow::float64()),
                        arrow::field("measured_at", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                        arrow::field("country", arrow::utf8())});
}

// Readings taken an hour apart from `first_measured_us` on.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Readings(
    const std::vector<Reading>& readings, int64_t first_measured_us) {
  arrow::Int64Builder id;
  arrow::StringBuilder city;
  arrow::DoubleBuilder temperature;
  arrow::TimestampBuilder measured_at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                                      arrow::default_memory_pool());
  arrow::StringBuilder country;
  for (size_t i = 0; i < readings.size(); ++i) {
    ARROW_RETURN_NOT_OK(id.Append(readings[i].id));
    ARROW_RETURN_NOT_OK(city.Append(readings[i].city));
    ARROW_RETURN_NOT_OK(temperature.Append(readings[i].temperature));
    ARROW_RETURN_NOT_OK(
        measured_at.Append(first_measured_us + static_cast<int64_t>(i) * 3'600'000'000LL));
    ARROW_RETURN_NOT_OK(country.Append(readings[i].country));
  }
  std::vector<std::shared_ptr<arrow::Array>> columns(5);
  ARROW_RETURN_NOT_OK(id.Finish(&columns[0]));
  ARROW_RETURN_NOT_OK(city.Finish(&columns[1]));
  ARROW_RETURN_NOT_OK(temperature.Finish(&columns[2]));
  ARROW_RETURN_NOT_OK(measured_at.Finish(&columns[3]));
  ARROW_RETURN_NOT_OK(country.Finish(&columns[4]));
  auto batch = arrow::RecordBatch::Make(ReadingSchema(), columns[0]->length(), columns);
  return arrow::RecordBatchReader::Make({batch}, ReadingSchema());
}

// Sets the modification time of commit `version` to `ms` since the epoch.
arrow::Status SetCommitFileTime(const std::string& root, int64_t version, int64_t ms) {
  const auto path =
      std::filesystem::path(root) / "_delta_log" / fmt::format("{:020d}.json", version);
  const std::chrono::sys_time<std::chrono::milliseconds> when{std::chrono::milliseconds(ms)};
  std::error_code ec;
  std::filesystem::last_write_time(path, std::chrono::file_clock::from_sys(when), ec);
  if (ec) return arrow::Status::IOError("cannot set the time of ", path.string(), ": ", ec.message());
  return arrow::Status::OK();
}

arrow::Status Run(const std::string& root) {
  std::filesystem::remove_all(root);
  constexpr int64_t kDayMs = 86'400'000;
  constexpr int64_t kDayUs = kDayMs * 1000;
  constexpr int64_t kJan15Ms = 1'705'276'800'000;  // 2024-01-15T00:00:00Z
  constexpr int64_t kJan15Us = kJan15Ms * 1000;

  // Version 0: the table, partitioned by country, checkpointed every 3 commits.
  deltacpp::CreateTableOptions create;
  create.schema = ReadingSchema();
  create.partition_columns = {"country"};
  create.properties = {{"delta.checkpointInterval", "3"}};
  create.constraints = {{"plausible_temperature", "temperature BETWEEN -90 AND 60"}};
  create.description = "Hourly temperature readings by city";
  ARROW_ASSIGN_OR_RAISE(auto created, deltacpp::CreateTable(root, create));
  std::vector<int64_t> versions = {created.version};

  auto write = [&](const std::vector<Reading>& readings, int64_t measured_us,
                   const deltacpp::WriteOptions& options) -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto input, Readings(readings, measured_us));
    ARROW_ASSIGN_OR_RAISE(auto result, deltacpp::WriteTable(root, input, options));
    versions.push_back(*result.version);
    return arrow::Status::OK();
  };
  const deltacpp::WriteOptions append;
  // Version 1: readings from Indonesia.
  ARROW_RETURN_NOT_OK(write({{1, "Jakarta", 27.5, "ID"},
                             {2, "Surabaya", 29.0, "ID"},
                             {3, "Bandung", 22.25, "ID"}},
                            kJan15Us, append));
  // Version 2: readings from Norway.
  ARROW_RETURN_NOT_OK(write({{4, "Oslo", -4.5, "NO"},
                             {5, "Bergen", 3.0, "NO"},
                             {6, "Tromsø", -9.25, "NO"}},
                            kJan15Us + kDayUs, append));
  // Version 3: the Indonesian readings replaced by recalibrated ones (replaceWhere), with one
  // more city; the commit is checkpointed.
  deltacpp::WriteOptions recalibrate;
  recalibrate.mode = deltacpp::WriteMode::kOverwrite;
  recalibrate.replace_where = "country = 'ID'";
  ARROW_RETURN_NOT_OK(write({{1, "Jakarta", 28.0, "ID"},
                             {2, "Surabaya", 29.5, "ID"},
                             {3, "Bandung", 22.75, "ID"},
                             {7, "Medan", 26.5, "ID"}},
                            kJan15Us, recalibrate));
  // Version 4: readings from Peru.
  ARROW_RETURN_NOT_OK(write({{8, "Lima", 24.5, "PE"}, {9, "Cusco", 12.0, "PE"}},
                            kJan15Us + 2 * kDayUs, append));

  // One commit a day: version v on 2024-01-15 + v days.
  for (int64_t v : versions) ARROW_RETURN_NOT_OK(SetCommitFileTime(root, v, kJan15Ms + v * kDayMs));
  fmt::print("created demo table at {} (versions 0..{})\n", root, versions.back());
  return arrow::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_demo_table PATH\n");
    return 2;
  }
  deltacpp::Initialize();
  auto st = Run(argv[1]);
  if (!st.ok()) {
    fmt::print(stderr, "make_demo_table: {}\n", st.ToString());
    return 1;
  }
  return 0;
}
