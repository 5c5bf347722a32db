#include "ops/row_constraints.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace deltacpp::internal {

namespace {

std::string RowText(const arrow::RecordBatch& batch, int64_t row) {
  std::string out;
  for (int c = 0; c < batch.num_columns(); ++c) {
    auto scalar = batch.column(c)->GetScalar(row);
    out += fmt::format("{}{}={}", c ? ", " : "", batch.schema()->field(c)->name(),
                       scalar.ok() ? (*scalar)->ToString() : "?");
  }
  return out;
}

}  // namespace

arrow::Result<RowConstraints> RowConstraints::Make(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::map<std::string, std::string>& configuration,
    const std::optional<std::string>& replace_where) {
  RowConstraints out;
  out.schema_ = schema;
  auto add = [&](const std::string& description, const std::string& sql) -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
    auto bound = BindPredicate(parsed, *schema);
    if (!bound.ok()) {
      return arrow::Status(bound.status().code(),
                           description + ": " + bound.status().message(), bound.status().detail());
    }
    // coalesce(pred, false): NULL counts as a violation, as for CHECK constraints.
    ARROW_ASSIGN_OR_RAISE(auto expr, ToArrowFilter(*bound));
    ARROW_ASSIGN_OR_RAISE(expr, expr.Bind(*schema));
    out.rules_.push_back(Rule{description, std::move(expr)});
    return arrow::Status::OK();
  };
  for (const auto& [key, sql] : configuration) {
    const std::string prefix = "delta.constraints.";
    if (key.starts_with(prefix)) {
      ARROW_RETURN_NOT_OK(add(fmt::format("CHECK constraint {} ({})", key.substr(prefix.size()), sql), sql));
    }
  }
  if (replace_where) {
    ARROW_RETURN_NOT_OK(add(fmt::format("replaceWhere condition ({})", *replace_where), *replace_where));
  }
  return out;
}

arrow::Status RowConstraints::Check(const arrow::RecordBatch& batch) const {
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& field = batch.schema()->field(c);
    const auto& col = batch.column(c);
    if (!field->nullable() && col->null_count() > 0) {
      int64_t row = 0;
      while (row < col->length() && col->IsValid(row)) ++row;
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("NOT NULL constraint violated: column '{}' is null in row "
                                    "{{{}}}",
                                    field->name(), RowText(batch, row)));
    }
  }
  for (const auto& rule : rules_) {
    ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                          rule.expression, arrow::compute::ExecBatch(batch)));
    if (value.is_scalar()) {
      const auto& s = static_cast<const arrow::BooleanScalar&>(*value.scalar());
      if (s.is_valid && s.value) continue;
      if (batch.num_rows() == 0) continue;
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("{} violated by row {{{}}}", rule.description, RowText(batch, 0)));
    }
    const auto& mask = static_cast<const arrow::BooleanArray&>(*value.make_array());
    for (int64_t i = 0; i < mask.length(); ++i) {
      if (mask.IsNull(i) || !mask.Value(i)) {
        return DeltaError(DeltaErrorCode::kConstraintViolation,
                          fmt::format("{} violated by row {{{}}}", rule.description, RowText(batch, i)));
      }
    }
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
