"""Deletion vectors written by deltacpp's DV writer, read by the peers. The table (plain Parquet
from pyarrow, a hand-written version 0) gets three DELETE-like commits whose DVs come from the
writer through the test-only `deltacpp_dv_tool` (built next to the test executables): file DVs
sharing one DV file at the table root plus a whole-file delete, a union with an existing file DV
into a DV file under a random prefix folder, and a union that is small enough to be inline.
Spark and deltacpp read every version without the deleted rows; delta-rs's to_pyarrow_table()
refuses DV tables, and its SQL engine reads them like the others."""
from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import interop_util
from interop_util import cpp_read, rs_read, rs_read_sql, spark_df

DV_TOOL = Path(os.environ.get(
    "DELTACPP_DV_TOOL", str(Path(interop_util.DELTACPP).parent / "tests" / "deltacpp_dv_tool")))

FILES = [list(range(0, 10)), list(range(10, 20)), list(range(20, 25))]
# Ids visible at each version.
EXPECTED = {
    0: set(range(25)),
    1: set(range(20)) - {3, 5, 10, 19},
    2: set(range(20)) - {3, 5, 10, 19, 12, 13},
    3: set(range(20)) - {3, 5, 10, 19, 12, 13, 7},
}


def run_dv_tool(request: dict) -> dict:
    if not (DV_TOOL.is_file() and os.access(DV_TOOL, os.X_OK)):
        pytest.fail(f"deltacpp_dv_tool not found at {DV_TOOL} (build the deltacpp_dv_tool "
                    "target or set DELTACPP_DV_TOOL)", pytrace=False)
    r = subprocess.run([str(DV_TOOL)], input=json.dumps(request), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def write_commit(root: Path, version: int, actions: list[dict]) -> None:
    path = root / "_delta_log" / f"{version:020d}.json"
    path.write_text("".join(json.dumps(a) + "\n" for a in actions), encoding="utf-8")


def delete_commit(root: Path, version: int, live: dict, result: dict) -> None:
    """remove(path, old DV) + add(path, new DV) per file the tool changed (no add for a file
    that lost every row), as a DELETE commits them; `live` (path -> add) is updated."""
    now = int(time.time() * 1000)
    actions = [{"commitInfo": {"timestamp": now, "operation": "DELETE",
                               "operationParameters": {"predicate": "[]"}}}]
    for f in result["files"]:
        if f["outcome"] == "unchanged":
            continue
        old = live.pop(f["path"])
        remove = {"path": old["path"], "deletionTimestamp": now, "dataChange": True,
                  "extendedFileMetadata": True, "partitionValues": {}, "size": old["size"]}
        if "deletionVector" in old:
            remove["deletionVector"] = old["deletionVector"]
        actions.append({"remove": remove})
        if f["outcome"] == "dv":
            stats = json.loads(old["stats"])
            stats["tightBounds"] = False
            add = dict(old, stats=json.dumps(stats), deletionVector=f["deletionVector"],
                       modificationTime=now)
            actions.append({"add": add})
            live[f["path"]] = add
    write_commit(root, version, actions)


def request(root: Path, live: dict, rows: dict, max_inline: int, prefix: int = 0) -> dict:
    files = []
    for path, deleted in rows.items():
        add = live[path]
        entry = {"path": path, "numRecords": json.loads(add["stats"])["numRecords"],
                 "rows": deleted}
        if "deletionVector" in add:
            entry["deletionVector"] = add["deletionVector"]
        files.append(entry)
    return {"tableRoot": str(root), "maxInlineBytes": max_inline, "randomPrefixLength": prefix,
            "files": files}


@pytest.fixture(scope="module")
def dv_table(tmp_path_factory):
    root = tmp_path_factory.mktemp("dv_writes") / "table"
    (root / "_delta_log").mkdir(parents=True)
    now = int(time.time() * 1000)
    schema = {"type": "struct",
              "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "WRITE",
                        "operationParameters": {"mode": "Append", "partitionBy": "[]"}}},
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                      "readerFeatures": ["deletionVectors"],
                      "writerFeatures": ["deletionVectors"]}},
        {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": [],
                      "configuration": {"delta.enableDeletionVectors": "true"},
                      "createdTime": now}},
    ]
    live = {}
    for i, ids in enumerate(FILES):
        name = f"part-{i:05d}-{uuid.uuid4()}.c000.snappy.parquet"
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), root / name)
        stats = {"numRecords": len(ids), "minValues": {"id": min(ids)},
                 "maxValues": {"id": max(ids)}, "nullCount": {"id": 0}}
        add = {"path": name, "partitionValues": {}, "size": (root / name).stat().st_size,
               "modificationTime": now, "dataChange": True, "stats": json.dumps(stats)}
        live[name] = add
        actions.append({"add": add})
    write_commit(root, 0, actions)
    a, b, c = sorted(live)

    # v1: file DVs for two files, in one DV file at the root; the third file loses every row.
    r1 = run_dv_tool(request(root, live, {a: [3, 5], b: [0, 9], c: [0, 1, 2, 3, 4]}, -1))
    outcomes = [f["outcome"] for f in r1["files"]]
    assert outcomes == ["dv", "dv", "remove"], r1
    assert {f["deletionVector"]["storageType"] for f in r1["files"][:2]} == {"u"}
    assert len(r1["writtenFiles"]) == 1
    assert r1["files"][0]["deletionVector"]["offset"] == 1
    assert r1["files"][1]["deletionVector"]["offset"] > 1
    delete_commit(root, 1, live, r1)

    # v2: b's file DV united with more rows, into a DV file in a random two-character folder.
    r2 = run_dv_tool(request(root, live, {b: [2, 3]}, -1, prefix=2))
    dv2 = r2["files"][0]["deletionVector"]
    assert dv2["storageType"] == "u" and len(dv2["pathOrInlineDv"]) == 22, r2
    assert dv2["cardinality"] == 4
    assert (root / dv2["pathOrInlineDv"][:2]).is_dir()
    delete_commit(root, 2, live, r2)

    # v3: a's file DV united with one more row: small enough to go inline.
    r3 = run_dv_tool(request(root, live, {a: [7]}, 128))
    dv3 = r3["files"][0]["deletionVector"]
    assert dv3["storageType"] == "i" and "offset" not in dv3, r3
    assert dv3["cardinality"] == 3
    assert r3["writtenFiles"] == []
    delete_commit(root, 3, live, r3)
    return root


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_spark_reads_deltacpp_deletion_vectors(spark, dv_table, version):
    ids = {r["id"] for r in spark_df(spark, dv_table, version=version).collect()}
    assert ids == EXPECTED[version]


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_deltacpp_reads_its_deletion_vectors(dv_table, version):
    ids = set(cpp_read(dv_table, version).column("id").to_pylist())
    assert ids == EXPECTED[version]


def test_delta_rs_refuses_then_sql_reads(dv_table):
    """deltalake 1.6.6: to_pyarrow_table() refuses any version whose protocol lists the
    deletionVectors reader feature (docs/interop.md); its SQL engine applies the DVs."""
    for version in sorted(EXPECTED):
        with pytest.raises(Exception, match="deletionVectors"):
            rs_read(dv_table, version)
    for version in sorted(EXPECTED):
        ids = set(rs_read_sql(dv_table, version).column("id").to_pylist())
        assert ids == EXPECTED[version], version
