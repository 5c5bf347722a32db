// Internal access to the action structs (declared publicly in deltacpp/actions.h).
#pragma once

#include "deltacpp/actions.h"

namespace deltacpp::internal {
using deltacpp::CdcFile;
using deltacpp::CheckpointMetadata;
using deltacpp::CommitInfo;
using deltacpp::DeletionVectorDescriptor;
using deltacpp::DomainMetadata;
using deltacpp::Metadata;
using deltacpp::Protocol;
using deltacpp::Sidecar;
using deltacpp::Txn;
}  // namespace deltacpp::internal
