// Fuzz target: one commit file's bytes through the JSON action parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "log/commit_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content(reinterpret_cast<const char*>(data), size);
  // Errors are expected for most inputs; a crash, hang, leak or sanitizer report is the bug.
  (void)deltacpp::internal::ParseActionFile(content, "00000000000000000007.json");
  return 0;
}
