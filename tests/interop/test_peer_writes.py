"""Spark and delta-rs write, deltacpp reads: every version of each peer-written table is read
by `deltacpp read --version v` exactly as the writer itself reads it."""
from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from interop_util import (arrow_columns, cli, compare_version_with_rs, compare_version_with_spark,
                          cpp_describe, cpp_history, cpp_read, cpp_versions, spark_arrow_columns, spark_df)


def _spark_versions(spark, t):
    return sorted(r.version for r in
                  spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version").collect())


def _compare_all_versions(spark, t, notes, check_nullability=True):
    versions = _spark_versions(spark, t)
    assert cpp_versions(t) == versions, "deltacpp history shows other versions than Spark's"
    failures = []
    for v in versions:
        try:
            compare_version_with_spark(spark, t, v, check_nullability=check_nullability)
        except AssertionError as e:
            failures.append(f"version {v} ({notes.get(v, '?')}): {e}")
    assert not failures, "\n".join(failures)


def test_spark_default_table_features(spark, tmp_path):
    """Records which protocol and table features Spark 4 gives a table it creates with no
    table properties (documented in docs/interop.md), and that deltacpp reports the same."""
    t = tmp_path / "plain"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT, s STRING, ts TIMESTAMP) USING delta")
    d = spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0]
    print("spark-default-features:", d.minReaderVersion, d.minWriterVersion, d.tableFeatures,
          d.properties)
    mine = cpp_describe(t)
    assert int(mine["min reader version"]) == d.minReaderVersion
    assert int(mine["min writer version"]) == d.minWriterVersion
    feats = {f.strip() for f in mine.get("table features", "").split(",") if f.strip()}
    assert feats == set(d.tableFeatures)
    # what docs/interop.md says about Spark 4's defaults
    assert (d.minReaderVersion, d.minWriterVersion) == (1, 2)
    assert set(d.tableFeatures) == {"appendOnly", "invariants"}
    assert d.properties == {}

    ntz = tmp_path / "ntz"
    spark.sql(f"CREATE TABLE delta.`{ntz}` (id INT, t TIMESTAMP_NTZ) USING delta")
    n = spark.sql(f"DESCRIBE DETAIL delta.`{ntz}`").collect()[0]
    print("spark-ntz-features:", n.minReaderVersion, n.minWriterVersion, n.tableFeatures)
    assert (n.minReaderVersion, n.minWriterVersion) == (3, 7)
    assert "timestampNtz" in n.tableFeatures
    mine = cpp_describe(ntz)
    assert (int(mine["min reader version"]), int(mine["min writer version"])) == (3, 7)


def test_spark_dml_with_deletion_vectors_and_checkpoints(spark, tmp_path):
    t = tmp_path / "spark_dml"
    notes = {}
    spark.sql(f"""CREATE TABLE delta.`{t}` (
        id INT NOT NULL, name STRING, amount DECIMAL(12,3), ts TIMESTAMP, ntz TIMESTAMP_NTZ,
        d DATE, p STRING) USING delta PARTITIONED BY (p)
        TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',
                       'delta.checkpointInterval' = '2')""")
    notes[0] = "create (deletion vectors, checkpointInterval=2, timestamp_ntz)"
    spark.sql(f"""INSERT INTO delta.`{t}` VALUES
        (1, 'alice', 1.5, TIMESTAMP'2024-01-02 03:04:05.123456', TIMESTAMP_NTZ'2024-01-02 03:04:05',
         DATE'2024-01-02', 'x y'),
        (2, 'bob', -0.001, TIMESTAMP'1969-12-31 23:59:59', TIMESTAMP_NTZ'1900-01-01 00:00:00',
         DATE'1900-01-01', 'a/b'),
        (3, NULL, NULL, NULL, NULL, NULL, NULL),
        (4, 'dave', 123456789.999, TIMESTAMP'2038-01-19 03:14:08', NULL, NULL, 'ünï=%#'),
        (5, 'eve', 5, NULL, NULL, NULL, 'x y'),
        (6, 'frank', 6, NULL, NULL, NULL, 'a/b')""")
    notes[1] = "insert"
    spark.range(100, 1100).selectExpr(
        "CAST(id AS INT) AS id", "concat('n', id) AS name",
        "CAST(id / 7 AS DECIMAL(12,3)) AS amount",
        "timestamp_seconds(id * 86400) AS ts", "CAST(NULL AS TIMESTAMP_NTZ) AS ntz",
        "date_add(DATE'2020-01-01', CAST(id AS INT)) AS d",
        "CASE WHEN id % 3 = 0 THEN 'x y' WHEN id % 3 = 1 THEN 'a/b' ELSE NULL END AS p",
    ).write.format("delta").mode("append").save(str(t))
    notes[2] = "append 1000 rows (checkpoint)"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 5 = 0")
    notes[3] = "DELETE (deletion vectors)"
    spark.sql(f"UPDATE delta.`{t}` SET name = upper(name), amount = amount + 1 WHERE id < 300")
    notes[4] = "UPDATE (deletion vectors, checkpoint)"
    spark.sql(f"""MERGE INTO delta.`{t}` AS tgt
        USING (SELECT * FROM VALUES (1, 'merged'), (7, 'inserted'), (101, 'merged2')
               AS src(id, name)) AS src
        ON tgt.id = src.id
        WHEN MATCHED THEN UPDATE SET tgt.name = src.name
        WHEN NOT MATCHED THEN INSERT (id, name, p) VALUES (src.id, src.name, 'merged')""")
    notes[5] = "MERGE"
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0]
    assert "deletionVectors" in detail.tableFeatures
    assert (t / "_delta_log" / "00000000000000000002.checkpoint.parquet").exists()
    assert any(p.name.startswith("deletion_vector_") for p in t.rglob("*.bin")), \
        "Spark wrote no deletion vector: the test would not cover them"
    _compare_all_versions(spark, t, notes)


def test_spark_column_mapping_rename_and_drop(spark, tmp_path):
    t = tmp_path / "spark_colmap"
    notes = {}
    spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, a STRING, b INT, p STRING) USING delta
        PARTITIONED BY (p)
        TBLPROPERTIES ('delta.columnMapping.mode' = 'name')""")
    notes[0] = "create, column mapping name mode"
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'one', 10, 'x'), (2, 'two', 20, 'y')")
    notes[1] = "insert"
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN a TO a_renamed")
    notes[2] = "RENAME COLUMN a -> a_renamed"
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN p TO part")
    notes[3] = "RENAME partition column p -> part"
    spark.sql(f"ALTER TABLE delta.`{t}` DROP COLUMN b")
    notes[4] = "DROP COLUMN b"
    spark.sql(f"ALTER TABLE delta.`{t}` ADD COLUMNS (b INT)")
    notes[5] = "ADD COLUMN b again (new physical column)"
    spark.sql(f"INSERT INTO delta.`{t}` (id, a_renamed, part, b) VALUES (3, 'three', 'x', 30)")
    notes[6] = "insert"
    _compare_all_versions(spark, t, notes)


# ---------------------------------------------------------------------------------------------
# delta-rs writes
# ---------------------------------------------------------------------------------------------
def _rs_batch(ids, p_values):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([None if i % 4 == 0 else f"s{i}" for i in ids], pa.string()),
        "f": pa.array([i / 3 for i in ids], pa.float64()),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in ids], pa.decimal128(10, 2)),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in ids], pa.date32()),
        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
                        + dt.timedelta(seconds=i * 1.5) for i in ids],
                       pa.timestamp("us", tz="UTC")),
        "p": pa.array(p_values, pa.string()),
    })


def test_delta_rs_writes(tmp_path):
    from deltalake import write_deltalake
    t = str(tmp_path / "rs")
    write_deltalake(t, _rs_batch(range(0, 10), ["x y"] * 5 + ["a/b"] * 3 + [None] * 2),
                    partition_by=["p"])
    write_deltalake(t, _rs_batch(range(10, 20), ["k=v"] * 5 + ["ünï"] * 5), mode="append")
    write_deltalake(t, _rs_batch(range(20, 25), ["x y"] * 5), mode="overwrite")
    write_deltalake(t, _rs_batch(range(30, 35), ["50%", "#", "x y", None, "x y"]), mode="append")
    failures = []
    for v in range(4):
        try:
            compare_version_with_rs(t, v)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_delta_rs_writes_unpartitioned(tmp_path):
    from deltalake import write_deltalake
    t = str(tmp_path / "rs_flat")
    write_deltalake(t, _rs_batch(range(0, 50), ["v"] * 50))
    write_deltalake(t, _rs_batch(range(50, 60), [None] * 10), mode="append")
    write_deltalake(t, _rs_batch(range(60, 61), ["w"]), mode="overwrite")
    for v in range(3):
        compare_version_with_rs(t, v)


def test_delta_rs_dml_checkpoint_and_schema_merge(tmp_path):
    """delta-rs DELETE, UPDATE, MERGE (upsert), a checkpoint and an append with
    schema_mode="merge": deltacpp reads every version as delta-rs does, and from a copy whose
    log starts at delta-rs's checkpoint."""
    import shutil

    from deltalake import DeltaTable, write_deltalake
    t = tmp_path / "rs_dml"
    notes = {}
    write_deltalake(str(t), _rs_batch(range(0, 20), ["x y", "a/b", None, "k=v"] * 5),
                    partition_by=["p"])
    notes[0] = "write_deltalake (create)"
    DeltaTable(str(t)).delete("id % 3 = 0")
    notes[1] = "delete id % 3 = 0"
    DeltaTable(str(t)).update(updates={"s": "concat(s, '!')", "f": "f * 2"}, predicate="id > 10")
    notes[2] = "update id > 10"
    src = _rs_batch([1, 2, 100, 101], ["x y", "a/b", "new", None])
    src = src.set_column(src.schema.get_field_index("s"), "s", pa.array(
        ["m1", "m2", "m100", None], pa.string()))
    (DeltaTable(str(t)).merge(src, "t.id = s.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    notes[3] = "merge (upsert)"
    DeltaTable(str(t)).create_checkpoint()
    assert (t / "_delta_log" / "00000000000000000003.checkpoint.parquet").exists()
    wide = _rs_batch([200, 201], ["x y", "zz"]).append_column(
        "extra", pa.array([7, None], pa.int32()))
    write_deltalake(str(t), wide, mode="append", schema_mode="merge")
    notes[4] = "append with schema_mode=merge (new column extra)"
    assert DeltaTable(str(t)).version() == 4
    assert [h["operation"] for h in sorted(DeltaTable(str(t)).history(),
                                           key=lambda h: h["version"])] == \
        ["WRITE", "DELETE", "UPDATE", "MERGE", "WRITE"]
    failures = []
    for v in range(5):
        try:
            compare_version_with_rs(t, v)
        except AssertionError as e:
            failures.append(f"version {v} ({notes[v]}): {e}")
    assert not failures, "\n".join(failures)
    assert [h["operation"] for h in sorted(cpp_history(t), key=lambda h: h["version"])] == \
        ["WRITE", "DELETE", "UPDATE", "MERGE", "WRITE"]
    rows = {r["id"]: r for r in cpp_read(t).to_pylist()}
    assert 3 not in rows and rows[1]["s"] == "m1" and rows[100]["s"] == "m100"
    assert rows[11]["s"] == "s11!" and rows[200]["extra"] == 7 and rows[4]["extra"] is None
    cp = tmp_path / "rs_dml_from_cp"
    shutil.copytree(t, cp)
    for f in (cp / "_delta_log").iterdir():
        if f.name[:20].isdigit() and int(f.name[:20]) < 3:
            f.unlink()
    compare_version_with_rs(cp, 3)
    compare_version_with_rs(cp, 4)


def test_spark_nested_types_read_identically(spark, tmp_path):
    """Spark writes structs, arrays and maps (nested inside each other, with nulls at every
    level); deltacpp reads every version with the same values (structs compared field by
    field, maps whatever their entry order), the same column types and the same nullability
    at every nesting level."""
    t = tmp_path / "nested"
    spark.sql(f"""CREATE TABLE delta.`{t}` (
        id INT,
        s STRUCT<a: INT, b: STRING, inner: STRUCT<x: BIGINT, tags: ARRAY<STRING>>>,
        arr ARRAY<STRUCT<k: STRING, v: INT>>,
        m MAP<STRING, ARRAY<INT>>) USING delta""")
    spark.sql(f"""INSERT INTO delta.`{t}` VALUES
        (1, named_struct('a', 1, 'b', 'one', 'inner', named_struct('x', 10L, 'tags', array('p', 'q'))),
            array(named_struct('k', 'a', 'v', 1), named_struct('k', 'b', 'v', NULL)),
            map('x', array(1, 2), 'y', array())),
        (2, NULL, NULL, NULL),
        (3, named_struct('a', NULL, 'b', NULL, 'inner', NULL), array(), map('z', NULL))""")
    spark.sql(f"""INSERT INTO delta.`{t}` VALUES
        (4, named_struct('a', 4, 'b', 'four', 'inner', named_struct('x', NULL, 'tags', array(NULL, 'r'))),
            array(NULL), map())""")
    failures = []
    for v in (1, 2):
        try:
            mine = compare_version_with_spark(spark, t, v)
            # nested nullability too: struct fields, array elements, map values
            theirs = spark_arrow_columns(spark_df(spark, t, v))
            assert arrow_columns(mine) == theirs, \
                f"nested types deltacpp {arrow_columns(mine)} vs Spark {theirs}"
        except AssertionError as e:
            failures.append(f"version {v}: {e}")
    assert not failures, "\n".join(failures)
    # what the normalisation must tell apart: a value Spark reads differently is a difference
    row = {r["id"]: r for r in cpp_read(t, 2).to_pylist()}
    assert row[1]["s"] == {"a": 1, "b": "one", "inner": {"x": 10, "tags": ["p", "q"]}}
    assert dict(row[1]["m"]) == {"x": [1, 2], "y": []} and row[3]["m"] == [("z", None)]
    assert row[4]["arr"] == [None] and row[2]["s"] is None
