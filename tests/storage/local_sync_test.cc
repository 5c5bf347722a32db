// Syncing files written through an Arrow filesystem: local files and their new folders, errors
// naming the file, nothing to do elsewhere.
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "deltacpp/storage.h"
#include "storage/local_sync.h"
#include "support/temp_dir.h"

namespace deltacpp::internal {
namespace {

TEST(SyncWrittenLocalFile, SyncsAFileAndTheFoldersCreatedForIt) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "a" / "b");
  const std::string file = (dir.path() / "a" / "b" / "f.bin").string();
  std::ofstream(file) << "content";
  arrow::fs::LocalFileSystem fs;
  EXPECT_TRUE(SyncWrittenLocalFile(fs, file).ok());
  const std::vector<std::string> new_dirs = {(dir.path() / "a" / "b").string(),
                                             (dir.path() / "a").string()};
  EXPECT_TRUE(SyncWrittenLocalFile(fs, file, new_dirs).ok());
}

TEST(SyncWrittenLocalFile, MissingFileIsAnIoErrorNamingIt) {
  testing::TempDir dir;
  const std::string file = (dir.path() / "missing.bin").string();
  arrow::fs::LocalFileSystem fs;
  auto st = SyncWrittenLocalFile(fs, file);
  ASSERT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.message().find(file), std::string::npos) << st.message();
}

TEST(SyncWrittenLocalFile, OtherFilesystemsHaveNothingToSync) {
  auto fs = MakeMemoryLogStore()->filesystem();
  EXPECT_TRUE(SyncWrittenLocalFile(*fs, "/nowhere/missing.bin").ok());
}

}  // namespace
}  // namespace deltacpp::internal
