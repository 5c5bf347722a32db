"""The users-table tutorial, done by deltacpp step by step and checked by Spark and delta-rs
after each step: create, append, full refresh, time travel by version and by timestamp,
schema evolution with --merge-schema, an upsert with MERGE (one user updated, one new), and a
rejected write without --merge-schema."""
from __future__ import annotations

import datetime as dt
import re
import time

import pyarrow as pa
import pytest

from interop_util import (arrow_rows, assert_detail_agrees, assert_history_agrees,
                          assert_same_rows, cli, compare_version_with_rs,
                          compare_version_with_spark, cpp_history, cpp_read, cpp_versions,
                          rs_table, spark_df, spark_rows, write_parquet)

TS = pa.timestamp("us", tz="UTC")
USERS = [("user_id", pa.string()), ("user_name", pa.string()), ("age", pa.int32()),
         ("event_time", TS)]


# The MERGE step's source: u1 is updated (a new age, time and phone), u5 is new.
MERGE_SOURCE = [
    {"user_id": "u1", "user_name": "Alice", "age": 32,
     "event_time": "2024-08-01T09:00:00+00:00", "phone": "+62 812 1"},
    {"user_id": "u5", "user_name": "Eka", "age": 19,
     "event_time": "2024-08-01T09:00:01+00:00", "phone": None}]
MERGED = [("u1", "Alice", 32, dt.datetime(2024, 8, 1, 9, 0, 0), "+62 812 1"),
          ("u3", "Chandra", 25, dt.datetime(2024, 6, 1, 0, 0, 1), None),
          ("u4", "Dewi", 40, dt.datetime(2024, 7, 1, 0, 0, 0), "+62 21 555"),
          ("u5", "Eka", 19, dt.datetime(2024, 8, 1, 9, 0, 1), None)]
USER_COLS = ["user_id", "user_name", "age", "event_time", "phone"]


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    d = tmp_path_factory.mktemp("users")
    t = d / "users"
    cli("create", t, "--schema",
        "user_id STRING NOT NULL, user_name STRING, age INT, event_time TIMESTAMP")
    time.sleep(1.1)
    csv = d / "two.csv"
    csv.write_text("user_id,user_name,age,event_time\n"
                   "u1,Alice,30,2024-05-01T10:00:00Z\n"
                   "u2,Bob,,2024-05-01 11:30:00.5\n", encoding="utf-8")
    cli("write", t, csv)                                                     # v1
    time.sleep(1.1)
    cli("write", t, "--mode", "overwrite", write_parquet(d / "refresh.parquet", [
        {"user_id": "u1", "user_name": "Alice", "age": 31,
         "event_time": "2024-06-01T00:00:00+00:00"},
        {"user_id": "u3", "user_name": "Chandra", "age": 25,
         "event_time": "2024-06-01T00:00:01+00:00"}], USERS))             # v2
    time.sleep(1.1)
    cli("write", t, "--merge-schema", write_parquet(d / "phone.parquet", [
        {"user_id": "u4", "user_name": "Dewi", "age": 40,
         "event_time": "2024-07-01T00:00:00+00:00", "phone": "+62 21 555"}],
        USERS + [("phone", pa.string())]))                                # v3
    time.sleep(1.1)
    cli("merge", t, "--source", write_parquet(d / "upsert.parquet", MERGE_SOURCE,
                                              USERS + [("phone", pa.string())]),
        "--on", "target.user_id = source.user_id",
        "--when-matched-update-all", "--when-not-matched-insert-all")     # v4
    return t



def test_versions_and_history(spark, users):
    assert cpp_versions(users) == [0, 1, 2, 3, 4]
    ops = {h["version"]: h["operation"] for h in cpp_history(users)}
    assert ops[0] == "CREATE TABLE"
    assert all(ops[v] == "WRITE" for v in (1, 2, 3))
    assert ops[4] == "MERGE"
    assert_history_agrees(spark, users)
    assert_detail_agrees(spark, users)


@pytest.mark.parametrize("version", range(5))
def test_delta_rs_reads_each_step(users, version):
    compare_version_with_rs(users, version)


def test_spark_reads_each_step(spark, users):
    for v in range(5):
        compare_version_with_spark(spark, users, v)


def test_contents_of_each_step(users):
    def ids(v):
        return sorted(r["user_id"] for r in cpp_read(users, v).to_pylist())
    assert ids(0) == []
    assert ids(1) == ["u1", "u2"]
    assert ids(2) == ["u1", "u3"]
    assert ids(3) == ["u1", "u3", "u4"]
    assert ids(4) == ["u1", "u3", "u4", "u5"]
    phones = {r["user_id"]: r["phone"] for r in cpp_read(users, 3).to_pylist()}
    assert phones == {"u1": None, "u3": None, "u4": "+62 21 555"}


def test_merge_step(spark, users):
    """The MERGE (update all matched, insert all not matched) as Spark and delta-rs read it:
    u1 takes the source's values, u5 is added, u3 and u4 stay as they were."""
    assert_same_rows(MERGED, spark_rows(spark_df(spark, users, 4), USER_COLS),
                     "Spark at the MERGE version")
    assert_same_rows(MERGED, arrow_rows(rs_table(users, 4).to_pyarrow_table(), USER_COLS),
                     "delta-rs at the MERGE version")
    row = spark.sql(f"DESCRIBE HISTORY delta.`{users}`").where("version = 4").collect()[0]
    assert row.operation == "MERGE"
    metrics = {k: int(v) for k, v in row.operationMetrics.items()}
    assert (metrics["numSourceRows"], metrics["numTargetRowsUpdated"],
            metrics["numTargetRowsInserted"], metrics["numTargetRowsDeleted"]) == (2, 1, 1, 0)


def _between_commits(users):
    """Times strictly between the commits, from deltacpp's own history: {version: time}."""
    hist = {h["version"]: dt.datetime.fromisoformat(h["timestamp"].replace("Z", "+00:00"))
            for h in cpp_history(users)}
    return {v: hist[v] + (hist[v + 1] - hist[v]) / 2 for v in range(4)}


def test_time_travel_by_timestamp(spark, users):
    import deltalake
    for v, when in _between_commits(users).items():
        iso = when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        mine = cpp_read(users, timestamp=iso)
        expected = cpp_read(users, v)
        cols = expected.column_names
        assert_same_rows(arrow_rows(expected, cols), arrow_rows(mine, cols),
                         f"deltacpp --timestamp {iso} vs --version {v}")
        dtab = rs_table(users)
        dtab.load_as_version(when)
        assert dtab.version() == v, f"delta-rs at {iso}: version {dtab.version()}, want {v}"
        spark_ts = when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        df = spark_df(spark, users, timestamp=spark_ts)
        assert_same_rows(arrow_rows(mine, cols), spark_rows(df, cols),
                         f"deltacpp --timestamp {iso} vs Spark timestampAsOf {spark_ts}")


def test_write_with_extra_column_without_merge_schema_is_rejected(spark, users, tmp_path):
    before = cpp_versions(users)
    bad = write_parquet(tmp_path / "extra.parquet", [
        {"user_id": "u9", "user_name": "X", "age": 1,
         "event_time": "2024-08-01T00:00:00+00:00", "phone": "1", "email": "x@example.com"}],
        USERS + [("phone", pa.string()), ("email", pa.string())])
    p = cli("write", users, bad, check=False)
    assert p.returncode != 0, "a write with an unknown column succeeded without --merge-schema"
    # phone was added at version 3; email is the column the table does not have
    assert re.search(r"SchemaMismatch: .*\bemail\b", p.stderr), p.stderr
    assert "phone" not in p.stderr, p.stderr
    assert cpp_versions(users) == before
    assert rs_table(users).version() == before[-1]
    assert max(r.version for r in spark.sql(f"DESCRIBE HISTORY delta.`{users}`")
               .select("version").collect()) == before[-1]
    assert "email" not in spark_df(spark, users).columns


def test_null_user_id_is_rejected(users, tmp_path):
    before = cpp_versions(users)
    bad = write_parquet(tmp_path / "nullid.parquet", [{"user_id": None, "user_name": "nobody"}],
                        USERS)
    p = cli("write", users, bad, check=False)
    assert p.returncode != 0 and re.search(
        r"ConstraintViolation: NOT NULL constraint violated: column 'user_id'", p.stderr), p.stderr
    assert cpp_versions(users) == before
