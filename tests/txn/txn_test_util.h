// Helpers for transaction tests: tables created through Transaction, fake file actions, and a
// view of the raw log.
#pragma once

#include <arrow/api.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "deltacpp/table.h"
#include "deltacpp/transaction.h"
#include "log/file_action_schema.h"
#include "protocol/schema_json.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {

/// `id long, value string, part string`.
inline std::shared_ptr<arrow::Schema> TestSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("value", arrow::utf8()),
                        arrow::field("part", arrow::utf8())});
}

/// A metaData for `schema` built by hand.
inline Metadata MakeMetadata(const std::shared_ptr<arrow::Schema>& schema,
                             std::vector<std::string> partition_columns = {},
                             std::map<std::string, std::string> configuration = {}) {
  Metadata m;
  m.id = "00000000-0000-4000-8000-000000000001";
  m.schema_string = *SchemaToDeltaJson(*schema);
  m.partition_columns = std::move(partition_columns);
  m.configuration = std::move(configuration);
  m.created_time = 1700000000000;
  return m;
}

inline Protocol MakeProtocol(int reader, int writer, std::vector<std::string> reader_features = {},
                             std::vector<std::string> writer_features = {}) {
  Protocol p;
  p.min_reader_version = reader;
  p.min_writer_version = writer;
  if (reader == 3) p.reader_features = std::move(reader_features);
  if (writer == 7) p.writer_features = std::move(writer_features);
  return p;
}

/// An add for a file that does not exist (transaction tests never read data).
inline AddFile FakeAdd(const std::string& path,
                       std::map<std::string, std::optional<std::string>> partition_values = {},
                       bool data_change = true) {
  AddFile a;
  a.path = path;
  a.partition_values = std::move(partition_values);
  a.size = 100;
  a.modification_time = 1700000000000;
  a.data_change = data_change;
  a.stats = R"({"numRecords":10})";
  return a;
}

inline RemoveFile FakeRemove(const std::string& path,
                             std::map<std::string, std::optional<std::string>> partition_values = {},
                             bool data_change = true) {
  RemoveFile r;
  r.path = path;
  r.deletion_timestamp = 1700000001000;
  r.data_change = data_change;
  r.partition_values = std::move(partition_values);
  r.size = 100;
  return r;
}

/// A temp directory holding a table at `<dir>/table` on the local store.
class TxnTestTable {
 public:
  TxnTestTable() : root_((dir_.path() / "table").string()), store_(MakeLocalLogStore()) {}

  const std::string& root() const { return root_; }
  const std::shared_ptr<LogStore>& store() const { return store_; }
  std::string log_dir() const { return root_ + "/_delta_log"; }

  /// Commits version 0 (protocol, metaData, adds) through a Transaction.
  arrow::Result<CommitResult> Create(const Protocol& protocol, const Metadata& metadata,
                                     std::vector<AddFile> adds = {},
                                     TransactionOptions options = {}) {
    ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::StartCreate(root_, store_, options));
    txn->UpdateProtocol(protocol);
    txn->UpdateMetadata(metadata);
    txn->AddFiles(std::move(adds));
    return txn->Commit("CREATE TABLE", {{"isManaged", "false"}, {"partitionBy", "[]"}});
  }

  arrow::Result<std::shared_ptr<DeltaTable>> Open() const {
    return DeltaTable::Open(root_, store_);
  }

  /// A transaction on the latest snapshot.
  arrow::Result<std::unique_ptr<Transaction>> Begin(TransactionOptions options = {}) const {
    ARROW_ASSIGN_OR_RAISE(auto table, Open());
    ARROW_ASSIGN_OR_RAISE(auto snapshot, table->Latest());
    return Transaction::Start(table, snapshot, std::move(options));
  }

  /// Commits `adds` as a blind append on the latest snapshot.
  arrow::Result<CommitResult> Append(std::vector<AddFile> adds) const {
    ARROW_ASSIGN_OR_RAISE(auto txn, Begin());
    txn->AddFiles(std::move(adds));
    return txn->Commit("WRITE", {{"mode", "Append"}});
  }

  /// Names of every file in `_delta_log` (temporary files included).
  std::set<std::string> LogListing() const {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(log_dir(), ec)) {
      names.insert(e.path().filename().string());
    }
    return names;
  }

  /// The lines of commit `version`.
  std::vector<std::string> CommitLines(int64_t version) const {
    std::ifstream in(fmt::format("{}/{:020d}.json", log_dir(), version), std::ios::binary);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
  }

  /// Writes `lines` as commit `version` directly (a commit from another writer).
  arrow::Status WriteRawCommit(int64_t version, const std::vector<std::string>& lines) const {
    std::string content;
    for (const auto& l : lines) content += l + "\n";
    return store_->PutIfAbsent(fmt::format("{}/{:020d}.json", log_dir(), version), content);
  }

 private:
  TempDir dir_;
  std::string root_;
  std::shared_ptr<LogStore> store_;
};

/// The action name of a commit line (`{"add":...}` -> "add").
inline std::string ActionName(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  if (d.HasParseError() || !d.IsObject() || d.MemberCount() != 1) return "";
  return d.MemberBegin()->name.GetString();
}

/// The `commitInfo` object of a commit line (an empty object when it is not one).
inline rapidjson::Document CommitInfoObject(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  rapidjson::Document out;
  out.SetObject();
  if (!d.HasParseError() && d.IsObject() && d.HasMember("commitInfo")) {
    out.CopyFrom(d["commitInfo"], out.GetAllocator());
  }
  return out;
}

/// add.path of every live file of a snapshot, in file order.
inline std::vector<std::string> LivePaths(const Snapshot& snapshot) {
  std::vector<std::string> out;
  if (!snapshot.files()) return out;
  const auto& paths =
      static_cast<const arrow::StringArray&>(*snapshot.files()->column(internal::kPathCol));
  for (int64_t i = 0; i < paths.length(); ++i) out.emplace_back(paths.GetView(i));
  return out;
}

/// The Delta error code of a status as text ("none" when it carries none), for assertions.
inline std::string CodeName(const arrow::Status& st) {
  auto code = GetDeltaErrorCode(st);
  return code ? DeltaErrorCodeName(*code) : std::string("none");
}

}  // namespace deltacpp::testing
