#!/usr/bin/env python3
"""DELETE and UPDATE benchmark: deltacpp's CLI against delta-rs (`deltalake`) on the same data.

    dml_bench.py --cli build/deltacpp [--rows N] [--files F] [--runs R] [--dir PATH]

Two tables of the same rows are generated under PATH (reused when their shape matches): columns
id long, p int, amount double, name string; partitioned by p, one file per partition (F files
in all), one with `delta.enableDeletionVectors=true` (DV) and one without (copy-on-write, CoW).
Each operation runs R times, every time on a fresh copy of the table, as a whole process:

    delete 1%        DELETE WHERE id % 100 = 7            (matches in every file)
    update 1%        UPDATE SET amount = amount + 1 WHERE id % 100 = 7
    delete partition DELETE WHERE p = 3                   (whole files, nothing read)

deltacpp runs each on the CoW and the DV table; delta-rs on the CoW table (delta-rs 1.x writes
no deletion vectors: on the DV table it would rewrite files just the same). Reported per operation and engine: the first run, the median of the
others (all runs when R < 3), CPU seconds and peak RSS of the process, and deltacpp's time as a
fraction of delta-rs's. After every run the table is read back (row count and an
order-independent checksum of id and amount) and compared with what the generator's rows give
for that operation; a mismatch, or delta-rs and deltacpp disagreeing, fails the benchmark.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SHAPE_FILE = "bench-shape.txt"

OPERATIONS = [
    # name, kind, predicate, assignments
    ("delete 1%", "delete", "id % 100 = 7", None),
    ("update 1%", "update", "id % 100 = 7", {"amount": "amount + 1"}),
    ("delete partition", "delete", "p = 3", None),
]


def rows_of_file(k, rows, files):
    per, extra = divmod(rows, files)
    first = k * per + min(k, extra)
    return first, per + (1 if k < extra else 0)


def make_rows(first, count, partition):
    ids = pa.array(range(first, first + count), pa.int64())
    amount = pc.divide(pc.cast(pc.bit_wise_and(pc.multiply(ids, 2654435761), 0xFFFFF),
                               pa.float64()), 100.0)
    name = pc.binary_join_element_wise("n", pc.cast(pc.bit_wise_and(ids, 0xFFFF), pa.string()), "")
    return pa.table({"id": ids, "p": pa.array([partition] * count, pa.int32()),
                     "amount": amount, "name": name})


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"dml_bench: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def generate(cli, root, rows, files):
    shape = f"rows={rows} files={files} v1"
    marker = os.path.join(root, SHAPE_FILE)
    if os.path.exists(marker) and open(marker).read() == shape:
        return False
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    schema = "id long, p int, amount double, name string"
    for variant, props in (("cow", []), ("dv", ["--property", "delta.enableDeletionVectors=true"])):
        table = os.path.join(root, variant)
        run([cli, "create", table, "--schema", schema, "--partition-by", "p", *props])
        for k in range(files):
            first, count = rows_of_file(k, rows, files)
            part = os.path.join(root, "input.parquet")
            pq.write_table(make_rows(first, count, k), part)
            run([cli, "write", table, part])
            os.remove(part)
    with open(marker, "w") as f:
        f.write(shape)
    return True


def expected(rows, files, op):
    """(row count, sum of id, sum of amount in cents) of the table after `op`."""
    count = sum_id = sum_cents = 0
    for k in range(files):
        first, n = rows_of_file(k, rows, files)
        t = make_rows(first, n, k)
        ids = t["id"]
        cents = pc.cast(pc.round(pc.multiply(t["amount"], 100.0)), pa.int64())
        hit = pc.equal(pc.remainder(ids, 100), 7) if op[2].startswith("id") else \
            pc.equal(t["p"], 3)
        if op[1] == "delete":
            keep = pc.invert(hit)
            ids, cents = ids.filter(keep), cents.filter(keep)
        else:
            cents = pc.if_else(hit, pc.add(cents, 100), cents)
        count += len(ids)
        sum_id += pc.sum(ids).as_py() or 0
        sum_cents += pc.sum(cents).as_py() or 0
    return count, sum_id, sum_cents


def checksum(cli, table):
    out = os.path.join(os.path.dirname(table), "readback.parquet")
    run([cli, "read", table, "--columns", "id,amount", "--format", "parquet", "--output", out])
    t = pq.read_table(out)
    os.remove(out)
    cents = pc.cast(pc.round(pc.multiply(t["amount"], 100.0)), pa.int64())
    return t.num_rows, pc.sum(t["id"]).as_py() or 0, pc.sum(cents).as_py() or 0


DELTA_RS = r"""
import json, sys
from deltalake import DeltaTable
kind, table, predicate, updates = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
dt = DeltaTable(table)
if kind == "delete":
    m = dt.delete(predicate)
else:
    m = dt.update(updates=updates, predicate=predicate)
print(json.dumps(m))
sys.stdout.flush()
"""


def command(engine, cli, op, table):
    name, kind, predicate, updates = op
    if engine == "deltacpp":
        cmd = [cli, kind, table, "--where", predicate]
        for col, expr in (updates or {}).items():
            cmd += ["--set", f"{col} = {expr}"]
        return cmd
    return [sys.executable, "-c", DELTA_RS, kind, table, predicate, json.dumps(updates or {})]


def measure_one(engine, cli, op, base, scratch):
    table = os.path.join(scratch, "t")
    shutil.rmtree(table, ignore_errors=True)
    shutil.copytree(base, table)
    # Each process gets its own rusage: run it from a fresh intermediate so RUSAGE_CHILDREN of
    # this process is not a max over earlier children.
    probe = [sys.executable, "-c",
             "import resource, subprocess, sys, time, json\n"
             "s = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "w = time.perf_counter() - s\n"
             "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(json.dumps({'wall': w, 'cpu': u.ru_utime + u.ru_stime,"
             " 'rss': u.ru_maxrss / 1024.0, 'rc': p.returncode, 'err': p.stderr[-2000:],"
             " 'out': p.stdout[-2000:]}))\n",
             *command(engine, cli, op, table)]
    res = json.loads(run(probe))
    return res, table


def summarize(runs):
    walls = [r["wall"] for r in runs]
    warm = walls[1:] if len(walls) >= 3 else walls
    return {"first_s": walls[0], "median_s": statistics.median(warm),
            "cpu_s": statistics.median(r["cpu"] for r in runs),
            "peak_rss_mib": max(r["rss"] for r in runs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.rows < args.files * 100 or args.files < 4 or args.runs < 1:
        sys.exit("dml_bench: need --files >= 4, --rows >= 100 per file, --runs >= 1")
    cli = os.path.abspath(args.cli)
    tmp = None
    root = args.dir
    if not root:
        tmp = tempfile.mkdtemp(prefix="dml-bench.")
        root = tmp
    root = os.path.abspath(root)
    try:
        data = os.path.join(root, "data")
        scratch = os.path.join(root, "scratch")
        os.makedirs(scratch, exist_ok=True)
        t0 = time.perf_counter()
        made = generate(cli, data, args.rows, args.files)
        print(f"dml_bench: {args.rows} rows in {args.files} files, partitioned by p; "
              + (f"generated in {time.perf_counter() - t0:.1f} s" if made else "table reused"))
        results = {}
        print(f"{'operation':<18}{'engine':<18}{'first s':>9}{'median s':>10}{'cpu s':>8}"
              f"{'peak MiB':>10}{'vs delta-rs':>13}")
        for op in OPERATIONS:
            want = expected(args.rows, args.files, op)
            rs_median = None
            for engine, variant in (("delta-rs", "cow"), ("deltacpp", "cow"), ("deltacpp", "dv")):
                runs = []
                for _ in range(args.runs):
                    res, table = measure_one(engine, cli, op,
                                             os.path.join(data, variant), scratch)
                    if res["rc"] != 0:
                        sys.exit(f"dml_bench: {engine} {op[0]} on {variant} failed:\n"
                                 f"{res['err']}")
                    got = checksum(cli, table)
                    if got != want:
                        sys.exit(f"dml_bench: {engine} {op[0]} on {variant}: table has "
                                 f"(rows, sum id, sum cents) {got}, expected {want}")
                    runs.append(res)
                s = summarize(runs)
                label = f"{engine} {variant.upper()}"
                if engine == "delta-rs":
                    rs_median = s["median_s"]
                    ratio = ""
                else:
                    ratio = f"{s['median_s'] / rs_median:.2f}x"
                    s["fraction_of_delta_rs"] = s["median_s"] / rs_median
                results[f"{op[0]} / {label}"] = s
                print(f"{op[0]:<18}{label:<18}{s['first_s']:>9.2f}{s['median_s']:>10.2f}"
                      f"{s['cpu_s']:>8.2f}{s['peak_rss_mib']:>10.0f}{ratio:>13}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"rows": args.rows, "files": args.files, "runs": args.runs,
                           "results": results}, f, indent=2)
        print("dml_bench: OK (every run's table checked)")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
