#include "storage/fault_injecting_log_store.h"

#include <utility>

namespace deltacpp::internal {

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
  for (When when : {When::kBefore, When::kAfter}) {
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
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kList, p.call, dir);
  auto result = inner_->List(dir, start_after_name);
  if (p.fail) return InjectedError(Op::kList, p.call, dir);
  return result;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> FaultInjectingLogStore::Read(
    const std::string& path) {
  Planned p = NextCall(Op::kRead);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kRead, p.call, path);
  auto result = inner_->Read(path);
  if (p.fail) return InjectedError(Op::kRead, p.call, path);
  return result;
}

arrow::Status FaultInjectingLogStore::PutIfAbsent(const std::string& path,
                                                  std::string_view data) {
  Planned p = NextCall(Op::kPutIfAbsent);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kPutIfAbsent, p.call, path);
  auto status = inner_->PutIfAbsent(path, data);
  if (p.fail) return InjectedError(Op::kPutIfAbsent, p.call, path);
  return status;
}

arrow::Status FaultInjectingLogStore::PutReplace(const std::string& path,
                                                 std::string_view data) {
  Planned p = NextCall(Op::kPutReplace);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kPutReplace, p.call, path);
  auto status = inner_->PutReplace(path, data);
  if (p.fail) return InjectedError(Op::kPutReplace, p.call, path);
  return status;
}

arrow::Status FaultInjectingLogStore::Delete(const std::string& path) {
  Planned p = NextCall(Op::kDelete);
  if (p.fail && p.when == When::kBefore) return InjectedError(Op::kDelete, p.call, path);
  auto status = inner_->Delete(path);
  if (p.fail) return InjectedError(Op::kDelete, p.call, path);
  return status;
}

std::shared_ptr<arrow::fs::FileSystem> FaultInjectingLogStore::filesystem() const {
  return inner_->filesystem();
}

}  // namespace deltacpp::internal
