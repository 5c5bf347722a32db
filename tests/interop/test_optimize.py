"""OPTIMIZE against delta-spark and delta-rs. Bin-packing (with WHERE) and Z-ORDER on a
deltacpp table: Spark and delta-rs read every version as deltacpp does, the histories agree,
and Spark's own OPTIMIZE of a copy removes the same files and records the same metric names.
Purge of a Spark table with deletion vectors: Spark reads every version as deltacpp does and
its own REORG ... APPLY (PURGE) of a copy removes the same files and deletion vectors. A
clustered table Spark made: after deltacpp's OPTIMIZE, Spark reads it as before and its own
OPTIMIZE finds every file already clustered."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from interop_util import arrow_rows, assert_history_agrees, assert_same_rows, cli, \
    committed_version, compare_versions_all, cpp_describe, cpp_read, cpp_versions, spark_df, \
    spark_rows, write_jsonl


def _commit_info(table: Path, version: int) -> dict:
    for line in (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
        if line.strip() and "commitInfo" in json.loads(line):
            return json.loads(line)["commitInfo"]
    raise AssertionError(f"no commitInfo in version {version} of {table}")


def _removed_paths(table: Path, version: int) -> set[str]:
    out = set()
    for line in (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
        action = json.loads(line) if line.strip() else {}
        if "remove" in action:
            out.add(action["remove"]["path"])
    return out


def _small_files_table(t: Path, tmp: Path):
    cli("create", t, "--schema", "id long, x long, y long, part string", "--partition-by", "part")
    for k in range(6):
        rows = [{"id": k * 100 + i, "x": (i * 37 + k) % 100, "y": (i * 53 + 3 * k) % 100,
                 "part": "a" if i % 3 else "b"} for i in range(60)]
        cli("write", t, write_jsonl(tmp / f"r{k}.json", rows))


def test_optimize_and_zorder_read_the_same_in_spark_and_delta_rs(spark, tmp_path):
    t = tmp_path / "t"
    _small_files_table(t, tmp_path)
    theirs = tmp_path / "t-spark"
    shutil.copytree(t, theirs)

    v = committed_version(cli("optimize", t, "--where", "part = 'a'"))
    spark.sql(f"OPTIMIZE delta.`{theirs}` WHERE part = 'a'")
    mine, spark_made = _commit_info(t, v), _commit_info(theirs, v)
    assert mine["operation"] == spark_made["operation"] == "OPTIMIZE"
    assert set(mine["operationMetrics"]) == set(spark_made["operationMetrics"])
    for m in ("numRemovedFiles", "numRemovedBytes", "numAddedFiles", "numDeletionVectorsRemoved"):
        assert mine["operationMetrics"][m] == spark_made["operationMetrics"][m], m
    assert set(mine["operationParameters"]) == set(spark_made["operationParameters"])
    assert _removed_paths(t, v) == _removed_paths(theirs, v)
    assert mine["isolationLevel"] == spark_made["isolationLevel"] == "SnapshotIsolation"

    z = committed_version(cli("optimize", t, "--zorder-by", "x, y"))
    assert json.loads(_commit_info(t, z)["operationParameters"]["zOrderBy"]) == ["x", "y"]
    compare_versions_all(spark, t, cpp_versions(t))
    assert_history_agrees(spark, t)
    # Spark finds nothing more to bin-pack in partition a (one file per partition now).
    out = spark.sql(f"OPTIMIZE delta.`{t}`").collect()[0]["metrics"]
    assert out["numFilesRemoved"] == 0, out


def test_purge_of_a_spark_table_with_deletion_vectors(spark, tmp_path):
    t = tmp_path / "dv"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING) USING delta "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.range(0, 300, 1, 3).selectExpr("id", "concat('n', id) AS name") \
        .write.format("delta").mode("append").save(str(t))
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 7 = 0 AND id < 200")
    theirs = tmp_path / "dv-spark"
    shutil.copytree(t, theirs)
    before = spark_rows(spark_df(spark, t), ["id", "name"])

    v = committed_version(cli("optimize", t, "--purge"))
    spark.sql(f"REORG TABLE delta.`{theirs}` APPLY (PURGE)")
    mine, spark_made = _commit_info(t, v), _commit_info(theirs, v)
    assert mine["operation"] == spark_made["operation"] == "REORG"
    for m in ("numRemovedFiles", "numDeletionVectorsRemoved"):
        assert mine["operationMetrics"][m] == spark_made["operationMetrics"][m], m
    assert _removed_paths(t, v) == _removed_paths(theirs, v)
    after = spark_rows(spark_df(spark, t), ["id", "name"])
    assert_same_rows(before, after, "Spark after deltacpp's purge")
    assert_same_rows(before, arrow_rows(cpp_read(t), ["id", "name"]), "deltacpp after purge")
    # delta-rs refuses tables with deletion vectors: compare with Spark only.
    compare_versions_all(spark, t, cpp_versions(t), rs=False)


def test_optimize_of_a_clustered_spark_table(spark, tmp_path):
    t = tmp_path / "c"
    spark.sql(f"CREATE TABLE delta.`{t}` (a INT, b STRING) USING delta CLUSTER BY (a)")
    for k in range(4):
        spark.sql(f"INSERT INTO delta.`{t}` SELECT CAST(id * 7 % 100 + {k} AS INT), "
                  f"CAST(id AS STRING) FROM range(50)")
    before = spark_rows(spark_df(spark, t), ["a", "b"])
    v = committed_version(cli("optimize", t))
    info = _commit_info(t, v)
    assert json.loads(info["operationParameters"]["clusterBy"]) == ["a"]
    assert_same_rows(before, spark_rows(spark_df(spark, t), ["a", "b"]), "Spark after OPTIMIZE")
    compare_versions_all(spark, t, cpp_versions(t))
    history = spark.sql(f"DESCRIBE HISTORY delta.`{t}` LIMIT 1").collect()[0]
    assert history["operation"] == "OPTIMIZE"
    # Spark recognises deltacpp's files as clustered: nothing left for its OPTIMIZE.
    out = spark.sql(f"OPTIMIZE delta.`{t}`").collect()[0]["metrics"]
    assert out["numFilesRemoved"] == 0, out
    assert cpp_describe(t)["clustering columns"] == "a"
    assert list(spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0].clusteringColumns) == ["a"]
