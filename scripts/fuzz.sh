#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz and runs each for
# FUZZ_SECONDS (default 60), seeded from the conformance corpus and tests/fuzz/seeds. What a
# target finds is kept in build-fuzz/fuzz-corpus/<target> for the next run; a crash, leak,
# timeout or sanitizer report stops the script with the input saved as
# build-fuzz/crashes/<target>-<kind>-<hash> (turn it into a regression test, see
# tests/fuzz/README.md).
#   scripts/fuzz.sh [target ...]      FUZZ_SECONDS=N  FUZZ_BUILD=dir  JOBS=N
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${FUZZ_BUILD:-build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
JOBS="${JOBS:-$(nproc)}"
ALL=(action_file schema_json checkpoint deletion_vector partition_value expression csv_input
  json_input)
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then TARGETS=("${ALL[@]}"); fi
if ! command -v clang++-16 > /dev/null; then
  echo "fuzz: clang++-16 is missing (scripts/setup.sh --fuzz installs it)" >&2
  exit 1
fi
CC=clang-16 CXX=clang++-16 cmake -S . -B "$BUILD" -G Ninja -DDELTACPP_FUZZ=ON > /dev/null
cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]/#/fuzz_}"
SEEDS="$BUILD/fuzz-seeds"
rm -rf "$SEEDS"
.venv/bin/python tests/fuzz/make_seeds.py ../shared/conformance "$SEEDS"
mkdir -p "$BUILD/crashes"
export ARROW_DEFAULT_MEMORY_POOL=system  # Arrow's buffers on malloc, where ASan sees them
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/fuzz-corpus/$target"
  mkdir -p "$corpus" "$SEEDS/$target"
  echo "fuzz: $target for ${SECONDS_EACH} s"
  # -timeout: one input taking longer is a hang; -rss_limit_mb: one using more is a bug too.
  if ! "$BUILD/fuzz/fuzz_$target" "$corpus" "$SEEDS/$target" -max_total_time="$SECONDS_EACH" \
      -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
      -artifact_prefix="$BUILD/crashes/$target-" > "$BUILD/fuzz-$target.log" 2>&1; then
    tail -n 60 "$BUILD/fuzz-$target.log" >&2
    echo "fuzz: $target FAILED; input saved under $BUILD/crashes/" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$BUILD/fuzz-$target.log" \
    | sed "s/^/fuzz: $target: /"
done
echo "fuzz: OK (${#TARGETS[@]} targets, ${SECONDS_EACH} s each)"
