#!/usr/bin/env python3
"""MERGE benchmark: deltacpp's CLI against delta-rs (`deltalake`) on the same data.

    merge_bench.py --cli build/deltacpp [--rows N] [--files F] [--runs R] [--dir PATH]
                   [--json FILE]

Two tables of the same rows are generated under PATH (reused when their shape matches), as in
dml_bench.py: columns id long, p int, amount double, name string; ids 0..N-1, partitioned by p,
one file per partition (F files in all), one with `delta.enableDeletionVectors=true` (DV) and
one without (copy-on-write, CoW). Three sources are written once as Parquet, each in an order
of its own (sorted by a hash of id, not by id); source rows with new keys go to partition F,
one past the table's last:

    large        N/10 rows: half match existing ids (id % 20 = 7, in every file), half new
                 WHEN MATCHED UPDATE SET amount = s.amount, WHEN NOT MATCHED INSERT *
    insert-only  N/100 rows, all new ids: WHEN NOT MATCHED INSERT *
    micro-batch  1,000 rows: 500 match ids among the table's last 1,000, 500 new ids just past
                 the end (a narrow key range, as a change-data micro-batch has); clauses as large

The merge condition is `t.id = s.id`. Each case runs R times, every time on a fresh copy of the
table, as a whole process: `deltacpp merge TABLE --source FILE ...`, and for delta-rs a Python
process that reads the same file with pyarrow and runs `DeltaTable.merge(...)` on it (reading
the source is timed for both). deltacpp runs each case on the CoW and the DV table; delta-rs
on the CoW table (delta-rs 1.x writes no deletion vectors). delta-rs is given
`streamed_exec=False`: its source is an in-memory table anyway, and only then does delta-rs
derive a file-pruning predicate from the source's key range (see DELTA_RS_STREAMED).

Reported per case and engine: the first run, the median of the others (all runs when R < 3),
CPU seconds and peak RSS of the process, deltacpp's time as a fraction of delta-rs's, and the
engine's own scan and rewrite times (scanTimeMs / rewriteTimeMs, scan_time_ms /
rewrite_time_ms, medians). After every run the table is read back (row count and
order-independent sums of id, p, amount, id * amount and the length of name) and compared with
what the generator's rows and the source give; the rows the engine reports as updated and
inserted are checked too. A mismatch, or delta-rs and deltacpp disagreeing, fails the benchmark.
"""
import argparse
import bisect
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
MICRO_ROWS = 1000
# delta-rs's `streamed_exec` (default True) streams the source and gives up pruning target
# files by the source's key range; the source here is a table in memory, so False is its
# better setting for every case.
DELTA_RS_STREAMED = False

CASES = [
    # name, source kind, has WHEN MATCHED UPDATE
    ("large", "large", True),
    ("insert-only", "insert", False),
    ("micro-batch", "micro", True),
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


def source_amount(ids):
    """The amount a source row carries: a function of id other than the table's."""
    return pc.divide(pc.cast(pc.bit_wise_and(pc.multiply(ids, 40503), 0xFFFFF), pa.float64()),
                     100.0)


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"merge_bench: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def generate(cli, root, rows, files):
    shape = f"rows={rows} files={files} v1"
    marker = os.path.join(root, SHAPE_FILE)
    if os.path.exists(marker) and open(marker).read() == shape:
        return False
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    schema = "id long, p int, amount double, name string"
    dv = ["--property", "delta.enableDeletionVectors=true"]
    for variant, props in (("cow", []), ("dv", dv)):
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


def source_ids(kind, rows, files):
    """(ids of the source rows that match table rows, number of new ids) for a source kind."""
    if kind == "large":
        matched = [i for i in range(7, rows, 20)]
        return matched, len(matched)
    if kind == "insert":
        return [], rows // 100
    low = max(0, rows - MICRO_ROWS)
    matched = list(range(low, rows, 2))[:MICRO_ROWS // 2]
    return matched, MICRO_ROWS - len(matched)


def make_source(kind, rows, files):
    matched, new = source_ids(kind, rows, files)
    starts = [rows_of_file(k, rows, files)[0] for k in range(files)]
    parts = [bisect.bisect_right(starts, i) - 1 for i in matched] + [files] * new
    ids = pa.array(matched + list(range(rows, rows + new)), pa.int64())
    name = pc.binary_join_element_wise("s", pc.cast(pc.bit_wise_and(ids, 0xFFFF), pa.string()), "")
    t = pa.table({"id": ids, "p": pa.array(parts, pa.int32()), "amount": source_amount(ids),
                  "name": name})
    order = pc.sort_indices(pc.bit_wise_and(pc.multiply(ids, 2654435761), 0xFFFFFFFF))
    return t.take(order)


MASK = (1 << 64) - 1


def sums(t):
    """(rows, sum id, sum p, sum amount in cents, sum id * cents (mod 2^64), sum len(name)).

    Arrow's integer sums wrap; every component is taken mod 2^64 so that sums of parts add up
    to the sum of the whole."""
    ids = t["id"]
    cents = pc.cast(pc.round(pc.multiply(t["amount"], 100.0)), pa.int64())
    parts = (pc.sum(ids), pc.sum(pc.cast(t["p"], pa.int64())), pc.sum(cents),
             pc.sum(pc.multiply(ids, cents)), pc.sum(pc.cast(pc.binary_length(t["name"]),
                                                            pa.int64())))
    return (t.num_rows,) + tuple((s.as_py() or 0) & MASK for s in parts)


def add(a, b):
    return (a[0] + b[0],) + tuple((x + y) & MASK for x, y in zip(a[1:], b[1:]))


def expected(rows, files, source, update):
    """The sums of the table after the merge, and the (updated, inserted) row counts."""
    is_new = pc.greater_equal(source["id"], rows)
    inserted = source.filter(is_new)
    matched_ids = source.filter(pc.invert(is_new))["id"]
    total = sums(inserted)
    for k in range(files):
        first, n = rows_of_file(k, rows, files)
        t = make_rows(first, n, k)
        if update and len(matched_ids):
            hit = pc.is_in(t["id"], value_set=matched_ids)
            amount = pc.if_else(hit, source_amount(t["id"]), t["amount"])
            t = t.set_column(t.schema.get_field_index("amount"), "amount", amount)
        total = add(total, sums(t))
    return total, (len(matched_ids) if update else 0, inserted.num_rows)


def checksum(cli, table):
    out = os.path.join(os.path.dirname(table), "readback.parquet")
    run([cli, "read", table, "--columns", "id,p,amount,name", "--format", "parquet",
         "--output", out])
    t = pq.read_table(out)
    os.remove(out)
    return sums(t)


DELTA_RS = r"""
import json, sys
import pyarrow.parquet as pq
from deltalake import DeltaTable
table, source, update, streamed = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
merger = DeltaTable(table).merge(pq.read_table(source), predicate="t.id = s.id",
                                 source_alias="s", target_alias="t", streamed_exec=streamed)
if update:
    merger = merger.when_matched_update(updates={"amount": "s.amount"})
print(json.dumps(merger.when_not_matched_insert_all().execute()))
sys.stdout.flush()
"""


def command(engine, cli, update, table, source):
    if engine == "deltacpp":
        cmd = [cli, "merge", table, "--source", source, "--on", "t.id = s.id",
               "--target-alias", "t", "--source-alias", "s"]
        if update:
            cmd += ["--when-matched-update", "amount = s.amount"]
        return cmd + ["--when-not-matched-insert-all"]
    return [sys.executable, "-c", DELTA_RS, table, source, "1" if update else "0",
            "1" if DELTA_RS_STREAMED else "0"]


def engine_metrics(engine, out):
    """(updated, inserted, scan ms, rewrite ms, files added, files removed) as reported."""
    if engine == "deltacpp":
        m = {}
        for line in out.splitlines():
            key, sep, value = line.partition(": ")
            if sep and value.strip().lstrip("-").isdigit():
                m[key.strip()] = int(value)
        names = ("numTargetRowsUpdated", "numTargetRowsInserted", "scanTimeMs", "rewriteTimeMs",
                 "numTargetFilesAdded", "numTargetFilesRemoved")
    else:
        m = json.loads(out.strip().splitlines()[-1])
        names = ("num_target_rows_updated", "num_target_rows_inserted", "scan_time_ms",
                 "rewrite_time_ms", "num_target_files_added", "num_target_files_removed")
    return tuple(m.get(n) for n in names)


def measure_one(engine, cli, update, base, source, scratch):
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
             " 'out': p.stdout[-4000:]}))\n",
             *command(engine, cli, update, table, source)]
    res = json.loads(run(probe))
    return res, table


def summarize(runs):
    walls = [r["wall"] for r in runs]
    warm = walls[1:] if len(walls) >= 3 else walls
    s = {"first_s": walls[0], "median_s": statistics.median(warm),
         "cpu_s": statistics.median(r["cpu"] for r in runs),
         "peak_rss_mib": max(r["rss"] for r in runs)}
    for i, key in ((2, "scan_ms"), (3, "rewrite_ms")):
        values = [r["metrics"][i] for r in runs if r["metrics"][i] is not None]
        s[key] = statistics.median(values) if values else None
    s["files_added"], s["files_removed"] = runs[-1]["metrics"][4], runs[-1]["metrics"][5]
    return s


def ms(value):
    return "-" if value is None else f"{value:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.rows < args.files * 100 or args.files < 4 or args.runs < 1 or args.rows < 10_000:
        sys.exit("merge_bench: need --files >= 4, --rows >= 10000 and >= 100 per file, "
                 "--runs >= 1")
    cli = os.path.abspath(args.cli)
    tmp = None
    root = args.dir
    if not root:
        tmp = tempfile.mkdtemp(prefix="merge-bench.")
        root = tmp
    root = os.path.abspath(root)
    try:
        data = os.path.join(root, "data")
        scratch = os.path.join(root, "scratch")
        os.makedirs(scratch, exist_ok=True)
        t0 = time.perf_counter()
        made = generate(cli, data, args.rows, args.files)
        print(f"merge_bench: {args.rows} rows in {args.files} files, partitioned by p; "
              + (f"generated in {time.perf_counter() - t0:.1f} s" if made else "table reused"))
        results = {}
        print(f"{'case':<13}{'engine':<14}{'source':>8}{'first s':>9}{'median s':>10}"
              f"{'cpu s':>8}{'peak MiB':>10}{'vs delta-rs':>13}{'scan ms':>9}{'rewrite ms':>11}"
              f"{'files +/-':>11}")
        for name, kind, update in CASES:
            src = make_source(kind, args.rows, args.files)
            source = os.path.join(scratch, f"source-{kind}.parquet")
            pq.write_table(src, source)
            want, want_counts = expected(args.rows, args.files, src, update)
            rs = None
            for engine, variant in (("delta-rs", "cow"), ("deltacpp", "cow"), ("deltacpp", "dv")):
                runs = []
                for _ in range(args.runs):
                    res, table = measure_one(engine, cli, update, os.path.join(data, variant),
                                             source, scratch)
                    if res["rc"] != 0:
                        sys.exit(f"merge_bench: {engine} {name} on {variant} failed "
                                 f"(exit status {res['rc']}):\n{res['err']}")
                    got = checksum(cli, table)
                    if got != want:
                        sys.exit(f"merge_bench: {engine} {name} on {variant}: the table has "
                                 f"(rows, sums of id, p, cents, id*cents, name length) {got}, "
                                 f"expected {want}")
                    if rs is not None and got != rs["checksum"]:
                        sys.exit(f"merge_bench: {name}: deltacpp {variant} and delta-rs "
                                 f"disagree: {got} vs {rs['checksum']}")
                    res["metrics"] = engine_metrics(engine, res["out"])
                    if res["metrics"][:2] != want_counts:
                        sys.exit(f"merge_bench: {engine} {name} on {variant} reports "
                                 f"(updated, inserted) = {res['metrics'][:2]}, expected "
                                 f"{want_counts}")
                    runs.append(res)
                s = summarize(runs)
                label = f"{engine} {variant.upper()}"
                if engine == "delta-rs":
                    rs = {"median_s": s["median_s"], "checksum": got}
                    ratio = ""
                else:
                    s["fraction_of_delta_rs"] = s["median_s"] / rs["median_s"]
                    ratio = f"{s['fraction_of_delta_rs']:.2f}x"
                s["source_rows"] = src.num_rows
                results[f"{name} / {label}"] = s
                files = f"{s['files_added']}/{s['files_removed']}"
                print(f"{name:<13}{label:<14}{src.num_rows:>8}{s['first_s']:>9.2f}"
                      f"{s['median_s']:>10.2f}{s['cpu_s']:>8.2f}{s['peak_rss_mib']:>10.0f}"
                      f"{ratio:>13}{ms(s['scan_ms']):>9}{ms(s['rewrite_ms']):>11}{files:>11}")
            os.remove(source)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"rows": args.rows, "files": args.files, "runs": args.runs,
                           "delta_rs_streamed_exec": DELTA_RS_STREAMED, "results": results},
                          f, indent=2)
        print("merge_bench: OK (every run's table checked)")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
