#!/usr/bin/env bash
# Builds the C++ suites with a sanitizer in their own build directory and runs them through ctest
# (no benchmarks, no interop suite).
#   scripts/test-sanitizer.sh address|undefined|fuzz [build-dir]
# address, undefined: gcc with one sanitizer (build-asan, build-ubsan). fuzz: the fuzz build
# (clang 16, ASan and UBSan at once, build-fuzz), which also builds the fuzz targets, so one
# instrumented build serves the suites and `scripts/fuzz.sh` (CI's sanitizer stage).
set -euo pipefail
KIND="${1:?usage: $0 address|undefined|fuzz [build-dir]}"
EXTRA_TARGETS=()
case "$KIND" in
  address) DEFAULT_BUILD=build-asan ;;
  undefined) DEFAULT_BUILD=build-ubsan ;;
  fuzz)
    DEFAULT_BUILD=build-fuzz
    EXTRA_TARGETS=(fuzz_action_file fuzz_schema_json fuzz_checkpoint fuzz_deletion_vector
      fuzz_partition_value fuzz_expression fuzz_csv_input fuzz_json_input)
    ;;
  *) echo "unknown sanitizer '$KIND' (address, undefined or fuzz)" >&2; exit 2 ;;
esac
BUILD="${2:-$DEFAULT_BUILD}"
JOBS="${JOBS:-$(nproc)}"
cd "$(dirname "$0")/.."
if [[ "$KIND" == fuzz ]]; then
  if ! command -v clang++-16 > /dev/null; then
    echo "test-sanitizer: clang++-16 is missing (scripts/setup.sh --fuzz installs it)" >&2
    exit 1
  fi
  CC=clang-16 CXX=clang++-16 cmake -S . -B "$BUILD" -G Ninja -DDELTACPP_FUZZ=ON
else
  cmake -S . -B "$BUILD" -G Ninja -DDELTACPP_SANITIZE="$KIND"
fi
# Only what ctest runs: the layer suites and the CLI binary that cli_test starts as a process.
cmake --build "$BUILD" -j "$JOBS" --target deltacpp_cli storage_test protocol_test log_test \
  expr_test scan_test txn_test write_test ops_test stream_test cli_test conformance_test \
  "${EXTRA_TARGETS[@]}"
export TZ=UTC
# Arrow's default pool in the wheel is mimalloc, whose memory ASan cannot see; the system pool
# puts every Arrow buffer on malloc, so overruns of Arrow buffers by our code are reported too.
export ARROW_DEFAULT_MEMORY_POOL=system
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"
