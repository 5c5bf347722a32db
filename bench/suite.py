#!/usr/bin/env python3
"""Side-by-side benchmark suite: deltacpp (CLI processes), delta-rs (`deltalake`) and Spark +
delta-spark (local[2]) on the same deterministic data, against this machine's lower bound.

    suite.py --cli build/deltacpp [--quick] [--runs R] [--no-spark] [--dir PATH]
             [--results bench/results] [--doc docs/performance.md]

Steps:
  calibration  what the machine does with Arrow alone on both cores: a raw Parquet write and
               read of the bulk input, JSON parsing of commit-shaped lines, file create + rename,
               the start of a process.
  W1  bulk write of N rows from a Parquet file into a new table, flat and partitioned
  W2  one-row append to a table of C commits, one process per append (Spark: in its session)
  W3  snapshot load (describe) and file listing on a log of C commits holding F files
  W5  full scan: deltacpp to Parquet and to CSV; delta-rs into memory; Spark aggregate
  W6  selective scans: one partition of the partitioned table; an id range (stats skipping)
  W7-W10  DELETE/UPDATE, MERGE, OPTIMIZE/Z-ORDER, VACUUM: the figures of dml_bench.py,
          merge_bench.py, optimize_bench.py and vacuum_bench.py, run at the suite's size.

Every measured deltacpp and delta-rs run is a whole process (wall time, CPU seconds and peak
RSS from the kernel's accounting of that process); delta-rs's own figure is the time of the
operation inside its process (its interpreter start-up is not counted against it); Spark's is
the time of the operation in one long-lived session (its JVM's CPU seconds and peak RSS).
Each engine runs once unreported-cold ("first") and then R warm times (median). Every run's
result is checked: a table's row count and order-independent checksum (sum of ids, total
length of the names) must equal the input's, whoever wrote or read it; a mismatch fails the
suite. Results go to RESULTS/<date>.json and, rendered as a table and a PNG chart of the
ratios, between the suite markers of DOC.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
PARTS = 10  # values of the partition column `part`


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------
# A child measured from a fresh intermediate, so RUSAGE_CHILDREN is that one process's.
PROBE = ("import json, resource, subprocess, sys, time\n"
         "s = time.perf_counter()\n"
         "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
         "w = time.perf_counter() - s\n"
         "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
         "print(json.dumps({'wall': w, 'cpu': u.ru_utime + u.ru_stime, 'rss': u.ru_maxrss / 1024,"
         " 'rc': p.returncode, 'out': p.stdout[-20000:], 'err': p.stderr[-3000:]}))\n")


def run_process(cmd: list[str]) -> dict:
    p = subprocess.run([sys.executable, "-c", PROBE, *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"suite: the probe failed: {p.stderr[-2000:]}")
    res = json.loads(p.stdout)
    if res["rc"] != 0:
        sys.exit(f"suite: {' '.join(cmd)} failed (exit {res['rc']}):\n{res['err']}")
    return res


def summarize(runs: list[dict], key="wall") -> dict:
    times = [r[key] for r in runs]
    warm = times[1:]
    return {"first_s": times[0], "median_s": statistics.median(warm), "runs_s": warm,
            "cpu_s": statistics.median(r["cpu"] for r in runs[1:]),
            "peak_rss_mib": max(r["rss"] for r in runs)}


def checksum_of(table: pa.Table) -> list[int]:
    """(rows, sum of id, total length of name): independent of row order and of engine."""
    ids = table.column("id")
    names = table.column("name")
    return [table.num_rows, int(pc.sum(ids).as_py() or 0),
            int(pc.sum(pc.utf8_length(names)).as_py() or 0)]


# delta-rs: one process per run; prints the operation's own time and what it produced.
DELTA_RS = r"""
import json, os, sys, time
import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as ds, pyarrow.parquet as pq
import deltalake
op, args = sys.argv[1], json.loads(sys.argv[2])
out = {}
s = time.perf_counter()
if op == "write":
    t = pq.read_table(args["input"])
    deltalake.write_deltalake(args["table"], t, partition_by=args.get("partition_by"))
elif op == "append":
    deltalake.write_deltalake(args["table"], pa.table(
        {"id": pa.array([args["id"]], pa.int64()), "name": pa.array([f"n{args['id']}"]),
         "part": pa.array([args["id"] % 10], pa.int32())}), mode="append")
elif op == "load":
    dt = deltalake.DeltaTable(args["table"])
    out["version"] = dt.version()
elif op == "files":
    out["files"] = len(deltalake.DeltaTable(args["table"]).file_uris())
elif op == "scan":
    dt = deltalake.DeltaTable(args["table"])
    if args.get("partition"):
        t = dt.to_pyarrow_table(partitions=[("part", "=", str(args["partition"]))])
    elif args.get("id_range"):
        lo, hi = args["id_range"]
        t = dt.to_pyarrow_dataset().to_table(filter=(ds.field("id") >= lo) & (ds.field("id") < hi))
    else:
        t = dt.to_pyarrow_table()
out["seconds"] = time.perf_counter() - s
if op == "scan":
    out["checksum"] = [t.num_rows, int(pc.sum(t.column("id")).as_py() or 0),
                       int(pc.sum(pc.utf8_length(t.column("name"))).as_py() or 0)]
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)  # deltalake's process can abort while exiting after a read
"""


def delta_rs(op: str, **args) -> dict:
    res = run_process([sys.executable, "-c", DELTA_RS, op, json.dumps(args)])
    res.update(json.loads(res["out"].strip().splitlines()[-1]))
    res["op"] = res["seconds"]
    return res


class Spark:
    """One local[2] session; each operation timed inside it."""

    def __init__(self):
        from importlib.metadata import version
        from pyspark.sql import SparkSession
        t0 = time.perf_counter()
        self.spark = (
            SparkSession.builder.master("local[2]").appName("deltacpp-bench")
            .config("spark.jars.packages", f"io.delta:delta-spark_2.13:{version('delta-spark')}")
            .config("spark.jars.ivy", str(Path.home() / ".ivy2"))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "4g").getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        self.start_s = time.perf_counter() - t0
        self.pid = int(self.spark.sparkContext._jvm.ProcessHandle.current().pid())

    def _cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _rss(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def run(self, fn) -> dict:
        c0, s = self._cpu(), time.perf_counter()
        value = fn(self.spark)
        wall = time.perf_counter() - s
        return {"wall": wall, "op": wall, "cpu": self._cpu() - c0, "rss": self._rss(),
                "value": value}

    def stop(self):
        self.spark.stop()


def spark_checksum(df) -> list[int]:
    from pyspark.sql import functions as F
    r = df.agg(F.count(F.lit(1)), F.sum("id"), F.sum(F.length("name"))).collect()[0]
    return [int(r[0]), int(r[1] or 0), int(r[2] or 0)]


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------
def bulk_input(path: Path, rows: int) -> list[int]:
    """N rows: id long, amount double, name string, part int, event_time timestamp."""
    if not path.exists():
        ids = pa.array(range(rows), pa.int64())
        amount = pc.divide(pc.cast(pc.bit_wise_and(pc.multiply(ids, 2654435761), 0xFFFFFF),
                                   pa.float64()), 1024.0)
        name = pc.binary_join_element_wise(
            "name-", pc.cast(pc.bit_wise_and(pc.multiply(ids, 40503), 0x1FFFF), pa.string()), "")
        part = pc.cast(pc.bit_wise_and(pc.multiply(ids, 7), 0xFFFF), pa.int32())
        part = pc.cast(pc.divide(pc.multiply(part, PARTS), 0x10000), pa.int32())
        times = pc.cast(pc.multiply(ids, 1000), pa.timestamp("us", tz="UTC"))
        t = pa.table({"id": ids, "amount": amount, "name": name, "part": part,
                      "event_time": times})
        tmp = path.with_suffix(".tmp")
        pq.write_table(t, tmp, row_group_size=131072)
        tmp.rename(path)
    return checksum_of(pq.read_table(path, columns=["id", "name"]))


def cpp_table_checksum(cli: str, table: Path, scratch: Path, where=None) -> list[int]:
    out = scratch / "check.parquet"
    cmd = [cli, "read", str(table), "--format", "parquet", "--output", str(out),
           "--columns", "id,name"]
    if where:
        cmd += ["--where", where]
    subprocess.run(cmd, check=True, capture_output=True)
    got = checksum_of(pq.read_table(out))
    out.unlink()
    return got


BASE_MS = 1_700_000_000_000  # commit timestamps of the generated tables


def commit_lines(version: int, table_id: str, partition_columns: list[str]) -> list[str]:
    """The commitInfo of VERSION and, for version 0, the protocol and metaData of a table of
    id long, name string, part int."""
    lines = [json.dumps({"commitInfo": {"timestamp": BASE_MS + version, "operation": "WRITE"}})]
    if version == 0:
        schema = json.dumps({"type": "struct", "fields": [
            {"name": n, "type": t, "nullable": True, "metadata": {}}
            for n, t in (("id", "long"), ("name", "string"), ("part", "integer"))]})
        lines.append(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}))
        lines.append(json.dumps({"metaData": {
            "id": table_id, "format": {"provider": "parquet", "options": {}},
            "schemaString": schema, "partitionColumns": partition_columns, "configuration": {},
            "createdTime": BASE_MS}}))
    return lines


def log_table(root: Path, commits: int, files: int, cli: str) -> None:
    """A table of COMMITS commits adding FILES files in all (data files not written: loading a
    snapshot and listing its files never opens them), checkpointed 10 commits before the end."""
    if (root / "_delta_log" / "shape.json").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    log = root / "_delta_log"
    log.mkdir(parents=True)
    per, extra = divmod(files, commits)
    n = 0
    for v in range(commits):
        lines = commit_lines(v, "00000000-0000-0000-0000-0000000000b3", ["part"])
        for _ in range(per + (1 if v < extra else 0)):
            stats = json.dumps({"numRecords": 100, "minValues": {"id": n * 100, "name": "a"},
                                "maxValues": {"id": n * 100 + 99, "name": "z"},
                                "nullCount": {"id": 0, "name": 0}})
            lines.append(json.dumps({"add": {
                "path": f"part={n % PARTS}/f-{n:08d}.parquet",
                "partitionValues": {"part": str(n % PARTS)}, "size": 4096,
                "modificationTime": BASE_MS + v, "dataChange": True, "stats": stats}}))
            n += 1
        (log / f"{v:020d}.json").write_text("\n".join(lines) + "\n")
        if v == commits - 11:
            subprocess.run([cli, "checkpoint", str(root)], check=True, capture_output=True)
    (log / "shape.json").write_text(json.dumps({"commits": commits, "files": files}))


def appendable_table(root: Path, commits: int) -> None:
    """COMMITS commits of one row each (id = version), each in a data file of its own."""
    if (root / "shape.json").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for v in range(commits):
        name = f"part-{v:05d}.parquet"
        pq.write_table(pa.table({"id": pa.array([v], pa.int64()), "name": [f"n{v}"],
                                 "part": pa.array([v % PARTS], pa.int32())}), root / name)
        lines = commit_lines(v, "00000000-0000-0000-0000-0000000000a2", [])
        lines.append(json.dumps({"add": {
            "path": name, "partitionValues": {}, "size": (root / name).stat().st_size,
            "modificationTime": BASE_MS + v, "dataChange": True,
            "stats": json.dumps({"numRecords": 1, "minValues": {"id": v},
                                 "maxValues": {"id": v}, "nullCount": {"id": 0}})}}))
        (log / f"{v:020d}.json").write_text("\n".join(lines) + "\n")
    (root / "shape.json").write_text(json.dumps({"commits": commits}))


# ---------------------------------------------------------------------------------------------
# Calibration: this machine's lower bounds
# ---------------------------------------------------------------------------------------------
def best_of(fn, runs=3) -> float:
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        fn()
        times.append(time.perf_counter() - s)
    return min(times)


def calibrate(work: Path, input_path: Path, log_root: Path) -> dict:
    out = {}
    table = pq.read_table(input_path)
    out["parquet_read_s"] = best_of(lambda: pq.read_table(input_path, use_threads=True))
    target = work / "calibration-write"

    def write():
        shutil.rmtree(target, ignore_errors=True)
        per_file = max(1, (table.num_rows + 1) // 2)
        ds.write_dataset(table, target, format="parquet", use_threads=True,
                         max_rows_per_group=min(1 << 20, per_file), max_rows_per_file=per_file,
                         file_options=ds.ParquetFileFormat().make_write_options(
                             compression="snappy"))
    out["parquet_write_s"] = best_of(write)
    shutil.rmtree(target, ignore_errors=True)
    # JSON: every commit of the W3 log, parsed by Arrow's reader on both cores.
    import pyarrow.json as pj
    log = log_root / "_delta_log"
    blob = work / "calibration-log.json"
    with open(blob, "wb") as f:
        for p in sorted(log.glob("*.json")):
            if p.name != "shape.json":
                f.write(p.read_bytes())
    out["json_bytes"] = blob.stat().st_size
    out["json_parse_s"] = best_of(lambda: pj.read_json(blob, pj.ReadOptions(use_threads=True)))
    blob.unlink()
    # The checkpoint of the W3 log read by Arrow: a snapshot load's floor.
    cps = sorted(log.glob("*.checkpoint*.parquet"))
    out["checkpoint_read_s"] = best_of(lambda: [pq.read_table(p) for p in cps]) if cps else 0.0
    # Create, write, fsync and rename one small file: a commit's floor.
    d = work / "calibration-files"
    d.mkdir(exist_ok=True)

    def create_rename():
        for i in range(50):
            tmp, final = d / f".{i}.tmp", d / f"{i}.json"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, b"{}\n" * 20)
            os.fsync(fd)
            os.close(fd)
            os.rename(tmp, final)
    out["create_rename_s"] = best_of(create_rename) / 50
    shutil.rmtree(d)
    out["process_start_s"] = min(run_process(["/bin/true"])["wall"] for _ in range(5))
    return out


# ---------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------
class Suite:
    def __init__(self, args):
        self.args = args
        self.cli = os.path.abspath(args.cli)
        self.runs = args.runs
        self.work = Path(args.dir).resolve()
        self.scratch = self.work / "scratch"
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.spark = None
        self.results = []

    def record(self, wid, name, engines: dict, lower_bound_s=None, lower_bound=None):
        entry = {"id": wid, "name": name, "engines": engines}
        cpp = engines.get("deltacpp")
        ratios = {}
        if cpp:
            for peer in ("delta-rs", "spark"):
                if peer in engines and engines[peer].get("median_s"):
                    ratios[f"vs {peer}"] = cpp["median_s"] / engines[peer]["median_s"]
            if lower_bound_s:
                entry["lower_bound_s"] = lower_bound_s
                entry["lower_bound"] = lower_bound
                ratios["of lower bound"] = lower_bound_s / cpp["median_s"]
        entry["ratios"] = ratios
        self.results.append(entry)
        line = "  ".join(f"{e} {v['median_s']:.3f}s" for e, v in engines.items())
        rat = "  ".join(f"{k} {v:.2f}" for k, v in ratios.items())
        print(f"{wid:<4}{name:<46}{line}   [{rat}]", flush=True)

    def repeat(self, fn, runs=None) -> list[dict]:
        return [fn(i) for i in range((runs or self.runs) + 1)]

    def spark_session(self):
        if self.args.no_spark:
            return None
        if self.spark is None:
            self.spark = Spark()
            print(f"     (Spark session started in {self.spark.start_s:.1f} s)", flush=True)
        return self.spark

    def check(self, what, got, want):
        if got != want:
            sys.exit(f"suite: {what}: checksum (rows, sum id, name length) {got}, "
                     f"expected {want}")

    # W1 ------------------------------------------------------------------------------------
    def bulk_write(self, input_path: Path, want, calib):
        for label, parts in (("bulk write, flat", None), ("bulk write, partitioned", "part")):
            engines = {}
            target = self.scratch / "w1"

            def cpp(_):
                shutil.rmtree(target, ignore_errors=True)
                cmd = [self.cli, "write", str(target), str(input_path)]
                if parts:
                    cmd += ["--partition-by", parts]
                r = run_process(cmd)
                self.check(f"W1 {label} deltacpp", cpp_table_checksum(
                    self.cli, target, self.scratch), want)
                return r
            engines["deltacpp"] = summarize(self.repeat(cpp))

            def rs(_):
                shutil.rmtree(target, ignore_errors=True)
                r = delta_rs("write", table=str(target), input=str(input_path),
                             partition_by=[parts] if parts else None)
                self.check(f"W1 {label} delta-rs", cpp_table_checksum(
                    self.cli, target, self.scratch), want)
                return r
            engines["delta-rs"] = summarize(self.repeat(rs), key="op")
            spark = self.spark_session()
            if spark:
                def sp(_):
                    shutil.rmtree(target, ignore_errors=True)

                    def op(s):
                        w = s.read.parquet(str(input_path)).write.format("delta")
                        (w.partitionBy(parts) if parts else w).save(str(target))
                    r = spark.run(op)
                    self.check(f"W1 {label} Spark", cpp_table_checksum(
                        self.cli, target, self.scratch), want)
                    return r
                engines["spark"] = summarize(self.repeat(sp))
            self.record("W1", label, engines, calib["parquet_read_s"] + calib["parquet_write_s"],
                        "Arrow: read the input + write it on both cores")
            if not parts:
                shutil.rmtree(self.work / "flat", ignore_errors=True)
                shutil.move(str(target), self.work / "flat")
            else:
                shutil.rmtree(self.work / "partitioned", ignore_errors=True)
                shutil.move(str(target), self.work / "partitioned")

    # W2 ------------------------------------------------------------------------------------
    def appends(self, commits: int, calib):
        base = self.work / f"append-{commits}"
        appendable_table(base, commits)
        engines = {}
        for engine in ("deltacpp", "delta-rs", "spark"):
            spark = self.spark_session() if engine == "spark" else None
            if engine == "spark" and not spark:
                continue
            t = self.scratch / "w2"
            shutil.rmtree(t, ignore_errors=True)
            shutil.copytree(base, t)
            ids = []

            def one(i):
                row_id = 1_000_000 + i
                ids.append(row_id)
                if engine == "deltacpp":
                    row = self.scratch / "row.json"
                    row.write_text(json.dumps({"id": row_id, "name": f"n{row_id}",
                                               "part": row_id % 10}) + "\n")
                    return run_process([self.cli, "write", str(t), str(row), "--mode", "append"])
                if engine == "delta-rs":
                    return delta_rs("append", table=str(t), id=row_id)
                return spark.run(lambda s: s.createDataFrame(
                    [(row_id, f"n{row_id}", row_id % 10)], "id long, name string, part int")
                    .write.format("delta").mode("append").save(str(t)))
            runs = self.repeat(one)
            want = [commits + len(ids), sum(range(commits)) + sum(ids),
                    sum(len(f"n{v}") for v in range(commits)) + sum(len(f"n{v}") for v in ids)]
            self.check(f"W2 {engine}", cpp_table_checksum(self.cli, t, self.scratch), want)
            engines[engine] = summarize(runs, key="wall" if engine == "deltacpp" else "op")
        self.record("W2", f"one-row append, {commits} commits", engines,
                    calib["process_start_s"] + calib["create_rename_s"],
                    "start a process + create, fsync and rename a file")

    # W3 ------------------------------------------------------------------------------------
    def snapshot(self, commits: int, files: int, calib):
        root = self.work / f"log-{commits}-{files}"
        t0 = time.perf_counter()
        log_table(root, commits, files, self.cli)
        print(f"     (log of {commits} commits, {files} files ready in "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)
        lb = calib.get(f"checkpoint_read_s-{files}")
        for label, cpp_cmd, rs_op in (("describe", "describe", "load"),
                                      ("file listing", "files", "files")):
            engines = {}
            # The listing is counted, not kept in the probe's memory.
            cmd = ([self.cli, "describe", str(root)] if cpp_cmd == "describe" else
                   ["sh", "-c", f"'{self.cli}' files '{root}' | wc -l"])

            def cpp(_):
                r = run_process(cmd)
                if cpp_cmd == "files" and int(r["out"].strip()) < files:
                    sys.exit(f"suite: W3 deltacpp listed {r['out'].strip()} lines for {files} "
                             "files")
                return r
            engines["deltacpp"] = summarize(self.repeat(cpp))

            def rs(_):
                r = delta_rs(rs_op, table=str(root))
                if rs_op == "files" and r["files"] != files:
                    sys.exit(f"suite: W3 delta-rs listed {r['files']} of {files} files")
                if rs_op == "load" and r["version"] != commits - 1:
                    sys.exit(f"suite: W3 delta-rs loaded version {r['version']}")
                return r
            engines["delta-rs"] = summarize(self.repeat(rs), key="op")
            spark = self.spark_session()
            if spark and label == "describe":
                def sp(_):
                    r = spark.run(lambda s: s.sql(
                        f"DESCRIBE DETAIL delta.`{root}`").collect()[0]["numFiles"])
                    if r["value"] != files:
                        sys.exit(f"suite: W3 Spark counted {r['value']} of {files} files")
                    return r
                engines["spark"] = summarize(self.repeat(sp))
            self.record("W3", f"{label}, {commits} commits, {files} files", engines, lb,
                        "Arrow: read the checkpoint" if lb else None)

    # W5 / W6 -------------------------------------------------------------------------------
    def scans(self, want, calib):
        flat, partitioned = self.work / "flat", self.work / "partitioned"
        out = self.scratch / "out"
        for fmt in ("parquet", "csv"):
            def cpp(_):
                r = run_process([self.cli, "read", str(flat), "--format", fmt, "--output",
                                 str(out)])
                if fmt == "parquet":
                    self.check("W5 deltacpp read", checksum_of(pq.read_table(
                        out, columns=["id", "name"])), want)
                else:
                    with open(out, "rb") as f:
                        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24),
                                                                        b""))
                    if lines != want[0] + 1:
                        sys.exit(f"suite: W5 CSV has {lines} lines for {want[0]} rows")
                out.unlink()
                return r
            engines = {"deltacpp": summarize(self.repeat(cpp))}
            if fmt == "parquet":
                def rs(_):
                    r = delta_rs("scan", table=str(flat))
                    self.check("W5 delta-rs scan", r["checksum"], want)
                    return r
                engines["delta-rs"] = summarize(self.repeat(rs), key="op")
                spark = self.spark_session()
                if spark:
                    def sp(_):
                        r = spark.run(lambda s: spark_checksum(
                            s.read.format("delta").load(str(flat))))
                        self.check("W5 Spark scan", r["value"], want)
                        return r
                    engines["spark"] = summarize(self.repeat(sp))
            self.record("W5", f"full scan, CLI to {fmt}", engines,
                        calib["parquet_read_s"] if fmt == "parquet" else None,
                        "Arrow: read the data files" if fmt == "parquet" else None)
        rows = want[0]
        lo, hi = rows // 2, rows // 2 + 10_000
        for label, table, where, rs_args in (
                ("selective scan, one partition", partitioned, "part = 3", {"partition": 3}),
                ("selective scan, id range (stats)", flat, f"id >= {lo} AND id < {hi}",
                 {"id_range": [lo, hi]})):
            sel = cpp_table_checksum(self.cli, table, self.scratch, where)

            def cpp(_):
                r = run_process([self.cli, "read", str(table), "--where", where, "--format",
                                 "parquet", "--output", str(out)])
                self.check(f"W6 {label} deltacpp", checksum_of(pq.read_table(
                    out, columns=["id", "name"])), sel)
                out.unlink()
                return r
            engines = {"deltacpp": summarize(self.repeat(cpp))}

            def rs(_):
                r = delta_rs("scan", table=str(table), **rs_args)
                self.check(f"W6 {label} delta-rs", r["checksum"], sel)
                return r
            engines["delta-rs"] = summarize(self.repeat(rs), key="op")
            spark = self.spark_session()
            if spark:
                def sp(_):
                    r = spark.run(lambda s: spark_checksum(
                        s.read.format("delta").load(str(table)).where(where)))
                    self.check(f"W6 {label} Spark", r["value"], sel)
                    return r
                engines["spark"] = summarize(self.repeat(sp))
            self.record("W6", label, engines)

    # W7-W10: the operation benchmarks ------------------------------------------------------
    def operation_benchmarks(self, sizes):
        for wid, script, extra in (
                ("W7", "dml_bench.py", ["--rows", str(sizes["dml_rows"]), "--files", "40"]),
                ("W8", "merge_bench.py", ["--rows", str(sizes["dml_rows"]), "--files", "40"]),
                ("W9", "optimize_bench.py", ["--files", str(sizes["optimize_files"]),
                                             "--rows", str(sizes["dml_rows"])]),
                ("W10", "vacuum_bench.py", ["--files", str(sizes["vacuum_files"])])):
            out = self.work / f"{script}.json"
            cmd = [sys.executable, str(HERE / script), "--cli", self.cli, "--runs",
                   str(self.runs), "--dir", str(self.work / script.removesuffix(".py")),
                   "--json", str(out), *extra]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"suite: {script} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
            data = json.loads(out.read_text())
            figures = data.get("results", data)
            ops: dict[str, dict] = {}
            for key, value in figures.items():
                if not isinstance(value, dict) or "median_s" not in value:
                    continue
                op, _, engine = key.replace(" / ", "/").rpartition("/")
                ops.setdefault(op or script, {})[engine] = value
            for op, engines in ops.items():
                # One row per deltacpp variant (e.g. CoW and DV), each against the same peers.
                variants = [e for e in engines if e.startswith("deltacpp")]
                peers = {("delta-rs" if e.startswith("delta-rs") else e): v
                         for e, v in engines.items() if not e.startswith("deltacpp")}
                for v in variants:
                    variant = v.removeprefix("deltacpp").strip()
                    label = f"{op} ({variant})" if variant and len(variants) > 1 else op
                    self.record(wid, label, {"deltacpp": engines[v], **peers})


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------
def markers(quick: bool) -> tuple[str, str]:
    mode = "quick" if quick else "full"
    return f"<!-- bench-suite-{mode}:begin -->", f"<!-- bench-suite-{mode}:end -->"


def render_markdown(doc: dict, png_name: str, json_name: str) -> str:
    c = doc["calibration"]
    begin, end = markers(doc["quick"])
    lines = [begin, "",
             f"Generated by `make bench{' QUICK=1' if doc['quick'] else ''}` on {doc['date']} "
             f"({doc['machine']}); sizes: {doc['sizes_text']}. Times are medians of "
             f"{doc['runs']} warm runs in seconds (first run apart); a ratio below 1 means "
             "deltacpp takes less time than the peer; \"of lower bound\" is the lower bound's "
             "time over deltacpp's (1 = as fast as Arrow alone on this machine). Raw figures: "
             f"`bench/results/{json_name}`.", "",
             f"Calibration: Parquet read of the bulk input {c['parquet_read_s']:.3f} s, write "
             f"{c['parquet_write_s']:.3f} s (Arrow, both cores); JSON parse "
             f"{c['json_bytes'] / c['json_parse_s'] / 1e6:.0f} MB/s; create + fsync + rename "
             f"{c['create_rename_s'] * 1e3:.2f} ms; process start "
             f"{c['process_start_s'] * 1e3:.1f} ms.", "",
             "| | workload | deltacpp (first) | CPU s | peak MiB | delta-rs | Spark | vs delta-rs "
             "| vs Spark | of lower bound |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def cell(e):
        return f"{e['median_s']:.3f}" if e else "—"
    for w in doc["workloads"]:
        e, r = w["engines"], w["ratios"]
        cpp = e.get("deltacpp")
        lines.append(
            f"| {w['id']} | {w['name']} | {cpp['median_s']:.3f} ({cpp['first_s']:.3f}) | "
            f"{cpp['cpu_s']:.2f} | {cpp['peak_rss_mib']:.0f} | {cell(e.get('delta-rs'))} | "
            f"{cell(e.get('spark'))} | "
            + " | ".join(f"{r[k]:.2f}" if k in r else "—"
                         for k in ("vs delta-rs", "vs spark", "of lower bound")) + " |")
    skipped = [w for w in ("W1", "W2", "W3", "W5", "W6", "W7-W10")
               if w not in doc.get("workloads_run", [w])]
    if skipped:
        lines += ["", f"Not run in this pass: {', '.join(skipped)} (`--workloads`); W7-W10 at full "
                  "size: the sections on DELETE and UPDATE, MERGE, VACUUM and OPTIMIZE below."]
    lines += ["", f"![deltacpp's time over each peer's, per workload]({png_name})", "", end]
    return "\n".join(lines)


def render_png(doc: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [w for w in doc["workloads"] if w["ratios"].get("vs delta-rs") or
            w["ratios"].get("vs spark")]
    labels = [f"{w['id']} {w['name']}" for w in rows]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(rows) + 1.5))
    y = range(len(rows))
    for k, (peer, color) in enumerate((("vs delta-rs", "#d9822b"), ("vs spark", "#3b7dd8"))):
        vals = [w["ratios"].get(peer, 0) for w in rows]
        ax.barh([i + (k - 0.5) * 0.4 for i in y], vals, height=0.4, color=color,
                label=f"deltacpp time / {peer.removeprefix('vs ')} time")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ratio (log scale; left of 1 = deltacpp faster)")
    ax.set_title(f"deltacpp against its peers, {doc['date']}"
                 f"{' (quick sizes)' if doc['quick'] else ''}")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def update_doc(doc_path: Path, block: str, quick: bool) -> None:
    begin, end = markers(quick)
    text = doc_path.read_text()
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n## Side-by-side suite (`make bench`)\n\n" + block + "\n"
    doc_path.write_text(text)


# ---------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes, one run, no Spark, W1-W6 unless --workloads says "
                         "otherwise, nothing written but the checks' verdict (for make test)")
    ap.add_argument("--runs", type=int, default=5, help="warm runs per engine (default 5)")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--workloads", default=None,
                    help="comma-separated subset of W1,W2,W3,W5,W6,W7-W10 (default: all)")
    ap.add_argument("--dir", default="build/bench-data/suite")
    ap.add_argument("--results", default=str(HERE / "results"))
    ap.add_argument("--doc", default=str(HERE.parent / "docs" / "performance.md"))
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="only render a results file into DOC and its chart")
    args = ap.parse_args()
    if args.render:
        publish(json.loads(Path(args.render).read_text()), Path(args.render), Path(args.doc))
        return
    if args.runs < 1:
        sys.exit("suite: --runs must be at least 1")
    if args.smoke:
        args.runs, args.no_spark = 1, True
    if args.workloads is None:
        args.workloads = "W1,W2,W3,W5,W6" + ("" if args.smoke else ",W7-W10")
    q = args.quick
    sizes = {"rows": 1_000_000 if q else 10_000_000,
             "append_commits": 100 if q else 1000,
             "logs": [(1000, 10_000)] if q else [(10_000, 10_000), (10_000, 200_000),
                                                 (10_000, 1_000_000)],
             "dml_rows": 400_000 if q else 10_000_000,
             "optimize_files": 1000 if q else 10_000,
             "vacuum_files": 10_000 if q else 100_000}
    if args.smoke:
        sizes = {"rows": 20_000, "append_commits": 12, "logs": [(50, 500)], "dml_rows": 40_000,
                 "optimize_files": 200, "vacuum_files": 1000}
    suite = Suite(args)
    suite.work = suite.work / ("smoke" if args.smoke else "quick" if q else "full")
    suite.scratch = suite.work / "scratch"
    suite.scratch.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    input_path = suite.work / f"input-{sizes['rows']}.parquet"
    want = bulk_input(input_path, sizes["rows"])
    commits, files = sizes["logs"][0]
    log_table(suite.work / f"log-{commits}-{files}", commits, files, suite.cli)
    calib = calibrate(suite.work, input_path, suite.work / f"log-{commits}-{files}")
    for c, f in sizes["logs"]:
        log_table(suite.work / f"log-{c}-{f}", c, f, suite.cli)
        cps = sorted((suite.work / f"log-{c}-{f}" / "_delta_log").glob("*.checkpoint*.parquet"))
        calib[f"checkpoint_read_s-{f}"] = best_of(lambda: [pq.read_table(p) for p in cps])
    print(f"suite: calibration {json.dumps({k: round(v, 4) for k, v in calib.items()})}",
          flush=True)
    chosen = set(args.workloads.split(","))
    unknown = chosen - {"W1", "W2", "W3", "W5", "W6", "W7-W10"}
    if unknown:
        sys.exit(f"suite: unknown workloads {sorted(unknown)}")
    if chosen & {"W5", "W6"} and not (suite.work / "flat").exists():
        chosen.add("W1")  # the scans read the tables the bulk writes leave
    try:
        if "W1" in chosen:
            suite.bulk_write(input_path, want, calib)
        if "W2" in chosen:
            suite.appends(sizes["append_commits"], calib)
        if "W3" in chosen:
            for c, f in sizes["logs"]:
                suite.snapshot(c, f, calib)
        if chosen & {"W5", "W6"}:
            suite.scans(want, calib)
    finally:
        if suite.spark:
            suite.spark.stop()
    if "W7-W10" in chosen:
        suite.operation_benchmarks(sizes)

    date = datetime.date.today().isoformat()
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    doc = {"date": date, "quick": q, "runs": args.runs, "workloads_run": sorted(chosen),
           "machine": f"{os.cpu_count()} CPUs, {model or platform.processor()}",
           "sizes": sizes,
           "sizes_text": (f"{sizes['rows']:,} rows (W1, W5, W6), {sizes['append_commits']:,} "
                          f"commits (W2), " + ", ".join(f"{c:,} commits / {f:,} files"
                                                        for c, f in sizes["logs"])
                          + f" (W3), {sizes['dml_rows']:,} rows (W7-W9), "
                          f"{sizes['vacuum_files']:,} files (W10)"),
           "calibration": calib, "workloads": suite.results,
           "seconds": time.perf_counter() - started}
    if args.smoke:
        print(f"suite: OK in {doc['seconds']:.0f} s (smoke sizes: every check held; the "
              "timings are not judged)")
        return
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    out = results / f"{date}{'-quick' if q else ''}.json"
    out.write_text(json.dumps(doc, indent=1))
    publish(doc, out, Path(args.doc))
    print(f"suite: OK in {doc['seconds']:.0f} s")


def publish(doc: dict, results_json: Path, doc_path: Path) -> None:
    png = doc_path.parent / f"bench-{'quick' if doc['quick'] else 'full'}.png"
    render_png(doc, png)
    update_doc(doc_path, render_markdown(doc, png.name, results_json.name), doc["quick"])
    print(f"suite: wrote {results_json}, {png} and the table in {doc_path}")


if __name__ == "__main__":
    main()
