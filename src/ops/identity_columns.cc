#include "ops/identity_columns.h"

#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>

#include <charconv>
#include <limits>

#include "deltacpp/error.h"
#include "expr/coerce.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr const char* kStartKey = "delta.identity.start";
constexpr const char* kStepKey = "delta.identity.step";
constexpr const char* kHighWaterMarkKey = "delta.identity.highWaterMark";
constexpr const char* kAllowExplicitInsertKey = "delta.identity.allowExplicitInsert";

bool IsIdentity(const arrow::Field& f) {
  return f.metadata() && f.metadata()->Contains(kStartKey);
}

int FindField(const arrow::Schema& schema, const std::string& name) {
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (EqualsIgnoreCase(schema.field(i)->name(), name)) return i;
  }
  return -1;
}

std::optional<std::string> NestedIdentity(const arrow::FieldVector& fields,
                                          const std::string& prefix) {
  for (const auto& f : fields) {
    std::string path = prefix + "." + f->name();
    if (IsIdentity(*f)) return path;
    if (auto found = NestedIdentity(f->type()->fields(), path)) return found;
  }
  return std::nullopt;
}

// A metadata value as text: the JSON value with surrounding blanks and string quotes removed.
std::optional<std::string> RawValue(const arrow::Field& f, const char* key) {
  if (!f.metadata() || !f.metadata()->Contains(key)) return std::nullopt;
  std::string v = *f.metadata()->Get(key);
  auto b = v.find_first_not_of(" \t\r\n");
  auto e = v.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::string();
  v = v.substr(b, e - b + 1);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

arrow::Result<std::optional<int64_t>> LongValue(const arrow::Field& f, const char* key) {
  auto raw = RawValue(f, key);
  if (!raw) return std::optional<int64_t>();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), value);
  if (ec != std::errc() || end != raw->data() + raw->size()) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("identity column '{}': {} is not a BIGINT: {}", f.name(), key,
                                  *raw));
  }
  return std::optional<int64_t>(value);
}

bool FitsLong(__int128 v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

}  // namespace

arrow::FieldVector IdentityColumns::MissingFrom(const arrow::Schema& table,
                                                const arrow::Schema& input) {
  arrow::FieldVector out;
  for (const auto& f : table.fields()) {
    if (IsIdentity(*f) && FindField(input, f->name()) < 0) out.push_back(f);
  }
  return out;
}

arrow::Result<IdentityColumns> IdentityColumns::Make(
    const std::shared_ptr<arrow::Schema>& table_schema, const arrow::Schema& input_schema) {
  IdentityColumns out;
  for (int i = 0; i < table_schema->num_fields(); ++i) {
    const auto& f = table_schema->field(i);
    if (auto nested = NestedIdentity(f->type()->fields(), f->name())) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("nested field '{}' is an identity column; only top-level "
                                    "columns can be",
                                    *nested));
    }
    if (!IsIdentity(*f)) continue;
    if (f->type()->id() != arrow::Type::INT64) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("identity column '{}' has type {}; identity columns must be "
                                    "BIGINT",
                                    f->name(), SqlTypeName(*f->type())));
    }
    ARROW_ASSIGN_OR_RAISE(auto start, LongValue(*f, kStartKey));
    ARROW_ASSIGN_OR_RAISE(auto step, LongValue(*f, kStepKey));
    ARROW_ASSIGN_OR_RAISE(auto hwm, LongValue(*f, kHighWaterMarkKey));
    if (!start || !step || *step == 0) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("identity column '{}' needs {} and a non-zero {}", f->name(),
                                    kStartKey, kStepKey));
    }
    auto allow = RawValue(*f, kAllowExplicitInsertKey);
    const bool explicit_allowed = allow && EqualsIgnoreCase(*allow, "true");
    if (FindField(input_schema, f->name()) >= 0) {
      if (!explicit_allowed) {
        return DeltaError(DeltaErrorCode::kConstraintViolation,
                          fmt::format("column '{}' is GENERATED ALWAYS AS IDENTITY: the data "
                                      "must not supply values for it",
                                      f->name()));
      }
      continue;
    }
    // The first value start + k*step (k >= 0) beyond the high-water mark.
    __int128 next = *start;
    if (hwm) {
      const __int128 s = *start, d = *step, h = *hwm;
      const bool behind = d > 0 ? h < s : h > s;
      if (!behind) next = s + ((h - s) / d + 1) * d;
    }
    Column c;
    c.index = i;
    c.name = f->name();
    c.step = *step;
    c.exhausted = !FitsLong(next);
    c.next = c.exhausted ? 0 : static_cast<int64_t>(next);
    out.columns_.push_back(std::move(c));
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> IdentityColumns::Assign(
    const std::shared_ptr<arrow::RecordBatch>& batch) {
  const int64_t n = batch->num_rows();
  if (columns_.empty() || n == 0) return batch;
  std::vector<std::shared_ptr<arrow::Array>> values = batch->columns();
  for (auto& c : columns_) {
    const __int128 last = static_cast<__int128>(c.next) + static_cast<__int128>(n - 1) * c.step;
    if (c.exhausted || !FitsLong(last)) {
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("identity column '{}' overflowed: the values for this write "
                                    "go beyond the BIGINT range (step {})",
                                    c.name, c.step));
    }
    arrow::Int64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(n));
    int64_t v = c.next;
    for (int64_t r = 0; r < n; ++r) {
      builder.UnsafeAppend(v);
      if (r + 1 < n) v += c.step;  // stays within [next, last]
    }
    ARROW_ASSIGN_OR_RAISE(values[c.index], builder.Finish());
    c.last_value = static_cast<int64_t>(last);
    const __int128 next = last + c.step;
    c.exhausted = !FitsLong(next);
    c.next = c.exhausted ? 0 : static_cast<int64_t>(next);
  }
  return arrow::RecordBatch::Make(batch->schema(), n, std::move(values));
}

arrow::Result<std::shared_ptr<arrow::Schema>> IdentityColumns::UpdatedSchema(
    const std::shared_ptr<arrow::Schema>& table_schema) const {
  std::shared_ptr<arrow::Schema> out;
  for (const auto& c : columns_) {
    if (!c.last_value) continue;
    const auto& f = table_schema->field(c.index);
    auto metadata = f->metadata()->Copy();
    ARROW_RETURN_NOT_OK(metadata->Set(kHighWaterMarkKey, std::to_string(*c.last_value)));
    ARROW_ASSIGN_OR_RAISE(
        out, (out ? out : table_schema)->SetField(c.index, f->WithMetadata(metadata)));
  }
  return out;
}

}  // namespace deltacpp::internal
