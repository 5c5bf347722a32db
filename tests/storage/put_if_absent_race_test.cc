#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

constexpr int kWriters = 8;
constexpr int kRounds = 20;
constexpr size_t kPayloadBytes = 1 << 20;

constexpr int kExitWon = 0;
constexpr int kExitLost = 1;
constexpr int kExitOtherError = 2;
constexpr int kExitBarrierBroken = 3;
constexpr int kExitSawIncompleteFile = 4;

// Every byte depends on the writer, so any mix of two payloads (or a truncated one) is detectable.
std::string Payload(int writer, int round) {
  std::string data(kPayloadBytes, '\0');
  uint32_t x = 0x9E3779B9u * static_cast<uint32_t>(writer + 1) + static_cast<uint32_t>(round);
  for (size_t i = 0; i < data.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    data[i] = static_cast<char>(x >> 24);
  }
  std::snprintf(data.data(), 32, "{\"writer\":%d,\"round\":%d}", writer, round);
  return data;
}

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs in a forked child: no gtest assertions here, only an exit code for the parent.
[[noreturn]] void RaceChild(testing::StartBarrier& barrier, const std::string& path,
                            const std::vector<std::string>& payloads, int writer) {
  // Dies instead of hanging the suite if the parent never opens the barrier.
  alarm(120);
  if (!barrier.Wait()) _exit(kExitBarrierBroken);
  auto store = MakeLocalLogStore();
  arrow::Status st = store->PutIfAbsent(path, payloads[writer]);
  if (st.ok()) _exit(kExitWon);
  if (IsDeltaError(st, DeltaErrorCode::kVersionExists)) {
    // A loser looks right away, while the winner may still be finishing: the file must already
    // be some writer's complete payload.
    auto seen = store->Read(path);
    if (!seen.ok()) _exit(kExitSawIncompleteFile);
    for (const auto& payload : payloads) {
      if ((*seen)->size() == static_cast<int64_t>(payload.size()) &&
          std::memcmp((*seen)->data(), payload.data(), payload.size()) == 0) {
        _exit(kExitLost);
      }
    }
    _exit(kExitSawIncompleteFile);
  }
  std::fprintf(stderr, "writer for %s failed: %s\n", path.c_str(), st.ToString().c_str());
  _exit(kExitOtherError);
}

TEST(PutIfAbsentRace, ForkedWritersProduceExactlyOneCompleteWinner) {
  testing::TempDir dir;
  const std::filesystem::path log = dir.path() / "table" / "_delta_log";

  for (int round = 0; round < kRounds; ++round) {
    char name[32];
    std::snprintf(name, sizeof(name), "%020d.json", round);
    const std::string path = (log / name).string();

    std::vector<std::string> payloads;
    for (int w = 0; w < kWriters; ++w) payloads.push_back(Payload(w, round));

    testing::StartBarrier barrier;
    ASSERT_TRUE(barrier.ok());
    std::vector<pid_t> children;
    for (int w = 0; w < kWriters; ++w) {
      pid_t pid = fork();
      if (pid == 0) RaceChild(barrier, path, payloads, w);
      if (pid < 0) {
        ADD_FAILURE() << "fork failed: " << std::strerror(errno);
        break;
      }
      children.push_back(pid);
    }
    // Closing the only remaining write end releases every child at once.
    barrier.Release();

    int winner = -1;
    int losers = 0;
    for (size_t w = 0; w < children.size(); ++w) {
      int status = 0;
      ASSERT_EQ(testing::WaitChild(children[w], &status), children[w]);
      ASSERT_TRUE(WIFEXITED(status)) << "writer " << w << " died, status " << status;
      const int code = WEXITSTATUS(status);
      if (code == kExitWon) {
        EXPECT_EQ(winner, -1) << "round " << round << ": writers " << winner << " and " << w
                              << " both won";
        winner = static_cast<int>(w);
      } else {
        EXPECT_EQ(code, kExitLost) << "round " << round << ": writer " << w << " exit code (2: "
                                   << "unexpected error, 3: barrier broken, 4: saw an incomplete "
                                   << "file)";
        ++losers;
      }
    }
    ASSERT_EQ(children.size(), static_cast<size_t>(kWriters));
    ASSERT_NE(winner, -1) << "round " << round << ": no writer won";
    EXPECT_EQ(losers, kWriters - 1);

    const std::string content = ReadWholeFile(path);
    ASSERT_EQ(content.size(), kPayloadBytes) << "round " << round;
    EXPECT_TRUE(content == payloads[winner])
        << "round " << round << ": file content is not exactly writer " << winner
        << "'s payload; starts with " << content.substr(0, 32);
  }

  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(log)) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kRounds));
  for (const auto& name : names) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
    EXPECT_NE(name.front(), '.') << "left behind: " << name;
  }
  auto store = MakeLocalLogStore();
  auto listed = store->List(log.string());
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), static_cast<size_t>(kRounds));
}

}  // namespace
}  // namespace deltacpp
