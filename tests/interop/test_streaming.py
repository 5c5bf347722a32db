"""Streaming against delta-spark and delta-rs. `deltacpp stream` ingests a landing folder into a
table Spark and delta-rs read with every record once, whose history Spark shows as STREAMING
UPDATE with the query id and epochs, and which Spark Structured Streaming then reads as a
stream source. A table Spark writes is streamed by deltacpp: its snapshot and later appends
arrive once, Spark's DELETE stops the stream and --skip-change-commits passes it; Spark's change
data feed of a table (with UPDATE and DELETE) streamed by deltacpp equals Spark's batch
readChangeFeed of the same versions."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from interop_util import arrow_rows, assert_same_rows, cli, cpp_read, rs_read_isolated, \
    spark_df, spark_rows


def _land(folder: Path, name: str, first: int, n: int):
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}"
    tmp.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n"
                           for i in range(first, first + n)))
    tmp.rename(folder / name)


def _stream(*args, check=True) -> subprocess.CompletedProcess:
    return cli("stream", *args, check=check)


def test_ingested_table_reads_in_spark_and_delta_rs_and_streams_in_spark(spark, tmp_path):
    landing, sink, ckpt = tmp_path / "in", tmp_path / "sink", tmp_path / "ck"
    for k in range(5):
        _land(landing, f"f{k}.json", k * 10, 10)
    common = ["--source", f"json:{landing}", "--schema", "id long, name string", "--sink", sink,
              "--checkpoint", ckpt, "--max-files", "2"]
    _stream(*common)
    _land(landing, "f5.json", 50, 10)
    _stream(*common)
    expected = [(i, f"n{i}") for i in range(60)]
    assert_same_rows(expected, spark_rows(spark_df(spark, sink), ["id", "name"]), "Spark")
    rs = rs_read_isolated(sink, [3])[3]
    assert not isinstance(rs, str), rs
    assert_same_rows(expected, arrow_rows(rs, ["id", "name"]), "delta-rs")

    hist = spark.sql(f"DESCRIBE HISTORY delta.`{sink}`").orderBy("version").collect()
    assert [r.operation for r in hist] == ["STREAMING UPDATE"] * 4
    query_ids = {r.operationParameters["queryId"] for r in hist}
    assert len(query_ids) == 1
    assert [r.operationParameters["epochId"] for r in hist] == ["0", "1", "2", "3"]
    assert [r.operationParameters["outputMode"] for r in hist] == ["Append"] * 4

    # Spark Structured Streaming reads deltacpp's sink table as a source.
    out = (spark.readStream.format("delta").load(str(sink)).writeStream.format("memory")
           .queryName("from_deltacpp").trigger(availableNow=True).start())
    out.awaitTermination(120)
    got = spark_rows(spark.sql("SELECT * FROM from_deltacpp"), ["id", "name"])
    assert_same_rows(expected, got, "Spark Structured Streaming over the sink")


def test_a_table_spark_writes_streamed_by_deltacpp(spark, tmp_path):
    src, sink, ckpt = tmp_path / "src", tmp_path / "sink", tmp_path / "ck"
    spark.range(0, 100, 1, 2).selectExpr("id", "concat('n', id) AS name") \
        .write.format("delta").save(str(src))
    common = ["--source", f"delta:{src}", "--sink", sink, "--checkpoint", ckpt]
    _stream(*common)
    spark.range(100, 150, 1, 1).selectExpr("id", "concat('n', id) AS name") \
        .write.format("delta").mode("append").save(str(src))
    _stream(*common)
    mine = arrow_rows(cpp_read(sink), ["id", "name"])
    assert_same_rows(spark_rows(spark_df(spark, src), ["id", "name"]), mine, "after appends")

    spark.sql(f"DELETE FROM delta.`{src}` WHERE id < 10")
    spark.range(150, 160, 1, 1).selectExpr("id", "concat('n', id) AS name") \
        .write.format("delta").mode("append").save(str(src))
    stopped = _stream(*common, check=False)
    assert stopped.returncode != 0
    assert "UnsupportedFeature" in stopped.stderr and "DELETE" in stopped.stderr, stopped.stderr
    _stream(*common, "--skip-change-commits")
    ids = sorted(r[0] for r in arrow_rows(cpp_read(sink), ["id"]))
    assert ids == list(range(160)), "the delete skipped, the later append streamed once"


def test_change_feed_of_a_spark_table_streamed_by_deltacpp(spark, tmp_path):
    src, sink, ckpt = tmp_path / "cdf", tmp_path / "sink", tmp_path / "ck"
    spark.sql(f"CREATE TABLE delta.`{src}` (id BIGINT, name STRING) USING delta "
              "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    spark.range(0, 20, 1, 2).selectExpr("id", "concat('n', id) AS name") \
        .write.format("delta").mode("append").save(str(src))
    spark.sql(f"UPDATE delta.`{src}` SET name = 'u' WHERE id < 5")
    spark.sql(f"DELETE FROM delta.`{src}` WHERE id >= 15")
    _stream("--source", f"delta:{src}", "--starting-version", "0", "--read-change-feed",
            "--max-files", "1", "--sink", sink, "--checkpoint", ckpt)
    cols = ["id", "name", "_change_type", "_commit_version"]
    theirs = spark.read.format("delta").option("readChangeFeed", "true") \
        .option("startingVersion", 0).load(str(src))
    expected = spark_rows(theirs, cols)
    assert len(expected) == 20 + 10 + 5
    assert_same_rows(expected, arrow_rows(cpp_read(sink), cols), "deltacpp's change feed stream")
