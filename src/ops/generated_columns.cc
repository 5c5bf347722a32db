#include "ops/generated_columns.h"

#include "ops/op_util.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/coerce.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "protocol/schema_json.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

namespace cp = arrow::compute;

constexpr std::string_view kGenerationKey = "delta.generationExpression";

std::optional<std::string> GenerationExpression(const arrow::Field& field) {
  if (!field.metadata() || !field.metadata()->Contains(std::string(kGenerationKey))) {
    return std::nullopt;
  }
  return FieldMetadataString(field, kGenerationKey);
}

int FindField(const arrow::Schema& schema, const std::string& name) {
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (EqualsIgnoreCase(schema.field(i)->name(), name)) return i;
  }
  return -1;
}

// Dotted path of the first field below `fields` (at any depth) with a generation expression.
std::optional<std::string> NestedGenerated(const arrow::FieldVector& fields,
                                           const std::string& prefix) {
  for (const auto& f : fields) {
    std::string path = prefix + "." + f->name();
    if (f->metadata() && f->metadata()->Contains(std::string(kGenerationKey))) return path;
    if (auto found = NestedGenerated(f->type()->fields(), path)) return found;
  }
  return std::nullopt;
}

bool IsNull(const arrow::DataType& t) { return t.id() == arrow::Type::NA; }

arrow::Result<std::shared_ptr<arrow::Array>> ToArray(const arrow::Datum& d, int64_t length) {
  if (d.is_array()) return d.make_array();
  return arrow::MakeArrayFromScalar(*d.scalar(), length);
}

}  // namespace

arrow::FieldVector GeneratedColumns::MissingFrom(const arrow::Schema& table,
                                                 const arrow::Schema& input) {
  arrow::FieldVector out;
  for (const auto& f : table.fields()) {
    if (GenerationExpression(*f) && FindField(input, f->name()) < 0) out.push_back(f);
  }
  return out;
}

arrow::Result<GeneratedColumns> GeneratedColumns::Make(
    const std::shared_ptr<arrow::Schema>& table_schema, const arrow::Schema& input_schema) {
  GeneratedColumns out;
  out.schema_ = table_schema;
  for (int i = 0; i < table_schema->num_fields(); ++i) {
    const auto& field = table_schema->field(i);
    if (auto nested = NestedGenerated(field->type()->fields(), field->name())) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("nested field '{}' has a generation expression; only "
                                    "top-level columns can be generated",
                                    *nested));
    }
    auto sql = GenerationExpression(*field);
    if (!sql) continue;
    Column column;
    column.index = i;
    column.name = field->name();
    column.sql = *sql;
    column.supplied = FindField(input_schema, field->name()) >= 0;
    auto compile = [&]() -> arrow::Status {
      ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(column.sql));
      ARROW_ASSIGN_OR_RAISE(auto bound, Bind(parsed, *table_schema));
      if (!IsNull(*bound.type) && !cp::CanCast(*bound.type, *field->type())) {
        return arrow::Status::Invalid(fmt::format("its {} result does not convert to {}",
                                                  SqlTypeName(*bound.type),
                                                  SqlTypeName(*field->type())));
      }
      if (column.supplied && !IsComparableType(*field->type())) {
        return arrow::Status::Invalid(fmt::format("supplied values of type {} cannot be checked",
                                                  SqlTypeName(*field->type())));
      }
      ARROW_ASSIGN_OR_RAISE(auto expression, ToArrowExpression(bound));
      ARROW_ASSIGN_OR_RAISE(column.expression, expression.Bind(*table_schema));
      return arrow::Status::OK();
    };
    auto st = compile();
    if (!st.ok()) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("cannot compute generated column '{}' (GENERATED ALWAYS AS "
                                    "({})): {}",
                                    column.name, column.sql, st.message()));
    }
    out.columns_.push_back(std::move(column));
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> GeneratedColumns::Evaluate(
    const Column& column, const arrow::RecordBatch& batch) const {
  const int64_t n = batch.num_rows();
  ARROW_ASSIGN_OR_RAISE(auto datum,
                        cp::ExecuteScalarExpression(column.expression, cp::ExecBatch(batch)));
  ARROW_ASSIGN_OR_RAISE(auto value, ToArray(datum, n));
  const auto& type = schema_->field(column.index)->type();
  if (value->type()->Equals(*type)) return value;
  if (IsNull(*value->type())) return arrow::MakeArrayOfNull(type, n);
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(value, cp::CastOptions::Safe(type)));
  return cast.make_array();
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> GeneratedColumns::Apply(
    const std::shared_ptr<arrow::RecordBatch>& batch) const {
  if (columns_.empty()) return batch;
  std::vector<std::shared_ptr<arrow::Array>> values = batch->columns();
  for (const auto& column : columns_) {
    auto computed = Evaluate(column, *batch);
    if (!computed.ok()) {
      return arrow::Status(computed.status().code(),
                           fmt::format("generated column '{}' ({}): {}", column.name, column.sql,
                                       computed.status().message()),
                           computed.status().detail());
    }
    if (!column.supplied) {
      values[column.index] = *computed;
      continue;
    }
    // col <=> expr, with NaN equal to NaN as in Spark.
    const auto& given = batch->column(column.index);
    ARROW_ASSIGN_OR_RAISE(auto equal, cp::CallFunction("equal", {given, *computed}));
    if (IsFloatingType(*given->type())) {
      ARROW_ASSIGN_OR_RAISE(auto a_nan, cp::CallFunction("is_nan", {given}));
      ARROW_ASSIGN_OR_RAISE(auto b_nan, cp::CallFunction("is_nan", {*computed}));
      ARROW_ASSIGN_OR_RAISE(auto both_nan, cp::CallFunction("and", {a_nan, b_nan}));
      ARROW_ASSIGN_OR_RAISE(equal, cp::CallFunction("or", {equal, both_nan}));
    }
    ARROW_ASSIGN_OR_RAISE(auto a_null, cp::CallFunction("is_null", {given}));
    ARROW_ASSIGN_OR_RAISE(auto b_null, cp::CallFunction("is_null", {*computed}));
    ARROW_ASSIGN_OR_RAISE(auto both_null, cp::CallFunction("and", {a_null, b_null}));
    ARROW_ASSIGN_OR_RAISE(auto same, cp::CallFunction("coalesce", {equal, both_null}));
    auto mask_array = same.make_array();  // the reference below must not outlive it
    const auto& mask = static_cast<const arrow::BooleanArray&>(*mask_array);
    for (int64_t r = 0; r < mask.length(); ++r) {
      if (mask.IsValid(r) && mask.Value(r)) continue;
      auto want = (*computed)->GetScalar(r);
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("generated column '{}' (GENERATED ALWAYS AS ({})) violated by "
                                    "row {{{}}}: the expression gives {}",
                                    column.name, column.sql, RowText(*batch, r),
                                    want.ok() && (*want)->is_valid ? (*want)->ToString() : "null"));
    }
  }
  return arrow::RecordBatch::Make(batch->schema(), batch->num_rows(), std::move(values));
}

}  // namespace deltacpp::internal
