// The action writer never emits a line that is not valid UTF-8: any key or string that is not
// valid UTF-8 makes it fail, naming the action and the field.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "deltacpp/error.h"
#include "protocol/action_json_writer.h"
#include "util/utf8.h"

namespace deltacpp::internal {
namespace {

const std::string kBad = "caf\xE9";                                  // Latin-1, not UTF-8
const std::string kGood = "caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x98\x80";  // 2-, 3- and 4-byte

// The line was refused with InvalidArgument and a message naming `action` and `field`.
void ExpectRefused(const arrow::Result<std::string>& line, const std::string& action,
                   const std::string& field) {
  ASSERT_FALSE(line.ok()) << "written: " << *line;
  EXPECT_TRUE(IsDeltaError(line.status(), DeltaErrorCode::kInvalidArgument)) << line.status();
  const std::string& msg = line.status().message();
  EXPECT_NE(msg.find("the " + action + " action"), std::string::npos) << msg;
  EXPECT_NE(msg.find(field), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not valid UTF-8"), std::string::npos) << msg;
  EXPECT_TRUE(IsValidUtf8(msg)) << "the message must not carry the bad bytes";
}

// simdjson validates UTF-8 as it parses, as the log reader does.
std::string Reparsed(const std::string& line, const char* action, const char* field) {
  simdjson::dom::parser parser;
  auto doc = parser.parse(line);
  EXPECT_EQ(doc.error(), simdjson::SUCCESS) << line;
  if (doc.error()) return {};
  std::string_view value;
  EXPECT_EQ(doc[action][field].get(value), simdjson::SUCCESS) << line;
  return std::string(value);
}

TEST(ActionJsonUtf8, CommitInfoFields) {
  CommitInfoFields info;
  info.operation = "WRITE";
  info.user_metadata = kBad;
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "userMetadata");

  info.user_metadata.reset();
  info.operation_parameters["predicate"] = kBad;
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "operationParameters['predicate']");

  info.operation_parameters.clear();
  info.operation_parameters[kBad] = "x";
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "a key of operationParameters");

  info.operation_parameters.clear();
  info.engine_info = kBad;
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "engineInfo");

  info.engine_info.reset();
  info.tags["t"] = kBad;
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "tags['t']");

  info.tags.clear();
  info.operation = kBad;
  ExpectRefused(CommitInfoToJson(info), "commitInfo", "operation");

  info.operation = "WRITE";
  info.user_metadata = kGood;
  auto line = CommitInfoToJson(info);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(Reparsed(*line, "commitInfo", "userMetadata"), kGood);
}

TEST(ActionJsonUtf8, MetadataFields) {
  Metadata m;
  m.id = "id";
  m.schema_string = R"({"type":"struct","fields":[]})";
  auto with = [&](auto change) {
    Metadata copy = m;
    change(copy);
    return MetadataToJson(copy);
  };
  ExpectRefused(with([](Metadata& x) { x.name = kBad; }), "metaData", "name");
  ExpectRefused(with([](Metadata& x) { x.description = kBad; }), "metaData", "description");
  ExpectRefused(with([](Metadata& x) { x.schema_string = "{\"c\":\"" + kBad + "\"}"; }),
                "metaData", "schemaString");
  ExpectRefused(with([](Metadata& x) { x.partition_columns = {"a", kBad}; }), "metaData",
                "partitionColumns[1]");
  ExpectRefused(with([](Metadata& x) { x.configuration["k"] = kBad; }), "metaData",
                "configuration['k']");
  ExpectRefused(with([](Metadata& x) { x.configuration[kBad] = "v"; }), "metaData",
                "a key of configuration");
  ExpectRefused(with([](Metadata& x) { x.format_options["o"] = kBad; }), "metaData",
                "options['o']");

  auto line = with([](Metadata& x) { x.description = kGood; });
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(Reparsed(*line, "metaData", "description"), kGood);
}

TEST(ActionJsonUtf8, FileActions) {
  AddFile add;
  add.path = "p=" + kBad + "/f.parquet";
  ExpectRefused(AddFileToJson(add), "add", "path");
  add.path = "f.parquet";
  add.partition_values["p"] = kBad;
  ExpectRefused(AddFileToJson(add), "add", "partitionValues['p']");
  add.partition_values = {{kBad, std::nullopt}};
  ExpectRefused(AddFileToJson(add), "add", "a key of partitionValues");
  add.partition_values.clear();
  add.stats = "{\"minValues\":{\"s\":\"" + kBad + "\"}}";
  ExpectRefused(AddFileToJson(add), "add", "stats");
  add.stats.reset();
  add.tags["t"] = kBad;
  ExpectRefused(AddFileToJson(add), "add", "tags['t']");

  RemoveFile remove;
  remove.path = "f.parquet";
  remove.partition_values["p"] = kBad;
  ExpectRefused(RemoveFileToJson(remove), "remove", "partitionValues['p']");

  CdcFile cdc;
  cdc.path = "_change_data/f.parquet";
  cdc.partition_values["p"] = kBad;
  ExpectRefused(CdcFileToJson(cdc), "cdc", "partitionValues['p']");

  add = AddFile{};
  add.path = "f.parquet";
  add.partition_values["p"] = kGood;
  auto line = AddFileToJson(add);
  ASSERT_TRUE(line.ok()) << line.status();
  simdjson::dom::parser parser;
  std::string_view value;
  ASSERT_EQ(parser.parse(*line)["add"]["partitionValues"]["p"].get(value), simdjson::SUCCESS);
  EXPECT_EQ(value, kGood);
}

TEST(ActionJsonUtf8, TxnDomainAndProtocol) {
  Txn txn;
  txn.app_id = kBad;
  ExpectRefused(TxnToJson(txn), "txn", "appId");
  txn.app_id = kGood;
  auto line = TxnToJson(txn);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(Reparsed(*line, "txn", "appId"), kGood);

  DomainMetadata domain{"d", kBad, false};
  ExpectRefused(DomainMetadataToJson(domain), "domainMetadata", "configuration");
  domain = DomainMetadata{kBad, "{}", false};
  ExpectRefused(DomainMetadataToJson(domain), "domainMetadata", "domain");

  Protocol protocol;
  protocol.min_reader_version = 3;
  protocol.min_writer_version = 7;
  protocol.reader_features = std::vector<std::string>{kBad};
  protocol.writer_features = std::vector<std::string>{};
  ExpectRefused(ProtocolToJson(protocol), "protocol", "readerFeatures[0]");
}

}  // namespace
}  // namespace deltacpp::internal
