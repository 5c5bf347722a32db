"""Table features written by deltacpp and read by the peers: column mapping (name mode),
in-commit timestamps with timestamp time travel, row tracking, identity and generated columns,
checkpoints (classic and V2) and log cleanup; Spark DESCRIBE DETAIL agrees with
`deltacpp describe` on each table."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from interop_util import (arrow_rows, assert_detail_agrees, assert_history_agrees,
                          assert_same_rows, cli, rs_table,
                          compare_versions_all, cpp_history, cpp_read, cpp_versions,
                          log_versions_on_disk, rs_read, rs_read_sql, spark_df, spark_rows)


def _csv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def _actions(t: Path, version: int) -> list[dict]:
    p = t / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line]


def _spark_versions(spark, t):
    return sorted(r.version for r in
                  spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version").collect())


# ---------------------------------------------------------------------------------------------
# Column mapping (name mode)
# ---------------------------------------------------------------------------------------------
def test_column_mapping_name_mode(spark, tmp_path):
    t = tmp_path / "colmap"
    notes = {}
    cli("create", t, "--schema", "id long NOT NULL, v string, p string", "--partition-by", "p",
        "--property", "delta.columnMapping.mode=name")
    notes[0] = "deltacpp create, columnMapping.mode=name"
    cli("write", t, _csv(tmp_path / "1.csv", "id,v,p", ["1,one,x", "2,two,y", "3,,x"]))
    notes[1] = "deltacpp write"
    cli("alter", t, "add-columns", "extra int, note string")
    notes[2] = "deltacpp alter add-columns"
    cli("write", t, _csv(tmp_path / "3.csv", "id,v,p,extra,note", ["4,four,x,40,n4", "5,,z,,"]))
    notes[3] = "deltacpp write with the new columns"
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN v TO v_renamed")
    notes[4] = "Spark RENAME COLUMN v -> v_renamed"
    cli("write", t, _csv(tmp_path / "5.csv", "id,v_renamed,p,extra,note", ["6,six,y,60,n6"]))
    notes[5] = "deltacpp write to the renamed column"
    schema = json.loads(next(a for a in _actions(t, 0) if "metaData" in a)
                        ["metaData"]["schemaString"])
    assert all(f["metadata"]["delta.columnMapping.physicalName"] != f["name"]
               for f in schema["fields"]), "deltacpp wrote no physical names"
    assert _spark_versions(spark, t) == cpp_versions(t) == list(range(6))
    compare_versions_all(spark, t, range(6), notes, rs_via="sql")
    assert sorted(r["v_renamed"] or "" for r in cpp_read(t).to_pylist()) == \
        ["", "", "four", "one", "six", "two"]
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


def test_delta_rs_pyarrow_reader_ignores_column_mapping(tmp_path):
    """Known delta-rs bug (docs/interop.md): deltalake 1.6.6's to_pyarrow_table() on a
    column-mapping (name mode) table looks the logical names up in the Parquet files, which hold
    the physical names, and returns NULL for every non-partition column. The protocol's *Column
    Mapping* section says readers must resolve columns by physical name; delta-rs's own SQL
    engine (QueryBuilder), Spark and deltacpp do. Asserts the current behaviour, so that a
    fixed delta-rs makes this test fail and the plain comparison be used."""
    t = tmp_path / "colmap_rs"
    cli("create", t, "--schema", "id long, v string, p string", "--partition-by", "p",
        "--property", "delta.columnMapping.mode=name")
    cli("write", t, _csv(tmp_path / "1.csv", "id,v,p", ["1,one,x", "2,two,y"]))
    rows = sorted(rs_read(t, 1).to_pylist(), key=lambda r: r["p"])
    assert rows == [{"id": None, "v": None, "p": "x"}, {"id": None, "v": None, "p": "y"}]
    assert sorted(rs_read_sql(t, 1).to_pylist(), key=lambda r: r["p"]) == \
        [{"id": 1, "v": "one", "p": "x"}, {"id": 2, "v": "two", "p": "y"}]


# ---------------------------------------------------------------------------------------------
# In-commit timestamps
# ---------------------------------------------------------------------------------------------
def test_in_commit_timestamps_time_travel(spark, tmp_path):
    """Time travel by timestamp on a deltacpp table with in-commit timestamps: the commit files'
    modification times are moved to 2001 afterwards, so only the inCommitTimestamp of each
    commit can give the right version; Spark timestampAsOf and deltacpp --timestamp agree, and
    both refuse a time before the first commit and after the last. Every version reads the same
    in all three engines. delta-rs's time travel by timestamp agrees between the commits while
    the file times are the commit times, and afterwards shows a known delta-rs limitation: it
    goes by the file times, not the in-commit timestamps (docs/interop.md)."""
    t = tmp_path / "ict"
    cli("create", t, "--schema", "id long, v string",
        "--property", "delta.enableInCommitTimestamps=true")
    for v in range(1, 4):
        time.sleep(0.25)
        cli("write", t, _csv(tmp_path / f"{v}.csv", "id,v", [f"{v},v{v}"]))
    ict = {}
    for v in range(4):
        ci = next(a["commitInfo"] for a in _actions(t, v) if "commitInfo" in a)
        assert "inCommitTimestamp" in ci, f"version {v}: no inCommitTimestamp in {ci}"
        ict[v] = ci["inCommitTimestamp"]
    assert all(ict[v] < ict[v + 1] for v in range(3)), ict
    compare_versions_all(spark, t, range(4))

    def at(ms):
        return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)

    def rs_version_at(when):
        dtab = rs_table(t)
        dtab.load_as_version(when)
        return dtab.version()

    # while the commit files' times are the commit times, delta-rs agrees between commits
    between = {v: at((ict[v] + ict[v + 1]) // 2) for v in range(3)}
    rs_before = {v: rs_version_at(when) for v, when in between.items()}
    assert rs_before == {v: v for v in range(3)}, f"delta-rs load_as_version: {rs_before}"
    old = dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    for p in (t / "_delta_log").glob("*.json"):
        os.utime(p, (old, old))

    # DESCRIBE HISTORY shows the in-commit timestamps (not the file times) in both
    hist = {h["version"]: h["timestamp"] for h in cpp_history(t)}
    for v in range(4):
        mine = dt.datetime.fromisoformat(hist[v].replace("Z", "+00:00"))
        assert int(mine.timestamp() * 1000) == ict[v], f"deltacpp history v{v}: {hist[v]}"
    spark_hist = {r.version: r.timestamp for r in
                  spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version", "timestamp")
                  .collect()}
    for v in range(4):
        ms = int(spark_hist[v].replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        assert ms == ict[v], f"Spark history v{v}: {spark_hist[v]}, inCommitTimestamp {ict[v]}"

    instants = {}
    for v in range(4):
        instants[at(ict[v])] = v                      # exactly at the commit
        if v < 3:
            instants[at((ict[v] + ict[v + 1]) // 2)] = v  # between two commits
    failures = []
    for when, want in sorted(instants.items()):
        iso = when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        mine = cpp_read(t, timestamp=iso)
        ids = sorted(r["id"] for r in mine.to_pylist())
        if ids != list(range(1, want + 1)):
            failures.append(f"deltacpp --timestamp {iso}: ids {ids}, want version {want}")
        spark_ts = when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        df = spark_df(spark, t, timestamp=spark_ts)
        cols = mine.column_names
        try:
            assert_same_rows(arrow_rows(mine, cols), spark_rows(df, cols),
                             f"deltacpp --timestamp {iso} vs Spark timestampAsOf {spark_ts}")
        except AssertionError as e:
            failures.append(str(e))
    # before the first commit and after the last: both refuse
    for when, kind in ((at(ict[0] - 1000), "before"), (at(ict[3] + 3_600_000), "after")):
        p = cli("read", t, "--timestamp", when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                check=False)
        if p.returncode == 0 or "TimestampOutOfRange" not in p.stderr:
            failures.append(f"deltacpp read a timestamp {kind} the commits: {p.stderr}")
        with pytest.raises(Exception, match=f"(?i)timestamp.*{kind}|{kind}.*timestamp"):
            spark_df(spark, t, timestamp=when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]).collect()
    assert not failures, "\n".join(failures)
    # Known delta-rs limitation: with the file times moved, deltalake 1.6.6 load_as_version
    # ignores inCommitTimestamp and gives the latest version for every instant, as the
    # 2001 file times are all before it. Asserted so that a fixed delta-rs fails this.
    rs_after = {v: rs_version_at(when) for v, when in between.items()}
    assert rs_after == {v: 3 for v in range(3)}, f"delta-rs load_as_version: {rs_after}"
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


# ---------------------------------------------------------------------------------------------
# Row tracking
# ---------------------------------------------------------------------------------------------
def _row_tracking_hwm(t: Path, version: int) -> int | None:
    for a in _actions(t, version):
        dm = a.get("domainMetadata")
        if dm and dm["domain"] == "delta.rowTracking":
            return json.loads(dm["configuration"])["rowIdHighWaterMark"]
    return None


def test_row_tracking(spark, tmp_path):
    """Row ids assigned by deltacpp (baseRowId, defaultRowCommitVersion, the high-water mark)
    are the ones Spark reads as _metadata.row_id / row_commit_version, and Spark's and
    deltacpp's later commits continue after each other's high-water mark."""
    t = tmp_path / "rowtrack"
    cli("create", t, "--schema", "id long, v string",
        "--property", "delta.enableRowTracking=true")
    cli("write", t, _csv(tmp_path / "1.csv", "id,v", [f"{i},a{i}" for i in range(5)]))
    cli("write", t, _csv(tmp_path / "2.csv", "id,v", [f"{i},b{i}" for i in range(5, 8)]))
    base = {}
    for v in (1, 2):
        for a in _actions(t, v):
            if "add" in a:
                base[Path(a["add"]["path"]).name] = (a["add"]["baseRowId"],
                                                     a["add"]["defaultRowCommitVersion"])
    assert _row_tracking_hwm(t, 2) == 7
    rows = spark_df(spark, t).selectExpr(
        "id", "_metadata.row_id AS row_id", "_metadata.row_commit_version AS rcv",
        "_metadata.file_name AS f", "_metadata.row_index AS ri").collect()
    bad = [r for r in rows if (r.row_id, r.rcv) != (base[r.f][0] + r.ri, base[r.f][1])]
    assert not bad, f"Spark's row ids differ from deltacpp's baseRowId + row index: {bad}"
    assert sorted(r.row_id for r in rows) == list(range(8))

    spark.sql(f"INSERT INTO delta.`{t}` VALUES (100, 'spark'), (101, 'spark')")       # v3
    assert _row_tracking_hwm(t, 3) == 9, "Spark did not continue after deltacpp's mark"
    cli("write", t, _csv(tmp_path / "4.csv", "id,v", ["200,cpp"]))                   # v4
    assert _row_tracking_hwm(t, 4) == 10, "deltacpp did not continue after Spark's mark"
    ids = spark_df(spark, t).selectExpr("id", "_metadata.row_id AS row_id").collect()
    assert sorted(r.row_id for r in ids) == list(range(11)), ids
    compare_versions_all(spark, t, range(5))
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


# ---------------------------------------------------------------------------------------------
# Identity and generated columns
# ---------------------------------------------------------------------------------------------
def test_identity_and_generated_columns(spark, tmp_path):
    t = tmp_path / "ident"
    cli("create", t, "--schema",
        "id BIGINT GENERATED ALWAYS AS IDENTITY, v string, d date, "
        "y int GENERATED ALWAYS AS (year(d))")
    cli("write", t, _csv(tmp_path / "1.csv", "v,d", ["a,2024-01-02", "b,1999-12-31"]))   # v1
    cli("write", t, _csv(tmp_path / "2.csv", "v,d", ["c,2000-02-29", "d,"]))            # v2
    cpp_ids = sorted(r["id"] for r in cpp_read(t).to_pylist())
    assert cpp_ids == [1, 2, 3, 4]
    spark.sql(f"INSERT INTO delta.`{t}` (v, d) VALUES ('s1', DATE'2030-06-01'), "
              f"('s2', NULL)")                                                          # v3
    spark_ids = sorted(r["id"] for r in cpp_read(t).to_pylist() if r["v"].startswith("s"))
    assert len(spark_ids) == 2 and min(spark_ids) > 4, \
        f"Spark's identity values {spark_ids} do not continue after deltacpp's (4)"
    cli("write", t, _csv(tmp_path / "4.csv", "v,d", ["e,2011-11-11"]))                 # v4
    rows = cpp_read(t).to_pylist()
    e_id = next(r["id"] for r in rows if r["v"] == "e")
    assert e_id > max(spark_ids), f"deltacpp's id {e_id} after Spark's {spark_ids}"
    assert len({r["id"] for r in rows}) == len(rows) == 7
    assert all(r["y"] == (r["d"].year if r["d"] else None) for r in rows), rows
    # Spark enforces deltacpp's generation expression and the ALWAYS identity
    with pytest.raises(Exception, match="(?i)generat|constraint|CHECK"):
        spark.sql(f"INSERT INTO delta.`{t}` (v, d, y) VALUES ('bad', DATE'2020-01-01', 1999)")
    with pytest.raises(Exception, match="(?i)identity|GENERATED ALWAYS"):
        spark.sql(f"INSERT INTO delta.`{t}` (id, v, d) VALUES (99, 'bad', NULL)")
    compare_versions_all(spark, t, range(5))
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


def test_describe_agrees_on_legacy_identity_protocol(spark, tmp_path):
    """An identity column gives the legacy protocol (1, 6). Its features per the protocol's
    *Table Features* section: writer version 6 implies appendOnly, invariants,
    checkConstraints, changeDataFeed, generatedColumns and identityColumns; columnMapping
    needs reader version 2 as well, so a reader-version-1 table does not have it. Spark's
    DESCRIBE DETAIL and `deltacpp describe` must list the same features."""
    t = tmp_path / "ident_protocol"
    cli("create", t, "--schema", "id BIGINT GENERATED ALWAYS AS IDENTITY, v string")
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


# ---------------------------------------------------------------------------------------------
# Checkpoints and log cleanup
# ---------------------------------------------------------------------------------------------
def _only_from_checkpoint(t: Path, dest: Path, version: int) -> Path:
    """A copy of T whose log starts at the checkpoint of VERSION (and that version's commit,
    which Spark requires: "Could not find any delta files for version N" without it): readers
    must use the checkpoint."""
    shutil.copytree(t, dest)
    for p in (dest / "_delta_log").iterdir():
        if p.name[:20].isdigit() and int(p.name[:20]) < version:
            p.unlink()
    return dest


@pytest.mark.parametrize("kind", ["classic", "v2"])
def test_checkpoints(spark, tmp_path, kind):
    """checkpointInterval=2 makes deltacpp write checkpoints at versions 2 and 4, and
    `deltacpp checkpoint` one at version 5; every version reads the same in all three readers,
    and so does version 5 from a copy whose log starts at that checkpoint."""
    t = tmp_path / kind
    props = ["--property", "delta.checkpointInterval=2"]
    if kind == "v2":
        props += ["--property", "delta.checkpointPolicy=v2",
                  "--property", "delta.feature.v2Checkpoint=supported"]
    cli("create", t, "--schema", "id long, v string, p string", "--partition-by", "p", *props)
    for v in range(1, 6):
        cli("write", t, _csv(tmp_path / f"{v}.csv", "id,v,p",
                             [f"{v * 10 + i},v{v},{'ab'[i % 2]}" for i in range(3)]))
    cli("checkpoint", t)
    log = sorted(p.name for p in (t / "_delta_log").iterdir())
    cps = [n for n in log if ".checkpoint." in n]
    print(f"{kind}-checkpoints:", cps)
    assert sorted({int(n[:20]) for n in cps}) == [2, 4, 5], log
    if kind == "v2":
        assert all(len(n.split(".")) == 4 for n in cps), \
            f"V2 checkpoints should be UUID-named: {cps}"
    last = json.loads((t / "_delta_log" / "_last_checkpoint").read_text())
    assert last["version"] == 5
    # delta-rs's to_pyarrow_table() refuses V2-checkpoint tables (the v2Checkpoint reader
    # feature; docs/interop.md); its SQL engine reads them
    via = "sql" if kind == "v2" else "dataset"
    compare_versions_all(spark, t, range(6), rs_via=via)
    cp = _only_from_checkpoint(t, tmp_path / f"{kind}_from_cp", 5)
    compare_versions_all(spark, cp, [5], rs_via=via)
    if kind == "v2":
        with pytest.raises(Exception, match="v2Checkpoint"):
            rs_read(t, 5)
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)


def test_log_cleanup(spark, tmp_path):
    """delta.logRetentionDuration=interval 1 days: with every log file aged three days, the next
    checkpoint deletes the commits and checkpoints before the newest expired checkpoint; every
    remaining version reads the same in all readers, and the deleted ones in none."""
    t = tmp_path / "cleanup"
    cli("create", t, "--schema", "id long, v string",
        "--property", "delta.logRetentionDuration=interval 1 days",
        "--property", "delta.checkpointInterval=3")
    for v in range(1, 8):
        cli("write", t, _csv(tmp_path / f"{v}.csv", "id,v", [f"{v},v{v}"]))
    assert log_versions_on_disk(t) == list(range(8))
    old = time.time() - 3 * 86400
    for p in (t / "_delta_log").iterdir():
        os.utime(p, (old, old))
    cli("write", t, _csv(tmp_path / "8.csv", "id,v", ["8,v8"]))
    cli("write", t, _csv(tmp_path / "9.csv", "id,v", ["9,v9"]))   # checkpoint 9: cleanup
    cli("checkpoint", t)
    remaining = log_versions_on_disk(t)
    print("log-cleanup-remaining:", sorted(p.name for p in (t / "_delta_log").iterdir()))
    assert remaining == [6, 7, 8, 9], remaining
    assert cpp_versions(t) == _spark_versions(spark, t) == remaining
    compare_versions_all(spark, t, remaining)
    assert sorted(r["id"] for r in cpp_read(t, 6).to_pylist()) == list(range(1, 7))
    for v in (0, 5):
        p = cli("read", t, "--version", v, check=False)
        assert p.returncode != 0 and "VersionNotFound" in p.stderr, p.stderr
        with pytest.raises(Exception, match="No files in log segment"):
            rs_read(t, v)
        with pytest.raises(Exception, match="DELTA_VERSION_NOT_FOUND"):
            spark_df(spark, t, v).collect()
    assert_detail_agrees(spark, t)
    assert_history_agrees(spark, t)
