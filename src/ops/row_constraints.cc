#include "ops/row_constraints.h"

#include "ops/op_util.h"

#include <arrow/compute/api.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>
#include <rapidjson/document.h>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace deltacpp::internal {

namespace {

constexpr const char* kInvariantsKey = "delta.invariants";

// The SQL of a `delta.invariants` value: `{"expression":{"expression":"<SQL>"}}`, stored either
// as that JSON object or as a JSON string holding it (as delta-spark writes it).
arrow::Result<std::string> InvariantSql(const std::string& raw, const std::string& column) {
  auto corrupt = [&]() {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("column '{}': malformed {}: {}", column, kInvariantsKey, raw));
  };
  rapidjson::Document doc;
  doc.Parse(raw.data(), raw.size());
  if (doc.HasParseError()) return corrupt();
  if (doc.IsString()) {
    std::string inner(doc.GetString(), doc.GetStringLength());
    rapidjson::Document nested;
    nested.Parse(inner.data(), inner.size());
    if (nested.HasParseError()) return corrupt();
    doc.Swap(nested);
  }
  if (!doc.IsObject()) return corrupt();
  auto outer = doc.FindMember("expression");
  if (outer == doc.MemberEnd() || !outer->value.IsObject()) return corrupt();
  auto sql = outer->value.FindMember("expression");
  if (sql == outer->value.MemberEnd() || !sql->value.IsString()) return corrupt();
  return std::string(sql->value.GetString(), sql->value.GetStringLength());
}

// Collects (column path, SQL) of every invariant under `fields`; `in_collection` is set below
// arrays and maps, where an invariant cannot be evaluated row by row.
arrow::Status CollectInvariants(const arrow::FieldVector& fields, const std::string& prefix,
                                bool in_collection,
                                std::vector<std::pair<std::string, std::string>>* out) {
  for (const auto& f : fields) {
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->metadata() && f->metadata()->Contains(kInvariantsKey)) {
      if (in_collection) {
        return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                          fmt::format("field '{}' inside an array or map has an invariant, which "
                                      "cannot be checked",
                                      path));
      }
      ARROW_ASSIGN_OR_RAISE(auto sql, InvariantSql(*f->metadata()->Get(kInvariantsKey), path));
      out->emplace_back(path, std::move(sql));
    }
    const bool collection = in_collection || f->type()->id() != arrow::Type::STRUCT;
    ARROW_RETURN_NOT_OK(CollectInvariants(f->type()->fields(), path, collection, out));
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<RowConstraints> RowConstraints::Make(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::map<std::string, std::string>& configuration,
    const std::optional<std::string>& replace_where) {
  RowConstraints out;
  out.schema_ = schema;
  auto add = [&](const std::string& description, const std::string& sql) -> arrow::Status {
    auto parsed = ParseExpression(sql);
    if (!parsed.ok()) {
      return arrow::Status(parsed.status().code(), description + ": " + parsed.status().message(),
                           parsed.status().detail());
    }
    auto bound = BindPredicate(*parsed, *schema);
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
  std::vector<std::pair<std::string, std::string>> invariants;
  ARROW_RETURN_NOT_OK(CollectInvariants(schema->fields(), "", false, &invariants));
  for (const auto& [column, sql] : invariants) {
    ARROW_RETURN_NOT_OK(add(fmt::format("invariant on column '{}' ({})", column, sql), sql));
  }
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

namespace {

// The first row where a NOT NULL field under `array` (a column or a struct child, named `path`)
// is null while every enclosing struct is not: a null struct makes its children's values
// irrelevant, as in delta-spark. `ancestors` are the enclosing struct arrays. Fields inside
// arrays and maps are not checked (Delta does not enforce NOT NULL there).
std::optional<std::pair<std::string, int64_t>> FirstNotNullViolation(
    const arrow::Field& field, const std::shared_ptr<arrow::Array>& array, const std::string& path,
    std::vector<const arrow::Array*>* ancestors) {
  if (!field.nullable() && array->null_count() > 0) {
    for (int64_t row = 0; row < array->length(); ++row) {
      if (array->IsValid(row)) continue;
      bool enclosed_valid = true;
      for (const arrow::Array* a : *ancestors) enclosed_valid &= a->IsValid(row);
      if (enclosed_valid) return std::make_pair(path, row);
    }
  }
  if (array->type_id() != arrow::Type::STRUCT) return std::nullopt;
  const auto& st = static_cast<const arrow::StructArray&>(*array);
  const auto& type = static_cast<const arrow::StructType&>(*array->type());
  ancestors->push_back(array.get());
  std::optional<std::pair<std::string, int64_t>> found;
  for (int i = 0; i < type.num_fields() && !found; ++i) {
    const auto& child = *type.field(i);
    found = FirstNotNullViolation(child, st.field(i), path + "." + child.name(), ancestors);
  }
  ancestors->pop_back();
  return found;
}

}  // namespace

arrow::Status RowConstraints::Check(const arrow::RecordBatch& batch) const {
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& field = batch.schema()->field(c);
    std::vector<const arrow::Array*> ancestors;
    if (auto violation = FirstNotNullViolation(*field, batch.column(c), field->name(), &ancestors)) {
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("NOT NULL constraint violated: column '{}' is null in row "
                                    "{{{}}}",
                                    violation->first, RowText(batch, violation->second)));
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
    auto mask_array = value.make_array();  // the reference below must not outlive it
    const auto& mask = static_cast<const arrow::BooleanArray&>(*mask_array);
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
