// Test-only tool: runs the deletion vector writer on a table's files for the interop suite.
// Reads one JSON request on stdin:
//   {"tableRoot": "/abs/path", "maxInlineBytes": 128, "randomPrefixLength": 0,
//    "files": [{"path": "part-0.parquet", "numRecords": 10, "rows": [1, 3],
//               "deletionVector": {...} or absent}]}
// and prints {"files": [{"path", "outcome" ("dv" | "remove" | "unchanged"), "deletionVector",
// "uniqueId"}], "writtenFiles": [...]}. Exits 1 with the error on stderr when the writer fails.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <iostream>
#include <iterator>
#include <string>

#include "deltacpp/api.h"
#include "write/deletion_vector_writer.h"

namespace {

using deltacpp::DeletionVectorDescriptor;
using deltacpp::internal::DeletionVectorOutcome;
using deltacpp::internal::DeletionVectorRequest;
using deltacpp::internal::DeletionVectorWriter;
using deltacpp::internal::DeletionVectorWriterOptions;

int Fail(const std::string& message) {
  std::cerr << "dv_tool: " << message << "\n";
  return 1;
}

bool Has(const rapidjson::Value& v, const char* key, rapidjson::Type type) {
  return v.HasMember(key) && v[key].GetType() == type;
}

bool WellFormedDv(const rapidjson::Value& v) {
  return v.IsObject() && Has(v, "storageType", rapidjson::kStringType) &&
         Has(v, "pathOrInlineDv", rapidjson::kStringType) && v.HasMember("sizeInBytes") &&
         v["sizeInBytes"].IsInt() && v.HasMember("cardinality") && v["cardinality"].IsInt64() &&
         (!v.HasMember("offset") || v["offset"].IsInt() || v["offset"].IsNull());
}

// The fields main() reads exist with the types it reads them as.
bool WellFormed(const rapidjson::Document& doc) {
  if (!Has(doc, "tableRoot", rapidjson::kStringType) || !Has(doc, "files", rapidjson::kArrayType)) {
    return false;
  }
  for (const char* key : {"maxInlineBytes", "randomPrefixLength"}) {
    if (doc.HasMember(key) && !doc[key].IsInt()) return false;
  }
  for (const auto& f : doc["files"].GetArray()) {
    if (!f.IsObject() || !Has(f, "path", rapidjson::kStringType) ||
        !f.HasMember("numRecords") || !f["numRecords"].IsInt64() ||
        !Has(f, "rows", rapidjson::kArrayType)) {
      return false;
    }
    for (const auto& row : f["rows"].GetArray()) {
      if (!row.IsUint64()) return false;
    }
    if (f.HasMember("deletionVector") && !f["deletionVector"].IsNull() &&
        !WellFormedDv(f["deletionVector"])) {
      return false;
    }
  }
  return true;
}

DeletionVectorDescriptor ParseDv(const rapidjson::Value& v) {
  DeletionVectorDescriptor dv;
  dv.storage_type = v["storageType"].GetString();
  dv.path_or_inline_dv = v["pathOrInlineDv"].GetString();
  if (v.HasMember("offset") && v["offset"].IsInt()) dv.offset = v["offset"].GetInt();
  dv.size_in_bytes = v["sizeInBytes"].GetInt();
  dv.cardinality = v["cardinality"].GetInt64();
  return dv;
}

void WriteDv(rapidjson::Writer<rapidjson::StringBuffer>& w, const DeletionVectorDescriptor& dv) {
  w.StartObject();
  w.Key("storageType");
  w.String(dv.storage_type.c_str());
  w.Key("pathOrInlineDv");
  w.String(dv.path_or_inline_dv.c_str());
  if (dv.offset) {
    w.Key("offset");
    w.Int(*dv.offset);
  }
  w.Key("sizeInBytes");
  w.Int(dv.size_in_bytes);
  w.Key("cardinality");
  w.Int64(dv.cardinality);
  w.EndObject();
}

}  // namespace

int main() {
  deltacpp::Initialize();
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(input.c_str());
  if (doc.HasParseError() || !doc.IsObject()) return Fail("the request is not a JSON object");
  if (!WellFormed(doc)) return Fail("the request lacks a field or has one of the wrong type");

  DeletionVectorWriterOptions options;
  options.table_root = doc["tableRoot"].GetString();
  if (doc.HasMember("maxInlineBytes")) options.max_inline_bytes = doc["maxInlineBytes"].GetInt();
  if (doc.HasMember("randomPrefixLength")) {
    options.random_prefix_length = doc["randomPrefixLength"].GetInt();
  }
  std::vector<DeletionVectorRequest> requests;
  for (const auto& f : doc["files"].GetArray()) {
    DeletionVectorRequest r;
    r.path = f["path"].GetString();
    r.num_records = f["numRecords"].GetInt64();
    for (const auto& row : f["rows"].GetArray()) r.rows.push_back(row.GetUint64());
    if (f.HasMember("deletionVector") && f["deletionVector"].IsObject()) {
      r.existing = ParseDv(f["deletionVector"]);
    }
    requests.push_back(std::move(r));
  }

  auto writer = DeletionVectorWriter::Make(options);
  if (!writer.ok()) return Fail(writer.status().ToString());
  auto updates = (*writer)->Write(requests);
  if (!updates.ok()) return Fail(updates.status().ToString());

  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("files");
  w.StartArray();
  for (const auto& u : *updates) {
    w.StartObject();
    w.Key("path");
    w.String(u.path.c_str());
    w.Key("outcome");
    w.String(u.outcome == DeletionVectorOutcome::kNewDeletionVector ? "dv"
             : u.outcome == DeletionVectorOutcome::kRemoveFile     ? "remove"
                                                                   : "unchanged");
    if (u.descriptor) {
      w.Key("deletionVector");
      WriteDv(w, *u.descriptor);
      w.Key("uniqueId");
      w.String(u.unique_id.c_str());
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("writtenFiles");
  w.StartArray();
  for (const auto& path : (*writer)->written_files()) w.String(path.c_str());
  w.EndArray();
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return 0;
}
