#!/usr/bin/env python3
"""VACUUM benchmark: deltacpp's CLI against delta-rs (`deltalake`) on the same table.

    vacuum_bench.py --cli build/deltacpp [--files N] [--runs R] [--dir PATH]

The table (generated under PATH, reused when its shape matches) has N live files and N
tombstones whose removes are 30 days old, spread over 100 partition folders; every data file
exists on disk (empty: VACUUM never opens them) and was last modified 30 days ago. The log is
version 0 (protocol, metaData), version 1 (2N adds), version 2 (N removes), no checkpoint.

    dry run   list what the table's retention (7 days) lets go: the N tombstoned files
    real      delete them (on a fresh copy of the table each run)

Both engines run FULL vacuum (listing every folder): deltacpp `vacuum [--dry-run]`, delta-rs
`DeltaTable.vacuum(dry_run=..., full=True)`. Reported per case and engine: the first run, the
median of the others (all when R < 3), CPU seconds and peak RSS of the process, and deltacpp's
time as a fraction of delta-rs's. Every run is checked: the dry run must name exactly the N
tombstoned files, and after a real run exactly the N live files must be left.
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

SHAPE_FILE = "bench-shape.txt"
PARTITIONS = 100
DAY = 24 * 3600

DELTA_RS = r"""
import sys, deltalake
t = deltalake.DeltaTable(sys.argv[1])
files = t.vacuum(dry_run=sys.argv[2] == "dry", full=True)
print(len(files))
"""


def file_path(i):
    return f"p={i % PARTITIONS}/part-{i:07d}.parquet"


def generate(root, n):
    shape = f"files={n}\n"
    if os.path.exists(os.path.join(root, SHAPE_FILE)):
        with open(os.path.join(root, SHAPE_FILE)) as f:
            if f.read() == shape:
                return False
    shutil.rmtree(root, ignore_errors=True)
    log = os.path.join(root, "_delta_log")
    os.makedirs(log)
    now_ms = int(time.time() * 1000)
    old_ms = now_ms - 30 * DAY * 1000
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "p", "type": "integer", "nullable": True, "metadata": {}}]})
    with open(os.path.join(log, "%020d.json" % 0), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": old_ms, "operation": "CREATE TABLE"}})
                + "\n")
        f.write(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}) + "\n")
        f.write(json.dumps({"metaData": {
            "id": "00000000-0000-0000-0000-000000000001", "format": {"provider": "parquet",
                                                                   "options": {}},
            "schemaString": schema, "partitionColumns": ["p"], "configuration": {},
            "createdTime": old_ms}}) + "\n")
    with open(os.path.join(log, "%020d.json" % 1), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": old_ms, "operation": "WRITE"}}) + "\n")
        for i in range(2 * n):
            f.write(json.dumps({"add": {
                "path": file_path(i), "partitionValues": {"p": str(i % PARTITIONS)},
                "size": 0, "modificationTime": old_ms, "dataChange": True}}) + "\n")
    with open(os.path.join(log, "%020d.json" % 2), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": old_ms, "operation": "DELETE"}}) + "\n")
        for i in range(n, 2 * n):
            f.write(json.dumps({"remove": {
                "path": file_path(i), "partitionValues": {"p": str(i % PARTITIONS)},
                "size": 0, "deletionTimestamp": old_ms, "dataChange": True,
                "extendedFileMetadata": True}}) + "\n")
    old = time.time() - 30 * DAY
    for k in range(PARTITIONS):
        os.makedirs(os.path.join(root, f"p={k}"))
    for i in range(2 * n):
        p = os.path.join(root, file_path(i))
        open(p, "wb").close()
        os.utime(p, (old, old))
    for k in range(PARTITIONS):
        os.utime(os.path.join(root, f"p={k}"), (old, old))
    for v in range(3):
        os.utime(os.path.join(log, "%020d.json" % v), (old, old))
    with open(os.path.join(root, SHAPE_FILE), "w") as f:
        f.write(shape)
    return True


def command(engine, cli, case, table):
    if engine == "deltacpp":
        return [cli, "vacuum", table] + (["--dry-run"] if case == "dry run" else [])
    return [sys.executable, "-c", DELTA_RS, table, "dry" if case == "dry run" else "real"]


def measure(cmd):
    probe = [sys.executable, "-c",
             "import resource, subprocess, sys, time, json\n"
             "s = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "w = time.perf_counter() - s\n"
             "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(json.dumps({'wall': w, 'cpu': u.ru_utime + u.ru_stime,"
             " 'rss': u.ru_maxrss / 1024.0, 'rc': p.returncode, 'err': p.stderr[-2000:],"
             " 'out': p.stdout[-300:], 'lines': p.stdout.count(chr(10))}))\n", *cmd]
    return json.loads(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)


def data_files(table):
    out = set()
    for dirpath, dirnames, filenames in os.walk(table):
        if "_delta_log" in dirnames:
            dirnames.remove("_delta_log")
        for name in filenames:
            if name.endswith(".parquet"):
                out.add(os.path.relpath(os.path.join(dirpath, name), table))
    return out


def check(engine, case, res, table, n):
    if res["rc"] != 0:
        sys.exit(f"vacuum_bench: {engine} {case} failed: {res['err']}")
    if case == "dry run":
        listed = res["lines"] - 1 if engine == "deltacpp" else int(res["out"].split()[-1])
        if listed != n:
            sys.exit(f"vacuum_bench: {engine} dry run named {listed} files, expected {n}")
    else:
        left = data_files(table)
        if left != {file_path(i) for i in range(n)}:
            sys.exit(f"vacuum_bench: {engine} left {len(left)} files, expected the {n} live ones")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.files < PARTITIONS or args.runs < 1:
        sys.exit(f"vacuum_bench: need --files >= {PARTITIONS}, --runs >= 1")
    cli = os.path.abspath(args.cli)
    tmp = None if args.dir else tempfile.mkdtemp(prefix="vacuum-bench.")
    root = os.path.abspath(args.dir or tmp)
    try:
        base = os.path.join(root, "data")
        scratch = os.path.join(root, "scratch")
        t0 = time.perf_counter()
        made = generate(base, args.files)
        print(f"vacuum_bench: {args.files} live files and {args.files} tombstones in "
              f"{PARTITIONS} partitions; "
              + (f"generated in {time.perf_counter() - t0:.1f} s" if made else "table reused"))
        print(f"{'case':<10}{'engine':<10}{'first s':>9}{'median s':>10}{'cpu s':>8}"
              f"{'peak MiB':>10}{'vs delta-rs':>13}")
        results = {}
        for case in ("dry run", "real"):
            for engine in ("delta-rs", "deltacpp"):
                runs = []
                for _ in range(args.runs):
                    table = base
                    if case == "real":
                        table = os.path.join(scratch, "t")
                        shutil.rmtree(table, ignore_errors=True)
                        os.makedirs(scratch, exist_ok=True)
                        # Hard links: a fresh table in a moment, and deleting a link leaves the base.
                        subprocess.run(["cp", "-al", base, table], check=True)
                    res = measure(command(engine, cli, case, table))
                    check(engine, case, res, table, args.files)
                    runs.append(res)
                walls = [r["wall"] for r in runs]
                warm = walls[1:] if len(walls) >= 3 else walls
                s = {"first_s": walls[0], "median_s": statistics.median(warm),
                     "cpu_s": statistics.median(r["cpu"] for r in runs),
                     "peak_rss_mib": max(r["rss"] for r in runs)}
                results[f"{case}/{engine}"] = s
                ratio = ""
                if engine == "deltacpp":
                    ratio = f"{s['median_s'] / results[f'{case}/delta-rs']['median_s']:.2f}x"
                print(f"{case:<10}{engine:<10}{s['first_s']:>9.2f}{s['median_s']:>10.2f}"
                      f"{s['cpu_s']:>8.2f}{s['peak_rss_mib']:>10.0f}{ratio:>13}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        print("vacuum_bench: OK (every run checked)")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
