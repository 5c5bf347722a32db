// Fuzz target: one file's bytes as a classic Parquet checkpoint, read as a snapshot load would
// (every action column normalised into the file-action layout), from a local table directory.
// Parquet itself is the wheel's library; what is fuzzed is how deltacpp takes apart whatever
// that library hands it.
#include <arrow/api.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
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
  // Checkpoints are read through the store's Arrow filesystem, so the file lives on disk: one
  // table directory per process, the checkpoint overwritten by each input.
  static const std::string* root = [] {
    Initialize();
    std::string pattern = "/tmp/deltacpp-fuzz-checkpoint.XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    if (mkdir((pattern + "/_delta_log").c_str(), 0755) != 0) std::abort();
    return new std::string(pattern);
  }();
  static const auto store = MakeLocalLogStore();
  const std::string name = "00000000000000000005.checkpoint.parquet";
  LogSegment segment;
  segment.table_root = *root;
  segment.log_dir = LogDir(*root);
  segment.version = 5;
  segment.checkpoint_version = 5;
  const std::string path = segment.log_dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  LogFile file;
  file.entry.path = path;
  file.entry.size = static_cast<int64_t>(size);
  file.name = *ParseLogFileName(name);
  segment.checkpoint_files.push_back(file);
  (void)ReadCheckpoint(*store, segment);
  return 0;
}
