// Fuzz target: deletion vectors as the log describes them. The first byte picks the form:
// an inline (Z85) descriptor, a `u` descriptor pointing into a DV file whose bytes follow, or a
// bare serialized bitmap array. Bytes 1-8 give sizeInBytes, offset and cardinality.
#include <arrow/filesystem/localfs.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "protocol/deletion_vector.h"

namespace {

constexpr char kUuid[] = "4f1c2a3b-5d6e-4f70-8a9b-0c1d2e3f4a5b";

// A table root of this process's own, made once.
const std::string& TableRoot() {
  static const std::string* root = [] {
    std::string pattern = "/tmp/deltacpp-fuzz-dv.XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    return new std::string(pattern);
  }();
  return *root;
}

int32_t Int32At(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace deltacpp;            // NOLINT(build/namespaces)
  using namespace deltacpp::internal;  // NOLINT(build/namespaces)
  if (size < 9) return 0;
  const uint8_t form = data[0] % 3;
  const int32_t size_in_bytes = Int32At(data + 1);
  const int32_t offset_or_cardinality = Int32At(data + 5);
  std::string_view payload(reinterpret_cast<const char*>(data + 9), size - 9);
  arrow::fs::LocalFileSystem fs;
  if (form == 2) {
    (void)DeserializeRoaringBitmapArray(payload);
    return 0;
  }
  DeletionVectorDescriptor dv;
  dv.size_in_bytes = size_in_bytes;
  dv.cardinality = offset_or_cardinality;
  if (form == 0) {
    dv.storage_type = "i";
    dv.path_or_inline_dv = std::string(payload);
  } else {
    dv.storage_type = "u";
    auto encoded = EncodeUuidDeletionVectorPath("", kUuid);
    if (!encoded.ok()) std::abort();
    dv.path_or_inline_dv = *encoded;
    dv.offset = offset_or_cardinality;
    auto path = DeletionVectorAbsolutePath(dv, TableRoot());
    if (!path.ok()) std::abort();
    FILE* f = std::fopen(path->c_str(), "wb");
    if (!f) std::abort();
    std::fwrite(payload.data(), 1, payload.size(), f);
    std::fclose(f);
  }
  (void)ReadDeletedRowIndexes(dv, TableRoot(), fs);
  return 0;
}
