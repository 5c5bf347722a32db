#!/usr/bin/env bash
# Runs each benchmark once at a tiny size in a temporary directory. Their correctness checks
# (live-file counts, scan row counts and checksums) fail this script; the timings are not judged.
set -euo pipefail
BUILD="${1:-build}"
cd "$(dirname "$0")/.."
for bin in snapshot_load_bench scan_bench; do
  if [[ ! -x "$BUILD/bench/$bin" ]]; then
    echo "bench-smoke: $BUILD/bench/$bin is missing; build it first" >&2
    exit 1
  fi
done
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

"$BUILD/bench/snapshot_load_bench" --commits 200 --files 2000 --checkpoint-interval 50 --runs 1 \
  --dir "$TMP/snapshot-load"
"$BUILD/bench/scan_bench" --rows 50000 --files 4 --runs 1 --dir "$TMP/scan"
echo "bench-smoke: OK"
