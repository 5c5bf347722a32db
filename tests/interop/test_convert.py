"""CONVERT TO DELTA against delta-spark and delta-rs. A Hive-partitioned Parquet folder Spark
wrote (with a null partition) is converted by deltacpp in place: Spark and delta-rs read the
same rows as the Parquet folder held, Spark's DESCRIBE HISTORY shows the CONVERT, Spark's own
CONVERT TO DELTA of a copy gives the same schema, partition values and files, and Spark then
writes to the converted table. A flat folder converted by deltacpp reads the same in Spark."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from interop_util import arrow_rows, assert_history_agrees, assert_same_rows, cli, \
    committed_version, compare_versions_all, cpp_read, spark_df, spark_rows


def _adds(table: Path) -> dict[str, dict]:
    out = {}
    for line in (table / "_delta_log" / f"{0:020d}.json").read_text().splitlines():
        action = json.loads(line) if line.strip() else {}
        if "add" in action:
            out[action["add"]["path"]] = action["add"]
    return out


def _schema(table: Path) -> list[tuple[str, str]]:
    for line in (table / "_delta_log" / f"{0:020d}.json").read_text().splitlines():
        action = json.loads(line) if line.strip() else {}
        if "metaData" in action:
            fields = json.loads(action["metaData"]["schemaString"])["fields"]
            return [(f["name"], json.dumps(f["type"])) for f in fields]
    raise AssertionError(f"no metaData in version 0 of {table}")


def test_spark_partitioned_parquet_folder_converted_by_deltacpp(spark, tmp_path):
    folder = tmp_path / "events"
    spark.range(0, 500, 1, 4).selectExpr(
        "id", "concat('n', id) AS name", "cast(id * 1.5 AS double) AS score",
        "CASE WHEN id % 5 = 0 THEN NULL ELSE concat('c', id % 3) END AS country") \
        .write.partitionBy("country").parquet(str(folder))
    cols = ["id", "name", "score", "country"]
    parquet_rows = spark_rows(spark.read.parquet(str(folder)), cols)
    theirs = tmp_path / "events-spark"
    shutil.copytree(folder, theirs)

    v = committed_version(cli("convert", folder, "--partition-by", "country STRING"))
    assert v == 0
    assert_same_rows(parquet_rows, arrow_rows(cpp_read(folder), cols), "deltacpp after convert")
    compare_versions_all(spark, folder, [0])
    assert_history_agrees(spark, folder)
    hist = spark.sql(f"DESCRIBE HISTORY delta.`{folder}`").collect()
    assert [r.operation for r in hist] == ["CONVERT"]

    # Spark's own conversion of the same folder takes the same files with the same partition
    # values and arrives at the same schema.
    spark.sql(f"CONVERT TO DELTA parquet.`{theirs}` PARTITIONED BY (country STRING)")
    mine, spark_made = _adds(folder), _adds(theirs)
    assert set(mine) == set(spark_made)
    for path, add in mine.items():
        assert add["partitionValues"] == spark_made[path]["partitionValues"], path
        assert add["size"] == spark_made[path]["size"], path
        assert json.loads(add["stats"])["numRecords"] == \
            json.loads(spark_made[path]["stats"])["numRecords"], path
    assert _schema(folder) == _schema(theirs)

    # The converted table is an ordinary table to Spark: it appends and reads back.
    spark.range(1000, 1010).selectExpr("id", "concat('n', id) AS name",
                                       "cast(id AS double) AS score", "'c9' AS country") \
        .write.format("delta").mode("append").save(str(folder))
    got = arrow_rows(cpp_read(folder), cols)
    assert len(got) == 510
    assert_same_rows(spark_rows(spark_df(spark, folder), cols), got, "after Spark's append")


def test_flat_parquet_folder_converted_by_deltacpp_reads_the_same_in_spark(spark, tmp_path):
    folder = tmp_path / "flat"
    spark.range(0, 300, 1, 3).selectExpr("id", "cast(id AS timestamp) AS ts",
                                         "cast(id AS decimal(10, 2)) AS amount") \
        .write.parquet(str(folder))
    cols = ["id", "ts", "amount"]
    parquet_rows = spark_rows(spark.read.parquet(str(folder)), cols)
    cli("convert", folder)
    assert_same_rows(parquet_rows, spark_rows(spark_df(spark, folder), cols), "Spark")
    compare_versions_all(spark, folder, [0])
    # The statistics the conversion collected hold each file's true row count and id range.
    from pyspark.sql import functions as F
    per_file = {Path(r.f).name: (r.n, r.lo, r.hi) for r in spark.read.parquet(str(folder))
                .select(F.input_file_name().alias("f"), "id").groupBy("f")
                .agg(F.count("*").alias("n"), F.min("id").alias("lo"), F.max("id").alias("hi"))
                .collect()}
    adds = _adds(folder)
    assert len(adds) == len(per_file) == 3
    for path, add in adds.items():
        stats = json.loads(add["stats"])
        n, lo, hi = per_file[Path(path).name]
        assert (stats["numRecords"], stats["minValues"]["id"], stats["maxValues"]["id"]) == \
            (n, lo, hi), path
