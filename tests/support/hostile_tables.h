// A catalogue of damaged and hostile Delta tables: each case writes a valid table with the
// fixture writer, then damages it, and says how reading it must fail.
#pragma once

#include <arrow/status.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/error.h"
#include "support/fixture_writer.h"

namespace deltacpp::testing {

/// One kind of damage and the error a read of the damaged table must give.
struct HostileCase {
  std::string name;
  /// What is done to the table, in words (for the docs and failure messages).
  std::string damage;
  /// Writes the damaged table at `root` (an empty directory). The valid base table it starts
  /// from is BuildHostileBase's.
  std::function<arrow::Status(const std::string& root)> build;
  /// The kind the error carries; nullopt for a plain I/O error (the environment, not the table).
  std::optional<DeltaErrorCode> kind;
  /// Text the message must hold; `{root}` stands for the table root.
  std::vector<std::string> expected;
};

/// The valid table every case starts from: id (long) partitioned by p (string), reader 3 /
/// writer 7 with deletion vectors, version 0 the metadata, version 1 one data file of 3 rows in
/// p=a (path as HostileDataFile returns).
arrow::Status BuildHostileBase(const std::string& root);

/// BuildHostileBase through `writer` (which must be on an empty directory), so a test can go on
/// writing versions after it.
arrow::Status WriteHostileBase(FixtureTableWriter& writer);

/// BuildHostileBase plus a classic checkpoint of version 1 and `_last_checkpoint`.
arrow::Status BuildHostileBaseWithCheckpoint(const std::string& root);

/// add.path of the data file of BuildHostileBase.
std::string HostileDataFile(const std::string& root);

/// Every case of the catalogue.
const std::vector<HostileCase>& HostileCases();

/// The case called `name` (aborts the test run when there is none).
const HostileCase& HostileCaseNamed(const std::string& name);

/// Opens the latest snapshot of the table at `root` and reads it whole, as `deltacpp read` does.
arrow::Status ReadWholeTable(const std::string& root);

}  // namespace deltacpp::testing
