#!/usr/bin/env bash
# Runs every test: the GoogleTest suites through ctest, the tutorial example program, then each
# benchmark once at a tiny size,
# then the crash torture test for 2 minutes, then the interoperability suite (tests/interop:
# Spark and delta-rs against the CLI).
set -euo pipefail
BUILD="${1:-build}"
cd "$(dirname "$0")/.."
export TZ=UTC
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
# The exam-scores tutorial through the public C++ API (examples/exam_scores.cc) checks itself.
EXAMPLE_DIR="$(mktemp -d)"
"$BUILD/exam_scores" "$EXAMPLE_DIR/scores" > /dev/null
rm -rf "$EXAMPLE_DIR"
scripts/bench-smoke.sh "$BUILD"
# Crash consistency: concurrent commands killed at random for 2 minutes (`make torture` runs it
# longer).
.venv/bin/python tests/torture/torture.py --cli "$BUILD/deltacpp" --seconds 120
# Interoperability with real peers; never skipped: a peer that cannot start fails the run.
DELTACPP_CLI="$(pwd)/$BUILD/deltacpp"
if [[ "$BUILD" = /* ]]; then DELTACPP_CLI="$BUILD/deltacpp"; fi
TZ=UTC DELTACPP_CLI="$DELTACPP_CLI" .venv/bin/python -m pytest -q tests/interop
