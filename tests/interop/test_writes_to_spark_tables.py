"""deltacpp writes to tables that Spark created with writer features turned on: for every
feature deltacpp claims to write, Spark makes the table (and, where it matters, the state the
feature tracks: renamed columns, deletion vectors, a widened type, a V2 checkpoint), deltacpp
appends with the CLI, and Spark and delta-rs read exactly the rows the test put in, while the
feature's own bookkeeping (identity high-water mark, row ids, in-commit timestamps, clustering
domain, change data) is still right afterwards."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

from interop_util import (arrow_rows, assert_history_agrees, assert_same_rows, cli,
                          compare_versions_all, cpp_read, rs_read_sql, spark_df, spark_rows)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
def _commits(t) -> dict[int, list[dict]]:
    log = Path(t) / "_delta_log"
    out = {}
    for f in sorted(log.glob("*.json")):
        stem = f.name.split(".")[0]
        if len(f.name) == 25 and stem.isdigit():
            out[int(stem)] = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    return out


def _latest_version(t) -> int:
    return max(_commits(t))


def _commit_info(t, version) -> dict:
    for a in _commits(t)[version]:
        if "commitInfo" in a:
            return a["commitInfo"]
    raise AssertionError(f"version {version} of {t} has no commitInfo")


def _append(t, rows: list[dict], *extra) -> int:
    """Appends `rows` with `deltacpp write`; returns the committed version after checking it is
    the next one and that deltacpp wrote it."""
    before = _latest_version(t)
    p = cli("write", t, "--mode", "append", "--input-format", "json", *extra, "-",
            input="".join(json.dumps(r) + "\n" for r in rows))
    after = _latest_version(t)
    assert after == before + 1, f"expected version {before + 1}, log ends at {after}: {p.stdout}"
    assert _commit_info(t, after)["engineInfo"].startswith("deltacpp/")
    return after


def _refused(t, args: list, rows: list[dict], what: str):
    """A deltacpp write that must fail and leave the log as it was."""
    before = _latest_version(t)
    p = cli("write", t, *args, "--input-format", "json", "-", check=False,
            input="".join(json.dumps(r) + "\n" for r in rows))
    assert p.returncode != 0, f"{what}: deltacpp accepted the write: {p.stdout}"
    assert p.stderr.strip(), f"{what}: no error message"
    assert _latest_version(t) == before, f"{what}: the refused write changed the log"
    return p.stderr


def _check_peers(spark, t, cols, expected, rs_refuses=None):
    """Spark and delta-rs (through its SQL engine, which applies column mapping and deletion
    vectors) read exactly `expected` (tuples in `cols` order) at the latest version; deltacpp
    too. `rs_refuses` names a reader feature delta-rs does not support: then its refusal, naming
    the feature, is what is asserted. Then every version, Spark's and deltacpp's, reads the
    same in all three (rows, column types and nullability), and the histories agree."""
    _check_latest(spark, t, cols, expected, rs_refuses)
    rs = rs_refuses is None
    compare_versions_all(spark, t, range(_latest_version(t) + 1), rs=rs, rs_via="sql")
    assert_history_agrees(spark, t, rs=rs)


def _check_latest(spark, t, cols, expected, rs_refuses):
    assert_same_rows(expected, spark_rows(spark_df(spark, t), cols), f"{t}: Spark")
    if rs_refuses is None:
        assert_same_rows(expected, arrow_rows(rs_read_sql(t), cols), f"{t}: delta-rs")
    else:
        with pytest.raises(Exception) as refused:
            rs_read_sql(t)
        assert rs_refuses.lower() in str(refused.value).lower(), str(refused.value)
    assert_same_rows(expected, arrow_rows(cpp_read(t), cols), f"{t}: deltacpp")


def _sql(spark, text):
    return spark.sql(text).collect()


# ---------------------------------------------------------------------------------------------
# One test per feature
# ---------------------------------------------------------------------------------------------
def test_append_only(spark, tmp_path):
    t = str(tmp_path / "append_only")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta "
                "TBLPROPERTIES ('delta.appendOnly' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b')")
    _append(t, [{"id": 3, "s": "c"}])
    err = _refused(t, ["--mode", "overwrite"], [{"id": 9, "s": "z"}], "overwrite of appendOnly")
    assert "append" in err.lower(), err
    _check_peers(spark, t, ["id", "s"], [(1, "a"), (2, "b"), (3, "c")])


# Spark 4 no longer creates `delta.invariants` column metadata from SQL (CHECK constraints
# replaced it), so invariants on a Spark-made table cannot be set up here; the invariant rules
# are tested on hand-built logs in tests/ops/column_rules_test.cc.


def test_check_constraints(spark, tmp_path):
    t = str(tmp_path / "check")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a')")
    _sql(spark, f"ALTER TABLE delta.`{t}` ADD CONSTRAINT positive CHECK (id > 0)")
    _append(t, [{"id": 2, "s": "b"}])
    err = _refused(t, ["--mode", "append"], [{"id": -5, "s": "bad"}], "CHECK violation")
    assert "positive" in err, err
    _check_peers(spark, t, ["id", "s"], [(1, "a"), (2, "b")])
    # Spark's own check still holds over deltacpp's rows: a violating insert fails there too.
    with pytest.raises(Exception, match="(?i)CHECK constraint positive"):
        _sql(spark, f"INSERT INTO delta.`{t}` VALUES (-1, 'x')")


def test_generated_columns(spark, tmp_path):
    t = str(tmp_path / "generated")
    _sql(spark, f"""CREATE TABLE delta.`{t}` (id BIGINT, d DATE,
                   y INT GENERATED ALWAYS AS (YEAR(d))) USING delta""")
    _sql(spark, f"INSERT INTO delta.`{t}` (id, d) VALUES (1, DATE'2021-05-06')")
    _append(t, [{"id": 2, "d": "2024-01-15"}])  # y computed by deltacpp
    _append(t, [{"id": 3, "d": "2023-12-31", "y": 2023}])  # y given and correct
    err = _refused(t, ["--mode", "append"], [{"id": 4, "d": "2023-12-31", "y": 1999}],
                   "wrong generated value")
    assert "ConstraintViolation" in err and "generated column 'y'" in err, err
    _check_peers(spark, t, ["id", "d", "y"],
                 [(1, dt.date(2021, 5, 6), 2021), (2, dt.date(2024, 1, 15), 2024),
                  (3, dt.date(2023, 12, 31), 2023)])


def _identity_meta(t, column):
    latest = _latest_version(t)
    schema = None
    for v in sorted(_commits(t)):
        for a in _commits(t)[v]:
            if "metaData" in a:
                schema = json.loads(a["metaData"]["schemaString"])
    assert schema is not None, f"no metaData up to version {latest}"
    return next(f for f in schema["fields"] if f["name"] == column)["metadata"]


def test_identity_columns(spark, tmp_path):
    t = str(tmp_path / "identity")
    _sql(spark, f"""CREATE TABLE delta.`{t}` (
                   id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5),
                   v STRING) USING delta""")
    _sql(spark, f"INSERT INTO delta.`{t}` (v) VALUES ('s1'), ('s2')")
    mark_before = int(_identity_meta(t, "id")["delta.identity.highWaterMark"])
    _append(t, [{"v": "c1"}, {"v": "c2"}])
    mark_after = int(_identity_meta(t, "id")["delta.identity.highWaterMark"])
    assert mark_after == mark_before + 10, (mark_before, mark_after)
    err = _refused(t, ["--mode", "append"], [{"id": 7, "v": "explicit"}],
                   "explicit ALWAYS identity")
    assert "ConstraintViolation: column 'id' is GENERATED ALWAYS AS IDENTITY" in err, err
    _sql(spark, f"INSERT INTO delta.`{t}` (v) VALUES ('s3')")
    rows = spark_rows(spark_df(spark, t), ["id", "v"])
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)) == 5, rows
    assert all(i >= 10 and (i - 10) % 5 == 0 for i in ids), ids
    mine = {r[1]: r[0] for r in rows}
    assert {mine["c1"], mine["c2"]} == {mark_before + 5, mark_before + 10}
    assert mine["s3"] > mark_after
    assert_same_rows(rows, arrow_rows(rs_read_sql(t), ["id", "v"]), f"{t}: delta-rs")

    by_default = str(tmp_path / "identity_by_default")
    _sql(spark, f"""CREATE TABLE delta.`{by_default}` (
                   id BIGINT GENERATED BY DEFAULT AS IDENTITY, v STRING) USING delta""")
    _sql(spark, f"INSERT INTO delta.`{by_default}` (v) VALUES ('s1')")
    _append(by_default, [{"v": "c1"}])  # generated
    _append(by_default, [{"id": 100, "v": "explicit"}])  # given: BY DEFAULT accepts it
    rows = dict((v, i) for i, v in spark_rows(spark_df(spark, by_default), ["id", "v"]))
    assert rows["explicit"] == 100
    assert rows["c1"] != rows["s1"]
    for table in (t, by_default):
        compare_versions_all(spark, table, range(_latest_version(table) + 1), rs_via="sql")
        assert_history_agrees(spark, table)


def test_change_data_feed(spark, tmp_path):
    t = str(tmp_path / "cdf")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta "
                "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b')")
    v = _append(t, [{"id": 3, "s": "c"}])
    changes = (spark.read.format("delta").option("readChangeFeed", "true")
               .option("startingVersion", v).load(t))
    got = spark_rows(changes, ["id", "s", "_change_type", "_commit_version"])
    assert_same_rows([(3, "c", "insert", v)], got, "Spark's change feed of deltacpp's append")
    # a replaceWhere that rewrites part of a file is described by deltacpp's cdc files
    v2 = int(cli("write", t, "--mode", "overwrite", "--replace-where", "id = 2",
                 "--input-format", "json", "-", input='{"id": 2, "s": "B"}\n')
             .stdout.split("committed version ")[1].split(":")[0])
    changes = (spark.read.format("delta").option("readChangeFeed", "true")
               .option("startingVersion", v2).load(t))
    got = spark_rows(changes, ["id", "s", "_change_type"])
    assert_same_rows([(2, "b", "delete"), (2, "B", "insert")], got,
                     "Spark's change feed of deltacpp's replaceWhere")
    _check_peers(spark, t, ["id", "s"], [(1, "a"), (2, "B"), (3, "c")])


def test_column_mapping_name_mode_renamed_and_dropped(spark, tmp_path):
    t = str(tmp_path / "mapped")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, old_name STRING, gone STRING, p STRING) "
                "USING delta PARTITIONED BY (p) "
                "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a', 'x', 'p1')")
    _sql(spark, f"ALTER TABLE delta.`{t}` RENAME COLUMN old_name TO new_name")
    _sql(spark, f"ALTER TABLE delta.`{t}` DROP COLUMN gone")
    _append(t, [{"id": 2, "new_name": "b", "p": "p1"}, {"id": 3, "new_name": "c", "p": "p2"}])
    _check_peers(spark, t, ["id", "new_name", "p"], [(1, "a", "p1"), (2, "b", "p1"),
                                                      (3, "c", "p2")])


def test_column_mapping_id_mode(spark, tmp_path):
    t = str(tmp_path / "mapped_id")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta "
                "TBLPROPERTIES ('delta.columnMapping.mode' = 'id')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a')")
    _sql(spark, f"ALTER TABLE delta.`{t}` RENAME COLUMN s TO s2")
    _append(t, [{"id": 2, "s2": "b"}])
    _check_peers(spark, t, ["id", "s2"], [(1, "a"), (2, "b")])


def test_timestamp_ntz(spark, tmp_path):
    t = str(tmp_path / "ntz")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, at TIMESTAMP_NTZ) USING delta")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, TIMESTAMP_NTZ'2024-01-02 03:04:05')")
    _append(t, [{"id": 2, "at": "1999-12-31T23:59:59"}])
    _check_peers(spark, t, ["id", "at"], [(1, dt.datetime(2024, 1, 2, 3, 4, 5)),
                                          (2, dt.datetime(1999, 12, 31, 23, 59, 59))])


def test_deletion_vectors(spark, tmp_path):
    t = str(tmp_path / "dv")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta "
                "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` SELECT id, CAST(id AS STRING) FROM range(0, 20)")
    _sql(spark, f"DELETE FROM delta.`{t}` WHERE id % 3 = 0")
    has_dv = any("add" in a and a["add"].get("deletionVector")
                 for acts in _commits(t).values() for a in acts)
    assert has_dv, "Spark's DELETE wrote no deletion vector"
    _append(t, [{"id": 100, "s": "100"}])
    expected = [(i, str(i)) for i in range(20) if i % 3] + [(100, "100")]
    _check_peers(spark, t, ["id", "s"], expected)


def test_clustering_keeps_its_domain(spark, tmp_path):
    t = str(tmp_path / "clustered")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, s STRING) USING delta CLUSTER BY (id)")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 'a')")
    _append(t, [{"id": 2, "s": "b"}])
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0]
    assert list(detail.clusteringColumns) == ["id"]
    _check_peers(spark, t, ["id", "s"], [(1, "a"), (2, "b")])


def test_v2_checkpoints(spark, tmp_path):
    t = str(tmp_path / "v2cp")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1)")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (2)")  # version 2: Spark's V2 checkpoint
    log = Path(t) / "_delta_log"
    spark_cps = {p.name for p in log.glob("*.checkpoint.*") if p.name.count(".") == 3}
    assert spark_cps, f"Spark wrote no V2 checkpoint: {sorted(p.name for p in log.iterdir())}"
    _append(t, [{"id": 3}])
    v = _append(t, [{"id": 4}])
    assert v % 2 == 0
    ours = [p for p in log.glob(f"{v:020d}.checkpoint.*.parquet")]
    assert len(ours) == 1, f"no V2 checkpoint of version {v}: {sorted(p.name for p in log.iterdir())}"
    hint = json.loads((log / "_last_checkpoint").read_text())
    assert hint["version"] == v
    _check_peers(spark, t, ["id"], [(1,), (2,), (3,), (4,)])


def test_vacuum_protocol_check(spark, tmp_path):
    t = str(tmp_path / "vpc")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.feature.vacuumProtocolCheck' = 'supported')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1)")
    _append(t, [{"id": 2}])
    _check_peers(spark, t, ["id"], [(1,), (2,)], rs_refuses="vacuumProtocolCheck")


def test_in_commit_timestamps(spark, tmp_path):
    t = str(tmp_path / "ict")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1)")
    prev = _commit_info(t, _latest_version(t))["inCommitTimestamp"]
    v = _append(t, [{"id": 2}])
    info = _commit_info(t, v)
    assert info["inCommitTimestamp"] > prev
    assert next(iter(_commits(t)[v][0])) == "commitInfo", "commitInfo must be the first action"
    hist = {r.version: r.timestamp for r in spark.sql(f"DESCRIBE HISTORY delta.`{t}`").collect()}
    spark_ms = int(hist[v].replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert spark_ms == info["inCommitTimestamp"]
    _check_peers(spark, t, ["id"], [(1,), (2,)])


def test_row_tracking(spark, tmp_path):
    t = str(tmp_path / "rows")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1), (2)")

    def hwm():
        mark = None
        for v in sorted(_commits(t)):
            for a in _commits(t)[v]:
                d = a.get("domainMetadata")
                if d and d["domain"] == "delta.rowTracking":
                    mark = json.loads(d["configuration"])["rowIdHighWaterMark"]
        return mark

    before = hwm()
    _append(t, [{"id": 3}, {"id": 4}, {"id": 5}])
    assert hwm() == before + 3
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (6)")
    got = spark_df(spark, t).selectExpr("id", "_metadata.row_id AS row_id").collect()
    row_ids = [r.row_id for r in got]
    assert len(row_ids) == len(set(row_ids)) == 6, got
    _check_peers(spark, t, ["id"], [(i,) for i in range(1, 7)])


def test_type_widening(spark, tmp_path):
    t = str(tmp_path / "widened")
    _sql(spark, f"CREATE TABLE delta.`{t}` (id BIGINT, v INT) USING delta "
                "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    _sql(spark, f"INSERT INTO delta.`{t}` VALUES (1, 7)")
    _sql(spark, f"ALTER TABLE delta.`{t}` ALTER COLUMN v TYPE BIGINT")
    big = 2 ** 40
    _append(t, [{"id": 2, "v": big}])
    df = spark_df(spark, t)
    assert dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)["v"] == "bigint"
    _check_peers(spark, t, ["id", "v"], [(1, 7), (2, big)], rs_refuses="typeWidening")
