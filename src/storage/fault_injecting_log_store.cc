#include "storage/fault_injecting_log_store.h"

#include <utility>

namespace deltacpp::internal {

namespace {

// Passes the first write on to the real stream, then fails: content interrupted part-way.
class InterruptedOutputStream final : public arrow::io::OutputStream {
 public:
  InterruptedOutputStream(std::shared_ptr<arrow::io::OutputStream> inner, arrow::Status error)
      : inner_(std::move(inner)), error_(std::move(error)) {}

  arrow::Status Write(const void* data, int64_t nbytes) override {
    if (closed_) return arrow::Status::Invalid("write after close");
    if (wrote_) return error_;
    wrote_ = true;
    return inner_->Write(data, nbytes);
  }
  arrow::Status Flush() override { return wrote_ ? error_ : inner_->Flush(); }
  arrow::Status Close() override {
    closed_ = true;
    return error_;
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }

 private:
  std::shared_ptr<arrow::io::OutputStream> inner_;
  arrow::Status error_;
  bool wrote_ = false;
  bool closed_ = false;
};

}  // namespace

FaultInjectingLogStore::FaultInjectingLogStore(std::shared_ptr<LogStore> inner)
    : inner_(std::move(inner)) {}

void FaultInjectingLogStore::FailOn(Op op, int nth_call, When when) {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_[static_cast<size_t>(op)].emplace(nth_call, when);
}

int FaultInjectingLogStore::calls(Op op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return calls_[static_cast<size_t>(op)];
}

const char* FaultInjectingLogStore::OpName(Op op) {
  switch (op) {
    case Op::kList: return "List";
    case Op::kRead: return "Read";
    case Op::kPutIfAbsent: return "PutIfAbsent";
    case Op::kPutReplace: return "PutReplace";
    case Op::kDelete: return "Delete";
  }
  return "Unknown";
}

FaultInjectingLogStore::Planned FaultInjectingLogStore::NextCall(Op op) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto index = static_cast<size_t>(op);
  Planned planned;
  planned.call = ++calls_[index];
  auto& failures = failures_[index];
  for (When when : {When::kBefore, When::kAfter, When::kDuring}) {
    if (failures.erase({planned.call, when}) > 0) {
      planned.fail = true;
      planned.when = when;
      break;
    }
  }
  return planned;
}

arrow::Status FaultInjectingLogStore::InjectedError(Op op, int call, const std::string& path) {
  return arrow::Status::IOError("injected fault: ", OpName(op), " call #", call, " on ", path);
}

arrow::Result<std::vector<FileEntry>> FaultInjectingLogStore::List(
    const std::string& dir, std::string_view start_after_name) {
  Planned p = NextCall(Op::kList);
  if (p.fail && p.when != When::kAfter) return InjectedError(Op::kList, p.call, dir);
  auto result = inner_->List(dir, start_after_name);
  if (p.fail) return InjectedError(Op::kList, p.call, dir);
  return result;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> FaultInjectingLogStore::Read(
    const std::string& path) {
  Planned p = NextCall(Op::kRead);
  if (p.fail && p.when != When::kAfter) return InjectedError(Op::kRead, p.call, path);
  auto result = inner_->Read(path);
  if (p.fail) return InjectedError(Op::kRead, p.call, path);
  return result;
}

arrow::Status FaultInjectingLogStore::PutIfAbsent(const std::string& path,
                                                  std::string_view data) {
  Planned p = NextCall(Op::kPutIfAbsent);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kPutIfAbsent, p.call, path);
  if (p.fail && p.when == When::kDuring) {
    const arrow::Status injected = InjectedError(Op::kPutIfAbsent, p.call, path);
    (void)inner_->PutIfAbsentStreaming(
        path, [&](const std::shared_ptr<arrow::io::OutputStream>& out) -> arrow::Status {
          ARROW_RETURN_NOT_OK(out->Write(data.data(), static_cast<int64_t>(data.size() / 2)));
          return injected;
        });
    return injected;
  }
  auto status = inner_->PutIfAbsent(path, data);
  if (p.fail) return InjectedError(Op::kPutIfAbsent, p.call, path);
  return status;
}

arrow::Status FaultInjectingLogStore::PutIfAbsentStreaming(const std::string& path,
                                                           const ContentWriter& write) {
  Planned p = NextCall(Op::kPutIfAbsent);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kPutIfAbsent, p.call, path);
  if (p.fail && p.when == When::kDuring) {
    const arrow::Status injected = InjectedError(Op::kPutIfAbsent, p.call, path);
    (void)inner_->PutIfAbsentStreaming(
        path, [&](const std::shared_ptr<arrow::io::OutputStream>& out) -> arrow::Status {
          auto interrupted = std::make_shared<InterruptedOutputStream>(out, injected);
          ARROW_RETURN_NOT_OK(write(interrupted));
          // A writer that never wrote twice still must not publish anything.
          return injected;
        });
    return injected;
  }
  auto status = inner_->PutIfAbsentStreaming(path, write);
  if (p.fail) return InjectedError(Op::kPutIfAbsent, p.call, path);
  return status;
}

arrow::Status FaultInjectingLogStore::PutReplace(const std::string& path,
                                                 std::string_view data) {
  Planned p = NextCall(Op::kPutReplace);
  if (p.fail && p.when != When::kAfter) return InjectedError(Op::kPutReplace, p.call, path);
  auto status = inner_->PutReplace(path, data);
  if (p.fail) return InjectedError(Op::kPutReplace, p.call, path);
  return status;
}

arrow::Status FaultInjectingLogStore::Delete(const std::string& path) {
  Planned p = NextCall(Op::kDelete);
  if (p.fail && p.when != When::kAfter) return InjectedError(Op::kDelete, p.call, path);
  auto status = inner_->Delete(path);
  if (p.fail) return InjectedError(Op::kDelete, p.call, path);
  return status;
}

std::shared_ptr<arrow::fs::FileSystem> FaultInjectingLogStore::filesystem() const {
  return inner_->filesystem();
}

}  // namespace deltacpp::internal
