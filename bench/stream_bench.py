#!/usr/bin/env python3
"""Streaming benchmark: `deltacpp stream` ingesting a landing folder and following a Delta table.

    stream_bench.py --cli build/deltacpp [--files N] [--rows R] [--latency-seconds S]
                    [--follow-seconds S] [--spark] [--dir PATH] [--json FILE]

Three cases, each on fresh directories under PATH:

    ingest   N JSON Lines files of R rows (id, name, amount) landed before the run; one
             `stream --trigger available-now --max-files 20` ingests them. Reported: wall time,
             rows/s, commits/s, peak RSS. With --spark, Spark Structured Streaming (local[2],
             maxFilesPerTrigger 20, Trigger.AvailableNow, Delta sink) ingests the same folder in
             the same run; its time is measured inside the JVM (session start excluded).
    latency  `stream --trigger interval=1s` runs while a file of 100 rows lands every 0.5 s for
             S seconds; each file's latency is the sink commit's timestamp minus its landing
             time. Reported: median and 95th percentile.
    follow   a Delta source receiving about 10 commits/s, followed by a Delta-to-Delta
             `stream --trigger interval=1s` for S seconds. The writer is one long-lived
             process (a `stream --trigger interval=100ms` from a landing folder that receives a
             10-row file every 0.1 s), so it does not load the growing log anew per commit.
             Reported: median batch time in each quarter of the run and the ratio of the last
             to the first (flat, about 1, shows the source does not re-read the log), the
             stream process's RSS at the first and the last quarter, and the checkpoints in the
             sink's log.

Every case is checked: the sink holds each landed or source row exactly once (count, sum of id,
number of distinct ids), read back with deltacpp.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import pyarrow.parquet as pq


def land(folder, name, first, n):
    tmp = os.path.join(folder, "." + name)
    with open(tmp, "w") as f:
        for i in range(first, first + n):
            f.write(f'{{"id":{i},"name":"n{i % 1000}","amount":{i * 0.5}}}\n')
    os.rename(tmp, os.path.join(folder, name))


def sink_check(cli, table, expected_ids):
    """The sink holds ids 0..expected_ids-1 once each."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.parquet")
        subprocess.run([cli, "read", table, "--columns", "id", "--format", "parquet",
                        "--output", out], check=True, capture_output=True)
        ids = pq.read_table(out).column("id").to_pylist()
    ok = len(ids) == expected_ids and len(set(ids)) == expected_ids and \
        sum(ids) == expected_ids * (expected_ids - 1) // 2
    if not ok:
        sys.exit(f"stream_bench: {table}: {len(ids)} rows, {len(set(ids))} distinct, "
                 f"expected ids 0..{expected_ids - 1} once each")


def peak_rss_of(cmd):
    """Runs cmd; (seconds, peak RSS MiB of the process, stdout)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"stream_bench: {' '.join(cmd)} failed: {err.read()}")
    return wall, usage.ru_maxrss / 1024, out


def ingest(cli, root, files, rows):
    landing = os.path.join(root, "landing")
    os.makedirs(landing)
    for k in range(files):
        land(landing, f"f{k:05d}.json", k * rows, rows)
    sink, ckpt = os.path.join(root, "sink"), os.path.join(root, "ckpt")
    wall, rss, out = peak_rss_of([cli, "stream", "--source", f"json:{landing}", "--schema",
                                  "id long, name string, amount double", "--sink", sink,
                                  "--checkpoint", ckpt, "--max-files", "20"])
    batches = sum(1 for line in out.splitlines() if line.startswith("batch "))
    sink_check(cli, sink, files * rows)
    return {"seconds": wall, "rows_per_s": files * rows / wall, "commits_per_s": batches / wall,
            "batches": batches, "peak_rss_mib": rss, "landing": landing}


SPARK_INGEST = r"""
import sys, time
from importlib.metadata import version
from pyspark.sql import SparkSession
landing, sink, ckpt, ivy = sys.argv[1:5]
spark = (SparkSession.builder.master("local[2]")
         .config("spark.jars.packages", f"io.delta:delta-spark_2.13:{version('delta-spark')}")
         .config("spark.jars.ivy", ivy)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog",
                 "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
t0 = time.perf_counter()
q = (spark.readStream.schema("id long, name string, amount double")
     .option("maxFilesPerTrigger", 20).json(landing)
     .writeStream.format("delta").option("checkpointLocation", ckpt)
     .trigger(availableNow=True).start(sink))
q.awaitTermination()
print(time.perf_counter() - t0)
"""


def spark_ingest(landing, root, rows_total, cli):
    sink, ckpt = os.path.join(root, "spark-sink"), os.path.join(root, "spark-ckpt")
    ivy = os.path.join(os.path.expanduser("~"), ".ivy2")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", SPARK_INGEST, landing, sink, ckpt, ivy],
                       capture_output=True, text=True)
    total = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"stream_bench: Spark ingest failed: {p.stderr[-3000:]}")
    inside = float(p.stdout.strip().splitlines()[-1])
    sink_check(cli, sink, rows_total)
    return {"seconds_in_jvm": inside, "seconds_process": total,
            "rows_per_s": rows_total / inside}


def latency(cli, root, seconds):
    landing = os.path.join(root, "landing-latency")
    os.makedirs(landing)
    sink, ckpt = os.path.join(root, "sink-latency"), os.path.join(root, "ckpt-latency")
    proc = subprocess.Popen([cli, "stream", "--source", f"json:{landing}", "--schema",
                             "id long, name string, amount double", "--sink", sink,
                             "--checkpoint", ckpt, "--trigger", "interval=1s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    landed = []
    n = int(seconds / 0.5)
    for k in range(n):
        land(landing, f"f{k:05d}.json", k * 100, 100)
        landed.append(time.time())
        time.sleep(0.5)
    time.sleep(2.5)  # the last file's batch
    proc.terminate()
    proc.communicate(timeout=60)
    sink_check(cli, sink, n * 100)
    # Each commit's files: the ids of its adds (stats min/max) name the landed files it holds.
    lat = []
    log = os.path.join(sink, "_delta_log")
    for name in sorted(os.listdir(log)):
        if not re.fullmatch(r"\d{20}\.json", name):
            continue
        ts, files = None, []
        for line in open(os.path.join(log, name)):
            a = json.loads(line)
            if "commitInfo" in a:
                ts = a["commitInfo"]["timestamp"] / 1000
            if "add" in a:
                st = json.loads(a["add"]["stats"])
                files += range(st["minValues"]["id"] // 100, st["maxValues"]["id"] // 100 + 1)
        lat += [ts - landed[f] for f in set(files)]
    return {"files": n, "median_s": statistics.median(lat),
            "p95_s": sorted(lat)[int(0.95 * (len(lat) - 1))]}


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def follow(cli, root, seconds):
    src, sink, ckpt = (os.path.join(root, n) for n in ("follow-src", "follow-sink", "follow-ck"))
    landing = os.path.join(root, "follow-landing")
    os.makedirs(landing)
    subprocess.run([cli, "create", src, "--schema", "id long, name string, amount double"],
                   check=True, capture_output=True)
    stop = threading.Event()
    written = [0]
    feeder = subprocess.Popen([cli, "stream", "--source", f"json:{landing}", "--schema",
                               "id long, name string, amount double", "--sink", src,
                               "--checkpoint", os.path.join(root, "follow-feeder-ck"),
                               "--trigger", "interval=100ms"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def writer():
        next_at = time.perf_counter()
        while not stop.is_set():
            land(landing, f"r{written[0]:06d}.json", written[0] * 10, 10)
            written[0] += 1
            next_at += 0.1
            time.sleep(max(0.0, next_at - time.perf_counter()))

    w = threading.Thread(target=writer)
    w.start()
    proc = subprocess.Popen([cli, "stream", "--source", f"delta:{src}", "--sink", sink,
                             "--checkpoint", ckpt, "--trigger", "interval=1s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    t_end = time.time() + seconds
    while time.time() < t_end:
        samples.append(rss_mib(proc.pid))
        time.sleep(0.5)
    stop.set()
    w.join()
    time.sleep(2.5)  # the last files' and commits' batches
    feeder.terminate()
    _, feeder_err = feeder.communicate(timeout=60)
    if feeder.returncode not in (0, 130, 143, -2, -15):  # stopped by SIGTERM
        sys.exit(f"stream_bench: the follow run's writer failed: {feeder_err[-2000:]}")
    time.sleep(1.5)
    proc.terminate()
    out, _ = proc.communicate(timeout=60)
    times = [int(m.group(1)) for m in re.finditer(r", (\d+) ms$", out, re.M)]
    sink_check(cli, sink, written[0] * 10)
    source_commits = sum(1 for n in os.listdir(os.path.join(src, "_delta_log"))
                         if re.fullmatch(r"\d{20}\.json", n)) - 1  # less the CREATE
    q = max(1, len(times) // 4)
    quarters = [statistics.median(times[i * q:(i + 1) * q] or times[-q:]) for i in range(4)]
    rs = [s for s in samples if s is not None]
    qr = max(1, len(rs) // 4)
    checkpoints = [n for n in os.listdir(os.path.join(sink, "_delta_log"))
                   if n.endswith(".checkpoint.parquet")]
    return {"source_commits": source_commits, "batches": len(times),
            "batch_ms_quarters": quarters,
            "batch_ms_first_quarter": quarters[0], "batch_ms_last_quarter": quarters[-1],
            "last_to_first": quarters[-1] / max(quarters[0], 1),
            "rss_mib_first_quarter": statistics.median(rs[:qr]),
            "rss_mib_last_quarter": statistics.median(rs[-qr:]),
            "sink_checkpoints": len(checkpoints)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--latency-seconds", type=float, default=20)
    ap.add_argument("--follow-seconds", type=float, default=120)
    ap.add_argument("--spark", action="store_true", help="also run Spark Structured Streaming")
    ap.add_argument("--dir")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    root = args.dir or tempfile.mkdtemp(prefix="stream-bench-")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    try:
        results = {"ingest": ingest(cli, root, args.files, args.rows)}
        r = results["ingest"]
        print(f"ingest {args.files} files x {args.rows} rows: {r['seconds']:.2f} s, "
              f"{r['rows_per_s']:,.0f} rows/s, {r['commits_per_s']:.1f} commits/s "
              f"({r['batches']} batches), peak RSS {r['peak_rss_mib']:.0f} MiB")
        if args.spark:
            s = spark_ingest(r["landing"], root, args.files * args.rows, cli)
            results["spark_ingest"] = s
            print(f"Spark Structured Streaming, same ingest: {s['seconds_in_jvm']:.2f} s in the "
                  f"JVM ({s['seconds_process']:.1f} s with start-up), "
                  f"{s['rows_per_s']:,.0f} rows/s; deltacpp "
                  f"{r['seconds'] / s['seconds_in_jvm']:.2f}x its time")
        results["latency"] = latency(cli, root, args.latency_seconds)
        l = results["latency"]
        print(f"latency at a 1 s trigger ({l['files']} files, one per 0.5 s): median "
              f"{l['median_s']:.2f} s, p95 {l['p95_s']:.2f} s")
        results["follow"] = follow(cli, root, args.follow_seconds)
        f = results["follow"]
        print(f"follow a table at about 10 commits/s for {args.follow_seconds:.0f} s "
              f"({f['source_commits']} commits, {f['batches']} batches): median batch by "
              f"quarter {' / '.join(f'{x:g}' for x in f['batch_ms_quarters'])} ms "
              f"(last/first {f['last_to_first']:.2f}); RSS "
              f"{f['rss_mib_first_quarter']:.0f} -> {f['rss_mib_last_quarter']:.0f} MiB; "
              f"{f['sink_checkpoints']} checkpoints in the sink's log")
        if args.json:
            with open(args.json, "w") as out:
                json.dump(results, out, indent=2)
        print("stream_bench: OK")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
