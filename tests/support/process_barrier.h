// Plumbing for tests that fork children: a start barrier that releases them all at once and
// waiting for a child.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace deltacpp::testing {

/// A one-shot start signal for forked children: each child blocks in Wait() until the parent
/// calls Release(), which closes the only write end so every child wakes at once.
class StartBarrier {
 public:
  StartBarrier() {
    if (pipe(fds_) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      fds_[0] = fds_[1] = -1;
    }
  }
  ~StartBarrier() {
    Close(fds_[0]);
    Close(fds_[1]);
  }
  StartBarrier(const StartBarrier&) = delete;
  StartBarrier& operator=(const StartBarrier&) = delete;

  /// False when the pipe could not be made (a failure is recorded already).
  bool ok() const { return fds_[0] >= 0; }

  /// In a child: true once released (false when the pipe broke).
  bool Wait() {
    Close(fds_[1]);
    char byte;
    ssize_t n;
    do {
      n = read(fds_[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    Close(fds_[0]);
    return n == 0;
  }
  /// In the parent, after every fork.
  void Release() {
    Close(fds_[0]);
    Close(fds_[1]);
  }

 private:
  static void Close(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

/// waitpid for `pid`, retrying on EINTR: the pid waited for (-1 on error), its status in `*status`.
inline pid_t WaitChild(pid_t pid, int* status) {
  pid_t waited;
  do {
    waited = waitpid(pid, status, 0);
  } while (waited < 0 && errno == EINTR);
  return waited;
}

/// waitpid's status for `pid` (retrying on EINTR); -1 on error.
inline int WaitStatus(pid_t pid) {
  int status = 0;
  return WaitChild(pid, &status) == pid ? status : -1;
}

}  // namespace deltacpp::testing
