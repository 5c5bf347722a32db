#include "protocol/action_json_writer.h"

#include <fmt/core.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

#include "deltacpp/error.h"
#include "util/utf8.h"

namespace deltacpp::internal {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Builds one action line: `{"<action>":{...}}`. RapidJSON copies bytes as they are, so every
// key and string is checked first: the first one that is not valid UTF-8 makes Finish() fail
// (naming it) instead of producing a line no reader can parse.
class ActionLine {
 public:
  explicit ActionLine(std::string_view action) : action_(action), w_(buffer_) {
    w_.StartObject();
    Key(action);
    w_.StartObject();
  }

  arrow::Result<std::string> Finish() {
    if (!status_.ok()) return status_;
    w_.EndObject();
    w_.EndObject();
    return std::string(buffer_.GetString(), buffer_.GetSize());
  }

  void Key(std::string_view key) {
    if (Check(key, [&] { return fmt::format("the field name '{}'", PrintableText(key)); })) {
      w_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    }
  }
  // `where` names the value in the error message (called only when it is not valid UTF-8).
  template <typename Where>
  void String(std::string_view s, const Where& where) {
    if (Check(s, where)) w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void Field(std::string_view key, std::string_view value) {
    Key(key);
    String(value, [&] { return std::string(key); });
  }
  void Field(std::string_view key, int64_t value) {
    Key(key);
    w_.Int64(value);
  }
  void Field(std::string_view key, bool value) {
    Key(key);
    w_.Bool(value);
  }
  template <typename T>
  void OptField(std::string_view key, const std::optional<T>& value) {
    if (value) Field(key, *value);
  }
  void StringMap(std::string_view key, const std::map<std::string, std::string>& map) {
    Key(key);
    w_.StartObject();
    for (const auto& [k, v] : map) {
      MapKey(key, k);
      String(v, [&] { return fmt::format("{}['{}']", key, PrintableText(k)); });
    }
    w_.EndObject();
  }
  void NullableStringMap(std::string_view key,
                         const std::map<std::string, std::optional<std::string>>& map) {
    Key(key);
    w_.StartObject();
    for (const auto& [k, v] : map) {
      MapKey(key, k);
      if (v) {
        String(*v, [&] { return fmt::format("{}['{}']", key, PrintableText(k)); });
      } else {
        w_.Null();
      }
    }
    w_.EndObject();
  }
  void StringList(std::string_view key, const std::vector<std::string>& list) {
    Key(key);
    w_.StartArray();
    for (size_t i = 0; i < list.size(); ++i) {
      String(list[i], [&] { return fmt::format("{}[{}]", key, i); });
    }
    w_.EndArray();
  }
  void DeletionVector(const DeletionVectorDescriptor& dv) {
    Key("deletionVector");
    w_.StartObject();
    Field("storageType", dv.storage_type);
    Field("pathOrInlineDv", dv.path_or_inline_dv);
    if (dv.offset) Field("offset", static_cast<int64_t>(*dv.offset));
    Field("sizeInBytes", static_cast<int64_t>(dv.size_in_bytes));
    Field("cardinality", dv.cardinality);
    w_.EndObject();
  }
  void StartObject(std::string_view key) {
    Key(key);
    w_.StartObject();
  }
  void EndObject() { w_.EndObject(); }

 private:
  void MapKey(std::string_view map, std::string_view key) {
    if (Check(key, [&] { return fmt::format("a key of {}", map); })) {
      w_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    }
  }
  // Records the first text that is not valid UTF-8; false when it must not be written.
  template <typename Where>
  bool Check(std::string_view text, const Where& where) {
    if (!status_.ok()) return false;
    if (IsValidUtf8(text)) return true;
    status_ = DeltaError(DeltaErrorCode::kInvalidArgument,
                         fmt::format("cannot write the {} action: {} is not valid UTF-8 ({}); the "
                                     "Delta log holds only UTF-8 text",
                                     action_, where(), DescribeInvalidUtf8(text)));
    return false;
  }

  std::string action_;
  arrow::Status status_;
  rapidjson::StringBuffer buffer_;
  JsonWriter w_;
};

}  // namespace

arrow::Result<std::string> CommitInfoToJson(const CommitInfoFields& info) {
  ActionLine line("commitInfo");
  line.OptField("inCommitTimestamp", info.in_commit_timestamp);
  line.Field("timestamp", info.timestamp);
  line.Field("operation", info.operation.empty() ? std::string_view("UNKNOWN")
                                                 : std::string_view(info.operation));
  line.StringMap("operationParameters", info.operation_parameters);
  line.OptField("readVersion", info.read_version);
  line.OptField("isolationLevel", info.isolation_level);
  line.OptField("isBlindAppend", info.is_blind_append);
  if (!info.operation_metrics.empty()) line.StringMap("operationMetrics", info.operation_metrics);
  line.OptField("userMetadata", info.user_metadata);
  if (!info.tags.empty()) line.StringMap("tags", info.tags);
  line.OptField("engineInfo", info.engine_info);
  line.OptField("txnId", info.txn_id);
  return line.Finish();
}

arrow::Result<std::string> ProtocolToJson(const Protocol& protocol) {
  ActionLine line("protocol");
  line.Field("minReaderVersion", static_cast<int64_t>(protocol.min_reader_version));
  line.Field("minWriterVersion", static_cast<int64_t>(protocol.min_writer_version));
  if (protocol.min_reader_version == 3) {
    line.StringList("readerFeatures", protocol.reader_features.value_or(std::vector<std::string>{}));
  }
  if (protocol.min_writer_version == 7) {
    line.StringList("writerFeatures", protocol.writer_features.value_or(std::vector<std::string>{}));
  }
  return line.Finish();
}

arrow::Result<std::string> MetadataToJson(const Metadata& metadata) {
  ActionLine line("metaData");
  line.Field("id", metadata.id);
  line.OptField("name", metadata.name);
  line.OptField("description", metadata.description);
  line.StartObject("format");
  line.Field("provider", metadata.format_provider.empty() ? std::string_view("parquet")
                                                          : std::string_view(metadata.format_provider));
  line.StringMap("options", metadata.format_options);
  line.EndObject();
  line.Field("schemaString", metadata.schema_string);
  line.StringList("partitionColumns", metadata.partition_columns);
  line.StringMap("configuration", metadata.configuration);
  line.OptField("createdTime", metadata.created_time);
  return line.Finish();
}

arrow::Result<std::string> AddFileToJson(const AddFile& add) {
  ActionLine line("add");
  line.Field("path", add.path);
  line.NullableStringMap("partitionValues", add.partition_values);
  line.Field("size", add.size);
  line.Field("modificationTime", add.modification_time);
  line.Field("dataChange", add.data_change);
  line.OptField("stats", add.stats);
  if (!add.tags.empty()) line.StringMap("tags", add.tags);
  if (add.deletion_vector) line.DeletionVector(*add.deletion_vector);
  line.OptField("baseRowId", add.base_row_id);
  line.OptField("defaultRowCommitVersion", add.default_row_commit_version);
  line.OptField("clusteringProvider", add.clustering_provider);
  return line.Finish();
}

arrow::Result<std::string> RemoveFileToJson(const RemoveFile& remove) {
  ActionLine line("remove");
  line.Field("path", remove.path);
  line.OptField("deletionTimestamp", remove.deletion_timestamp);
  line.Field("dataChange", remove.data_change);
  line.Field("extendedFileMetadata", remove.extended_file_metadata);
  if (remove.extended_file_metadata || !remove.partition_values.empty()) {
    line.NullableStringMap("partitionValues", remove.partition_values);
  }
  line.OptField("size", remove.size);
  line.OptField("stats", remove.stats);
  if (!remove.tags.empty()) line.StringMap("tags", remove.tags);
  if (remove.deletion_vector) line.DeletionVector(*remove.deletion_vector);
  line.OptField("baseRowId", remove.base_row_id);
  line.OptField("defaultRowCommitVersion", remove.default_row_commit_version);
  return line.Finish();
}

arrow::Result<std::string> TxnToJson(const Txn& txn) {
  ActionLine line("txn");
  line.Field("appId", txn.app_id);
  line.Field("version", txn.version);
  line.OptField("lastUpdated", txn.last_updated);
  return line.Finish();
}

arrow::Result<std::string> DomainMetadataToJson(const DomainMetadata& domain) {
  ActionLine line("domainMetadata");
  line.Field("domain", domain.domain);
  line.Field("configuration", domain.configuration);
  line.Field("removed", domain.removed);
  return line.Finish();
}

arrow::Result<std::string> CdcFileToJson(const CdcFile& cdc) {
  ActionLine line("cdc");
  line.Field("path", cdc.path);
  line.NullableStringMap("partitionValues", cdc.partition_values);
  line.Field("size", cdc.size);
  line.Field("dataChange", cdc.data_change);
  if (!cdc.tags.empty()) line.StringMap("tags", cdc.tags);
  return line.Finish();
}

std::string JoinActionLines(const std::vector<std::string>& lines) {
  size_t total = 0;
  for (const auto& l : lines) total += l.size() + 1;
  std::string out;
  out.reserve(total);
  for (const auto& l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

}  // namespace deltacpp::internal
