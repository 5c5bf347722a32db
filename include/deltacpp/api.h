// Umbrella header: everything a deltacpp user needs.
#pragma once

#include "deltacpp/actions.h"
#include "deltacpp/error.h"
#include "deltacpp/scan.h"
#include "deltacpp/schema.h"
#include "deltacpp/snapshot.h"
#include "deltacpp/storage.h"
#include "deltacpp/table.h"
#include "deltacpp/table_changes.h"
#include "deltacpp/version.h"

namespace deltacpp {
/// Registers Arrow's compute kernels (idempotent; the library calls it itself where needed).
void Initialize();
}  // namespace deltacpp
