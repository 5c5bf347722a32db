#include <arrow/compute/initialize.h>

#include <mutex>

#include "deltacpp/api.h"

namespace deltacpp {

void Initialize() {
  // Since Arrow 21 the compute kernels live in libarrow_compute and must be registered once.
  static std::once_flag once;
  std::call_once(once, [] { (void)arrow::compute::Initialize(); });
}

}  // namespace deltacpp
