#!/usr/bin/env python3
"""OPTIMIZE benchmark: deltacpp's CLI against delta-rs (`deltalake`) on the same tables.

    optimize_bench.py --cli build/deltacpp [--files N] [--rows M] [--runs R] [--dir PATH]

Two tables are generated under PATH (reused when their shape matches), both unpartitioned with
columns id BIGINT, x BIGINT, y BIGINT, s STRING (x and y uniform in 0..999,999):

    compact   N small files of 100 rows each (one add per file in one commit): bin-packing
              into files of at most 256 MiB
    zorder    M rows in 40 files: Z-ORDER BY (x, y) into files of at most 256 MiB

deltacpp runs `optimize [--zorder-by x,y] --target-size 268435456`, delta-rs
`DeltaTable.optimize.compact(target_size=...)` / `.z_order(["x", "y"], target_size=...)`, each
on a fresh copy of the table (hard links). Reported per case and engine: the first run, the
median of the others (all when R < 3), CPU seconds and peak RSS of the process, and deltacpp's
time as a fraction of delta-rs's. Every run is checked: the commit it made removes every file,
and the files it adds hold every row (count and sum of id, x and y, read back with pyarrow).
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
TARGET = 256 << 20
ZORDER_FILES = 40
SMALL_ROWS = 100

DELTA_RS = r"""
import sys, deltalake
t = deltalake.DeltaTable(sys.argv[1])
target = int(sys.argv[3])
if sys.argv[2] == "zorder":
    m = t.optimize.z_order(["x", "y"], target_size=target)
else:
    m = t.optimize.compact(target_size=target)
print(m["numFilesRemoved"], m["numFilesAdded"])
"""

SCHEMA = pa.schema([("id", pa.int64()), ("x", pa.int64()), ("y", pa.int64()),
                    ("s", pa.string())])


def generate(root, files, rows_per_file):
    """A table of `files` files of `rows_per_file` rows; returns (made, checksum)."""
    shape = f"files={files} rows={rows_per_file}\n"
    sums_path = os.path.join(root, "bench-sums.json")
    if os.path.exists(os.path.join(root, SHAPE_FILE)):
        with open(os.path.join(root, SHAPE_FILE)) as f:
            if f.read() == shape:
                with open(sums_path) as s:
                    return False, json.load(s)
    shutil.rmtree(root, ignore_errors=True)
    log = os.path.join(root, "_delta_log")
    os.makedirs(log)
    now_ms = int(time.time() * 1000)
    schema = json.dumps({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}}
        for n, t in (("id", "long"), ("x", "long"), ("y", "long"), ("s", "string"))]})
    adds = []
    sums = {"rows": 0, "id": 0, "x": 0, "y": 0}
    for k in range(files):
        ids = pa.array(range(k * rows_per_file, (k + 1) * rows_per_file), pa.int64())
        xs, ys = (pc.floor(pc.multiply(pc.random(rows_per_file, initializer=2 * k + j),
                                       1_000_000.0)).cast(pa.int64()) for j in (0, 1))
        ss = pc.binary_join_element_wise(
            "v", pc.cast(pc.bit_wise_and(ids, 1023), pa.string()), "")
        t = pa.table([ids, xs, ys, ss], schema=SCHEMA)
        name = f"part-{k:05d}.parquet"
        pq.write_table(t, os.path.join(root, name))
        lo = {c: pc.min_max(t[c])["min"].as_py() for c in ("id", "x", "y")}
        hi = {c: pc.min_max(t[c])["max"].as_py() for c in ("id", "x", "y")}
        stats = {"numRecords": rows_per_file, "minValues": lo, "maxValues": hi,
                 "nullCount": {"id": 0, "x": 0, "y": 0, "s": 0}}
        adds.append({"path": name, "partitionValues": {},
                     "size": os.path.getsize(os.path.join(root, name)),
                     "modificationTime": now_ms, "dataChange": True,
                     "stats": json.dumps(stats)})
        sums["rows"] += rows_per_file
        for c in ("id", "x", "y"):
            sums[c] += pc.sum(t[c]).as_py()
    with open(os.path.join(log, "%020d.json" % 0), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": now_ms, "operation": "CREATE TABLE"}})
                + "\n")
        f.write(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}) + "\n")
        f.write(json.dumps({"metaData": {
            "id": "00000000-0000-0000-0000-000000000002",
            "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
            "partitionColumns": [], "configuration": {}, "createdTime": now_ms}}) + "\n")
    with open(os.path.join(log, "%020d.json" % 1), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": now_ms, "operation": "WRITE"}}) + "\n")
        for a in adds:
            f.write(json.dumps({"add": a}) + "\n")
    with open(sums_path, "w") as f:
        json.dump(sums, f)
    with open(os.path.join(root, SHAPE_FILE), "w") as f:
        f.write(shape)
    return True, sums


def command(engine, cli, case, table):
    if engine == "deltacpp":
        return [cli, "optimize", table, "--target-size", str(TARGET)] + \
            (["--zorder-by", "x,y"] if case == "zorder" else [])
    return [sys.executable, "-c", DELTA_RS, table, case, str(TARGET)]


def measure(cmd):
    probe = [sys.executable, "-c",
             "import resource, subprocess, sys, time, json\n"
             "s = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "w = time.perf_counter() - s\n"
             "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(json.dumps({'wall': w, 'cpu': u.ru_utime + u.ru_stime,"
             " 'rss': u.ru_maxrss / 1024.0, 'rc': p.returncode, 'err': p.stderr[-2000:]}))\n",
             *cmd]
    return json.loads(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)


def check(engine, case, res, table, files, sums):
    if res["rc"] != 0:
        sys.exit(f"optimize_bench: {engine} {case} failed: {res['err']}")
    commit = os.path.join(table, "_delta_log", "%020d.json" % 2)
    if not os.path.exists(commit):
        sys.exit(f"optimize_bench: {engine} {case} committed nothing")
    removes, adds = 0, []
    with open(commit) as f:
        for line in f:
            a = json.loads(line)
            removes += "remove" in a
            if "add" in a:
                adds.append(a["add"]["path"])
    if removes != files:
        sys.exit(f"optimize_bench: {engine} {case} removed {removes} files, expected {files}")
    got = {"rows": 0, "id": 0, "x": 0, "y": 0}
    for p in adds:
        t = pq.read_table(os.path.join(table, p), columns=["id", "x", "y"])
        got["rows"] += t.num_rows
        for c in ("id", "x", "y"):
            got[c] += pc.sum(t[c]).as_py() or 0
    if got != sums:
        sys.exit(f"optimize_bench: {engine} {case} wrote {got}, expected {sums}")
    return len(adds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.files < 2 or args.rows < ZORDER_FILES or args.runs < 1:
        sys.exit(f"optimize_bench: need --files >= 2, --rows >= {ZORDER_FILES}, --runs >= 1")
    cli = os.path.abspath(args.cli)
    tmp = None if args.dir else tempfile.mkdtemp(prefix="optimize-bench.")
    root = os.path.abspath(args.dir or tmp)
    try:
        tables = {}
        for case, files, rows in (("compact", args.files, SMALL_ROWS),
                                  ("zorder", ZORDER_FILES, args.rows // ZORDER_FILES)):
            t0 = time.perf_counter()
            made, sums = generate(os.path.join(root, case), files, rows)
            tables[case] = (files, sums)
            print(f"optimize_bench: {case}: {files} files of {rows} rows; "
                  + (f"generated in {time.perf_counter() - t0:.1f} s" if made else "reused"))
        print(f"{'case':<10}{'engine':<10}{'first s':>9}{'median s':>10}{'cpu s':>8}"
              f"{'peak MiB':>10}{'files':>7}{'vs delta-rs':>13}")
        results = {}
        scratch = os.path.join(root, "scratch")
        for case in ("compact", "zorder"):
            files, sums = tables[case]
            for engine in ("delta-rs", "deltacpp"):
                runs = []
                written = 0
                for _ in range(args.runs):
                    table = os.path.join(scratch, case)
                    shutil.rmtree(table, ignore_errors=True)
                    os.makedirs(scratch, exist_ok=True)
                    subprocess.run(["cp", "-al", os.path.join(root, case), table], check=True)
                    res = measure(command(engine, cli, case, table))
                    written = check(engine, case, res, table, files, sums)
                    runs.append(res)
                walls = [r["wall"] for r in runs]
                warm = walls[1:] if len(walls) >= 3 else walls
                s = {"first_s": walls[0], "median_s": statistics.median(warm),
                     "cpu_s": statistics.median(r["cpu"] for r in runs),
                     "peak_rss_mib": max(r["rss"] for r in runs), "files_written": written}
                results[f"{case}/{engine}"] = s
                ratio = ""
                if engine == "deltacpp":
                    ratio = f"{s['median_s'] / results[f'{case}/delta-rs']['median_s']:.2f}x"
                print(f"{case:<10}{engine:<10}{s['first_s']:>9.2f}{s['median_s']:>10.2f}"
                      f"{s['cpu_s']:>8.2f}{s['peak_rss_mib']:>10.0f}{written:>7}{ratio:>13}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        print("optimize_bench: OK (every run checked)")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
