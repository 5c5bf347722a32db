#!/usr/bin/env bash
# Builds the C++ suites with a sanitizer in their own build directory and runs them through ctest
# (no benchmarks, no interop suite). Usage: scripts/test-sanitizer.sh address|undefined [build-dir]
set -euo pipefail
KIND="${1:?usage: $0 address|undefined [build-dir]}"
case "$KIND" in
  address) DEFAULT_BUILD=build-asan ;;
  undefined) DEFAULT_BUILD=build-ubsan ;;
  *) echo "unknown sanitizer '$KIND' (address or undefined)" >&2; exit 2 ;;
esac
BUILD="${2:-$DEFAULT_BUILD}"
JOBS="${JOBS:-$(nproc)}"
cd "$(dirname "$0")/.."
cmake -S . -B "$BUILD" -G Ninja -DDELTACPP_SANITIZE="$KIND"
# Only what ctest runs: the layer suites and the CLI binary that cli_test starts as a process.
cmake --build "$BUILD" -j "$JOBS" --target deltacpp_cli storage_test protocol_test log_test \
  expr_test scan_test txn_test write_test ops_test stream_test cli_test conformance_test
export TZ=UTC
# Arrow's default pool in the wheel is mimalloc, whose memory ASan cannot see; the system pool
# puts every Arrow buffer on malloc, so overruns of Arrow buffers by our code are reported too.
export ARROW_DEFAULT_MEMORY_POOL=system
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"
