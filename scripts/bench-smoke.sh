#!/usr/bin/env bash
# Runs each benchmark once at a tiny size in a temporary directory. Their correctness checks
# (live-file counts, scan row counts and checksums, committed versions and row counts of the
# appends, row counts and sums after updates, deletes and merges, deltacpp and delta-rs alike)
# fail this script; the timings are not judged.
set -euo pipefail
BUILD="${1:-build}"
cd "$(dirname "$0")/.."
for bin in snapshot_load_bench scan_bench append_bench update_handle_bench; do
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
"$BUILD/bench/append_bench" --rows 20000 --runs 1 --commits 100 --files 200 --checkpoint-interval 10 \
  --appends 12 --cli-appends 2 --writers 3 --writer-commits 4 --cli "$BUILD/deltacpp" \
  --dir "$TMP/append"
"$BUILD/bench/update_handle_bench" --rows 20000 --files 4 --updates 20 --dv 1 --dir "$TMP/update-handle"
# DELETE and UPDATE against delta-rs: every run's table is checked.
.venv/bin/python bench/dml_bench.py --cli "$BUILD/deltacpp" --rows 40000 --files 4 --runs 1 \
  --dir "$TMP/dml"
# MERGE against delta-rs: every run's table and reported row counts are checked.
.venv/bin/python bench/merge_bench.py --cli "$BUILD/deltacpp" --rows 40000 --files 4 --runs 1 \
  --dir "$TMP/merge"
# VACUUM against delta-rs: every run's listing and what is left are checked.
.venv/bin/python bench/vacuum_bench.py --cli "$BUILD/deltacpp" --files 1000 --runs 1 \
  --dir "$TMP/vacuum"
# OPTIMIZE (bin-packing and Z-order) against delta-rs: every run's commit and rows are checked.
.venv/bin/python bench/optimize_bench.py --cli "$BUILD/deltacpp" --files 200 --rows 200000 \
  --runs 1 --dir "$TMP/optimize"
# Streaming: ingest, latency at a 1 s trigger, following a table; every sink is checked.
.venv/bin/python bench/stream_bench.py --cli "$BUILD/deltacpp" --files 20 --rows 100 \
  --latency-seconds 2 --follow-seconds 3 --dir "$TMP/stream"
# The side-by-side suite (W1-W6 against delta-rs; W7-W10 are the runs above): every check.
.venv/bin/python bench/suite.py --cli "$BUILD/deltacpp" --smoke --dir "$TMP/suite"
echo "bench-smoke: OK"
