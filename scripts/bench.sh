#!/usr/bin/env bash
# Runs the benchmarks at full size and prints their figures (see docs/performance.md).
# The generated tables live under BUILD/bench-data and are reused by later runs.
#   scripts/bench.sh [BUILD]        BENCH_RUNS=N sets the number of warm runs (default 5).
set -euo pipefail
BUILD="${1:-build}"
RUNS="${BENCH_RUNS:-5}"
cd "$(dirname "$0")/.."
DATA="$BUILD/bench-data"
mkdir -p "$DATA"

model="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
load="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $(nproc) CPUs (${model:-unknown model}), load average $load"
echo
"$BUILD/bench/snapshot_load_bench" --commits 10000 --files 200000 --checkpoint-interval 100 \
  --runs "$RUNS" --dir "$DATA/snapshot-load"
echo
"$BUILD/bench/scan_bench" --rows 10000000 --files 10 --runs "$RUNS" --dir "$DATA/scan"
echo
"$BUILD/bench/append_bench" --rows 10000000 --runs "$RUNS" --commits 10000 --files 10000 \
  --checkpoint-interval 10 --appends 200 --cli-appends 50 --writers 8 --writer-commits 25 \
  --cli "$BUILD/deltacpp" --dir "$DATA/append"
echo
for dv in 1 0; do
  "$BUILD/bench/update_handle_bench" --rows 1000000 --files 40 --updates 1000 --dv "$dv" \
    --dir "$DATA/update-handle"
done
echo
.venv/bin/python bench/dml_bench.py --cli "$BUILD/deltacpp" --rows 10000000 --files 40 \
  --runs "$RUNS" --dir "$DATA/dml" --json "$DATA/dml.json"
echo
.venv/bin/python bench/merge_bench.py --cli "$BUILD/deltacpp" --rows 10000000 --files 40 \
  --runs "$RUNS" --dir "$DATA/merge" --json "$DATA/merge.json"
echo
.venv/bin/python bench/vacuum_bench.py --cli "$BUILD/deltacpp" --files 100000 \
  --runs "$RUNS" --dir "$DATA/vacuum" --json "$DATA/vacuum.json"
echo
.venv/bin/python bench/optimize_bench.py --cli "$BUILD/deltacpp" --files 10000 --rows 10000000 \
  --runs "$RUNS" --dir "$DATA/optimize" --json "$DATA/optimize.json"
echo
.venv/bin/python bench/stream_bench.py --cli "$BUILD/deltacpp" --files 200 --rows 5000 \
  --latency-seconds 20 --follow-seconds 180 --spark --dir "$DATA/stream" \
  --json "$DATA/stream.json"
