// Generates the small demo table `make run` shows: a partitioned table of city temperature
// readings with three commits (two appends and a delete of one file) and a checkpoint.
#include <arrow/api.h>
#include <fmt/core.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "support/fixture_writer.h"

namespace {

arrow::Result<std::shared_ptr<arrow::Table>> Readings(int64_t first_id, std::vector<std::string> cities,
                                                      int64_t base_ts_us) {
  arrow::Int64Builder id;
  arrow::StringBuilder city;
  arrow::DoubleBuilder temp;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (size_t i = 0; i < cities.size(); ++i) {
    ARROW_RETURN_NOT_OK(id.Append(first_id + static_cast<int64_t>(i)));
    ARROW_RETURN_NOT_OK(city.Append(cities[i]));
    ARROW_RETURN_NOT_OK(temp.Append(15.5 + static_cast<double>(i) * 1.25));
    ARROW_RETURN_NOT_OK(ts.Append(base_ts_us + static_cast<int64_t>(i) * 3'600'000'000LL));
  }
  std::vector<std::shared_ptr<arrow::Array>> cols(4);
  ARROW_RETURN_NOT_OK(id.Finish(&cols[0]));
  ARROW_RETURN_NOT_OK(city.Finish(&cols[1]));
  ARROW_RETURN_NOT_OK(temp.Finish(&cols[2]));
  ARROW_RETURN_NOT_OK(ts.Finish(&cols[3]));
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field("city", arrow::utf8()),
                               arrow::field("temperature", arrow::float64()),
                               arrow::field("measured_at", cols[3]->type())});
  return arrow::Table::Make(schema, cols);
}

arrow::Status Run(const std::string& root) {
  std::filesystem::remove_all(root);
  deltacpp::testing::FixtureTableWriter writer(root);
  ARROW_ASSIGN_OR_RAISE(auto first, Readings(1, {"Jakarta", "Oslo", "Lima"}, 1'705'276'800'000'000LL));
  auto schema = first->schema()->AddField(4, arrow::field("country", arrow::utf8())).ValueOrDie();
  ARROW_RETURN_NOT_OK(writer.Create(schema, {"country"}, {{"delta.checkpointInterval", "10"}}));
  const int64_t day_ms = 86'400'000;
  const int64_t t0 = 1'705'276'800'000;  // 2024-01-15T00:00:00Z
  ARROW_RETURN_NOT_OK(writer.SetCommitFileTime(0, t0));
  ARROW_ASSIGN_OR_RAISE(auto v1, writer.Append({deltacpp::testing::FixtureFile(first, {{"country", "ID"}})}));
  ARROW_RETURN_NOT_OK(writer.SetCommitFileTime(v1, t0 + day_ms));
  ARROW_ASSIGN_OR_RAISE(auto second, Readings(4, {"Bergen", "Tromsø"}, 1'705'363'200'000'000LL));
  ARROW_ASSIGN_OR_RAISE(auto v2, writer.Append({deltacpp::testing::FixtureFile(second, {{"country", "NO"}})}));
  ARROW_RETURN_NOT_OK(writer.SetCommitFileTime(v2, t0 + 2 * day_ms));
  ARROW_RETURN_NOT_OK(writer.WriteCheckpoint());
  auto paths = writer.active_paths();
  ARROW_ASSIGN_OR_RAISE(auto v3, writer.Remove({paths.front()}));
  ARROW_RETURN_NOT_OK(writer.SetCommitFileTime(v3, t0 + 3 * day_ms));
  fmt::print("created demo table at {} (versions 0..{})\n", root, v3);
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
