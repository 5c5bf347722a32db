// The exam-scores tutorial through the public C++ API: create a table with three scores,
// correct one with UPDATE, upsert new scores with MERGE, then read the history, version 0 and
// the change data feed of versions 1-2. Exits non-zero if any step does not give the
// tutorial's answer.
//
//   exam_scores TABLE_PATH   (the path must not hold a table yet)
#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <iostream>
#include <string>
#include <vector>

#include "deltacpp/api.h"
#include "deltacpp/ops/merge.h"
#include "deltacpp/ops/update.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/table_changes.h"

namespace {

using deltacpp::DeltaTable;

std::shared_ptr<arrow::Table> Scores(const std::vector<int64_t>& ids,
                                     const std::vector<std::string>& names,
                                     const std::vector<int64_t>& scores) {
  arrow::Int64Builder id, nilai;
  arrow::StringBuilder nama;
  (void)id.AppendValues(ids);
  (void)nama.AppendValues(names);
  (void)nilai.AppendValues(scores);
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("nama", arrow::utf8()),
                               arrow::field("nilai", arrow::int64())});
  return arrow::Table::Make(schema, {id.Finish().ValueOrDie(), nama.Finish().ValueOrDie(),
                                     nilai.Finish().ValueOrDie()});
}

// "id|nama|nilai" per row, ordered by id.
arrow::Result<std::vector<std::string>> Rows(const std::shared_ptr<deltacpp::Snapshot>& snap) {
  ARROW_ASSIGN_OR_RAISE(auto scan, snap->NewScan().Build());
  ARROW_ASSIGN_OR_RAISE(auto table, scan->ToTable());
  arrow::compute::SortOptions order({arrow::compute::SortKey("id")});
  ARROW_ASSIGN_OR_RAISE(auto indices, arrow::compute::SortIndices(arrow::Datum(table), order));
  ARROW_ASSIGN_OR_RAISE(auto sorted, arrow::compute::Take(table, indices));
  ARROW_ASSIGN_OR_RAISE(auto batch, sorted.table()->CombineChunksToBatch());
  std::vector<std::string> out;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    std::string row;
    for (int c = 0; c < batch->num_columns(); ++c) {
      ARROW_ASSIGN_OR_RAISE(auto value, batch->column(c)->GetScalar(i));
      row += (c ? "|" : "") + value->ToString();
    }
    out.push_back(row);
  }
  return out;
}

arrow::Status Expect(const std::string& step, const std::vector<std::string>& got,
                     const std::vector<std::string>& want) {
  std::cout << "\n" << step << "\n";
  for (const auto& r : got) std::cout << "  " << r << "\n";
  if (got != want) return arrow::Status::Invalid(step, ": not the tutorial's rows");
  return arrow::Status::OK();
}

arrow::Status Run(const std::string& path) {
  deltacpp::WriteOptions create;
  create.properties["delta.enableChangeDataFeed"] = "true";
  ARROW_RETURN_NOT_OK(
      deltacpp::WriteTable(path, Scores({1, 2, 3}, {"Ali", "Budi", "Citra"}, {85, 90, 78}), create)
          .status());
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(path));
  ARROW_ASSIGN_OR_RAISE(auto v0, table->Latest());
  ARROW_ASSIGN_OR_RAISE(auto rows, Rows(v0));
  ARROW_RETURN_NOT_OK(Expect("version 0", rows, {"1|Ali|85", "2|Budi|90", "3|Citra|78"}));

  ARROW_RETURN_NOT_OK(
      deltacpp::UpdateBuilder(table).Set("nilai", "88").Where("nama = 'Citra'").Execute().status());
  ARROW_ASSIGN_OR_RAISE(auto v1, table->Latest());
  ARROW_ASSIGN_OR_RAISE(rows, Rows(v1));
  ARROW_RETURN_NOT_OK(Expect("version 1: UPDATE", rows, {"1|Ali|85", "2|Budi|90", "3|Citra|88"}));

  auto source = std::make_shared<arrow::TableBatchReader>(
      Scores({2, 4}, {"Budi", "Dewi"}, {95, 92}));
  ARROW_ASSIGN_OR_RAISE(auto merged, deltacpp::MergeBuilder(table, source)
                                         .TargetAlias("t")
                                         .SourceAlias("s")
                                         .On("t.id = s.id")
                                         .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                                         .WhenNotMatchedInsertAll()
                                         .Execute());
  (void)merged;
  ARROW_ASSIGN_OR_RAISE(auto v2, table->Latest());
  ARROW_ASSIGN_OR_RAISE(rows, Rows(v2));
  ARROW_RETURN_NOT_OK(Expect("version 2: MERGE", rows,
                             {"1|Ali|85", "2|Budi|95", "3|Citra|88", "4|Dewi|92"}));

  ARROW_ASSIGN_OR_RAISE(auto history, table->History());
  std::vector<std::string> ops;
  for (const auto& h : history) ops.push_back(std::to_string(h.version) + "|" + h.operation.value_or(""));
  ARROW_RETURN_NOT_OK(Expect("history", ops, {"2|MERGE", "1|UPDATE", "0|WRITE"}));

  ARROW_ASSIGN_OR_RAISE(auto back, table->SnapshotAt(0));
  ARROW_ASSIGN_OR_RAISE(rows, Rows(back));
  ARROW_RETURN_NOT_OK(Expect("time travel to version 0", rows,
                             {"1|Ali|85", "2|Budi|90", "3|Citra|78"}));

  ARROW_ASSIGN_OR_RAISE(auto changes, deltacpp::TableChangesBuilder(table)
                                          .StartingVersion(1)
                                          .EndingVersion(2)
                                          .Columns({"id", "nilai", "_change_type", "_commit_version"})
                                          .Build());
  ARROW_ASSIGN_OR_RAISE(auto reader, changes->Execute());
  ARROW_ASSIGN_OR_RAISE(auto feed, reader->ToTable());
  arrow::compute::SortOptions order({arrow::compute::SortKey("_commit_version"),
                                     arrow::compute::SortKey("id"),
                                     arrow::compute::SortKey("_change_type")});
  ARROW_ASSIGN_OR_RAISE(auto indices, arrow::compute::SortIndices(arrow::Datum(feed), order));
  ARROW_ASSIGN_OR_RAISE(auto sorted, arrow::compute::Take(feed, indices));
  ARROW_ASSIGN_OR_RAISE(auto batch, sorted.table()->CombineChunksToBatch());
  std::vector<std::string> feed_rows;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    std::string row;
    for (int c = 0; c < batch->num_columns(); ++c) {
      ARROW_ASSIGN_OR_RAISE(auto value, batch->column(c)->GetScalar(i));
      row += (c ? "|" : "") + value->ToString();
    }
    feed_rows.push_back(row);
  }
  return Expect("change data feed, versions 1-2", feed_rows,
                {"3|88|update_postimage|1", "3|78|update_preimage|1", "2|95|update_postimage|2",
                 "2|90|update_preimage|2", "4|92|insert|2"});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " TABLE_PATH\n";
    return 2;
  }
  auto st = Run(argv[1]);
  if (!st.ok()) {
    std::cerr << "exam_scores: " << st.ToString() << "\n";
    return 1;
  }
  std::cout << "\nexam_scores: every step gave the tutorial's answer\n";
  return 0;
}
