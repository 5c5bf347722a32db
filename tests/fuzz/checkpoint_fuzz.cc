// Fuzz target: one file's bytes as a classic Parquet checkpoint, read as a snapshot load would
// (every action column normalised into the file-action layout). Parquet itself is the wheel's
// library; what is fuzzed is how deltacpp takes apart whatever that library hands it.
#include <arrow/api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "deltacpp/api.h"
#include "deltacpp/storage.h"
#include "log/checkpoint_reader.h"
#include "log/log_file_name.h"
#include "log/log_segment.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace deltacpp;            // NOLINT(build/namespaces)
  using namespace deltacpp::internal;  // NOLINT(build/namespaces)
  static const bool initialized = [] {
    Initialize();
    return true;
  }();
  (void)initialized;
  const std::string root = "/fuzz/table";
  const std::string name = "00000000000000000005.checkpoint.parquet";
  auto store = MakeMemoryLogStore();
  LogSegment segment;
  segment.table_root = root;
  segment.log_dir = LogDir(root);
  segment.version = 5;
  segment.checkpoint_version = 5;
  const std::string path = segment.log_dir + "/" + name;
  if (!store->PutIfAbsent(path, std::string_view(reinterpret_cast<const char*>(data), size))
           .ok()) {
    std::abort();
  }
  LogFile file;
  file.entry.path = path;
  file.entry.size = static_cast<int64_t>(size);
  file.name = *ParseLogFileName(name);
  segment.checkpoint_files.push_back(file);
  (void)ReadCheckpoint(*store, segment);
  return 0;
}
