// ALTER TABLE: add columns, set and unset table properties, add and drop CHECK constraints.
// Every operation refuses text that is not valid UTF-8 (column names and field metadata,
// property keys and values, constraint names and expressions) with InvalidArgument naming it,
// before it reads the table.
#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/transaction.h"

namespace deltacpp {

/// A column for AddColumns.
struct NewColumn {
  /// Name, type and Delta field metadata (e.g. `comment`) of the new column. Must be nullable;
  /// fields nested inside it may be NOT NULL.
  std::shared_ptr<arrow::Field> field;
  /// Dotted path of the struct column the field goes into (`s`, `s.inner`; names that contain
  /// dots are quoted with backticks, `` `a.b`.c ``); empty for a top-level column. Names resolve
  /// case-insensitively.
  std::string parent;
};

/// Adds columns at the end of the table schema or of struct columns (operation ADD COLUMNS).
/// Existing rows read the new columns as null. On a column-mapped table the new fields (nested
/// ones included) get fresh column ids and `col-<uuid>` physical names, and
/// `delta.columnMapping.maxColumnId` grows. A type that needs a table feature (timestamp_ntz)
/// upgrades the protocol.
///
/// Errors: TableNotFound; InvalidArgument for an empty list, a NOT NULL column, a parent that does
/// not exist, or field metadata the operation does not accept (column-mapping ids and names,
/// generation expressions, identity and invariants); SchemaMismatch for a name that is already
/// taken in its struct (case-insensitively, new columns included), a parent that is not a struct,
/// or a type Delta cannot store; the commit errors of Transaction::Commit.
arrow::Result<CommitResult> AddColumns(std::string_view location,
                                       const std::vector<NewColumn>& columns,
                                       const TransactionOptions& options = {});

/// Sets table properties (operation SET TBLPROPERTIES). `delta.feature.<name>=supported` adds a
/// table feature and `delta.minReaderVersion` / `delta.minWriterVersion` raise the protocol
/// (none of them is stored); enabling properties (`delta.enableDeletionVectors=true`,
/// `delta.appendOnly=true`, `delta.columnMapping.mode=name`, ...) upgrade the protocol to
/// support their feature. The protocol is never lowered. `comment` sets the table
/// description. Known `delta.*` keys are matched case-insensitively and stored in their
/// canonical spelling. Switching column mapping from none to name gives every field its
/// current name as physical name, so existing data files stay readable.
///
/// Errors: TableNotFound; InvalidArgument for an empty map, an unknown `delta.*` key, a value
/// that does not fit its property, `delta.constraints.*` (use AddConstraint), a property
/// deltacpp maintains itself (`delta.columnMapping.maxColumnId`, in-commit timestamp
/// enablement, row-tracking column names), or a column mapping change other than none to
/// name; UnsupportedFeature for an unknown feature name, for turning on row tracking while some
/// live file has no row ids (deltacpp does not backfill them), for properties of features
/// deltacpp does not write (Iceberg compatibility, UniForm, variant shredding), or when the
/// resulting table is one deltacpp cannot write; the commit errors of Transaction::Commit.
arrow::Result<CommitResult> SetTableProperties(std::string_view location,
                                               const std::map<std::string, std::string>& properties,
                                               const TransactionOptions& options = {});

/// Removes table properties (operation UNSET TBLPROPERTIES); `comment` clears the description.
/// The protocol is left as it is. Keys absent from the table are ignored with `if_exists`.
///
/// Errors: TableNotFound; InvalidArgument for an empty list, a key the table does not have
/// (without `if_exists`), or removing `delta.columnMapping.mode` /
/// `delta.columnMapping.maxColumnId` from a column-mapped table; the commit errors of
/// Transaction::Commit.
arrow::Result<CommitResult> UnsetTableProperties(std::string_view location,
                                                 const std::vector<std::string>& keys,
                                                 bool if_exists = false,
                                                 const TransactionOptions& options = {});

/// Adds the CHECK constraint `name` (operation ADD CONSTRAINT), stored as
/// `delta.constraints.<lower-case name>`. Every existing row must make `expression` TRUE (NULL
/// counts as a violation); the check depends on the whole table, so a concurrent commit that
/// adds data makes this one fail with a conflict. Upgrades the protocol to support
/// checkConstraints (writer version 3, or the feature listed on table-features protocols).
///
/// Errors: TableNotFound; InvalidArgument for an empty name or a name already in use
/// (case-insensitively); InvalidExpression when the expression does not parse, does not bind to
/// the schema or is not boolean; ConstraintViolation naming the constraint and an offending row;
/// the commit errors of Transaction::Commit.
arrow::Result<CommitResult> AddConstraint(std::string_view location, const std::string& name,
                                          const std::string& expression,
                                          const TransactionOptions& options = {});

/// Drops the CHECK constraint `name` (case-insensitive; operation DROP CONSTRAINT). With
/// `if_exists` a missing constraint still commits (recorded as `existed: false`), as delta-spark
/// does. The protocol is left as it is.
///
/// Errors: TableNotFound; InvalidArgument when the constraint does not exist and `if_exists` is
/// false; the commit errors of Transaction::Commit.
arrow::Result<CommitResult> DropConstraint(std::string_view location, const std::string& name,
                                           bool if_exists = false,
                                           const TransactionOptions& options = {});

}  // namespace deltacpp
