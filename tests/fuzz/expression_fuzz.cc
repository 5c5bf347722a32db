// Fuzz target: SQL predicate text through the parser, the binder (a fixed schema of every
// common type), the conversion to an Arrow expression and its evaluation on a few rows holding
// nulls, NaN and extreme values.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/expression.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "deltacpp/api.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace {

struct Fixture {
  std::shared_ptr<arrow::Schema> schema;
  std::shared_ptr<arrow::RecordBatch> rows;
};

const Fixture& Rows() {
  static const Fixture* fixture = [] {
    deltacpp::Initialize();
    auto* f = new Fixture();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const int64_t big = std::numeric_limits<int64_t>::max();
    f->schema = arrow::schema({
        arrow::field("id", arrow::int64()), arrow::field("n", arrow::int32()),
        arrow::field("d", arrow::float64()), arrow::field("name", arrow::utf8()),
        arrow::field("flag", arrow::boolean()), arrow::field("day", arrow::date32()),
        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
        arrow::field("amount", arrow::decimal128(10, 2)),
        arrow::field("s", arrow::struct_({arrow::field("x", arrow::int64())}))});
    arrow::Int64Builder id;
    (void)id.AppendValues({0, -1, big});
    (void)id.AppendNull();
    arrow::Int32Builder n;
    (void)n.AppendValues({1, std::numeric_limits<int32_t>::min(), 7});
    (void)n.AppendNull();
    arrow::DoubleBuilder d;
    (void)d.AppendValues({1.5, nan, -0.0});
    (void)d.AppendNull();
    arrow::StringBuilder name;
    (void)name.AppendValues({"a", "", "\xC3\xA9t\xC3\xA9"});
    (void)name.AppendNull();
    arrow::BooleanBuilder flag;
    (void)flag.AppendValues(std::vector<bool>{true, false, true});
    (void)flag.AppendNull();
    arrow::Date32Builder day;
    (void)day.AppendValues({0, 19000, -719162});
    (void)day.AppendNull();
    arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                               arrow::default_memory_pool());
    (void)ts.AppendValues({0, 1'700'000'000'000'000LL, -62135596800000000LL});
    (void)ts.AppendNull();
    arrow::Decimal128Builder amount(arrow::decimal128(10, 2));
    (void)amount.Append(arrow::Decimal128(12345));
    (void)amount.Append(arrow::Decimal128(-99999999));
    (void)amount.Append(arrow::Decimal128(0));
    (void)amount.AppendNull();
    std::vector<std::shared_ptr<arrow::Array>> cols(8);
    (void)id.Finish(&cols[0]);
    (void)n.Finish(&cols[1]);
    (void)d.Finish(&cols[2]);
    (void)name.Finish(&cols[3]);
    (void)flag.Finish(&cols[4]);
    (void)day.Finish(&cols[5]);
    (void)ts.Finish(&cols[6]);
    (void)amount.Finish(&cols[7]);
    auto s = arrow::StructArray::Make({cols[0]}, {arrow::field("x", arrow::int64())});
    cols.push_back(*s);
    f->rows = arrow::RecordBatch::Make(f->schema, 4, cols);
    return f;
  }();
  return *fixture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace deltacpp::internal;  // NOLINT(build/namespaces)
  const Fixture& f = Rows();
  auto parsed = ParseExpression(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  auto bound = BindPredicate(*parsed, *f.schema, /*allow_current_time=*/true);
  if (!bound.ok()) return 0;
  auto expr = ToArrowFilter(*bound);
  if (!expr.ok()) return 0;
  auto ready = expr->Bind(*f.schema);
  if (!ready.ok()) return 0;
  (void)arrow::compute::ExecuteScalarExpression(*ready, arrow::compute::ExecBatch(*f.rows));
  return 0;
}
