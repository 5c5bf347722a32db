// Checks new rows against the table's NOT NULL columns, column invariants, CHECK constraints
// and a write's replaceWhere condition before anything is committed.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace deltacpp::internal {

/// The constraints of one write, bound to the table schema.
class RowConstraints {
 public:
  /// Binds every `delta.constraints.<name>` of `configuration`, the invariant of every field of
  /// `schema` (nested struct fields included) whose metadata has `delta.invariants`
  /// (`{"expression":{"expression":"<SQL>"}}`, as a JSON object or a JSON string holding one), and
  /// `replace_where` to `schema`. Errors: InvalidExpression naming the constraint for SQL that
  /// does not parse or bind; CorruptLog for a malformed `delta.invariants`; UnsupportedFeature for
  /// an invariant on a field inside an array or map.
  static arrow::Result<RowConstraints> Make(const std::shared_ptr<arrow::Schema>& schema,
                                            const std::map<std::string, std::string>& configuration,
                                            const std::optional<std::string>& replace_where);

  /// ConstraintViolation naming the column or constraint and the first offending row when a
  /// NOT NULL column holds a null, an invariant or a CHECK constraint is not TRUE (NULL counts
  /// as a violation), or a row does not satisfy replaceWhere.
  arrow::Status Check(const arrow::RecordBatch& batch) const;

 private:
  struct Rule {
    std::string description;  ///< e.g. "CHECK constraint positive (id > 0)"
    arrow::compute::Expression expression;
  };
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<Rule> rules_;
};

}  // namespace deltacpp::internal
