#include "row_order.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <cctype>
#include <sstream>
#include <vector>

#include "deltacpp/error.h"

namespace deltacpp::cli {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

arrow::Status Malformed(const std::string& order_by, const std::string& why) {
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("--order-by '{}': {}", order_by, why));
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> SortedRows(
    const std::shared_ptr<arrow::RecordBatchReader>& reader, const std::string& order_by) {
  const auto& schema = reader->schema();
  std::vector<arrow::compute::SortKey> keys;
  std::stringstream clauses(order_by);
  std::string clause;
  while (std::getline(clauses, clause, ',')) {
    clause = Trim(clause);
    if (clause.empty()) return Malformed(order_by, "an empty column name");
    auto order = arrow::compute::SortOrder::Ascending;
    std::string name = clause;
    if (const auto space = clause.find_last_of(" \t"); space != std::string::npos) {
      const std::string word = Lower(clause.substr(space + 1));
      if (word != "asc" && word != "desc") {
        return Malformed(order_by, fmt::format("'{}' is not a column followed by ASC or DESC", clause));
      }
      if (word == "desc") order = arrow::compute::SortOrder::Descending;
      name = Trim(clause.substr(0, space));
    }
    int found = -1;
    for (int i = 0; i < schema->num_fields(); ++i) {
      if (Lower(schema->field(i)->name()) == Lower(name)) found = i;
    }
    if (found < 0) {
      std::string names;
      for (const auto& f : schema->fields()) names += (names.empty() ? "" : ", ") + f->name();
      return Malformed(order_by, fmt::format("no column '{}'; columns are {}", name, names));
    }
    keys.emplace_back(arrow::FieldRef(found), order,
                      order == arrow::compute::SortOrder::Ascending
                          ? arrow::compute::NullPlacement::AtStart
                          : arrow::compute::NullPlacement::AtEnd);
  }
  if (keys.empty()) return Malformed(order_by, "no column given");
  ARROW_ASSIGN_OR_RAISE(auto table, reader->ToTable());
  arrow::compute::SortOptions options(keys);
  ARROW_ASSIGN_OR_RAISE(auto indices, arrow::compute::SortIndices(arrow::Datum(table), options));
  ARROW_ASSIGN_OR_RAISE(auto sorted, arrow::compute::Take(table, indices));
  return std::make_shared<arrow::TableBatchReader>(sorted.table());
}

}  // namespace deltacpp::cli
