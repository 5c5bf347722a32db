"""Spark writes tables with the change data feed on (INSERT, UPDATE, DELETE, MERGE; with and
without deletion vectors; with column mapping and an added column) and `deltacpp changes`
must report exactly what Spark's `readChangeFeed` reports for several ranges, by version and by
timestamp: every column, `_change_type`, `_commit_version` and `_commit_timestamp` included,
compared as multisets. A table deltacpp wrote with replaceWhere is compared the same way. The
ranges Spark refuses (feed off, start after the latest version, end before start, a starting
timestamp after the latest commit, a rename inside the range) deltacpp refuses too."""
from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from interop_util import arrow_rows, assert_same_rows, cli, spark_rows, write_jsonl

CHANGE_COLS = ["_change_type", "_commit_version", "_commit_timestamp"]


def cpp_changes(table, start, end=None, check=True):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "changes.parquet"
        args = ["changes", table, "--from", start, "--format", "parquet", "--output", out]
        if end is not None:
            args += ["--to", end]
        p = cli(*args, check=check)
        if p.returncode != 0:
            return p
        return pq.read_table(out)


def spark_changes(spark, table, start, end=None, by="version"):
    r = spark.read.format("delta").option("readChangeFeed", "true")
    key = "Version" if by == "version" else "Timestamp"
    r = r.option(f"starting{key}", start)
    if end is not None:
        r = r.option(f"ending{key}", end)
    return r.load(str(table))


def assert_changes_agree(spark, table, start, end=None, by="version"):
    theirs = spark_changes(spark, table, start, end, by)
    cols = theirs.columns
    if by == "version":
        mine = cpp_changes(table, start, end)
    else:
        mine = cpp_changes(table, _iso(start), None if end is None else _iso(end))
    assert mine.column_names == cols, f"columns {mine.column_names} vs Spark's {cols}"
    assert str(mine.schema.field("_commit_timestamp").type) == "timestamp[us, tz=UTC]"
    assert str(mine.schema.field("_commit_version").type) == "int64"
    assert_same_rows(spark_rows(theirs, cols), arrow_rows(mine, cols),
                     f"changes of {table} from {start} to {end} (by {by})")


def assert_both_fail(spark, table, start, end=None, by="version", spark_says="", cpp_says=""):
    with pytest.raises(Exception) as e:
        spark_changes(spark, table, start, end, by).collect()
    assert spark_says in str(e.value), str(e.value)[:2000]
    if by == "version":
        p = cpp_changes(table, start, end, check=False)
    else:
        p = cpp_changes(table, _iso(start), None if end is None else _iso(end), check=False)
    assert not hasattr(p, "column_names"), "deltacpp read changes Spark refuses"
    assert p.returncode != 0 and cpp_says in p.stderr, p.stderr


def _iso(spark_ts: str) -> str:
    # "2024-01-02 03:04:05.678" (Spark option, session zone UTC) -> ISO-8601 UTC
    return spark_ts.replace(" ", "T") + "Z"


def commit_actions(table, version) -> list[dict]:
    text = (Path(table) / "_delta_log" / f"{version:020d}.json").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def commit_times(spark, table) -> dict[int, dt.datetime]:
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").select("version", "timestamp").collect()
    return {r["version"]: r["timestamp"] for r in rows}


def ts_text(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _dml_history(spark, t, dv: bool):
    spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, name STRING, part STRING) USING delta
                  PARTITIONED BY (part)
                  TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true',
                                 'delta.enableDeletionVectors' = '{str(dv).lower()}')""")  # v0
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a', 'x'), (2, 'b', 'x'), (10, 'j', 'x'), "
              f"(3, 'c', 'y'), (4, 'd', 'y'), (11, 'k', 'y'), (5, 'e', 'z')")        # v1
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (6, 'f', 'x'), (7, 'g', 'y')")        # v2
    spark.sql(f"UPDATE delta.`{t}` SET name = upper(name) WHERE id IN (2, 3)")       # v3
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 4")                               # v4
    spark.sql(f"DELETE FROM delta.`{t}` WHERE part = 'z'")                           # v5
    spark.sql(f"""MERGE INTO delta.`{t}` AS t
                  USING (SELECT * FROM VALUES (1, 'A1', 'x'), (6, 'gone', 'x'), (8, 'h', 'y')
                         AS s(id, name, part)) AS s
                  ON t.id = s.id
                  WHEN MATCHED AND s.name = 'gone' THEN DELETE
                  WHEN MATCHED THEN UPDATE SET t.name = s.name
                  WHEN NOT MATCHED THEN INSERT *""")                                 # v6
    spark.sql(f"OPTIMIZE delta.`{t}`")                                               # v7
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (9, 'i', 'x')")                       # v8


@pytest.mark.parametrize("dv", [False, True], ids=["rewrite", "deletion_vectors"])
def test_dml_changes_match_spark(spark, tmp_path, dv):
    t = tmp_path / "dml"
    _dml_history(spark, t, dv)
    # The history covers each way a commit states its changes: the UPDATE has cdc files; the
    # partition DELETE only removes whole files; with deletion vectors the row DELETE re-adds its
    # file with a DV and no cdc file, without them it rewrites the file with cdc files.
    assert any("cdc" in a for a in commit_actions(t, 3))
    assert not any("cdc" in a for a in commit_actions(t, 5))
    deleted = commit_actions(t, 4)
    if dv:
        assert not any("cdc" in a for a in deleted)
        removed = {a["remove"]["path"] for a in deleted if "remove" in a}
        readded = [a["add"] for a in deleted if "add" in a and a["add"]["path"] in removed]
        assert readded and all(a.get("deletionVector") for a in readded), deleted
    else:
        assert any("cdc" in a for a in deleted)
    for start, end in [(0, None), (1, 3), (3, 6), (4, 4), (5, 5), (6, 6), (7, 8), (2, 100)]:
        assert_changes_agree(spark, t, start, end)
    times = commit_times(spark, t)
    one_ms = dt.timedelta(milliseconds=1)
    # Exactly at commits, just after one, just before one.
    assert_changes_agree(spark, t, ts_text(times[3]), ts_text(times[5]), by="timestamp")
    assert_changes_agree(spark, t, ts_text(times[2] + one_ms), ts_text(times[6] - one_ms),
                         by="timestamp")
    assert_changes_agree(spark, t, ts_text(times[0] - dt.timedelta(days=1)), None,
                         by="timestamp")


def test_column_mapping_and_added_column_match_spark(spark, tmp_path):
    t = tmp_path / "mapped"
    spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, name STRING) USING delta
                  TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true',
                                 'delta.columnMapping.mode' = 'name')""")            # v0
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b'), (3, 'c')")        # v1
    spark.sql(f"UPDATE delta.`{t}` SET name = 'B' WHERE id = 2")                     # v2
    spark.sql(f"ALTER TABLE delta.`{t}` ADD COLUMNS (score DOUBLE)")                 # v3
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (4, 'd', 4.5)")                       # v4
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1")                               # v5
    for start, end in [(0, None), (1, 2), (1, 5), (4, 5), (2, 2)]:
        assert_changes_agree(spark, t, start, end)
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN name TO label")               # v6
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (5, 'e', 5.5)")                       # v7
    assert_changes_agree(spark, t, 6, 7)
    assert_changes_agree(spark, t, 7)
    assert_both_fail(spark, t, 1, 7, spark_says="DELTA_CHANGE_DATA_FEED_INCOMPATIBLE",
                     cpp_says="SchemaMismatch")


def test_deltacpp_replace_where_changes_match_spark(spark, tmp_path):
    t = tmp_path / "cpp"
    cli("create", t, "--schema", "id long, name string, part string", "--partition-by", "part",
        "--property", "delta.enableChangeDataFeed=true")                             # v0
    rows = [{"id": i, "name": f"n{i}", "part": "p" if i % 2 else "q"} for i in range(1, 9)]
    cli("write", t, write_jsonl(tmp_path / "a.json", rows))                          # v1
    cli("write", t, "--mode", "overwrite", "--replace-where", "id >= 5",
        write_jsonl(tmp_path / "b.json", [{"id": 5, "name": "five", "part": "p"},
                                          {"id": 10, "name": "ten", "part": "q"}]))  # v2
    cli("write", t, "--mode", "overwrite", "--replace-where", "part = 'q'",
        write_jsonl(tmp_path / "c.json", [{"id": 12, "name": "twelve", "part": "q"}]))  # v3
    for start, end in [(0, None), (2, 2), (3, 3), (1, 2)]:
        assert_changes_agree(spark, t, start, end)


def test_refused_ranges_are_refused_by_both(spark, tmp_path):
    t = tmp_path / "late"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT) USING delta")                      # v0
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1)")                                 # v1
    spark.sql(f"ALTER TABLE delta.`{t}` SET TBLPROPERTIES "
              f"('delta.enableChangeDataFeed' = 'true')")                            # v2
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (2)")                                 # v3
    assert_changes_agree(spark, t, 2, 3)
    assert_both_fail(spark, t, 0, 3, spark_says="DELTA_MISSING_CHANGE_DATA",
                     cpp_says="not recorded for version [0]")
    assert_both_fail(spark, t, 4, None, spark_says="DELTA_CDC_START_VERSION_AFTER_LATEST",
                     cpp_says="VersionNotFound")
    assert_both_fail(spark, t, 3, 2, spark_says="DELTA_INVALID_CDC_RANGE",
                     cpp_says="InvalidArgument")
    times = commit_times(spark, t)
    after = ts_text(times[3] + dt.timedelta(seconds=10))
    assert_both_fail(spark, t, after, None, by="timestamp",
                     spark_says="DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
                     cpp_says="TimestampOutOfRange")
