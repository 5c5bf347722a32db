"""deltacpp's DML and change data feed against Spark's, on the same tables, both ways round.

For a table deltacpp created with the change data feed on, in copy-on-write mode and with
deletion vectors, deltacpp appends, deletes (part of a file, a whole partition) and updates;
`deltacpp changes` then equals Spark's `readChangeFeed` on every column (the table's and
`_change_type`, `_commit_version`, `_commit_timestamp` at microsecond precision) for each
version, the whole range and a timestamp range. Spark then runs DELETE, UPDATE and MERGE on the
same tables: deltacpp reads every version as Spark does and its change feed of Spark's versions
equals Spark's. deltacpp deletes and updates on top of Spark's versions (with deletion vectors,
in a file that holds a deletion vector Spark wrote) and Spark reads the result identically.
delta-rs, in its own process, reads the copy-on-write table as deltacpp does and refuses the
deletion-vector one."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from interop_util import arrow_rows, assert_same_rows, cli, compare_version_with_spark, \
    cpp_read, cpp_versions, log_versions_on_disk, rs_read_isolated, write_jsonl
from test_change_feed_reads import assert_changes_agree, commit_actions, commit_times, \
    cpp_changes, ts_text

COLS = ["id", "name", "score", "part"]
# deltacpp's own versions (v0 create, v1-v2 appends, v3-v5 DML), then Spark's (v6-v8), then
# deltacpp's again (v9-v10).
CPP_DML = [3, 4, 5]
SPARK_DML = [6, 7, 8]
CPP_AFTER_SPARK = [9, 10]


def _version(out: str) -> int:
    # "committed version N" (DML) or "committed version N: R rows in F files (B bytes)" (write)
    line = out.splitlines()[0]
    assert line.startswith("committed version "), out
    return int(line[len("committed version "):].split(":")[0])


def _commit(*args) -> int:
    # Commits a few milliseconds apart, so that every version has its own commit timestamp and
    # timestamp ranges name versions unambiguously in both readers.
    time.sleep(0.02)
    return _version(cli(*args).stdout)


def _build_cpp_table(t: Path, tmp: Path, dv: bool):
    cli("create", t, "--schema", "id long, name string, score int, part string",
        "--partition-by", "part",
        "--property", f"delta.enableDeletionVectors={'true' if dv else 'false'}",
        "--property", "delta.enableChangeDataFeed=true")                              # v0
    first = [{"id": i, "name": None if i == 6 else f"n{i}", "score": i * 10, "part": "a"}
             for i in range(1, 7)]
    first += [{"id": i, "name": f"n{i}", "score": i * 10, "part": "b"} for i in (7, 8)]
    second = [{"id": 9, "name": "n9", "score": 90, "part": "a"},
              {"id": 10, "name": "n10", "score": None, "part": "c"},
              {"id": 11, "name": "n11", "score": 110, "part": "c"}]
    assert _commit("write", t, write_jsonl(tmp / "first.json", first)) == 1
    assert _commit("write", t, write_jsonl(tmp / "second.json", second)) == 2
    versions = [_commit("delete", t, "--where", "id = 2"),                 # part of a file
                _commit("delete", t, "--where", "part = 'b'"),             # a whole partition
                _commit("update", t, "--set", "name = upper(name)", "--set", "score = score + 1",
                        "--where", "id IN (3, 10)")]                       # part of two files
    assert versions == CPP_DML


@pytest.fixture(scope="module", params=[False, True], ids=["copy_on_write", "deletion_vectors"])
def table(request, tmp_path_factory):
    """(path, dv) of a table deltacpp created and changed up to CPP_DML[-1]; the tests that
    follow add Spark's and deltacpp's later versions to it, in the order they are defined."""
    tmp = tmp_path_factory.mktemp("cpp_dml_cdf")
    t = tmp / "t"
    _build_cpp_table(t, tmp, request.param)
    return t, request.param


def _change_kinds(t, version) -> list[tuple]:
    """(id, _change_type) of deltacpp's change feed of VERSION, sorted."""
    return sorted(arrow_rows(cpp_changes(t, version, version), ["id", "_change_type"]))


def _file_actions(t, version, kind) -> list[dict]:
    return [a[kind] for a in commit_actions(t, version) if kind in a]


def test_deltacpp_change_feed_of_deltacpp_dml_equals_spark(spark, table):
    t, dv = table
    # The DML versions state their changes in each way the protocol allows: a partial delete
    # has a cdc file (copy-on-write) or re-adds its file with a deletion vector and no cdc file;
    # the partition delete only removes whole files; the update writes cdc files.
    partial = commit_actions(t, CPP_DML[0])
    if dv:
        assert not any("cdc" in a for a in partial), partial
        assert any(a.get("deletionVector") for a in _file_actions(t, CPP_DML[0], "add")), partial
    else:
        assert any("cdc" in a for a in partial), partial
    assert not any("cdc" in a for a in commit_actions(t, CPP_DML[1]))
    assert not _file_actions(t, CPP_DML[1], "add")
    assert _file_actions(t, CPP_DML[2], "cdc")

    # The feed holds the rows each command changed (so that the agreement below is not that
    # of two empty feeds).
    assert _change_kinds(t, CPP_DML[0]) == [(2, "delete")]
    assert _change_kinds(t, CPP_DML[1]) == [(7, "delete"), (8, "delete")]
    assert _change_kinds(t, CPP_DML[2]) == [(3, "update_postimage"), (3, "update_preimage"),
                                            (10, "update_postimage"), (10, "update_preimage")]
    for v in range(0, CPP_DML[-1] + 1):
        assert_changes_agree(spark, t, v, v)
    assert_changes_agree(spark, t, 0, CPP_DML[-1])
    assert_changes_agree(spark, t, 0, None)
    times = commit_times(spark, t)
    assert_changes_agree(spark, t, ts_text(times[2]), ts_text(times[4]), by="timestamp")


def test_spark_dml_on_deltacpp_tables_then_deltacpp_dml_again(spark, table):
    t, dv = table
    assert cpp_versions(t)[-1] == CPP_DML[-1], "runs on the table as deltacpp left it"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1")                                 # v6
    spark.sql(f"UPDATE delta.`{t}` SET score = -1 WHERE id = 11")                      # v7
    spark.sql(f"""MERGE INTO delta.`{t}` AS t
                  USING (SELECT * FROM VALUES (3, 'm3', 33, 'a'), (9, 'gone', 0, 'a'),
                                              (20, 'n20', 200, 'd')
                         AS s(id, name, score, part)) AS s
                  ON t.id = s.id
                  WHEN MATCHED AND s.name = 'gone' THEN DELETE
                  WHEN MATCHED THEN UPDATE SET t.name = s.name, t.score = s.score
                  WHEN NOT MATCHED THEN INSERT *""")                                   # v8
    assert cpp_versions(t)[-1] == SPARK_DML[-1]

    for v in range(0, SPARK_DML[-1] + 1):
        compare_version_with_spark(spark, t, v)
    assert _change_kinds(t, SPARK_DML[0]) == [(1, "delete")]
    assert _change_kinds(t, SPARK_DML[1]) == [(11, "update_postimage"), (11, "update_preimage")]
    assert _change_kinds(t, SPARK_DML[2]) == [(3, "update_postimage"), (3, "update_preimage"),
                                              (9, "delete"), (20, "insert")]
    for v in SPARK_DML:
        assert_changes_agree(spark, t, v, v)
    assert_changes_agree(spark, t, SPARK_DML[0], SPARK_DML[-1])
    assert_changes_agree(spark, t, CPP_DML[0], None)

    # The first append's file of partition a: with deletion vectors, Spark's DELETE gave it a
    # deletion vector of its own (on top of deltacpp's), and deltacpp's next DELETE is on it.
    if dv:
        with_dv = {a["path"] for a in _file_actions(t, SPARK_DML[0], "add")
                   if a.get("deletionVector")}
        assert with_dv, commit_actions(t, SPARK_DML[0])
    d = _commit("delete", t, "--where", "id = 4")                                     # v9
    u = _commit("update", t, "--set", "name = concat(name, '!')", "--where", "id IN (5, 11)")
    assert [d, u] == CPP_AFTER_SPARK
    if dv:
        removed = {a["path"] for a in _file_actions(t, d, "remove")}
        assert with_dv & removed, "deltacpp's DELETE did not touch the file with Spark's DV"

    expected = [(5, "n5!", 50, "a"), (6, None, 60, "a"), (3, "m3", 33, "a"),
                (10, "N10", None, "c"), (11, "n11!", -1, "c"), (20, "n20", 200, "d")]
    assert_same_rows(expected, arrow_rows(cpp_read(t), COLS), "deltacpp reads its last version")
    for v in CPP_AFTER_SPARK:
        compare_version_with_spark(spark, t, v)
        assert_changes_agree(spark, t, v, v)


def test_delta_rs_reads_copy_on_write_and_refuses_deletion_vectors(table):
    t, dv = table
    latest = log_versions_on_disk(t)[-1]
    theirs = rs_read_isolated(t, [latest])[latest]
    if dv:
        assert isinstance(theirs, str), "delta-rs read a table with deletion vectors"
        assert "deletionVectors" in theirs, theirs
        return
    assert not isinstance(theirs, str), theirs
    mine = cpp_read(t)
    assert_same_rows(arrow_rows(mine, COLS), arrow_rows(theirs, COLS),
                     f"{t} latest version: deltacpp (expected) vs delta-rs (actual)")
