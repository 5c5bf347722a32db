#!/usr/bin/env bash
# Runs every test: the GoogleTest suites through ctest, then each benchmark once at a tiny size.
set -euo pipefail
BUILD="${1:-build}"
cd "$(dirname "$0")/.."
export TZ=UTC
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
if [[ -x scripts/bench-smoke.sh ]]; then scripts/bench-smoke.sh "$BUILD"; fi
