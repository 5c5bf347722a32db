#include "log/commit_parser.h"

#include <fmt/core.h>
#include <simdjson.h>

#include "deltacpp/error.h"
#include "log/file_action_schema.h"
#include "log/json_int_field.h"

namespace deltacpp::internal {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Builders for the columnar add/remove rows.
class FileActionBuilder {
 public:
  FileActionBuilder()
      : pv_keys_(std::make_shared<arrow::StringBuilder>()),
        pv_items_(std::make_shared<arrow::StringBuilder>()),
        partition_values_(arrow::default_memory_pool(), pv_keys_, pv_items_, StringMapType()),
        tag_keys_(std::make_shared<arrow::StringBuilder>()),
        tag_items_(std::make_shared<arrow::StringBuilder>()),
        tags_(arrow::default_memory_pool(), tag_keys_, tag_items_, StringMapType()),
        dv_storage_(std::make_shared<arrow::StringBuilder>()),
        dv_path_(std::make_shared<arrow::StringBuilder>()),
        dv_offset_(std::make_shared<arrow::Int32Builder>()),
        dv_size_(std::make_shared<arrow::Int32Builder>()),
        dv_card_(std::make_shared<arrow::Int64Builder>()),
        dv_(DeletionVectorType(), arrow::default_memory_pool(),
            {dv_storage_, dv_path_, dv_offset_, dv_size_, dv_card_}) {}

  arrow::Status Append(object obj, bool is_add, const std::string& where);

  int64_t length() const { return path_.length(); }

  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Finish() {
    std::vector<std::shared_ptr<arrow::Array>> cols(ReplayBatchSchema()->num_fields());
    ARROW_RETURN_NOT_OK(path_.Finish(&cols[kPathCol]));
    ARROW_RETURN_NOT_OK(partition_values_.Finish(&cols[kPartitionValuesCol]));
    ARROW_RETURN_NOT_OK(size_.Finish(&cols[kSizeCol]));
    ARROW_RETURN_NOT_OK(mtime_.Finish(&cols[kModificationTimeCol]));
    ARROW_RETURN_NOT_OK(data_change_.Finish(&cols[kDataChangeCol]));
    ARROW_RETURN_NOT_OK(stats_.Finish(&cols[kStatsCol]));
    ARROW_RETURN_NOT_OK(tags_.Finish(&cols[kTagsCol]));
    ARROW_RETURN_NOT_OK(dv_.Finish(&cols[kDeletionVectorCol]));
    ARROW_RETURN_NOT_OK(base_row_id_.Finish(&cols[kBaseRowIdCol]));
    ARROW_RETURN_NOT_OK(default_row_commit_.Finish(&cols[kDefaultRowCommitVersionCol]));
    ARROW_RETURN_NOT_OK(clustering_.Finish(&cols[kClusteringProviderCol]));
    ARROW_RETURN_NOT_OK(is_add_.Finish(&cols[kNumFileActionColumns]));
    ARROW_RETURN_NOT_OK(deletion_ts_.Finish(&cols[kNumFileActionColumns + 1]));
    int64_t n = cols[0]->length();
    return arrow::RecordBatch::Make(ReplayBatchSchema(), n, std::move(cols));
  }

 private:
  arrow::StringBuilder path_;
  std::shared_ptr<arrow::StringBuilder> pv_keys_, pv_items_;
  arrow::MapBuilder partition_values_;
  arrow::Int64Builder size_, mtime_;
  arrow::BooleanBuilder data_change_;
  arrow::StringBuilder stats_;
  std::shared_ptr<arrow::StringBuilder> tag_keys_, tag_items_;
  arrow::MapBuilder tags_;
  std::shared_ptr<arrow::StringBuilder> dv_storage_, dv_path_;
  std::shared_ptr<arrow::Int32Builder> dv_offset_, dv_size_;
  std::shared_ptr<arrow::Int64Builder> dv_card_;
  arrow::StructBuilder dv_;
  arrow::Int64Builder base_row_id_, default_row_commit_;
  arrow::StringBuilder clustering_;
  arrow::BooleanBuilder is_add_;
  arrow::Int64Builder deletion_ts_;
};

arrow::Status Corrupt(const std::string& where, std::string_view what) {
  return DeltaError(DeltaErrorCode::kCorruptLog, fmt::format("{}: {}", where, what));
}

// Appends the integer at `key` (null when absent); `range` must fit the builder's type.
template <typename T>
arrow::Status AppendOptInt(T& builder, object obj, std::string_view key, IntFieldRange range,
                           std::string_view where, std::string_view action) {
  ARROW_ASSIGN_OR_RAISE(auto value, ReadIntField(obj, key, range, where, action));
  if (!value) return builder.AppendNull();
  return builder.Append(static_cast<typename T::value_type>(*value));
}

arrow::Status AppendOptString(arrow::StringBuilder& builder, object obj, std::string_view key) {
  auto v = obj[key];
  if (v.error() || v.value().is_null()) return builder.AppendNull();
  auto s = v.value().get_string();
  if (s.error()) return builder.AppendNull();
  return builder.Append(s.value());
}

arrow::Status AppendStringMap(arrow::MapBuilder& builder, arrow::StringBuilder& keys,
                              arrow::StringBuilder& items, object obj, std::string_view key) {
  auto v = obj[key];
  if (v.error() || v.value().is_null()) return builder.AppendNull();
  auto m = v.value().get_object();
  if (m.error()) return builder.AppendNull();
  ARROW_RETURN_NOT_OK(builder.Append());
  object entries = m.value();
  for (auto [k, val] : entries) {
    ARROW_RETURN_NOT_OK(keys.Append(k));
    if (val.is_null()) {
      ARROW_RETURN_NOT_OK(items.AppendNull());
    } else if (val.is_string()) {
      ARROW_RETURN_NOT_OK(items.Append(std::string_view(val.get_string().value())));
    } else {
      ARROW_RETURN_NOT_OK(items.Append(simdjson::minify(val)));
    }
  }
  return arrow::Status::OK();
}

arrow::Status FileActionBuilder::Append(object obj, bool is_add, const std::string& where) {
  auto p = obj["path"];
  if (p.error() || !p.value().is_string()) {
    return Corrupt(where, is_add ? "add action without a path" : "remove action without a path");
  }
  ARROW_RETURN_NOT_OK(path_.Append(std::string_view(p.value().get_string().value())));
  const std::string_view action = is_add ? "add" : "remove";
  ARROW_RETURN_NOT_OK(
      AppendStringMap(partition_values_, *pv_keys_, *pv_items_, obj, "partitionValues"));
  ARROW_RETURN_NOT_OK(AppendOptInt(size_, obj, "size", kNonNegativeLongField, where, action));
  ARROW_RETURN_NOT_OK(
      AppendOptInt(mtime_, obj, "modificationTime", kLongField, where, action));
  {
    auto dc = obj["dataChange"];
    if (dc.error() || !dc.value().is_bool()) {
      ARROW_RETURN_NOT_OK(data_change_.AppendNull());
    } else {
      ARROW_RETURN_NOT_OK(data_change_.Append(dc.value().get_bool().value()));
    }
  }
  ARROW_RETURN_NOT_OK(AppendOptString(stats_, obj, "stats"));
  ARROW_RETURN_NOT_OK(AppendStringMap(tags_, *tag_keys_, *tag_items_, obj, "tags"));
  {
    auto dv = obj["deletionVector"];
    if (dv.error() || dv.value().is_null() || !dv.value().is_object()) {
      ARROW_RETURN_NOT_OK(dv_.AppendNull());
    } else {
      object d = dv.value().get_object().value();
      ARROW_RETURN_NOT_OK(dv_.Append());
      ARROW_RETURN_NOT_OK(AppendOptString(*dv_storage_, d, "storageType"));
      ARROW_RETURN_NOT_OK(AppendOptString(*dv_path_, d, "pathOrInlineDv"));
      const std::string_view dv_action = is_add ? "add.deletionVector" : "remove.deletionVector";
      ARROW_RETURN_NOT_OK(
          AppendOptInt(*dv_offset_, d, "offset", kNonNegativeIntField, where, dv_action));
      ARROW_RETURN_NOT_OK(
          AppendOptInt(*dv_size_, d, "sizeInBytes", kNonNegativeIntField, where, dv_action));
      ARROW_RETURN_NOT_OK(
          AppendOptInt(*dv_card_, d, "cardinality", kNonNegativeLongField, where, dv_action));
    }
  }
  ARROW_RETURN_NOT_OK(
      AppendOptInt(base_row_id_, obj, "baseRowId", kNonNegativeLongField, where, action));
  ARROW_RETURN_NOT_OK(AppendOptInt(default_row_commit_, obj, "defaultRowCommitVersion",
                                   kNonNegativeLongField, where, action));
  ARROW_RETURN_NOT_OK(AppendOptString(clustering_, obj, "clusteringProvider"));
  ARROW_RETURN_NOT_OK(is_add_.Append(is_add));
  return AppendOptInt(deletion_ts_, obj, "deletionTimestamp", kLongField, where, action);
}

std::optional<std::string> OptString(object obj, std::string_view key) {
  auto v = obj[key];
  if (v.error() || !v.value().is_string()) return std::nullopt;
  return std::string(v.value().get_string().value());
}

// Lenient: for free-form commitInfo fields, where a value of another type is not an error.
std::optional<int64_t> OptIntLenient(object obj, std::string_view key) {
  auto v = obj[key];
  if (v.error()) return std::nullopt;
  auto i = v.value().get_int64();
  if (i.error()) return std::nullopt;
  return i.value();
}

std::map<std::string, std::string> StringMap(object obj, std::string_view key) {
  std::map<std::string, std::string> out;
  auto v = obj[key];
  if (v.error() || !v.value().is_object()) return out;
  object m = v.value().get_object().value();
  for (auto [k, val] : m) {
    if (val.is_string()) {
      out.emplace(std::string(k), std::string(val.get_string().value()));
    } else if (!val.is_null()) {
      out.emplace(std::string(k), simdjson::minify(val));
    }
  }
  return out;
}

std::optional<std::vector<std::string>> OptStringList(object obj, std::string_view key) {
  auto v = obj[key];
  if (v.error() || !v.value().is_array()) return std::nullopt;
  std::vector<std::string> out;
  simdjson::dom::array arr = v.value().get_array().value();
  for (auto e : arr) {
    if (e.is_string()) out.emplace_back(e.get_string().value());
  }
  return out;
}

arrow::Status ParseProtocol(object o, const std::string& where, Protocol* out) {
  ARROW_ASSIGN_OR_RAISE(auto r,
                        ReadIntField(o, "minReaderVersion", kPositiveIntField, where, "protocol"));
  ARROW_ASSIGN_OR_RAISE(auto w,
                        ReadIntField(o, "minWriterVersion", kPositiveIntField, where, "protocol"));
  if (!r || !w) return Corrupt(where, "protocol action without minReaderVersion/minWriterVersion");
  out->min_reader_version = static_cast<int32_t>(*r);
  out->min_writer_version = static_cast<int32_t>(*w);
  out->reader_features = OptStringList(o, "readerFeatures");
  out->writer_features = OptStringList(o, "writerFeatures");
  return arrow::Status::OK();
}

arrow::Status ParseMetadata(object o, const std::string& where, Metadata* out) {
  auto schema = OptString(o, "schemaString");
  if (!schema) return Corrupt(where, "metaData action without schemaString");
  out->schema_string = std::move(*schema);
  out->id = OptString(o, "id").value_or("");
  out->name = OptString(o, "name");
  out->description = OptString(o, "description");
  auto fmt_obj = o["format"];
  if (!fmt_obj.error() && fmt_obj.value().is_object()) {
    object f = fmt_obj.value().get_object().value();
    out->format_provider = OptString(f, "provider").value_or("parquet");
    out->format_options = StringMap(f, "options");
  }
  out->partition_columns = OptStringList(o, "partitionColumns").value_or(std::vector<std::string>{});
  out->configuration = StringMap(o, "configuration");
  ARROW_ASSIGN_OR_RAISE(out->created_time,
                        ReadIntField(o, "createdTime", kLongField, where, "metaData"));
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<ParsedActions> ParseActionFile(std::string_view content,
                                             const std::string& file_name) {
  ParsedActions result;
  // One padded copy lets every line be parsed in place (simdjson reads up to 64 bytes past
  // the end of its input).
  simdjson::padded_string padded(content);
  simdjson::dom::parser parser;
  FileActionBuilder files;
  size_t pos = 0;
  int64_t line_no = 0;
  const char* base = padded.data();
  const size_t n = padded.size();
  while (pos < n) {
    size_t end = pos;
    while (end < n && base[end] != '\n') ++end;
    ++line_no;
    size_t len = end - pos;
    // Tolerate CRLF and blank lines.
    if (len > 0 && base[pos + len - 1] == '\r') --len;
    bool blank = true;
    for (size_t i = pos; i < pos + len; ++i) {
      if (!isspace(static_cast<unsigned char>(base[i]))) {
        blank = false;
        break;
      }
    }
    if (!blank) {
      std::string where = fmt::format("{} line {}", file_name, line_no);
      element doc;
      auto err = parser.parse(base + pos, len, false).get(doc);
      if (err) return Corrupt(where, fmt::format("malformed JSON ({})", simdjson::error_message(err)));
      if (!doc.is_object()) return Corrupt(where, "an action line must be a JSON object");
      object line_obj = doc.get_object().value();
      for (auto [key, value] : line_obj) {
        static constexpr std::string_view kKnown[] = {
            "add", "remove", "protocol", "metaData", "commitInfo", "txn",
            "domainMetadata", "cdc", "sidecar", "checkpointMetadata"};
        bool known = false;
        for (auto k : kKnown) known |= key == k;
        // Unknown actions are ignored whatever their shape, as the protocol requires.
        if (!known) continue;
        if (!value.is_object()) {
          if (value.is_null()) continue;
          return Corrupt(where, fmt::format("action '{}' is not an object", std::string(key)));
        }
        object o = value.get_object().value();
        if (key == "add") {
          ARROW_RETURN_NOT_OK(files.Append(o, true, where));
          ++result.num_adds;
        } else if (key == "remove") {
          ARROW_RETURN_NOT_OK(files.Append(o, false, where));
          ++result.num_removes;
        } else if (key == "protocol") {
          Protocol p;
          ARROW_RETURN_NOT_OK(ParseProtocol(o, where, &p));
          result.protocol = std::move(p);
        } else if (key == "metaData") {
          Metadata m;
          ARROW_RETURN_NOT_OK(ParseMetadata(o, where, &m));
          result.metadata = std::move(m);
        } else if (key == "commitInfo") {
          CommitInfo ci;
          ci.raw_json = simdjson::minify(value);
          ci.timestamp = OptIntLenient(o, "timestamp");
          // Free-form otherwise, but the in-commit timestamp orders versions in time.
          ARROW_ASSIGN_OR_RAISE(ci.in_commit_timestamp,
                                ReadIntField(o, "inCommitTimestamp", kLongField, where,
                                             "commitInfo"));
          ci.operation = OptString(o, "operation");
          result.commit_info = std::move(ci);
        } else if (key == "txn") {
          auto app = OptString(o, "appId");
          ARROW_ASSIGN_OR_RAISE(auto ver, ReadIntField(o, "version", kLongField, where, "txn"));
          if (!app || !ver) return Corrupt(where, "txn action without appId/version");
          ARROW_ASSIGN_OR_RAISE(auto last_updated,
                                ReadIntField(o, "lastUpdated", kLongField, where, "txn"));
          result.txns.push_back(Txn{*app, *ver, last_updated});
        } else if (key == "domainMetadata") {
          auto domain = OptString(o, "domain");
          if (!domain) return Corrupt(where, "domainMetadata action without domain");
          bool removed = false;
          auto r = o["removed"];
          if (!r.error() && r.value().is_bool()) removed = r.value().get_bool().value();
          result.domains.push_back(
              DomainMetadata{*domain, OptString(o, "configuration").value_or(""), removed});
        } else if (key == "cdc") {
          CdcFile c;
          c.path = OptString(o, "path").value_or("");
          // A null partition value stays null (JSON null), as for add actions.
          if (auto pv = o["partitionValues"]; !pv.error() && pv.value().is_object()) {
            // A named object: the range of a range-for must not live in a temporary result.
            object pv_obj = pv.value().get_object().value();
            for (auto [k, val] : pv_obj) {
              std::optional<std::string> text;
              if (val.is_string()) {
                text = std::string(val.get_string().value());
              } else if (!val.is_null()) {
                text = simdjson::minify(val);
              }
              c.partition_values.emplace(std::string(k), std::move(text));
            }
          }
          ARROW_ASSIGN_OR_RAISE(auto size,
                                ReadIntField(o, "size", kNonNegativeLongField, where, "cdc"));
          c.size = size.value_or(0);
          c.tags = StringMap(o, "tags");
          result.cdc_files.push_back(std::move(c));
        } else if (key == "sidecar") {
          Sidecar s;
          auto path = OptString(o, "path");
          if (!path) return Corrupt(where, "sidecar action without path");
          s.path = *path;
          ARROW_ASSIGN_OR_RAISE(
              auto size, ReadIntField(o, "sizeInBytes", kNonNegativeLongField, where, "sidecar"));
          ARROW_ASSIGN_OR_RAISE(
              auto mtime, ReadIntField(o, "modificationTime", kLongField, where, "sidecar"));
          s.size_in_bytes = size.value_or(0);
          s.modification_time = mtime.value_or(0);
          s.tags = StringMap(o, "tags");
          result.sidecars.push_back(std::move(s));
        } else if (key == "checkpointMetadata") {
          ARROW_ASSIGN_OR_RAISE(auto version, ReadIntField(o, "version", kNonNegativeLongField,
                                                           where, "checkpointMetadata"));
          result.checkpoint_metadata =
              CheckpointMetadata{version.value_or(0), StringMap(o, "tags")};
        }
        // Unknown actions are ignored, as the protocol requires.
      }
    }
    pos = end + 1;
  }
  if (files.length() > 0) {
    ARROW_ASSIGN_OR_RAISE(result.file_actions, files.Finish());
  }
  return result;
}

}  // namespace deltacpp::internal
