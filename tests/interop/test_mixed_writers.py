"""Mixed writers on one table: Spark and deltacpp take turns (each commit applied on top of the
other's) and every version reads identically in Spark, delta-rs and deltacpp; an overlapping
Spark commit makes a deltacpp overwrite fail with a typed conflict and leave no trace; deltacpp
and delta-rs processes append to one table at the same time and every commit lands once; and
deltacpp overwrites race those appends, losing with typed conflicts while every accepted commit
lands whole and no rejected one leaves a row."""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from interop_util import (DELTACPP, assert_history_agrees, cli, compare_version_all,
                          compare_versions_all, cpp_history, cpp_read, cpp_versions, data_files_on_disk, log_versions_on_disk, rs_read,
                          spark_df, spark_rows, arrow_rows, assert_same_rows)


def _csv(path: Path, ids, v: str, parts=("a", "b", "c")) -> Path:
    lines = ["id,v,p"] + [f"{i},{v}{i},{parts[i % len(parts)]}" for i in ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _spark_versions(spark, t):
    return sorted(r.version for r in
                  spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version").collect())


# ---------------------------------------------------------------------------------------------
# Taking turns
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mixed(spark, tmp_path_factory):
    """deltacpp and Spark alternate on one partitioned table: appends, Spark DELETE/UPDATE
    first rewriting files, then with deletion vectors, deltacpp replaceWhere over files that
    carry deletion vectors and a full overwrite. Returns (path, notes)."""
    d = tmp_path_factory.mktemp("mixed")
    t = d / "mixed"
    notes = {}
    cli("create", t, "--schema", "id long NOT NULL, v string, p string", "--partition-by", "p",
        "--property", "delta.checkpointInterval=4")
    notes[0] = "deltacpp create"
    cli("write", t, _csv(d / "1.csv", range(0, 60), "cpp"))
    notes[1] = "deltacpp append"
    spark.sql(f"INSERT INTO delta.`{t}` SELECT id, concat('spark', id), "
              f"CASE WHEN id % 2 = 0 THEN 'a' ELSE 'd' END FROM range(60, 90)")
    notes[2] = "Spark INSERT"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 7 = 0")
    notes[3] = "Spark DELETE (rewrites files)"
    cli("write", t, _csv(d / "4.csv", range(90, 120), "cpp"))
    notes[4] = "deltacpp append (deltacpp writes the checkpoint)"
    spark.sql(f"UPDATE delta.`{t}` SET v = upper(v) WHERE p = 'b'")
    notes[5] = "Spark UPDATE (rewrites files)"
    cli("write", t, "--mode", "overwrite", "--replace-where", "p = 'c'",
        _csv(d / "6.csv", range(200, 205), "rw", parts=("c",)))
    notes[6] = "deltacpp replaceWhere p = 'c'"
    spark.sql(f"ALTER TABLE delta.`{t}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    notes[7] = "Spark enables deletion vectors"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 5 = 0")
    notes[8] = "Spark DELETE (deletion vectors; Spark writes the checkpoint)"
    cli("write", t, _csv(d / "9.csv", range(300, 330), "cpp"))
    notes[9] = "deltacpp append on a table with deletion vectors"
    spark.sql(f"UPDATE delta.`{t}` SET v = concat(v, '!') WHERE id % 3 = 0")
    notes[10] = "Spark UPDATE (deletion vectors)"
    cli("write", t, "--mode", "overwrite", "--replace-where", "id < 100",
        _csv(d / "11.csv", range(0, 100, 9), "rw2"))
    notes[11] = "deltacpp replaceWhere id < 100 (rewrites files carrying deletion vectors)"
    cli("write", t, "--mode", "overwrite", _csv(d / "12.csv", range(1000, 1040), "final"))
    notes[12] = "deltacpp full overwrite (deltacpp writes the checkpoint)"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 4 = 0")
    notes[13] = "Spark DELETE (deletion vectors) after deltacpp's overwrite"
    return t, notes


def test_mixed_history_agrees(spark, mixed):
    """deltacpp, Spark and delta-rs list the same versions with the same operations, whichever
    engine made the commit."""
    t, notes = mixed
    assert cpp_versions(t) == _spark_versions(spark, t) == list(range(len(notes)))
    assert_history_agrees(spark, t)
    ops = {h["version"]: h["operation"] for h in cpp_history(t)}
    assert [ops[v] for v in (2, 3, 5, 7)] == ["WRITE", "DELETE", "UPDATE", "SET TBLPROPERTIES"], ops
    assert any(p.name.startswith("deletion_vector_") for p in t.rglob("*.bin")), \
        "Spark wrote no deletion vector: the test would not cover them"
    assert (t / "_delta_log" / "00000000000000000012.checkpoint.parquet").exists()


FIRST_DV_VERSION = 7  # Spark turns on deletion vectors (reader feature) at version 7


def test_mixed_every_version_reads_the_same(spark, mixed):
    """Spark and delta-rs's SQL engine read every version as deltacpp does; delta-rs's
    to_pyarrow_table() every version before deletion vectors (see
    test_delta_rs_rejects_deletion_vectors for the rest)."""
    t, notes = mixed
    compare_versions_all(spark, t, range(len(notes)), notes, rs_via="sql")
    compare_versions_all(None, t, range(FIRST_DV_VERSION), notes)


def test_delta_rs_rejects_deletion_vectors(mixed):
    """Known delta-rs limitation (docs/interop.md): deltalake 1.6.6's to_pyarrow_table() refuses
    to read any version whose protocol lists the deletionVectors reader feature ("not yet
    supported by the deltalake reader"; its SQL engine reads them), although the files of those versions are plain Parquet plus DV files as the
    protocol's *Deletion Vectors* section describes, and Spark and deltacpp read them alike.
    This asserts the peer's current behaviour for every such version, so a delta-rs upgrade
    that reads them makes this test fail and the comparison be extended."""
    t, notes = mixed
    for v in range(FIRST_DV_VERSION, len(notes)):
        with pytest.raises(Exception, match="deletionVectors"):
            rs_read(t, v)


def test_mixed_contents(mixed):
    """deltacpp's reading of the turns is the expected one (not just the peers' one)."""
    t, _ = mixed
    rows = {r["id"]: r for r in cpp_read(t, 11).to_pylist()}
    assert not any(i in rows for i in range(0, 100) if i % 9), "replaceWhere id < 100 kept rows"
    assert all(rows[i]["v"] == f"rw2{i}" for i in range(0, 100, 9))
    assert rows[300]["v"] == "cpp300!" and rows[301]["v"] == "cpp301" and 305 in rows
    latest = sorted(r["id"] for r in cpp_read(t).to_pylist())
    assert latest == [i for i in range(1000, 1040) if i % 4]


# ---------------------------------------------------------------------------------------------
# Overlapping transactions: deltacpp's conflict detection against Spark's commit
# ---------------------------------------------------------------------------------------------
_BIG_ROW = "x" * 200


def _feed_stdin_write(t: Path, args, first_rows: int, rest_rows: int, between):
    """Runs `deltacpp write T - --input-format csv ARGS` while this process writes CSV into its
    stdin: FIRST_ROWS rows (several CSV blocks: deltacpp takes its snapshot, then opens its first
    data file once about 2.5 MB have arrived; this waits for that file), then BETWEEN() (another writer commits),
    then the remaining rows, then EOF. Returns (exit code, stdout, stderr).
    (A FIFO given as the input path is refused by deltacpp: "cannot open input ...: lseek
    failed", so stdin is the pipe.)"""
    before = data_files_on_disk(t)
    proc = subprocess.Popen([DELTACPP, "write", str(t), "-", "--input-format", "csv",
                             *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        f = proc.stdin
        f.write("id,v,p\n")
        for i in range(first_rows):
            f.write(f"{10_000 + i},{_BIG_ROW},a\n")
        f.flush()
        deadline = time.monotonic() + 30
        while not (data_files_on_disk(t) - before):
            assert proc.poll() is None, f"deltacpp ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "deltacpp opened no data file"
            time.sleep(0.02)
        between()
        for i in range(rest_rows):
            f.write(f"{20_000 + i},{_BIG_ROW},b\n")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def _referenced_files(t: Path) -> set[str]:
    """Every data file path any commit of T adds (relative, percent-decoded)."""
    import json
    import urllib.parse
    out = set()
    for p in sorted((t / "_delta_log").glob("*.json")):
        for line in p.read_text(encoding="utf-8").splitlines():
            a = json.loads(line) if line.strip() else {}
            if "add" in a:
                out.add(urllib.parse.unquote(a["add"]["path"]))
    return out


def test_overwrite_conflicts_with_spark_delete(spark, tmp_path):
    """deltacpp starts a full overwrite (reads the whole table at version 1), Spark commits a
    DELETE as version 2 while deltacpp still reads its input, then deltacpp tries to commit:
    it must fail with ConcurrentAppend or ConcurrentDeleteRead, commit nothing and delete the
    data files it wrote."""
    t = tmp_path / "conflict"
    cli("create", t, "--schema", "id long NOT NULL, v string, p string", "--partition-by", "p")
    cli("write", t, _csv(tmp_path / "1.csv", range(0, 50), "orig"))

    def spark_delete():
        spark.sql(f"DELETE FROM delta.`{t}` WHERE id < 10")

    rc, out, err = _feed_stdin_write(t, ["--mode", "overwrite"],
                                    first_rows=20000, rest_rows=100, between=spark_delete)
    print("conflict-error:", err.strip())
    assert rc != 0, f"the overwrite committed over Spark's DELETE: {out}"
    assert "ConcurrentAppend" in err or "ConcurrentDeleteRead" in err, err
    assert log_versions_on_disk(t) == [0, 1, 2]
    leftovers = data_files_on_disk(t) - _referenced_files(t)
    assert not leftovers, f"the failed overwrite left data files behind: {sorted(leftovers)}"
    compare_versions_all(spark, t, [1, 2])
    assert sorted(r["id"] for r in cpp_read(t).to_pylist()) == list(range(10, 50))


def test_append_rebases_over_spark_update(spark, tmp_path):
    """The same overlap with a blind append: no conflict, deltacpp commits version 3 on top of
    Spark's UPDATE (version 2) and every reader sees both changes."""
    t = tmp_path / "rebase"
    cli("create", t, "--schema", "id long NOT NULL, v string, p string", "--partition-by", "p")
    cli("write", t, _csv(tmp_path / "1.csv", range(0, 50), "orig"))

    def spark_update():
        spark.sql(f"UPDATE delta.`{t}` SET v = 'updated' WHERE id < 10")

    rc, out, err = _feed_stdin_write(t, [], first_rows=20000, rest_rows=100,
                                    between=spark_update)
    assert rc == 0, err
    assert "committed version 3" in out, out
    compare_versions_all(spark, t, [2, 3])
    rows = cpp_read(t, 3).to_pylist()
    assert len(rows) == 50 + 20100
    assert sum(r["v"] == "updated" for r in rows) == 10


# ---------------------------------------------------------------------------------------------
# True concurrency: deltacpp processes and delta-rs processes append at the same time
# ---------------------------------------------------------------------------------------------
N_CPP, M_RS, K_COMMITS, ROWS = 3, 2, 4, 5

_RS_WRITER = textwrap.dedent("""
    import os, sys, time, json
    import pyarrow as pa
    from deltalake import write_deltalake
    table, writer, k, rows, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.005)
    for seq in range(k):
        data = pa.table({"writer": pa.array([writer] * rows, pa.string()),
                         "seq": pa.array([seq] * rows, pa.int64()),
                         "row": pa.array(list(range(rows)), pa.int64())})
        try:
            write_deltalake(table, data, mode="append")
            print(json.dumps({"seq": seq, "ok": True}), flush=True)
        except Exception as e:
            print(json.dumps({"seq": seq, "ok": False, "error": f"{type(e).__name__}: {e}"}),
                  flush=True)
""")


def test_concurrent_appends_deltacpp_and_delta_rs(spark, tmp_path):
    t = tmp_path / "concurrent"
    cli("create", t, "--schema", "writer string NOT NULL, seq long NOT NULL, row long NOT NULL")
    go = tmp_path / "go"
    script = tmp_path / "rs_writer.py"
    script.write_text(_RS_WRITER, encoding="utf-8")
    rs_procs = {}
    for m in range(M_RS):
        w = f"rs{m}"
        rs_procs[w] = subprocess.Popen([sys.executable, str(script), str(t), w, str(K_COMMITS),
                                        str(ROWS), str(go)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for w, p in rs_procs.items():
        assert p.stdout.readline().strip() == "ready", f"{w}: {p.stderr.read()}"

    inputs = {}
    for n in range(N_CPP):
        for seq in range(K_COMMITS):
            f = tmp_path / f"cpp{n}_{seq}.csv"
            f.write_text("writer,seq,row\n" + "".join(f"cpp{n},{seq},{r}\n" for r in range(ROWS)))
            inputs[(f"cpp{n}", seq)] = f
    outcomes = {}  # (writer, seq) -> (ok, message)
    start = threading.Event()

    def cpp_writer(w):
        start.wait()
        for seq in range(K_COMMITS):
            p = subprocess.run([DELTACPP, "write", str(t), str(inputs[(w, seq)])],
                               capture_output=True, text=True, timeout=120)
            outcomes[(w, seq)] = (p.returncode == 0, (p.stdout + p.stderr).strip())

    threads = [threading.Thread(target=cpp_writer, args=(f"cpp{n}",)) for n in range(N_CPP)]
    for th in threads:
        th.start()
    go.touch()
    start.set()
    for th in threads:
        th.join(timeout=180)
    import json
    for w, p in rs_procs.items():
        out, err = p.communicate(timeout=180)
        for line in out.splitlines():
            o = json.loads(line)
            outcomes[(w, o["seq"])] = (o["ok"], o.get("error", ""))
        assert p.returncode == 0, f"{w}: {err}"
    print("concurrent-outcomes:", {f"{w}/{s}": ok for (w, s), (ok, _) in sorted(outcomes.items())})
    failed = {k: m for k, (ok, m) in outcomes.items() if not ok}
    # A deltacpp writer that loses every retry must say so with a typed error, a delta-rs one
    # with deltalake's CommitFailedError for running out of commit attempts (blind appends
    # conflict with nothing here).
    for (w, s), m in failed.items():
        if w.startswith("cpp"):
            assert "Concurrent" in m or "VersionExists" in m, f"{w}/{s} failed untyped: {m}"
        else:
            assert re.match(r"^CommitFailedError: .*exceeded maximum commit attempts", m,
                            re.S), f"{w}/{s} failed otherwise than by losing every retry: {m}"
    assert len(outcomes) == (N_CPP + M_RS) * K_COMMITS

    versions = cpp_versions(t)
    succeeded = sorted(k for k, (ok, _) in outcomes.items() if ok)
    assert versions == list(range(1 + len(succeeded))), \
        f"{len(succeeded)} writes succeeded but the log has versions {versions}"
    # every successful commit is present exactly once (ROWS rows), failed ones not at all
    latest = collections.Counter((r["writer"], r["seq"]) for r in cpp_read(t).to_pylist())
    assert latest == {k: ROWS for k in succeeded}, \
        f"rows by writer differ from the successful commits: {dict(latest)}"
    # every version: the same rows for all three readers, and one more commit than the previous
    prev = collections.Counter()
    failures = []
    for v in versions:
        try:
            mine = compare_version_all(spark, t, v)
        except Exception as e:  # noqa: BLE001
            failures.append(f"version {v}: {type(e).__name__}: {e}")
            continue
        by_commit = collections.Counter((r["writer"], r["seq"]) for r in mine.to_pylist())
        new = by_commit - prev
        if v > 0 and (len(new) != 1 or list(new.values()) != [ROWS] or prev - by_commit):
            failures.append(f"version {v} is not its predecessor plus one commit: new {dict(new)}")
        prev = by_commit
    assert not failures, "\n".join(failures)
    assert_history_agrees(spark, t)


# ---------------------------------------------------------------------------------------------
# A race with conflicts: deltacpp overwrites while deltacpp and delta-rs processes append
# ---------------------------------------------------------------------------------------------
_RS_PAD_WRITER = _RS_WRITER.replace(
    '"row": pa.array(list(range(rows)), pa.int64())})',
    '"row": pa.array(list(range(rows)), pa.int64()),\n'
    '                         "pad": pa.array([None] * rows, pa.string())})')
assert _RS_PAD_WRITER != _RS_WRITER
_TYPED_CONFLICT = re.compile(
    r"^deltacpp: error: (ConcurrentAppend|ConcurrentDeleteRead|ConcurrentDeleteDelete|"
    r"ConcurrentTransaction|MetadataChanged|ProtocolChanged|VersionExists): ")
N_OW = 3  # overwrites by the free-running deltacpp overwriter
# How deltalake 1.6.6's write_deltalake(mode="append") loses to a concurrent overwrite
_RS_LOST_TO_OVERWRITE = re.compile(
    r"^CommitFailedError: .*a concurrent transaction deleted data this operation read", re.S)


def test_overwrites_race_concurrent_appends(spark, tmp_path):
    """Two deltacpp processes and one delta-rs process append K_COMMITS commits each while
    deltacpp overwrites the whole table: one overwrite streams its input from stdin, took its
    snapshot before the appenders were released (a file flag) and commits only after one of
    them has, so it must be rejected with a typed conflict; another deltacpp process
    overwrites N_OW times while the appends run. Every accepted commit is one version (an
    append adds exactly its rows, an overwrite leaves exactly its rows), no rejected commit's
    rows are in any version, no failed write leaves data files behind, and Spark, delta-rs
    and deltacpp read every version identically."""
    t = tmp_path / "race"
    cli("create", t, "--schema",
        "writer string NOT NULL, seq long NOT NULL, row long NOT NULL, pad string")
    init = tmp_path / "init.csv"
    init.write_text("writer,seq,row,pad\n" + "".join(f"init,0,{r},\n" for r in range(ROWS)))
    cli("write", t, init)                                                      # v1
    expected_rows = {("init", 0): ROWS}
    go = tmp_path / "go"
    script = tmp_path / "rs_pad_writer.py"
    script.write_text(_RS_PAD_WRITER, encoding="utf-8")
    rs = subprocess.Popen([sys.executable, str(script), str(t), "rs0", str(K_COMMITS),
                           str(ROWS), str(go)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert rs.stdout.readline().strip() == "ready", rs.stderr.read()

    def small_csv(w, seq):
        f = tmp_path / f"{w}_{seq}.csv"
        f.write_text("writer,seq,row,pad\n" + "".join(f"{w},{seq},{r},\n" for r in range(ROWS)))
        expected_rows[(w, seq)] = ROWS
        return f

    jobs = {f"cpp{n}": [(small_csv(f"cpp{n}", s), []) for s in range(K_COMMITS)]
            for n in range(2)}
    jobs["ow1"] = [(small_csv("ow1", s), ["--mode", "overwrite"]) for s in range(N_OW)]
    outcomes = {}  # (writer, seq) -> (ok, stderr)

    def cpp_writer(w):
        while not go.exists():
            time.sleep(0.005)
        for seq, (f, args) in enumerate(jobs[w]):
            p = subprocess.run([DELTACPP, "write", str(t), str(f), *args],
                               capture_output=True, text=True, timeout=120)
            outcomes[(w, seq)] = (p.returncode == 0, p.stderr.strip())

    threads = [threading.Thread(target=cpp_writer, args=(w,)) for w in jobs]
    for th in threads:
        th.start()

    # the stdin overwrite: snapshot (version 1) and first data file before the flag
    before_files = data_files_on_disk(t)
    ow = subprocess.Popen([DELTACPP, "write", str(t), "-", "--input-format", "csv",
                           "--mode", "overwrite"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first, rest = 20000, 100
    try:
        ow.stdin.write("writer,seq,row,pad\n")
        for r in range(first):
            ow.stdin.write(f"ow0,0,{r},{_BIG_ROW}\n")
        ow.stdin.flush()
        deadline = time.monotonic() + 30
        while not (data_files_on_disk(t) - before_files):
            assert ow.poll() is None, f"deltacpp ended early: {ow.communicate()}"
            assert time.monotonic() < deadline, "deltacpp opened no data file"
            time.sleep(0.02)
        go.touch()                                   # release the appenders
        deadline = time.monotonic() + 60
        while max(log_versions_on_disk(t)) < 2:      # until one of them has committed
            assert time.monotonic() < deadline, "no concurrent commit landed"
            time.sleep(0.005)
        for r in range(first, first + rest):
            ow.stdin.write(f"ow0,0,{r},{_BIG_ROW}\n")
        _, ow_err = ow.communicate(timeout=120)
    finally:
        if ow.poll() is None:
            ow.kill()
            ow.wait()
    outcomes[("ow0", 0)] = (ow.returncode == 0, ow_err.strip())
    expected_rows[("ow0", 0)] = first + rest
    for th in threads:
        th.join(timeout=300)
    out, err = rs.communicate(timeout=300)
    assert rs.returncode == 0, err
    for line in out.splitlines():
        o = json.loads(line)
        outcomes[("rs0", o["seq"])] = (o["ok"], o.get("error", ""))
        expected_rows[("rs0", o["seq"])] = ROWS
    print("race-outcomes:", {f"{w}/{s}": ok for (w, s), (ok, _) in sorted(outcomes.items())})
    print("race-rejections:", sorted({m.split(":")[2].strip() for (w, _), (ok, m)
                                      in outcomes.items() if not ok and w != "rs0"}))
    print("race-delta-rs-errors:", [m[:300] for (w, _), (ok, m) in sorted(outcomes.items())
                                    if not ok and w == "rs0"])
    assert len(outcomes) == 2 * K_COMMITS + N_OW + 1 + K_COMMITS

    # typed rejections: the stdin overwrite must be one, and every failed deltacpp write is one
    ok0, err0 = outcomes[("ow0", 0)]
    assert not ok0, "the overwrite committed over a concurrent append"
    # (ConcurrentDeleteRead when the commit that came first was the other overwrite)
    assert re.match(r"deltacpp: error: (ConcurrentAppend|ConcurrentDeleteRead): ", err0), err0
    untyped = {k: m for k, (ok, m) in outcomes.items()
               if not ok and k[0] != "rs0" and not _TYPED_CONFLICT.match(m)}
    assert not untyped, f"deltacpp writes failed without a typed conflict: {untyped}"
    # deltacpp's blind appends read nothing, so they rebase over every overwrite
    lost_appends = {k: m for k, (ok, m) in outcomes.items() if k[0].startswith("cpp") and not ok}
    assert not lost_appends, f"deltacpp blind appends failed: {lost_appends}"
    # a delta-rs append may lose to an overwrite (docs/interop.md), and only in this way
    rs_other = {k: m for k, (ok, m) in outcomes.items()
                if k[0] == "rs0" and not ok and not _RS_LOST_TO_OVERWRITE.match(m)}
    assert not rs_other, f"delta-rs appends failed otherwise than by a lost conflict: {rs_other}"
    # (delta-rs names its files part-NNNNN-<uuid>-c000.snappy.parquet and leaves the file of a
    # commit it lost behind for VACUUM; deltacpp's are part-NNNNN-<uuid>.c000.snappy.parquet)
    leftovers = {f for f in data_files_on_disk(t) - _referenced_files(t)
                 if not f.endswith("-c000.snappy.parquet")}
    assert not leftovers, f"failed deltacpp writes left data files behind: {sorted(leftovers)}"

    accepted = {k for k, (ok, _) in outcomes.items() if ok}
    versions = cpp_versions(t)
    assert versions == list(range(2 + len(accepted))), \
        f"{len(accepted)} writes were accepted but the log has versions {versions}"
    # replay: each version is its predecessor plus exactly one accepted commit
    landed, failures = [], []
    prev = collections.Counter({("init", 0): ROWS})
    for v in versions:
        try:
            mine = compare_version_all(spark, t, v)
        except Exception as e:  # noqa: BLE001
            failures.append(f"version {v}: {type(e).__name__}: {e}")
            continue
        now = collections.Counter((r["writer"], r["seq"]) for r in mine.to_pylist())
        if v < 2:
            continue
        new = now - prev
        if len(new) != 1:
            failures.append(f"version {v}: not one new commit: {dict(new)}")
        else:
            (key, n), = new.items()
            landed.append(key)
            is_overwrite = key[0].startswith("ow")
            if n != expected_rows.get(key) or (is_overwrite and now != new) or \
                    (not is_overwrite and prev - now):
                failures.append(f"version {v} ({key}): {dict(now)} after {dict(prev)}")
        prev = now
    assert not failures, "\n".join(failures)
    assert sorted(landed) == sorted(accepted), \
        f"commits in the log {sorted(landed)} vs accepted writes {sorted(accepted)}"
    assert_history_agrees(spark, t)
