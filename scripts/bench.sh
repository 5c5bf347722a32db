#!/usr/bin/env bash
# Runs the benchmarks and prints their figures (see docs/performance.md).
#   scripts/bench.sh [BUILD] [--quick]
# --quick: only the side-by-side suite (bench/suite.py) at small sizes. Otherwise the C++
# benchmarks at full size (the library's API in process), then the suite at full size, then the
# streaming benchmark. BENCH_RUNS=N sets the number of warm runs (default 5). The generated
# tables live under BUILD/bench-data and are reused by later runs.
set -euo pipefail
BUILD="${1:-build}"
QUICK="${2:-}"
RUNS="${BENCH_RUNS:-5}"
cd "$(dirname "$0")/.."
DATA="$BUILD/bench-data"
mkdir -p "$DATA"
if [[ "$QUICK" == "--quick" ]]; then
  exec .venv/bin/python bench/suite.py --cli "$BUILD/deltacpp" --quick --runs "$RUNS" \
    --dir "$DATA/suite"
fi

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
# W1-W10 side by side with delta-rs and Spark; runs dml_bench.py, merge_bench.py,
# optimize_bench.py and vacuum_bench.py itself.
.venv/bin/python bench/suite.py --cli "$BUILD/deltacpp" --runs "$RUNS" --dir "$DATA/suite"
echo
.venv/bin/python bench/stream_bench.py --cli "$BUILD/deltacpp" --files 200 --rows 5000 \
  --latency-seconds 20 --follow-seconds 180 --spark --dir "$DATA/stream" \
  --json "$DATA/stream.json"
