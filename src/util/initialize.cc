#include <arrow/compute/initialize.h>
#include <arrow/memory_pool.h>
#include <malloc.h>
#include <stdlib.h>

#include <mutex>

#include "deltacpp/api.h"

namespace deltacpp {

void Initialize() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Since Arrow 21 the compute kernels live in libarrow_compute and must be registered once.
    (void)arrow::compute::Initialize();
    // On the VMs we run on, first touch of fresh memory costs ~3 s/GiB, so freed memory is kept
    // for reuse instead of being handed back to the kernel. Arrow's default pool in the wheel is
    // mimalloc, which reads its options from the environment when it first needs them: unless
    // the user chose otherwise, tell it never to purge freed pages (measured: the snapshot
    // benchmark's cold load drops by ~half). jemalloc, if selected, gets the same by disabling
    // decay. glibc (std containers) neither trims its heap nor serves large blocks from
    // short-lived mmaps.
    setenv("MIMALLOC_PURGE_DELAY", "-1", /*overwrite=*/0);
    (void)arrow::jemalloc_set_decay_ms(-1);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  });
}

}  // namespace deltacpp
