// Fuzz target: a metaData.schemaString through the schema parser. A schema that parses must
// also serialize, and what deltacpp writes must parse back to the same schema.
#include <arrow/type.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "protocol/schema_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace deltacpp::internal;  // NOLINT(build/namespaces)
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto schema = SchemaFromDeltaJson(text);
  if (!schema.ok()) return 0;
  auto written = SchemaToDeltaJson(**schema);
  if (!written.ok()) return 0;  // e.g. names that are not UTF-8: refused on write, fine
  auto reread = SchemaFromDeltaJson(*written);
  if (!reread.ok() || !(*reread)->Equals(**schema, /*check_metadata=*/true)) {
    std::fprintf(stderr, "schema does not survive a write and a read:\n%s\n%s\n",
                 (*schema)->ToString(true).c_str(),
                 reread.ok() ? (*reread)->ToString(true).c_str()
                             : reread.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
