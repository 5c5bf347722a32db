#include "deltacpp/error.h"

namespace deltacpp {

namespace {
constexpr char kTypeId[] = "deltacpp::DeltaErrorDetail";
}

const char* DeltaErrorCodeName(DeltaErrorCode code) {
  switch (code) {
    case DeltaErrorCode::kTableNotFound: return "TableNotFound";
    case DeltaErrorCode::kVersionNotFound: return "VersionNotFound";
    case DeltaErrorCode::kTimestampOutOfRange: return "TimestampOutOfRange";
    case DeltaErrorCode::kVersionExists: return "VersionExists";
    case DeltaErrorCode::kCorruptLog: return "CorruptLog";
    case DeltaErrorCode::kUnsupportedFeature: return "UnsupportedFeature";
    case DeltaErrorCode::kUnsupportedStorage: return "UnsupportedStorage";
    case DeltaErrorCode::kInvalidExpression: return "InvalidExpression";
    case DeltaErrorCode::kSchemaMismatch: return "SchemaMismatch";
    case DeltaErrorCode::kMissingFile: return "MissingFile";
    case DeltaErrorCode::kInvalidArgument: return "InvalidArgument";
    case DeltaErrorCode::kConcurrentAppend: return "ConcurrentAppend";
    case DeltaErrorCode::kConcurrentDeleteRead: return "ConcurrentDeleteRead";
    case DeltaErrorCode::kConcurrentDeleteDelete: return "ConcurrentDeleteDelete";
    case DeltaErrorCode::kMetadataChanged: return "MetadataChanged";
    case DeltaErrorCode::kProtocolChanged: return "ProtocolChanged";
    case DeltaErrorCode::kConcurrentTransaction: return "ConcurrentTransaction";
    case DeltaErrorCode::kConstraintViolation: return "ConstraintViolation";
    case DeltaErrorCode::kTableAlreadyExists: return "TableAlreadyExists";
    case DeltaErrorCode::kCommitStateUnknown: return "CommitStateUnknown";
    case DeltaErrorCode::kAppendOnlyViolation: return "AppendOnlyViolation";
  }
  return "Unknown";
}

const char* DeltaErrorDetail::type_id() const { return kTypeId; }

std::string DeltaErrorDetail::ToString() const { return DeltaErrorCodeName(code_); }

arrow::Status DeltaError(DeltaErrorCode code, std::string message) {
  arrow::StatusCode arrow_code = arrow::StatusCode::Invalid;
  switch (code) {
    case DeltaErrorCode::kTableNotFound:
    case DeltaErrorCode::kMissingFile:
      arrow_code = arrow::StatusCode::IOError;
      break;
    case DeltaErrorCode::kVersionNotFound:
      arrow_code = arrow::StatusCode::KeyError;
      break;
    case DeltaErrorCode::kVersionExists:
    case DeltaErrorCode::kTableAlreadyExists:
      arrow_code = arrow::StatusCode::AlreadyExists;
      break;
    case DeltaErrorCode::kUnsupportedFeature:
    case DeltaErrorCode::kUnsupportedStorage:
      arrow_code = arrow::StatusCode::NotImplemented;
      break;
    default:
      break;
  }
  return arrow::Status(arrow_code, std::move(message),
                       std::make_shared<DeltaErrorDetail>(code));
}

std::optional<DeltaErrorCode> GetDeltaErrorCode(const arrow::Status& status) {
  if (status.ok() || !status.detail()) return std::nullopt;
  if (std::string_view(status.detail()->type_id()) != kTypeId) return std::nullopt;
  return static_cast<const DeltaErrorDetail&>(*status.detail()).code();
}

}  // namespace deltacpp
