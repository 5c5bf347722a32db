"""Text that is not valid UTF-8 never reaches a table: `deltacpp` refuses it in JSON Lines, CSV
and Parquet input and in every option that lands in the log (comment, property, constraint,
txn app id, user metadata), leaving the table directory exactly as it was. Valid multibyte text
(2-, 3- and 4-byte characters, an emoji right at the 32-code-point boundary of string
statistics, in partition values, comments and properties) is written and read back alike by
deltacpp, Spark and delta-rs, and every commit file stays strict UTF-8 JSON."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interop_util import (DELTACPP, cli, compare_versions_all, cpp_versions, rs_table,
                          spark_detail, spark_df, write_jsonl)

BAD = b"caf\xe9"  # Latin-1 é: not UTF-8
BAD_ARG = os.fsdecode(BAD)  # passes the raw byte on the command line

TWO, THREE, FOUR = "é", "東京", "😀"
# 31 ASCII characters and an emoji as the 32nd code point: the string statistics keep exactly
# the emoji, and the truncated maximum follows it.
BOUNDARY = "a" * 31 + FOUR + FOUR + "z"


def run(*args) -> subprocess.CompletedProcess:
    """`deltacpp ARGS...` with output as bytes (the test checks that no bad byte is echoed)."""
    return subprocess.run([DELTACPP, *map(str, args)], capture_output=True, timeout=120)


def tree(root: Path) -> dict[str, int]:
    """Every entry under ROOT: files with their sizes, directories as -1."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): (p.stat().st_size if p.is_file() else -1)
            for p in root.rglob("*")}


def assert_refused(table: Path, args: list, *parts: str):
    """ARGS fail with a message holding PARTS (and "not valid UTF-8" unless another text about
    UTF-8 is among them), never echoing the bad bytes; TABLE is left exactly as it was."""
    before = tree(table)
    p = run(*args)
    err = p.stderr.decode("utf-8")  # strict: the message itself is UTF-8
    assert p.returncode == 1, f"{args}: exit {p.returncode}\n{err}"
    if not any("UTF" in part for part in parts):
        assert "not valid UTF-8" in err, err
    for part in parts:
        assert part in err, f"{part!r} not in: {err}"
    assert BAD not in p.stderr, err
    assert tree(table) == before, f"{args} changed {table}"


def assert_log_is_strict_json(table: Path):
    for f in sorted((table / "_delta_log").glob("*.json")):
        text = f.read_bytes().decode("utf-8")  # raises on invalid UTF-8
        for line in text.splitlines():
            json.loads(line)


@pytest.fixture()
def table(tmp_path) -> Path:
    t = tmp_path / "t"
    cli("create", t, "--schema", "id long, name string, p string", "--partition-by", "p")
    cli("write", t, write_jsonl(tmp_path / "seed.jsonl", [{"id": 0, "name": "seed", "p": "x"}]))
    return t


def test_bad_input_is_refused(table, tmp_path):
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_bytes(b'{"id":1,"name":"ok","p":"x"}\n{"id":2,"name":"' + BAD + b'","p":"x"}\n')
    assert_refused(table, ["write", table, jsonl], "name", "row 2")

    # The CSV reader knows the line (the header is line 1).
    csv = tmp_path / "bad.csv"
    csv.write_bytes(b"id,name,p\n1,ok,x\n2,ok,x\n3," + BAD + b",x\n")
    assert_refused(table, ["write", table, csv], 'column "name"', "line 4 of", "caf\\xE9")

    # A partition value.
    jsonl_p = tmp_path / "bad_p.jsonl"
    jsonl_p.write_bytes(b'{"id":1,"name":"ok","p":"' + BAD + b'"}\n')
    assert_refused(table, ["write", table, jsonl_p], "column 'p' row 1 of the write")

    # Parquet whose string column holds bytes nobody checked: binary data viewed as string.
    names = pa.array([b"ok", BAD], type=pa.binary()).view(pa.string())
    parquet = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "name": names,
                             "p": pa.array(["x", "x"])}), parquet)
    assert_refused(table, ["write", table, parquet], "SchemaMismatch",
                   "column 'name' row 2 of the write")


def test_bad_options_are_refused(table, tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": 1, "name": "ok", "p": "x"}])
    assert_refused(table, ["write", table, good, "--txn-app-id", BAD_ARG, "--txn-version", 1],
                   "InvalidArgument", "txn app id")
    assert_refused(table, ["write", table, good, "--user-metadata", BAD_ARG],
                   "InvalidArgument", "user metadata")
    assert_refused(table, ["alter", table, "set-properties", f"comment={BAD_ARG}"],
                   "InvalidArgument", "table property 'comment'")
    assert_refused(table, ["alter", table, "set-properties", f"owner={BAD_ARG}"],
                   "InvalidArgument", "table property 'owner'")
    assert_refused(table, ["alter", table, "add-constraint", "c", f"name <> '{BAD_ARG}'"],
                   "InvalidArgument", "CHECK constraint 'c'")

    fresh = tmp_path / "fresh"
    schema = ["--schema", "id long, name string"]
    assert_refused(fresh, ["create", fresh, *schema, "--comment", BAD_ARG],
                   "InvalidArgument", "table description (comment)")
    assert_refused(fresh, ["create", fresh, *schema, "--property", f"k={BAD_ARG}"],
                   "InvalidArgument", "table property 'k'")
    assert_refused(fresh, ["create", fresh, *schema, "--constraint", f"c=name <> '{BAD_ARG}'"],
                   "InvalidArgument", "CHECK constraint 'c'")
    assert_refused(fresh, ["create", fresh, "--schema", f"id long COMMENT '{BAD_ARG}'"],
                   "comment")
    assert not fresh.exists()
    # Nothing refused left the table unreadable or changed.
    assert cpp_versions(table) == [0, 1]
    assert_log_is_strict_json(table)


def test_multibyte_text_reads_back_everywhere(spark, tmp_path):
    t = tmp_path / "multi"
    comment = f"caf{TWO} {THREE} {FOUR}"
    cli("create", t, "--schema", f"id long, name string COMMENT '{THREE}', p string",
        "--partition-by", "p", "--comment", comment, "--property", f"owner={FOUR}{TWO}")
    rows = [{"id": 1, "name": BOUNDARY, "p": FOUR},
            {"id": 2, "name": f"{TWO}{THREE}{FOUR}", "p": THREE},
            {"id": 3, "name": FOUR * 40, "p": f"caf{TWO}"},
            {"id": 4, "name": THREE * 33, "p": FOUR}]
    cli("write", t, write_jsonl(tmp_path / "multi.jsonl", rows), "--user-metadata",
        f"note {FOUR}", "--txn-app-id", f"app {THREE}", "--txn-version", 1)
    cli("alter", t, "set-properties", f"k{TWO}={THREE}")
    assert_log_is_strict_json(t)

    compare_versions_all(spark, t, cpp_versions(t))

    # The statistics keep data skipping exact for values around the boundary.
    for value in (BOUNDARY, FOUR * 40, THREE * 33):
        mine = cpp_read_where(t, f"name = '{value}'")
        assert mine == [value], (value, mine)
        theirs = [r.name for r in spark_df(spark, t).where(f"name = '{value}'").collect()]
        assert theirs == [value], (value, theirs)

    detail = spark_detail(spark, t)
    assert detail.description == comment
    assert detail.properties["owner"] == f"{FOUR}{TWO}"
    assert detail.properties[f"k{TWO}"] == THREE
    rs_meta = rs_table(t).metadata()
    assert rs_meta.description == comment
    assert rs_meta.configuration["owner"] == f"{FOUR}{TWO}"
    field = rs_table(t).schema().fields[1]
    assert field.metadata.get("comment") == THREE


def cpp_read_where(table: Path, where: str) -> list[str]:
    out = cli("read", table, "--columns", "name", "--where", where, "--format", "json").stdout
    return [json.loads(line)["name"] for line in out.splitlines() if line.strip()]
