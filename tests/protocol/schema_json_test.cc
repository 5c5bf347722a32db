#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "deltacpp/error.h"
#include "deltacpp/schema.h"
#include "protocol/schema_json.h"
#include "support/temp_dir.h"

#ifndef ASSERT_OK_AND_ASSIGN
#define DELTACPP_CONCAT_INNER(a, b) a##b
#define DELTACPP_CONCAT(a, b) DELTACPP_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)          \
  auto tmp = (expr);                                       \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();        \
  lhs = std::move(tmp).ValueUnsafe()
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL(DELTACPP_CONCAT(_result_, __LINE__), lhs, expr)
#endif

namespace deltacpp::internal {
namespace {

std::shared_ptr<arrow::KeyValueMetadata> Md(std::vector<std::string> keys, std::vector<std::string> values) {
  return arrow::KeyValueMetadata::Make(std::move(keys), std::move(values));
}

std::shared_ptr<arrow::DataType> Variant() {
  return arrow::struct_({arrow::field("metadata", arrow::binary(), false), arrow::field("value", arrow::binary(), false)});
}

std::shared_ptr<arrow::KeyValueMetadata> VariantMd() { return Md({"delta.variant"}, {"true"}); }

void ExpectSchemaEq(const arrow::Schema& expected, const arrow::Schema& actual) {
  EXPECT_TRUE(expected.Equals(actual, /*check_metadata=*/true))
      << "expected:\n" << expected.ToString(true) << "\nactual:\n" << actual.ToString(true);
}

// Every metaData.schemaString in the commit files of a corpus table, in version order.
std::vector<std::string> CorpusSchemaStrings(const std::string& table) {
  namespace fs = std::filesystem;
  fs::path log = fs::path(deltacpp::testing::ConformanceDir()) / "tables" / table / "_delta_log";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(log)) {
    if (entry.path().extension() == ".json" && entry.path().filename().string().size() == 25) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  simdjson::dom::parser parser;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("\"metaData\"") == std::string::npos) continue;
      simdjson::dom::element doc;
      if (parser.parse(line).get(doc) != simdjson::SUCCESS) continue;
      std::string_view schema;
      if (doc["metaData"]["schemaString"].get_string().get(schema) == simdjson::SUCCESS) out.emplace_back(schema);
    }
  }
  return out;
}

TEST(SchemaJson, AllPrimitiveTypesMapAndRoundTrip) {
  const std::string json =
      R"J({"type":"struct","fields":[)J"
      R"J({"name":"b","type":"byte","nullable":true,"metadata":{}},)J"
      R"J({"name":"s","type":"short","nullable":false,"metadata":{}},)J"
      R"J({"name":"i","type":"integer","nullable":true,"metadata":{}},)J"
      R"J({"name":"l","type":"long","nullable":false,"metadata":{}},)J"
      R"J({"name":"f","type":"float","nullable":true,"metadata":{}},)J"
      R"J({"name":"d","type":"double","nullable":true,"metadata":{}},)J"
      R"J({"name":"dec","type":"decimal(38,18)","nullable":true,"metadata":{}},)J"
      R"J({"name":"str","type":"string","nullable":true,"metadata":{}},)J"
      R"J({"name":"bin","type":"binary","nullable":true,"metadata":{}},)J"
      R"J({"name":"bool","type":"boolean","nullable":true,"metadata":{}},)J"
      R"J({"name":"date","type":"date","nullable":true,"metadata":{}},)J"
      R"J({"name":"ts","type":"timestamp","nullable":true,"metadata":{}},)J"
      R"J({"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},)J"
      R"J({"name":"v","type":"void","nullable":true,"metadata":{}},)J"
      R"J({"name":"var","type":"variant","nullable":true,"metadata":{}}]})J";
  arrow::Schema expected({
      arrow::field("b", arrow::int8(), true),
      arrow::field("s", arrow::int16(), false),
      arrow::field("i", arrow::int32(), true),
      arrow::field("l", arrow::int64(), false),
      arrow::field("f", arrow::float32(), true),
      arrow::field("d", arrow::float64(), true),
      arrow::field("dec", arrow::decimal128(38, 18), true),
      arrow::field("str", arrow::utf8(), true),
      arrow::field("bin", arrow::binary(), true),
      arrow::field("bool", arrow::boolean(), true),
      arrow::field("date", arrow::date32(), true),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), true),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO), true),
      arrow::field("v", arrow::null(), true),
      arrow::field("var", Variant(), true, VariantMd()),
  });
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(json));
  ExpectSchemaEq(expected, *schema);
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, json);
  // The public entry points are the same functions.
  ASSERT_OK_AND_ASSIGN(auto via_public, deltacpp::SchemaFromDeltaJson(json));
  ExpectSchemaEq(expected, *via_public);
}

TEST(SchemaJson, DecimalSpellings) {
  ASSERT_OK_AND_ASSIGN(auto t1, PrimitiveTypeFromDeltaName("decimal(10, 2)"));
  EXPECT_TRUE(t1->Equals(arrow::decimal128(10, 2)));
  ASSERT_OK_AND_ASSIGN(auto t2, PrimitiveTypeFromDeltaName("decimal"));
  EXPECT_TRUE(t2->Equals(arrow::decimal128(10, 0)));
  ASSERT_OK_AND_ASSIGN(auto t3, PrimitiveTypeFromDeltaName("decimal( 5 , 0 )"));
  EXPECT_TRUE(t3->Equals(arrow::decimal128(5, 0)));
  ASSERT_OK_AND_ASSIGN(auto t4, PrimitiveTypeFromDeltaName("decimal(1,1)"));
  EXPECT_TRUE(t4->Equals(arrow::decimal128(1, 1)));

  for (const char* bad : {"decimal(39,2)", "decimal(5,6)", "decimal(0,0)", "decimal(10)", "decimal(a,b)",
                          "decimal(10,2", "decimal(10,-1)"}) {
    auto r = PrimitiveTypeFromDeltaName(bad);
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << bad << ": " << r.status();
  }
  // Spark writes decimals without the space.
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(
      R"J({"type":"struct","fields":[{"name":"x","type":"decimal(10, 2)","nullable":true,"metadata":{}}]})J"));
  ASSERT_OK_AND_ASSIGN(auto json, SchemaToDeltaJson(*schema));
  EXPECT_EQ(json, R"J({"type":"struct","fields":[{"name":"x","type":"decimal(10,2)","nullable":true,"metadata":{}}]})J");
}

TEST(SchemaJson, NestedTypesKeepNullabilityAndMetadata) {
  const std::string json =
      R"J({"type":"struct","fields":[)J"
      R"J({"name":"s","type":{"type":"struct","fields":[)J"
      R"J({"name":"a","type":"integer","nullable":false,"metadata":{"comment":"inner"}},)J"
      R"J({"name":"b","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}}]},)J"
      R"J("nullable":false,"metadata":{"k":1}},)J"
      R"J({"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[)J"
      R"J({"name":"x","type":"double","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},)J"
      R"J({"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"map","keyType":"integer",)J"
      R"J("valueType":{"type":"array","elementType":"long","containsNull":true},"valueContainsNull":false},)J"
      R"J("valueContainsNull":true},"nullable":true,"metadata":{}},)J"
      R"J({"name":"nested_arr","type":{"type":"array","elementType":{"type":"array","elementType":"date",)J"
      R"J("containsNull":false},"containsNull":true},"nullable":false,"metadata":{}}]})J";
  auto inner_struct = arrow::struct_({
      arrow::field("a", arrow::int32(), false, Md({"comment"}, {"\"inner\""})),
      arrow::field("b", arrow::list(arrow::field("element", arrow::utf8(), false)), true),
  });
  auto inner_map = std::make_shared<arrow::MapType>(
      arrow::field("key", arrow::int32(), false),
      arrow::field("value", arrow::list(arrow::field("element", arrow::int64(), true)), false));
  arrow::Schema expected({
      arrow::field("s", inner_struct, false, Md({"k"}, {"1"})),
      arrow::field("arr", arrow::list(arrow::field("element", arrow::struct_({arrow::field("x", arrow::float64())}), true)),
                   true),
      arrow::field("m",
                   std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false),
                                                    arrow::field("value", inner_map, true)),
                   true),
      arrow::field("nested_arr",
                   arrow::list(arrow::field("element", arrow::list(arrow::field("element", arrow::date32(), false)), true)),
                   false),
  });
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(json));
  ExpectSchemaEq(expected, *schema);
  // Nullability of nested children is checked explicitly (Equals on map types is lenient about names only).
  const auto& m = static_cast<const arrow::MapType&>(*schema->field(2)->type());
  EXPECT_FALSE(m.key_field()->nullable());
  EXPECT_TRUE(m.item_field()->nullable());
  const auto& inner = static_cast<const arrow::MapType&>(*m.item_type());
  EXPECT_FALSE(inner.item_field()->nullable());
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, json);
}

TEST(SchemaJson, FieldMetadataIsKeptAsRawJsonInOrder) {
  const std::string json =
      R"J({"type":"struct","fields":[{"name":"c","type":"long","nullable":true,"metadata":{)J"
      R"J("delta.columnMapping.physicalName":"col-abc","delta.columnMapping.id":5,)J"
      R"J("delta.identity.allowExplicitInsert":false,"delta.invariants":"{\"expression\":{\"expression\":\"c > 0\"}}",)J"
      R"J("delta.typeChanges":[{"toType":"long","fromType":"integer","tableVersion":2}],)J"
      R"J("nested":{"a":[1,2,null],"b":"x\"y"},"neg":-7,"none":null,"unicode":"h\u00e9"}}]})J";
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(json));
  auto expected_md = Md(
      {"delta.columnMapping.physicalName", "delta.columnMapping.id", "delta.identity.allowExplicitInsert",
       "delta.invariants", "delta.typeChanges", "nested", "neg", "none", "unicode"},
      {"\"col-abc\"", "5", "false", R"J("{\"expression\":{\"expression\":\"c > 0\"}}")J",
       R"J([{"toType":"long","fromType":"integer","tableVersion":2}])J", R"J({"a":[1,2,null],"b":"x\"y"})J", "-7",
       "null", "\"h\xC3\xA9\""});
  const auto& md = schema->field(0)->metadata();
  ASSERT_NE(md, nullptr);
  EXPECT_EQ(md->keys(), expected_md->keys());
  EXPECT_EQ(md->values(), expected_md->values());

  EXPECT_EQ(FieldMetadataString(*schema->field(0), "delta.columnMapping.physicalName"), "col-abc");
  EXPECT_EQ(FieldMetadataString(*schema->field(0), "delta.invariants"),
            R"J({"expression":{"expression":"c > 0"}})J");
  EXPECT_EQ(FieldMetadataString(*schema->field(0), "unicode"), "h\xC3\xA9");
  EXPECT_EQ(FieldMetadataString(*schema->field(0), "neg"), std::nullopt);
  EXPECT_EQ(FieldMetadataString(*schema->field(0), "absent"), std::nullopt);

  // Writing it back gives the same JSON except that \u00e9 is written as UTF-8.
  std::string expected_back = json;
  expected_back.replace(expected_back.find("\\u00e9"), 6, "\xC3\xA9");
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, expected_back);
}

TEST(SchemaJson, VariantInEveryPosition) {
  const std::string json =
      R"J({"type":"struct","fields":[)J"
      R"J({"name":"v","type":{"type":"variant"},"nullable":true,"metadata":{}},)J"
      R"J({"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},"nullable":true,"metadata":{}},)J"
      R"J({"name":"m","type":{"type":"map","keyType":"string","valueType":"variant","valueContainsNull":false},)J"
      R"J("nullable":true,"metadata":{}}]})J";
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(json));
  arrow::Schema expected({
      arrow::field("v", Variant(), true, VariantMd()),
      arrow::field("a", arrow::list(arrow::field("element", Variant(), true, VariantMd())), true),
      arrow::field("m",
                   std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false),
                                                    arrow::field("value", Variant(), false, VariantMd())),
                   true),
  });
  ExpectSchemaEq(expected, *schema);
  EXPECT_TRUE(IsVariantField(*schema->field(0)));
  const auto& list = static_cast<const arrow::ListType&>(*schema->field(1)->type());
  EXPECT_TRUE(IsVariantField(*list.value_field()));
  const auto& map = static_cast<const arrow::MapType&>(*schema->field(2)->type());
  EXPECT_TRUE(IsVariantField(*map.item_field()));
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  // {"type":"variant"} is normalised to the bare name.
  EXPECT_EQ(back,
            R"J({"type":"struct","fields":[)J"
            R"J({"name":"v","type":"variant","nullable":true,"metadata":{}},)J"
            R"J({"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},"nullable":true,"metadata":{}},)J"
            R"J({"name":"m","type":{"type":"map","keyType":"string","valueType":"variant","valueContainsNull":false},)J"
            R"J("nullable":true,"metadata":{}}]})J");
}

TEST(SchemaJson, ErrorsOnUnknownTypesAndBadJson) {
  auto unknown = SchemaFromDeltaJson(
      R"J({"type":"struct","fields":[{"name":"g","type":"geometry(OGC:CRS84)","nullable":true,"metadata":{}}]})J");
  EXPECT_TRUE(IsDeltaError(unknown.status(), DeltaErrorCode::kUnsupportedFeature)) << unknown.status();
  EXPECT_NE(unknown.status().message().find("geometry(OGC:CRS84)"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("'g'"), std::string::npos);

  auto nested_unknown = SchemaFromDeltaJson(
      R"J({"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"char(3)","containsNull":true},)J"
      R"J("nullable":true,"metadata":{}}]})J");
  EXPECT_TRUE(IsDeltaError(nested_unknown.status(), DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(nested_unknown.status().message().find("char(3)"), std::string::npos);

  for (const char* bad : {
           "",
           "{",
           "[]",
           R"J({"type":"array","elementType":"long","containsNull":true})J",
           R"J({"type":"struct"})J",
           R"J({"type":"struct","fields":[{"type":"long","nullable":true,"metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","nullable":true,"metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":"long","nullable":"yes","metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":[]}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":{"type":"array"},"nullable":true,"metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":{"type":"map","keyType":"long"},"nullable":true,"metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":17,"nullable":true,"metadata":{}}]})J",
           R"J({"type":"struct","fields":[{"name":"x","type":"decimal(50,2)","nullable":true,"metadata":{}}]})J",
       }) {
    auto r = SchemaFromDeltaJson(bad);
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << bad << " -> " << r.status();
  }
}

TEST(SchemaJson, ToDeltaJsonNormalisesArrowOnlyTypes) {
  arrow::Schema schema({
      arrow::field("ls", arrow::large_utf8()),
      arrow::field("sv", arrow::utf8_view()),
      arrow::field("lb", arrow::large_binary(), false),
      arrow::field("fsb", arrow::fixed_size_binary(16)),
      arrow::field("d64", arrow::date64()),
      arrow::field("ts_ns", arrow::timestamp(arrow::TimeUnit::NANO, "America/New_York")),
      arrow::field("ts_ms", arrow::timestamp(arrow::TimeUnit::MILLI)),
      arrow::field("dict", arrow::dictionary(arrow::int32(), arrow::utf8())),
      arrow::field("ll", arrow::large_list(arrow::field("item", arrow::int64(), false))),
      arrow::field("fid", arrow::int32(), true, Md({"PARQUET:field_id", "x"}, {"3", "plain text"})),
  });
  ASSERT_OK_AND_ASSIGN(auto json, SchemaToDeltaJson(schema));
  EXPECT_EQ(json,
            R"J({"type":"struct","fields":[)J"
            R"J({"name":"ls","type":"string","nullable":true,"metadata":{}},)J"
            R"J({"name":"sv","type":"string","nullable":true,"metadata":{}},)J"
            R"J({"name":"lb","type":"binary","nullable":false,"metadata":{}},)J"
            R"J({"name":"fsb","type":"binary","nullable":true,"metadata":{}},)J"
            R"J({"name":"d64","type":"date","nullable":true,"metadata":{}},)J"
            R"J({"name":"ts_ns","type":"timestamp","nullable":true,"metadata":{}},)J"
            R"J({"name":"ts_ms","type":"timestamp_ntz","nullable":true,"metadata":{}},)J"
            R"J({"name":"dict","type":"string","nullable":true,"metadata":{}},)J"
            R"J({"name":"ll","type":{"type":"array","elementType":"long","containsNull":false},"nullable":true,"metadata":{}},)J"
            R"J({"name":"fid","type":"integer","nullable":true,"metadata":{"x":"plain text"}}]})J");
}

TEST(SchemaJson, ToDeltaJsonRejectsTypesWithoutDeltaEquivalent) {
  struct Case {
    std::shared_ptr<arrow::Field> field;
    std::string path;
  };
  std::vector<Case> cases = {
      {arrow::field("u32", arrow::uint32()), "u32"},
      {arrow::field("u8", arrow::uint8()), "u8"},
      {arrow::field("h", arrow::float16()), "h"},
      {arrow::field("t", arrow::time64(arrow::TimeUnit::MICRO)), "t"},
      {arrow::field("dur", arrow::duration(arrow::TimeUnit::SECOND)), "dur"},
      {arrow::field("d256", arrow::decimal256(50, 2)), "d256"},
      {arrow::field("s", arrow::struct_({arrow::field("inner", arrow::uint64())})), "s.inner"},
      {arrow::field("l", arrow::list(arrow::uint16())), "l.element"},
  };
  for (const auto& c : cases) {
    auto r = SchemaToDeltaJson(arrow::Schema({c.field}));
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kSchemaMismatch)) << c.path << ": " << r.status();
    EXPECT_NE(r.status().message().find("'" + c.path + "'"), std::string::npos) << r.status();
  }
}

TEST(SchemaJson, CorpusAllPrimitiveTypes) {
  auto strings = CorpusSchemaStrings("dat-all_primitive_types");
  ASSERT_EQ(strings.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(strings[0]));
  arrow::Schema expected({
      arrow::field("utf8", arrow::utf8()),
      arrow::field("int64", arrow::int64()),
      arrow::field("int32", arrow::int32()),
      arrow::field("int16", arrow::int16()),
      arrow::field("int8", arrow::int8()),
      arrow::field("float32", arrow::float32()),
      arrow::field("float64", arrow::float64()),
      arrow::field("bool", arrow::boolean()),
      arrow::field("binary", arrow::binary()),
      arrow::field("decimal", arrow::decimal128(5, 3)),
      arrow::field("date32", arrow::date32()),
      arrow::field("timestamp", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
  });
  ExpectSchemaEq(expected, *schema);
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, strings[0]);
}

TEST(SchemaJson, CorpusNestedTypes) {
  auto strings = CorpusSchemaStrings("dat-nested_types");
  ASSERT_EQ(strings.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(strings[0]));
  arrow::Schema expected({
      arrow::field("pk", arrow::int32()),
      arrow::field("struct", arrow::struct_({arrow::field("float64", arrow::float64()),
                                             arrow::field("bool", arrow::boolean())})),
      arrow::field("array", arrow::list(arrow::field("element", arrow::int16(), true))),
      arrow::field("map", std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false),
                                                           arrow::field("value", arrow::int32(), true))),
  });
  ExpectSchemaEq(expected, *schema);
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, strings[0]);
}

TEST(SchemaJson, CorpusColumnMappingPhysicalNames) {
  auto strings = CorpusSchemaStrings("dat-column_mapping");
  ASSERT_GE(strings.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto first, SchemaFromDeltaJson(strings.front()));
  ASSERT_OK_AND_ASSIGN(auto last, SchemaFromDeltaJson(strings.back()));
  EXPECT_EQ(first->field(1)->name(), "int");
  EXPECT_EQ(last->field(1)->name(), "new_int");  // renamed; physical name unchanged
  for (const auto& schema : {first, last}) {
    EXPECT_EQ(PhysicalName(*schema->field(0)), "col-4ef4d1f5-5d3c-4aad-b4db-405ac3f186e6");
    EXPECT_EQ(PhysicalName(*schema->field(1)), "col-12668372-ff50-41ae-9571-41f0cb9ad88f");
    EXPECT_EQ(PhysicalName(*schema->field(2)), "col-a340198d-9caf-4b16-bbf1-d1bece16131c");
    EXPECT_EQ(FieldId(*schema->field(0)), 1);
    EXPECT_EQ(FieldId(*schema->field(1)), 2);
    EXPECT_EQ(FieldId(*schema->field(2)), 3);
    EXPECT_EQ(schema->field(0)->metadata()->Get("delta.columnMapping.physicalName").ValueOrDie(),
              "\"col-4ef4d1f5-5d3c-4aad-b4db-405ac3f186e6\"");
  }
  auto physical = PhysicalSchema(*last, ColumnMappingMode::kName);
  ASSERT_EQ(physical->num_fields(), 3);
  EXPECT_EQ(physical->field(0)->name(), "col-4ef4d1f5-5d3c-4aad-b4db-405ac3f186e6");
  EXPECT_EQ(physical->field(1)->name(), "col-12668372-ff50-41ae-9571-41f0cb9ad88f");
  EXPECT_EQ(physical->field(2)->name(), "col-a340198d-9caf-4b16-bbf1-d1bece16131c");
  EXPECT_TRUE(physical->field(1)->type()->Equals(arrow::int64()));
  EXPECT_FALSE(physical->field(1)->metadata()->Contains("PARQUET:field_id"));
  auto by_id = PhysicalSchema(*last, ColumnMappingMode::kId);
  EXPECT_EQ(by_id->field(2)->metadata()->Get("PARQUET:field_id").ValueOrDie(), "3");
  for (const auto& s : strings) {
    ASSERT_OK_AND_ASSIGN(auto parsed, SchemaFromDeltaJson(s));
    ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*parsed));
    EXPECT_EQ(back, s);
  }
}

TEST(SchemaJson, CorpusGeoTypesAreUnsupported) {
  auto strings = CorpusSchemaStrings("kernel-rs-table-with-geo");
  ASSERT_EQ(strings.size(), 1u);
  auto r = SchemaFromDeltaJson(strings[0]);
  EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kUnsupportedFeature)) << r.status();
  EXPECT_NE(r.status().message().find("geometry"), std::string::npos) << r.status();
}

TEST(SchemaJson, CorpusVariantTable) {
  auto strings = CorpusSchemaStrings("kernel-rs-unshredded-variant");
  ASSERT_FALSE(strings.empty());
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromDeltaJson(strings.back()));
  EXPECT_TRUE(IsVariantField(*schema->GetFieldByName("v")));
  EXPECT_TRUE(schema->GetFieldByName("v")->type()->Equals(Variant()));
  ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(*schema));
  EXPECT_EQ(back, strings.back());
}

// Every schema in the corpus either round-trips byte for byte or names an unsupported type.
TEST(SchemaJson, WholeCorpusRoundTrips) {
  namespace fs = std::filesystem;
  int parsed = 0;
  for (const auto& table : fs::directory_iterator(fs::path(deltacpp::testing::ConformanceDir()) / "tables")) {
    if (!fs::is_directory(table.path() / "_delta_log")) continue;
    for (const auto& s : CorpusSchemaStrings(table.path().filename().string())) {
      auto r = SchemaFromDeltaJson(s);
      if (!r.ok()) {
        EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kUnsupportedFeature))
            << table.path() << ": " << r.status();
        continue;
      }
      ++parsed;
      ASSERT_OK_AND_ASSIGN(auto back, SchemaToDeltaJson(**r));
      ASSERT_OK_AND_ASSIGN(auto again, SchemaFromDeltaJson(back));
      EXPECT_TRUE((*r)->Equals(*again, true)) << table.path();
      EXPECT_EQ(back, s) << table.path();
    }
  }
  EXPECT_GT(parsed, 50);
}

TEST(ColumnMapping, ParseMode) {
  EXPECT_EQ(ParseColumnMappingMode({}).ValueOrDie(), ColumnMappingMode::kNone);
  EXPECT_EQ(ParseColumnMappingMode({{"delta.columnMapping.mode", "none"}}).ValueOrDie(), ColumnMappingMode::kNone);
  EXPECT_EQ(ParseColumnMappingMode({{"delta.columnMapping.mode", "name"}}).ValueOrDie(), ColumnMappingMode::kName);
  EXPECT_EQ(ParseColumnMappingMode({{"delta.columnMapping.mode", "id"}}).ValueOrDie(), ColumnMappingMode::kId);
  EXPECT_EQ(ParseColumnMappingMode({{"delta.columnMapping.mode", "NAME"}}).ValueOrDie(), ColumnMappingMode::kName);
  EXPECT_EQ(ParseColumnMappingMode({{"delta.appendOnly", "true"}}).ValueOrDie(), ColumnMappingMode::kNone);
  auto bad = ParseColumnMappingMode({{"delta.columnMapping.mode", "position"}});
  EXPECT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(bad.status().message().find("position"), std::string::npos);
}

TEST(ColumnMapping, FieldHelpers) {
  auto plain = arrow::field("plain", arrow::int32());
  EXPECT_EQ(PhysicalName(*plain), "plain");
  EXPECT_EQ(FieldId(*plain), std::nullopt);

  auto mapped = arrow::field("logical", arrow::int32(), true,
                             Md({"delta.columnMapping.id", "delta.columnMapping.physicalName"}, {"42", "\"col-x\""}));
  EXPECT_EQ(PhysicalName(*mapped), "col-x");
  EXPECT_EQ(FieldId(*mapped), 42);
  EXPECT_EQ(FieldMetadataString(*mapped, "delta.columnMapping.id"), std::nullopt);

  // Values set by hand without JSON quoting are tolerated.
  auto unquoted = arrow::field("l", arrow::int32(), true,
                               Md({"delta.columnMapping.id", "delta.columnMapping.physicalName"}, {"\"7\"", "col-y"}));
  EXPECT_EQ(PhysicalName(*unquoted), "col-y");
  EXPECT_EQ(FieldId(*unquoted), 7);

  auto escaped = arrow::field("l", arrow::int32(), true, Md({"delta.columnMapping.physicalName"}, {R"J("a\"b\\c")J"}));
  EXPECT_EQ(PhysicalName(*escaped), "a\"b\\c");

  auto out_of_range = arrow::field("l", arrow::int32(), true, Md({"delta.columnMapping.id"}, {"4294967296"}));
  EXPECT_EQ(FieldId(*out_of_range), std::nullopt);
}

TEST(ColumnMapping, PhysicalSchemaRenamesNestedFieldsAndSetsIds) {
  const std::string json =
      R"J({"type":"struct","fields":[)J"
      R"J({"name":"s","type":{"type":"struct","fields":[)J"
      R"J({"name":"inner","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-inner"}}]},)J"
      R"J("nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-s"}},)J"
      R"J({"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[)J"
      R"J({"name":"x","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-x"}}]},)J"
      R"J("containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-arr",)J"
      R"J("delta.columnMapping.nested.ids":{"col-arr.element":100}}},)J"
      R"J({"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"integer","containsNull":false},)J"
      R"J("valueContainsNull":true},"nullable":false,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-m",)J"
      R"J("delta.columnMapping.nested.ids":{"col-m.key":101,"col-m.value":102,"col-m.value.element":103}}}]})J";
  ASSERT_OK_AND_ASSIGN(auto logical, SchemaFromDeltaJson(json));

  auto by_name = PhysicalSchema(*logical, ColumnMappingMode::kName);
  auto expect_names = [](const arrow::Schema& s) {
    EXPECT_EQ(s.field(0)->name(), "col-s");
    EXPECT_EQ(s.field(0)->type()->field(0)->name(), "col-inner");
    EXPECT_FALSE(s.field(0)->type()->field(0)->nullable());
    EXPECT_EQ(s.field(1)->name(), "col-arr");
    const auto& elem = s.field(1)->type()->field(0);
    EXPECT_EQ(elem->name(), "element");
    EXPECT_EQ(elem->type()->field(0)->name(), "col-x");
    EXPECT_EQ(s.field(2)->name(), "col-m");
    EXPECT_FALSE(s.field(2)->nullable());
  };
  expect_names(*by_name);
  EXPECT_FALSE(by_name->field(0)->metadata()->Contains("PARQUET:field_id"));

  auto by_id = PhysicalSchema(*logical, ColumnMappingMode::kId);
  expect_names(*by_id);
  auto id_of = [](const std::shared_ptr<arrow::Field>& f) -> std::string {
    if (!f->metadata()) return "";
    auto v = f->metadata()->Get("PARQUET:field_id");
    return v.ok() ? *v : "";
  };
  EXPECT_EQ(id_of(by_id->field(0)), "1");
  EXPECT_EQ(id_of(by_id->field(0)->type()->field(0)), "2");
  EXPECT_EQ(id_of(by_id->field(1)), "3");
  EXPECT_EQ(id_of(by_id->field(1)->type()->field(0)), "100");
  EXPECT_EQ(id_of(by_id->field(1)->type()->field(0)->type()->field(0)), "4");
  EXPECT_EQ(id_of(by_id->field(2)), "5");
  const auto& map = static_cast<const arrow::MapType&>(*by_id->field(2)->type());
  EXPECT_EQ(id_of(map.key_field()), "101");
  EXPECT_EQ(id_of(map.item_field()), "102");
  EXPECT_TRUE(map.item_field()->nullable());
  EXPECT_EQ(id_of(map.item_type()->field(0)), "103");
  EXPECT_FALSE(map.item_type()->field(0)->nullable());

  auto none = PhysicalSchema(*logical, ColumnMappingMode::kNone);
  EXPECT_TRUE(none->Equals(*logical, true));
}

}  // namespace
}  // namespace deltacpp::internal
