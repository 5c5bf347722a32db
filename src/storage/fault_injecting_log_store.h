// A LogStore wrapper that fails chosen calls on purpose, for testing how callers handle I/O faults.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/storage.h"

namespace deltacpp::internal {

/// Delegates every call to another LogStore, except the calls it has been told to fail, which
/// return an IOError instead. Calls are counted per operation from 1; PutIfAbsent and
/// PutIfAbsentStreaming are both Op::kPutIfAbsent (one step of a commit or checkpoint either
/// way). Thread-safe.
class FaultInjectingLogStore final : public LogStore {
 public:
  /// The operations whose calls can be failed.
  enum class Op { kList = 0, kRead, kPutIfAbsent, kPutReplace, kDelete };

  /// When an injected fault takes effect relative to the delegated call.
  enum class When {
    kBefore,  ///< the call is not delegated: nothing happens in the wrapped store
    kAfter,   ///< the call is delegated (and may succeed) but the caller still sees an error
    /// Puts-if-absent only (other operations act as kBefore): the call is delegated as a
    /// streamed put whose content fails part-way (after the first write of a streamed put, after
    /// half the bytes of a buffered one), so the wrapped store must abort it and nothing lands.
    kDuring,
  };

  /// Wraps `inner`, which must not be null.
  explicit FaultInjectingLogStore(std::shared_ptr<LogStore> inner);

  /// Makes the `nth_call`-th call (1-based, counted since construction) of `op` fail. May be
  /// called several times to fail several calls.
  void FailOn(Op op, int nth_call, When when = When::kBefore);

  /// Number of calls of `op` made so far, failed ones included.
  int calls(Op op) const;

  /// Human-readable name of an operation, e.g. "PutIfAbsent".
  static const char* OpName(Op op);

  arrow::Result<std::vector<FileEntry>> List(const std::string& dir,
                                             std::string_view start_after_name = {}) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override;
  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override;
  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override;
  arrow::Status PutReplace(const std::string& path, std::string_view data) override;
  arrow::Status Delete(const std::string& path) override;
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override;

 private:
  struct Planned {
    bool fail = false;
    When when = When::kBefore;
    int call = 0;
  };
  static constexpr size_t kOpCount = 5;

  Planned NextCall(Op op);
  static arrow::Status InjectedError(Op op, int call, const std::string& path);

  std::shared_ptr<LogStore> inner_;
  mutable std::mutex mutex_;
  std::array<int, kOpCount> calls_{};
  std::array<std::set<std::pair<int, When>>, kOpCount> failures_;
};

}  // namespace deltacpp::internal
