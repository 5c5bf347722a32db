"""deltacpp writes, delta-rs and Spark read: every version of each table is read by the peers
exactly as `deltacpp read --version v` reads it, and the histories agree. Covers every kind
of `deltacpp write` and the table changes: `create --comment` and `--or-replace`,
`write --mode overwrite --overwrite-schema`, and `alter` set-properties, unset-properties,
add-constraint and drop-constraint."""
from __future__ import annotations

import json
import re
import shutil

import pytest

import pyarrow as pa
import pyarrow.parquet  # noqa: F401 - pa.parquet

from interop_util import (arrow_columns, arrow_rows, assert_detail_agrees,
                          assert_history_agrees, assert_same_rows, cli, rs_read, rs_read_sql,
                          spark_arrow_columns, spark_df, spark_rows,
                          compare_version_with_rs, compare_version_with_spark,
                          compare_versions_all, cpp_describe, cpp_history, cpp_read, cpp_versions,
                          rs_table, spark_detail, write_jsonl, write_parquet)

TS = pa.timestamp("us", tz="UTC")
EVENTS = [("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)),
          ("d", pa.date32()), ("ts", TS), ("p", pa.string())]
EVENTS_WIDE = EVENTS + [("extra", pa.int32()), ("note", pa.string())]
TYPED = [("id", pa.int32()), ("v", pa.string()), ("d", pa.date32()), ("ts", TS),
         ("dec", pa.decimal128(12, 3)), ("i", pa.int32()), ("b", pa.bool_())]

# Partition values that need escaping in paths, or that mean null.
HARD_VALUES = ["x y", "a/b", "k=v", "50%", "#hash", "ünï ✓ 日本", "", None, "a:b", "tab\tx"]


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    """A partitioned table built through every kind of deltacpp write; returns (path, notes)
    where notes maps version -> what that version did."""
    d = tmp_path_factory.mktemp("events")
    t = d / "events"
    notes = {}
    cli("create", t,
        "--schema", "id long NOT NULL, name string, amount DECIMAL(10,2), d date, "
                    "ts timestamp, p string",
        "--partition-by", "p",
        "--property", "delta.checkpointInterval=3",
        "--property", "owner.team=interop",
        "--constraint", "amount_pos=amount > 0")
    notes[0] = "create"

    csv = d / "v1.csv"
    csv.write_text("id,name,amount,d,ts,p\n"
                   "1,alice,1.50,2024-01-02,2024-01-02T03:04:05Z,x y\n"
                   "2,,2.00,2024-02-29,2024-02-29 23:59:59.123456,a/b\n"
                   "3,carol,3.25,,,k=v\n"
                   "4,dave,4.00,1970-01-01,1970-01-01T00:00:00Z,\n", encoding="utf-8")
    cli("write", t, csv)
    notes[1] = "append csv"

    rows = []
    for i, p in enumerate(HARD_VALUES):
        rows.append({"id": 10 + i, "name": "" if i == 0 else f"n{i}", "amount": f"{i + 1}.{i:02d}",
                     "d": f"20{10 + i}-0{1 + i % 9}-1{i % 9}",
                     "ts": f"20{10 + i}-03-04T05:06:07.{i:06d}+00:00", "p": p})
    cli("write", t, write_parquet(d / "v2.parquet", rows, EVENTS))
    notes[2] = "append json, hard partition values"

    cli("write", t, "--mode", "overwrite", "--replace-where", "p = 'x y'",
        write_parquet(d / "v3.parquet", [{"id": 100, "name": "replaced", "amount": "9.99",
                                     "d": "2000-01-01", "ts": "2000-01-01T00:00:00Z",
                                     "p": "x y"}], EVENTS))
    notes[3] = "replaceWhere p = 'x y'"

    cli("write", t, "--mode", "overwrite", "--dynamic-partition-overwrite",
        write_parquet(d / "v4.parquet", [
            {"id": 200, "name": "dyn", "amount": "1.00", "d": None, "ts": None, "p": "a/b"},
            {"id": 201, "name": "dyn", "amount": "2.00", "d": None, "ts": None, "p": "brand new"},
            {"id": 202, "name": "dyn", "amount": "3.00", "d": None, "ts": None, "p": None},
        ], EVENTS))
    notes[4] = "dynamic partition overwrite"

    cli("write", t, "--merge-schema",
        write_parquet(d / "v5.parquet", [{"id": 300, "name": "wide", "amount": "5.00",
                                     "p": "k=v", "extra": 42, "note": "new column"}],
                      EVENTS_WIDE))
    notes[5] = "append with mergeSchema"

    txn = write_parquet(d / "v6.parquet", [{"id": 400, "name": "txn", "amount": "1.00", "p": "txn"}],
                        EVENTS)
    cli("write", t, "--txn-app-id", "interop-app", "--txn-version", 1, txn)
    notes[6] = "txn write interop-app v1"
    before = cpp_versions(t)
    cli("write", t, "--txn-app-id", "interop-app", "--txn-version", 1, txn)  # replay: no-op
    assert cpp_versions(t) == before, "replayed txn write made a new commit"
    cli("write", t, "--txn-app-id", "interop-app", "--txn-version", 2,
        write_parquet(d / "v7.parquet", [{"id": 401, "name": "txn2", "amount": "2.00", "p": "txn"}],
                      EVENTS))
    notes[7] = "txn write interop-app v2"

    cli("write", t, "--mode", "overwrite",
        write_parquet(d / "v8.parquet", [{"id": 500, "name": "final", "amount": "7.77",
                                     "d": "2025-12-31", "ts": "2025-12-31T23:59:59.999999+00:00",
                                     "p": "x y", "extra": None, "note": None},
                                    {"id": 501, "name": None, "amount": "0.01",
                                     "p": None, "extra": 1, "note": ""}], EVENTS_WIDE))
    notes[8] = "full overwrite"
    assert cpp_versions(t) == list(range(9))
    return t, notes


def _typed_table(d, negative_decimals: bool):
    """A table partitioned by date, timestamp, decimal, int and boolean columns."""
    t = d / "typed"
    neg = "-" if negative_decimals else ""
    cli("create", t, "--schema",
        "id int NOT NULL, v string, d date, ts timestamp, dec DECIMAL(12,3), i int, b boolean",
        "--partition-by", "d,ts,dec,i,b")
    cli("write", t, write_parquet(d / "a.parquet", [
        {"id": 1, "v": "a", "d": "2024-01-01", "ts": "2024-01-01T00:00:00+00:00",
         "dec": "1.500", "i": -7, "b": True},
        {"id": 2, "v": "b", "d": "1969-12-31", "ts": "1969-12-31T23:59:59.500000+00:00",
         "dec": f"{neg}0.001", "i": 0, "b": False},
        {"id": 3, "v": "c", "d": None, "ts": None, "dec": None, "i": None, "b": None},
        {"id": 4, "v": "d", "d": "9999-12-31", "ts": "2038-01-19T03:14:08.000001+00:00",
         "dec": f"{neg}999999999.999", "i": 2147483647, "b": True},
    ], TYPED))
    cli("write", t, "--mode", "overwrite", "--replace-where", "i = 0",
        write_parquet(d / "b.parquet", [
            {"id": 5, "v": "e", "d": "2000-02-29", "ts": "2000-02-29T12:00:00+00:00",
             "dec": "0.000", "i": 0, "b": False}], TYPED))
    return t


@pytest.fixture(scope="module")
def typed_parts(tmp_path_factory):
    return _typed_table(tmp_path_factory.mktemp("typed"), negative_decimals=True)


@pytest.fixture(scope="module")
def typed_parts_nonneg(tmp_path_factory):
    return _typed_table(tmp_path_factory.mktemp("typed_nonneg"), negative_decimals=False)


@pytest.fixture(scope="module")
def ddl(tmp_path_factory):
    """A table changed by each deltacpp table operation in turn; returns (path, notes,
    copies) where copies maps a version to a copy of the table made right after it."""
    d = tmp_path_factory.mktemp("ddl")
    t = d / "ddl"
    notes, copies = {}, {}

    def csv(name, text):
        (d / name).write_text(text, encoding="utf-8")
        return d / name

    cli("create", t, "--schema", "id long NOT NULL, v string, n int",
        "--comment", "first comment", "--property", "owner.team=interop")
    notes[0] = "create --comment"
    cli("write", t, csv("1.csv", "id,v,n\n1,a,10\n2,b,20\n3,,30\n"))
    notes[1] = "append"
    cli("alter", t, "set-properties", "k1=v1", "k2=v2")
    notes[2] = "alter set-properties k1, k2"
    cli("alter", t, "unset-properties", "k1")
    notes[3] = "alter unset-properties k1"
    cli("alter", t, "add-constraint", "n_pos", "n > 0")
    notes[4] = "alter add-constraint n_pos n > 0"
    cli("write", t, csv("5.csv", "id,v,n\n4,d,40\n"))
    notes[5] = "append under the constraint"
    copies[5] = shutil.copytree(t, d / "ddl_at_5")
    cli("alter", t, "drop-constraint", "n_pos")
    notes[6] = "alter drop-constraint n_pos"
    copies[6] = shutil.copytree(t, d / "ddl_at_6")
    cli("write", t, "--mode", "overwrite", "--overwrite-schema",
        write_parquet(d / "7.parquet", [{"id": "x1", "w": 1.5}, {"id": None, "w": None}],
                      [("id", pa.string()), ("w", pa.float64())]))
    notes[7] = "write --mode overwrite --overwrite-schema (id long -> string, v/n -> w double)"
    cli("create", t, "--or-replace", "--schema", "k int NOT NULL, s string, p string",
        "--partition-by", "p", "--comment", "second comment")
    notes[8] = "create --or-replace (new schema, partitioned, new comment)"
    cli("write", t, csv("9.csv", "k,s,p\n1,x,a\n2,,b\n3,z,\n"))
    notes[9] = "append to the replaced table"
    assert cpp_versions(t) == list(range(10))
    return t, notes, copies


def test_ddl_every_version_reads_the_same(spark, ddl):
    t, notes, _ = ddl
    compare_versions_all(spark, t, range(10), notes)
    assert cpp_read(t, 6).num_rows == 4 and cpp_read(t, 7).num_rows == 2
    assert cpp_read(t, 8).num_rows == 0 and cpp_read(t, 9).num_rows == 3


def test_ddl_history_and_detail_agree(spark, ddl):
    t, _, _ = ddl
    assert_history_agrees(spark, t)
    ops = [h["operation"] for h in sorted(cpp_history(t), key=lambda h: h["version"])]
    assert ops == ["CREATE TABLE", "WRITE", "SET TBLPROPERTIES", "UNSET TBLPROPERTIES",
                   "ADD CONSTRAINT", "WRITE", "DROP CONSTRAINT", "WRITE",
                   "CREATE OR REPLACE TABLE", "WRITE"], ops
    assert_detail_agrees(spark, t)
    detail = spark_detail(spark, t)
    assert detail.description == "second comment"
    assert detail.partitionColumns == ["p"]
    assert_detail_agrees(spark, ddl[2][6])
    assert spark_detail(spark, ddl[2][6]).description == "first comment"


def test_ddl_properties_and_constraints_by_version(ddl):
    """The table properties of each version, as delta-rs and deltacpp see them."""
    t, _, _ = ddl
    want = {0: {"owner.team": "interop"},
            2: {"owner.team": "interop", "k1": "v1", "k2": "v2"},
            3: {"owner.team": "interop", "k2": "v2"},
            4: {"owner.team": "interop", "k2": "v2", "delta.constraints.n_pos": "n > 0"},
            6: {"owner.team": "interop", "k2": "v2"},
            8: {}}
    for v, props in want.items():
        theirs = dict(rs_table(t, v).metadata().configuration)
        mine = {k[len("property "):]: x for k, x in cpp_describe(t, v).items()
                if k.startswith("property ")}
        assert theirs == mine == props, f"version {v}: delta-rs {theirs}, deltacpp {mine}"


def test_spark_enforces_constraint_deltacpp_added(spark, ddl, tmp_path):
    """Spark enforces the CHECK constraint `deltacpp alter add-constraint` added, and no
    longer after `deltacpp alter drop-constraint` (each on a copy of the table); both refuse
    to add a constraint that an existing row with a NULL fails."""
    _, _, copies = ddl
    at5 = tmp_path / "at5"
    shutil.copytree(copies[5], at5)
    with pytest.raises(Exception, match="(?i)CHECK constraint n_pos"):
        spark.sql(f"INSERT INTO delta.`{at5}` VALUES (9, 'neg', -1)")
    spark.sql(f"INSERT INTO delta.`{at5}` VALUES (10, 'ok', 1)")
    assert 10 in [r["id"] for r in cpp_read(at5).to_pylist()]
    bad = write_jsonl(tmp_path / "neg.json", [{"id": 11, "v": "neg", "n": -1}])
    p = cli("write", at5, bad, check=False)
    assert p.returncode != 0 and "n_pos" in p.stderr, p.stderr
    at6 = tmp_path / "at6"
    shutil.copytree(copies[6], at6)
    spark.sql(f"INSERT INTO delta.`{at6}` VALUES (9, 'neg', -1)")
    assert (9, -1) in [(r["id"], r["n"]) for r in cpp_read(at6).to_pylist()]
    # a row whose n is NULL: adding a constraint on n is refused by both (NULL is not true)
    cli("write", at6, write_jsonl(tmp_path / "null.json", [{"id": 12, "v": "null", "n": None}]))
    before = cpp_versions(at6)
    p = cli("alter", at6, "add-constraint", "n_big", "n > -5", check=False)
    assert p.returncode != 0 and "ConstraintViolation" in p.stderr, p.stderr
    with pytest.raises(Exception, match="DELTA_NEW_CHECK_CONSTRAINT_VIOLATION"):
        spark.sql(f"ALTER TABLE delta.`{at6}` ADD CONSTRAINT n_big CHECK (n > -5)")
    assert cpp_versions(at6) == before


def test_events_and_typed_history_and_detail_agree(spark, events, typed_parts,
                                                   typed_parts_nonneg):
    for t in (events[0], typed_parts, typed_parts_nonneg):
        assert_history_agrees(spark, t)
        assert_detail_agrees(spark, t)


# ---------------------------------------------------------------------------------------------
# delta-rs
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", range(9))
def test_events_delta_rs_reads_every_version(events, version):
    t, notes = events
    compare_version_with_rs(t, version)


@pytest.mark.parametrize("version", range(3))
def test_typed_partitions_delta_rs(typed_parts_nonneg, version):
    compare_version_with_rs(typed_parts_nonneg, version)


def test_delta_rs_rejects_negative_decimal_partition_values(typed_parts):
    """Known delta-rs disagreement (docs/interop.md): deltalake 1.6.6 cannot parse a negative
    DECIMAL partition value such as '-0.001', which the protocol's Partition Value Serialization
    allows and Spark reads (checked by the Spark tests). This asserts the peer's current
    behaviour so that a delta-rs upgrade that fixes it makes this test fail and the comparison
    be restored."""
    with pytest.raises(Exception, match="not a valid decimal128 number"):
        compare_version_with_rs(typed_parts, 1)


def _checkpointed_copy(src, dest):
    """A copy of the typed table SRC with `deltacpp checkpoint` run on it (at its latest
    version, 2), and a second copy whose log has lost the commits before that checkpoint, so
    that a reader gets the partition values of version 2 from the checkpoint only. Returns
    (checkpointed copy, checkpoint-only copy)."""
    t = shutil.copytree(src, dest / "cp")
    cli("checkpoint", t)
    log = t / "_delta_log"
    assert (log / "00000000000000000002.checkpoint.parquet").exists(), \
        sorted(p.name for p in log.iterdir())
    cp = pa.parquet.read_table(log / "00000000000000000002.checkpoint.parquet")
    adds = [a for a in cp.column("add").to_pylist() if a]
    ints = sorted((dict(a["partitionValues"]).get("i") for a in adds), key=str)
    assert ints == ["-7", "0", "2147483647", None], ints
    only = shutil.copytree(t, dest / "cp_only")
    for p in (only / "_delta_log").iterdir():
        # the checkpoint version's own commit stays: Spark needs it (docs/interop.md)
        if p.name[:20].isdigit() and int(p.name[:20]) < 2:
            p.unlink()
    return t, only


def test_typed_partitions_checkpoint_spark(spark, typed_parts, tmp_path):
    """`deltacpp checkpoint` of the table partitioned by date, timestamp, decimal (negative
    values included), int and boolean: Spark reads every version as deltacpp does, and version 2
    also from a copy whose log starts at the checkpoint."""
    t, only = _checkpointed_copy(typed_parts, tmp_path)
    compare_versions_all(spark, t, range(3), rs=False)
    compare_versions_all(spark, only, [2], rs=False)
    cols = spark_df(spark, typed_parts).columns
    assert_same_rows(spark_rows(spark_df(spark, typed_parts, 2), cols),
                     spark_rows(spark_df(spark, only, 2), cols),
                     "Spark: version 2 from the whole log vs from the checkpoint only")


def test_typed_partitions_checkpoint_delta_rs(typed_parts_nonneg, tmp_path):
    """The same with delta-rs, on the copy without negative decimals (which delta-rs cannot
    parse; test_delta_rs_rejects_negative_decimal_partition_values)."""
    t, only = _checkpointed_copy(typed_parts_nonneg, tmp_path)
    compare_versions_all(None, t, range(3))
    compare_versions_all(None, only, [2])
    cols = [name for name, _ in TYPED]
    assert_same_rows(arrow_rows(rs_read(typed_parts_nonneg, 2), cols),
                     arrow_rows(rs_read(only, 2), cols),
                     "delta-rs: version 2 from the whole log vs from the checkpoint only")


def test_events_delta_rs_metadata_and_history(events):
    t, _ = events
    dt = rs_table(t)
    conf = dt.metadata().configuration
    assert conf.get("owner.team") == "interop"
    assert conf.get("delta.constraints.amount_pos") == "amount > 0"
    assert dt.version() == 8
    mine = {h["version"]: h["operation"] for h in cpp_history(t)}
    theirs = {h["version"]: h["operation"] for h in dt.history()}
    assert mine == theirs
    # idempotent writes: the app's last version is recorded
    assert dt.transaction_version("interop-app") == 2


# ---------------------------------------------------------------------------------------------
# Spark
# ---------------------------------------------------------------------------------------------
def test_events_spark_reads_every_version(spark, events):
    t, notes = events
    for v in range(9):
        try:
            compare_version_with_spark(spark, t, v)
        except AssertionError as e:
            raise AssertionError(f"version {v} ({notes[v]}): {e}") from None


def test_typed_partitions_spark(spark, typed_parts):
    for v in range(3):
        compare_version_with_spark(spark, typed_parts, v)


def test_events_spark_history(spark, events):
    t, _ = events
    mine = {h["version"]: h["operation"] for h in cpp_history(t)}
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version", "operation").collect()
    theirs = {r.version: r.operation for r in rows}
    assert mine == theirs


def test_events_spark_sees_properties_and_enforces_constraints(spark, events, tmp_path):
    t, _ = events
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{t}`").collect()}
    assert props.get("owner.team") == "interop"
    assert props.get("delta.constraints.amount_pos") == "amount > 0"
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0]
    mine = cpp_describe(t)
    assert detail.minReaderVersion == int(mine["min reader version"])
    assert detail.minWriterVersion == int(mine["min writer version"])
    assert detail.partitionColumns == ["p"]
    assert detail.numFiles == int(mine["number of files"])

    # Spark enforces the CHECK constraint and NOT NULL written by deltacpp (on a copy, so the
    # table under comparison is unchanged).
    copy = tmp_path / "copy"
    shutil.copytree(t, copy)
    with pytest.raises(Exception, match="(?i)check constraint|amount_pos"):
        spark.sql(f"INSERT INTO delta.`{copy}` (id, name, amount, p) "
                  f"VALUES (1, 'neg', -1.00, 'z')")
    with pytest.raises(Exception, match=r"DELTA_NOT_NULL_CONSTRAINT_VIOLATED\].*\bid\b"):
        spark.sql(f"INSERT INTO delta.`{copy}` (id, name, amount, p) "
                  f"VALUES (NULL, 'nullid', 1.00, 'z')")
    spark.sql(f"INSERT INTO delta.`{copy}` (id, name, amount, p) VALUES (9, 'ok', 1.00, 'z')")
    # A NULL amount: the CHECK expression is NULL, not false. deltacpp must judge it as Spark
    # (the reference implementation of CHECK constraints) does.
    try:
        spark.sql(f"INSERT INTO delta.`{copy}` (id, name, amount, p) "
                  f"VALUES (10, 'nullamount', NULL, 'z')")
        spark_accepts_null = True
    except Exception:  # noqa: BLE001
        spark_accepts_null = False
    null_row = write_parquet(tmp_path / "nullamount.parquet",
                             [{"id": 11, "name": "nullamount", "amount": None, "p": "z"}],
                             EVENTS)
    cpp_accepts_null = cli("write", copy, null_row, check=False).returncode == 0
    assert cpp_accepts_null == spark_accepts_null, (
        f"CHECK amount > 0 with amount NULL: Spark "
        f"{'accepts' if spark_accepts_null else 'rejects'} the row, deltacpp "
        f"{'accepts' if cpp_accepts_null else 'rejects'} it")
    # ... and deltacpp reads Spark's commit on top of its own table
    rows = cpp_read(copy).to_pylist()
    assert any(r["id"] == 9 and r["p"] == "z" for r in rows)


def test_deltacpp_rejects_what_the_constraints_forbid(events, tmp_path):
    t, _ = events
    before = cpp_versions(t)
    bad = write_jsonl(tmp_path / "bad.json", [{"id": 1, "amount": "-1.00", "p": "z"}])
    p = cli("write", t, bad, check=False)
    assert p.returncode != 0 and re.search(
        r"ConstraintViolation: CHECK constraint amount_pos\b", p.stderr), p.stderr
    bad = write_jsonl(tmp_path / "bad2.json", [{"id": None, "amount": "1.00", "p": "z"}])
    p = cli("write", t, bad, check=False)
    assert p.returncode != 0 and re.search(
        r"ConstraintViolation: NOT NULL constraint violated: column 'id'", p.stderr), p.stderr
    assert cpp_versions(t) == before


def test_json_input_accepts_iso_dates(tmp_path):
    """`deltacpp write --input-format json` reads a DATE column given as an ISO-8601 string,
    as it does for TIMESTAMP columns and as the CSV reader does."""
    t = tmp_path / "t"
    cli("create", t, "--schema", "id long, d date, ts timestamp")
    cli("write", t, write_jsonl(tmp_path / "a.json", [
        {"id": 1, "d": "2024-02-29", "ts": "2024-02-29T01:02:03Z"},
        {"id": 2, "d": None, "ts": None}]))
    rows = sorted(cpp_read(t).to_pylist(), key=lambda r: r["id"])
    assert [str(r["d"]) for r in rows] == ["2024-02-29", "None"]


# ---------------------------------------------------------------------------------------------
# Nested columns
# ---------------------------------------------------------------------------------------------
_KV = pa.struct([("k", pa.string()), ("v", pa.float64())])
NESTED = [("id", pa.int64()), ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])),
          ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int32())),
          ("deep", pa.struct([("xs", pa.list_(_KV))]))]
NESTED_V1 = [
    {"id": 1, "s": {"a": 1, "b": "one"}, "arr": [1, None, 3], "m": [("x", 1), ("y", None)],
     "deep": {"xs": [{"k": "k1", "v": 1.5}, {"k": "k2", "v": None}]}},
    {"id": 2, "s": {"a": 2, "b": None}, "arr": None, "m": None, "deep": {"xs": []}},
    {"id": 3, "s": {"a": -3, "b": None}, "arr": [], "m": [],
     "deep": {"xs": [{"k": "k3", "v": -0.5}]}}]
NESTED_V2 = [
    {"id": 4, "s": {"a": 2147483647, "b": "ünï"}, "arr": [None], "m": [("", -1)],
     "deep": {"xs": [{"k": "", "v": -0.0}]}},
    {"id": 5, "s": {"a": 0, "b": ""}, "arr": [7, 8], "m": [("z", None), ("a", 2)],
     "deep": {"xs": [{"k": "only", "v": None}]}},
    # null structs whose NOT NULL fields are therefore null: s (s.a), an element of deep.xs
    # (k) and deep itself (deep.xs)
    {"id": 6, "s": None, "arr": [6], "m": [("six", 6)],
     "deep": {"xs": [None, {"k": "k6", "v": 6.0}]}},
    {"id": 7, "s": {"a": 7, "b": None}, "arr": None, "m": None, "deep": None}]
NESTED_V3 = [
    {"id": 1, "s": {"a": 10, "b": "ten"}, "arr": [10], "m": [("x", 10)],
     "deep": {"xs": [{"k": "k10", "v": 10.25}]}}]


def test_nested_columns_read_the_same(spark, tmp_path):
    """A deltacpp table with STRUCT, ARRAY and MAP columns and NOT NULL fields inside them
    (`create --schema`, Parquet input: JSON input cannot carry a map, nor nested types other
    than the ones Arrow infers): Spark and delta-rs read every version as deltacpp does, nested
    types and the nullability of every nested field, array element and map value included;
    null structs with NOT NULL fields are kept; a null in a nested NOT NULL field of a
    present struct is refused; the histories agree."""
    t = tmp_path / "nested"
    cli("create", t, "--schema",
        "id long NOT NULL, s struct<a: int NOT NULL, b: string>, arr array<int>, "
        "m map<string, int>, deep struct<xs: array<struct<k: string NOT NULL, v: double>> "
        "NOT NULL>")
    cli("write", t, write_parquet(tmp_path / "1.parquet", NESTED_V1, NESTED))           # v1
    cli("write", t, write_parquet(tmp_path / "2.parquet", NESTED_V2, NESTED))           # v2
    cli("write", t, "--mode", "overwrite", "--replace-where", "id = 1",
        write_parquet(tmp_path / "3.parquet", NESTED_V3, NESTED))                       # v3
    for bad, column in (({"id": 9, "s": {"a": None, "b": "x"}}, "s.a"),
                        ({"id": 9, "deep": {"xs": None}}, "deep.xs")):
        p = cli("write", t, write_parquet(tmp_path / "bad.parquet", [bad], NESTED), check=False)
        assert p.returncode != 0 and re.search(
            rf"ConstraintViolation: NOT NULL constraint violated: column '{re.escape(column)}'",
            p.stderr), (bad, p.stderr)
    # a null in the NOT NULL field of an array element: refused as a value the column's type
    # cannot hold, naming the column and the field
    bad = {"id": 9, "deep": {"xs": [{"k": None, "v": 1.0}]}}
    p = cli("write", t, write_parquet(tmp_path / "bad.parquet", [bad], NESTED), check=False)
    assert p.returncode != 0 and re.search(
        r"SchemaMismatch: column 'deep\.xs'.*field 'k' of type string has nulls", p.stderr), \
        p.stderr
    assert cpp_versions(t) == [0, 1, 2, 3]

    # From version 2 on the table holds null structs with NOT NULL fields, which delta-rs's
    # to_pyarrow_table() cannot read (pyarrow refuses to cast them to the table schema; see
    # docs/interop.md): delta-rs reads those versions through its SQL engine.
    compare_versions_all(spark, t, range(2))
    compare_versions_all(spark, t, [2, 3], rs_via="sql")
    with pytest.raises(Exception, match="has nulls. Can't cast to non-nullable field 'a'"):
        rs_read(t, 2)
    failures = []
    for v in range(1, 4):
        mine = arrow_columns(cpp_read(t, v))
        theirs = {"Spark": spark_arrow_columns(spark_df(spark, t, v)),
                  "delta-rs": arrow_columns(rs_read(t, v) if v < 2 else rs_read_sql(t, v))}
        failures += [f"version {v}: nested types deltacpp {mine} vs {who} {cols}"
                     for who, cols in theirs.items() if cols != mine]
    assert not failures, "\n".join(failures)
    s_type = spark_df(spark, t).schema["s"].dataType
    assert not s_type["a"].nullable and s_type["b"].nullable
    xs = spark_df(spark, t).schema["deep"].dataType["xs"]
    assert not xs.nullable and not xs.dataType.elementType["k"].nullable

    # Spark's reading of the latest version is the test's own input
    cols = [name for name, _ in NESTED]
    want = pa.Table.from_pylist(
        [r for r in NESTED_V1 + NESTED_V2 if r["id"] != 1] + NESTED_V3,
        schema=pa.schema([pa.field(n, ty) for n, ty in NESTED]))
    assert_same_rows(arrow_rows(want, cols), spark_rows(spark_df(spark, t), cols),
                     "Spark reads the latest version as written")
    assert_history_agrees(spark, t)
