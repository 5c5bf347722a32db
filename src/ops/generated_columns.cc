#include "ops/generated_columns.h"

#include "ops/op_util.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <charconv>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/coerce.h"
#include "expr/lexer.h"
#include "expr/parser.h"
#include "expr/schema_ddl.h"
#include "expr/to_arrow.h"
#include "protocol/schema_json.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

namespace cp = arrow::compute;

constexpr std::string_view kGenerationKey = "delta.generationExpression";
// CAST(x AS t) is rewritten to the call `__cast_<n>(x)` before parsing; n indexes the types.
constexpr std::string_view kCastPrefix = "__cast_";

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

bool IsTimestamp(const arrow::DataType& t) { return t.id() == arrow::Type::TIMESTAMP; }
bool IsDate(const arrow::DataType& t) { return t.id() == arrow::Type::DATE32; }
bool IsNull(const arrow::DataType& t) { return t.id() == arrow::Type::NA; }

// The conversions CAST supports here: those whose Arrow result is the value Spark computes,
// or an error where Spark would produce a value Arrow cannot.
bool CastSupported(const arrow::DataType& from, const arrow::DataType& to) {
  if (from.Equals(to) || IsNull(from)) return true;
  if (IsDate(to)) return IsTimestamp(from) || IsStringType(from);
  if (IsTimestamp(to)) return IsDate(from);
  if (IsIntegralType(to)) {
    return IsIntegralType(from) || IsFloatingType(from) || from.id() == arrow::Type::BOOL ||
           IsStringType(from);
  }
  if (IsFloatingType(to)) {
    return IsIntegralType(from) || IsFloatingType(from) || from.id() == arrow::Type::BOOL;
  }
  if (IsDecimalType(to)) return IsIntegralType(from) || IsDecimalType(from);
  if (IsStringType(to)) {
    return IsIntegralType(from) || from.id() == arrow::Type::BOOL || IsDate(from) ||
           IsStringType(from);
  }
  return false;
}

// Rewrites every `CAST(x AS type)` of `sql` into `__cast_<n>(x)`, appending the types to `types`.
arrow::Result<std::string> RewriteCasts(std::string_view sql,
                                        std::vector<std::shared_ptr<arrow::DataType>>* types) {
  ARROW_ASSIGN_OR_RAISE(auto tokens, Tokenize(sql));
  auto is_symbol = [&](size_t i, std::string_view s) {
    return tokens[i].kind == TokenKind::kSymbol && tokens[i].text == s;
  };
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind != TokenKind::kIdentifier || !EqualsIgnoreCase(t.text, "CAST") ||
        !is_symbol(i + 1, "(")) {
      continue;
    }
    int depth = 0;
    size_t as = 0, close = 0;
    for (size_t j = i + 1; j < tokens.size(); ++j) {
      if (is_symbol(j, "(")) ++depth;
      if (is_symbol(j, ")") && --depth == 0) {
        close = j;
        break;
      }
      if (depth == 1 && as == 0 && tokens[j].kind == TokenKind::kIdentifier &&
          EqualsIgnoreCase(tokens[j].text, "AS")) {
        as = j;
      }
    }
    if (close == 0 || as == 0 || as == i + 2 || as + 1 == close) {
      return SyntaxError(sql, t.position, t.text, "expected CAST(expression AS type)");
    }
    const size_t inner_begin = tokens[i + 2].position;
    ARROW_ASSIGN_OR_RAISE(auto inner,
                          RewriteCasts(sql.substr(inner_begin, tokens[as].position - inner_begin),
                                       types));
    ARROW_ASSIGN_OR_RAISE(auto type, ParseTypeName(sql.substr(
                                         tokens[as].end, tokens[close].position - tokens[as].end)));
    out += sql.substr(copied, t.position - copied);
    out += fmt::format("{}{}({})", kCastPrefix, types->size(), inner);
    types->push_back(std::move(type));
    copied = tokens[close].end;
    i = close;
  }
  out += sql.substr(copied);
  return out;
}

// Lowers the calls the expression layer does not evaluate (casts, date parts) into extra
// columns computed beforehand, so that the rest binds as an ordinary expression.
template <typename Step>
class Lowering {
 public:
  Lowering(std::shared_ptr<arrow::Schema> schema,
           std::vector<std::shared_ptr<arrow::DataType>> cast_types, std::string column)
      : schema_(std::move(schema)), cast_types_(std::move(cast_types)),
        column_(std::move(column)) {}

  arrow::Result<ExprPtr> Lower(const ExprPtr& e) {
    std::vector<ExprPtr> kids;
    for (const auto& child : e->children()) {
      ARROW_ASSIGN_OR_RAISE(auto lowered, Lower(child));
      kids.push_back(std::move(lowered));
    }
    const size_t pos = e->position();
    switch (e->kind()) {
      case ExprKind::kLiteral:
      case ExprKind::kColumn: return e;
      case ExprKind::kComparison:
        return Expr::MakeComparison(e->compare_op(), kids[0], kids[1], pos);
      case ExprKind::kAnd: return Expr::MakeAnd(kids[0], kids[1], pos);
      case ExprKind::kOr: return Expr::MakeOr(kids[0], kids[1], pos);
      case ExprKind::kNot: return Expr::MakeNot(kids[0], pos);
      case ExprKind::kIsNull: return Expr::MakeIsNull(kids[0], e->negated(), pos);
      case ExprKind::kIn: {
        std::vector<ExprPtr> list(kids.begin() + 1, kids.end());
        return Expr::MakeIn(kids[0], std::move(list), e->negated(), pos);
      }
      case ExprKind::kBetween:
        return Expr::MakeBetween(kids[0], kids[1], kids[2], e->negated(), pos);
      case ExprKind::kArithmetic:
        return Expr::MakeArithmetic(e->arith_op(), kids[0], kids[1], pos);
      case ExprKind::kNegate: return Expr::MakeNegate(kids[0], pos);
      case ExprKind::kFunction: return LowerFunction(*e, std::move(kids));
    }
    return e;
  }

  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  std::vector<Step> TakeSteps() { return std::move(steps_); }

 private:
  arrow::Status Unsupported(const std::string& what) const {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature, what);
  }

  arrow::Result<ExprPtr> LowerFunction(const Expr& e, std::vector<ExprPtr> args) {
    std::string name = e.function_name();
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    using Op = typename Step::Op;
    Op op = Op::kCast;
    std::shared_ptr<arrow::DataType> cast_to;
    std::string shown = name;
    if (name.starts_with(kCastPrefix)) {
      size_t n = 0;
      const char* digits = name.data() + kCastPrefix.size();
      auto [end, ec] = std::from_chars(digits, name.data() + name.size(), n);
      if (ec != std::errc() || end != name.data() + name.size() || n >= cast_types_.size()) {
        return Unsupported(fmt::format("unknown function '{}'", e.function_name()));
      }
      cast_to = cast_types_[n];
      shown = "CAST";
    } else if (name == "to_date") {
      cast_to = arrow::date32();
    } else if (name == "year") {
      op = Op::kYear;
    } else if (name == "month") {
      op = Op::kMonth;
    } else if (name == "day" || name == "dayofmonth") {
      op = Op::kDay;
    } else if (name == "hour") {
      op = Op::kHour;
    } else if (name == "minute") {
      op = Op::kMinute;
    } else if (name == "second") {
      op = Op::kSecond;
    } else {
      return Expr::MakeFunction(e.function_name(), std::move(args), e.position());
    }
    if (args.size() != 1) {
      return Unsupported(fmt::format("{} takes one argument, got {}", shown, args.size()));
    }
    ARROW_ASSIGN_OR_RAISE(auto bound, Bind(args[0], *schema_));
    const auto& from = *bound.type;
    std::shared_ptr<arrow::DataType> type = arrow::int32();
    if (op == Op::kCast) {
      if (!CastSupported(from, *cast_to)) {
        return Unsupported(fmt::format("CAST from {} to {} is not supported", SqlTypeName(from),
                                       SqlTypeName(*cast_to)));
      }
      type = cast_to;
    } else {
      const bool date_part = op == Op::kYear || op == Op::kMonth || op == Op::kDay;
      if (!IsTimestamp(from) && !IsNull(from) && !(date_part && IsDate(from))) {
        return Unsupported(fmt::format("{} of {} is not supported", name, SqlTypeName(from)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto argument, ToArrowExpression(bound));
    ARROW_ASSIGN_OR_RAISE(argument, argument.Bind(*schema_));
    Step step;
    step.op = op;
    step.input = schema_;
    step.argument = std::move(argument);
    step.type = type;
    step.name = fmt::format("\x1f{}#{}", column_, steps_.size());
    ARROW_ASSIGN_OR_RAISE(schema_, schema_->AddField(schema_->num_fields(),
                                                     arrow::field(step.name, type)));
    auto column = Expr::MakeColumn({step.name}, e.position());
    steps_.push_back(std::move(step));
    return column;
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::DataType>> cast_types_;
  std::string column_;
  std::vector<Step> steps_;
};

arrow::Result<std::shared_ptr<arrow::Array>> ToArray(const arrow::Datum& d, int64_t length) {
  if (d.is_array()) return d.make_array();
  return arrow::MakeArrayFromScalar(*d.scalar(), length);
}

// Arrow's date-part kernel for a step operation.
const char* DatePartFunction(int op) {
  static constexpr const char* kNames[] = {"", "year", "month", "day", "hour", "minute", "second"};
  return kNames[op];
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
      std::vector<std::shared_ptr<arrow::DataType>> cast_types;
      ARROW_ASSIGN_OR_RAISE(auto text, RewriteCasts(column.sql, &cast_types));
      ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(text));
      Lowering<DerivedStep> lowering(table_schema, std::move(cast_types), column.name);
      ARROW_ASSIGN_OR_RAISE(auto lowered, lowering.Lower(parsed));
      ARROW_ASSIGN_OR_RAISE(auto bound, Bind(lowered, *lowering.schema()));
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
      ARROW_ASSIGN_OR_RAISE(column.expression, expression.Bind(*lowering.schema()));
      column.final_input = lowering.schema();
      column.steps = lowering.TakeSteps();
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
  std::vector<std::shared_ptr<arrow::Array>> values = batch.columns();
  for (const auto& step : column.steps) {
    auto input = arrow::RecordBatch::Make(step.input, n, values);
    ARROW_ASSIGN_OR_RAISE(auto datum,
                          cp::ExecuteScalarExpression(step.argument, cp::ExecBatch(*input)));
    ARROW_ASSIGN_OR_RAISE(auto arg, ToArray(datum, n));
    std::shared_ptr<arrow::Array> result;
    if (IsNull(*arg->type())) {
      ARROW_ASSIGN_OR_RAISE(result, arrow::MakeArrayOfNull(step.type, n));
    } else if (step.op == DerivedStep::Op::kCast) {
      if (IsFloatingType(*arg->type()) && IsIntegralType(*step.type)) {
        ARROW_ASSIGN_OR_RAISE(auto truncated, cp::CallFunction("trunc", {arg}));
        arg = truncated.make_array();
      }
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(arg, cp::CastOptions::Safe(step.type)));
      result = cast.make_array();
    } else {
      ARROW_ASSIGN_OR_RAISE(
          auto part, cp::CallFunction(DatePartFunction(static_cast<int>(step.op)), {arg}));
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(part, cp::CastOptions::Safe(step.type)));
      result = cast.make_array();
    }
    values.push_back(std::move(result));
  }
  auto input = arrow::RecordBatch::Make(column.final_input, n, values);
  ARROW_ASSIGN_OR_RAISE(auto datum,
                        cp::ExecuteScalarExpression(column.expression, cp::ExecBatch(*input)));
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
