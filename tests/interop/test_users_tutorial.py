"""The users-table tutorial, done by deltacpp step by step and checked by Spark and delta-rs
after each step: create, append, full refresh, time travel by version and by timestamp,
schema evolution with --merge-schema, and a rejected write without it."""
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
    return t


def test_versions_and_history(spark, users):
    assert cpp_versions(users) == [0, 1, 2, 3]
    ops = {h["version"]: h["operation"] for h in cpp_history(users)}
    assert ops[0] == "CREATE TABLE"
    assert all(ops[v] == "WRITE" for v in (1, 2, 3))
    assert_history_agrees(spark, users)
    assert_detail_agrees(spark, users)


@pytest.mark.parametrize("version", range(4))
def test_delta_rs_reads_each_step(users, version):
    compare_version_with_rs(users, version)


def test_spark_reads_each_step(spark, users):
    for v in range(4):
        compare_version_with_spark(spark, users, v)


def test_contents_of_each_step(users):
    def ids(v):
        return sorted(r["user_id"] for r in cpp_read(users, v).to_pylist())
    assert ids(0) == []
    assert ids(1) == ["u1", "u2"]
    assert ids(2) == ["u1", "u3"]
    assert ids(3) == ["u1", "u3", "u4"]
    latest = {r["user_id"]: r for r in cpp_read(users).to_pylist()}
    assert latest["u1"]["phone"] is None and latest["u3"]["phone"] is None
    assert latest["u4"]["phone"] == "+62 21 555"


def _between_commits(users):
    """Times strictly between the commits, from deltacpp's own history: {version: time}."""
    hist = {h["version"]: dt.datetime.fromisoformat(h["timestamp"].replace("Z", "+00:00"))
            for h in cpp_history(users)}
    return {v: hist[v] + (hist[v + 1] - hist[v]) / 2 for v in range(3)}


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
