"""Table features written by Spark and read by deltacpp: change data feed (cdc files), V2
checkpoints, vacuumed history, in-commit timestamps with timestamp time travel, the
`_metadata.file_path` / `_metadata.row_index` columns, and reader
features and writer features deltacpp does not support (refused with UnsupportedFeature
naming them)."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time

import pyarrow.parquet as pq
import pytest

from interop_util import (arrow_rows, assert_detail_agrees, assert_same_rows, cli,
                          compare_versions_all, cpp_read, cpp_versions, data_files_on_disk,
                          spark_df, spark_rows)


def _spark_versions(spark, t):
    return sorted(r.version for r in
                  spark.sql(f"DESCRIBE HISTORY delta.`{t}`").select("version").collect())


def _actions(t, version):
    p = t / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line]


def test_spark_change_data_feed(spark, tmp_path):
    """UPDATE and DELETE on a CDF table write _change_data/cdc-*.parquet files (cdc actions);
    readers of the table's data must ignore them. deltacpp reads every version as Spark and
    delta-rs do."""
    t = tmp_path / "cdf"
    notes = {}
    spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, v STRING, p STRING) USING delta
        PARTITIONED BY (p) TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')""")
    notes[0] = "create, CDF on"
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), "
              f"(4, 'd', 'y'), (5, NULL, NULL)")
    notes[1] = "insert"
    spark.sql(f"UPDATE delta.`{t}` SET v = 'updated' WHERE id IN (1, 3)")
    notes[2] = "UPDATE (cdc files)"
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 4")
    notes[3] = "DELETE (cdc files)"
    cdc = [a["cdc"] for v in (2, 3) for a in _actions(t, v) if "cdc" in a]
    assert cdc and (t / "_change_data").is_dir(), "Spark wrote no cdc files"
    assert cpp_versions(t) == _spark_versions(spark, t) == [0, 1, 2, 3]
    compare_versions_all(spark, t, range(4), notes)
    assert sorted((r["id"], r["v"]) for r in cpp_read(t).to_pylist()) == \
        [(1, "updated"), (2, "b"), (3, "updated"), (5, None)]
    assert_detail_agrees(spark, t)


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_spark_v2_checkpoints(spark, tmp_path, fmt):
    """Spark writes V2 checkpoints (UUID-named top-level file in FMT with sidecars in
    _delta_log/_sidecars); deltacpp reads every version, also from a copy whose log starts at
    the newest checkpoint."""
    t = tmp_path / f"v2_{fmt}"
    key = "spark.databricks.delta.checkpointV2.topLevelFileFormat"
    spark.conf.set(key, fmt)
    try:
        spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, v STRING, p STRING) USING delta
            PARTITIONED BY (p)
            TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2')""")
        for v in range(1, 5):
            spark.sql(f"INSERT INTO delta.`{t}` VALUES ({v}, 'v{v}', '{'ab'[v % 2]}'), "
                      f"({v * 10}, NULL, NULL)")
    finally:
        spark.conf.unset(key)
    log = sorted(p.name for p in (t / "_delta_log").iterdir())
    print(f"spark-v2-checkpoint-{fmt}:", log,
          sorted(p.name for p in (t / "_delta_log" / "_sidecars").glob("*"))
          if (t / "_delta_log" / "_sidecars").exists() else "no sidecars")
    cps = [n for n in log if ".checkpoint." in n and not n.startswith(".")]
    assert cps and all(n.endswith("." + fmt) and len(n.split(".")) == 4 for n in cps), log
    assert any((t / "_delta_log" / "_sidecars").glob("*.parquet")), \
        "Spark wrote no sidecar files: the test would not cover them"
    compare_versions_all(spark, t, range(5), rs_via="sql")
    last = max(int(n[:20]) for n in cps)
    cp = tmp_path / f"v2_{fmt}_from_cp"
    shutil.copytree(t, cp)
    for p in (cp / "_delta_log").iterdir():
        if p.name[:20].isdigit() and int(p.name[:20]) < last:
            p.unlink()
    compare_versions_all(spark, cp, [last], rs_via="sql")
    assert_detail_agrees(spark, t)
    assert_detail_agrees(spark, cp)


def test_spark_vacuumed_history(spark, tmp_path):
    """After Spark VACUUM RETAIN 0 HOURS (retention check off), the versions whose files are
    gone fail in deltacpp with MissingFile naming the file; the latest version reads."""
    t = tmp_path / "vacuumed"
    t0 = time.time()
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT, v STRING) USING delta")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b')")             # v1
    spark.sql(f"INSERT OVERWRITE delta.`{t}` VALUES (3, 'c')")                    # v2
    # (the listing parallelism defaults to 10000 tasks: ~20 s for a tiny table on 2 cores)
    confs = {"spark.databricks.delta.retentionDurationCheck.enabled": "false",
             "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2"}
    for k, val in confs.items():
        spark.conf.set(k, val)
    try:
        spark.sql(f"VACUUM delta.`{t}` RETAIN 0 HOURS")
    finally:
        for k in confs:
            spark.conf.unset(k)
    versions = _spark_versions(spark, t)
    print("vacuum-versions:", versions,
          [r.operation for r in spark.sql(f"DESCRIBE HISTORY delta.`{t}`").collect()])
    assert cpp_versions(t) == versions
    p = cli("read", t, "--version", 1, check=False)
    assert p.returncode != 0, "deltacpp read version 1 although its file was vacuumed"
    assert "MissingFile" in p.stderr and ".parquet" in p.stderr, p.stderr
    with pytest.raises(Exception, match="(?i)FileNotFound|file.*does not exist"):
        spark_df(spark, t, 1).collect()
    compare_versions_all(spark, t, [v for v in versions if v >= 2])
    print("vacuum-seconds:", round(time.time() - t0, 1))
    assert [r["id"] for r in cpp_read(t).to_pylist()] == [3]
    assert_detail_agrees(spark, t)


def test_spark_in_commit_timestamps_time_travel(spark, tmp_path):
    """Spark writes inCommitTimestamp in every commitInfo; the commit files' modification times
    are then moved to 2001 so that only the in-commit timestamps give the right answer, and
    `deltacpp read --timestamp` equals Spark timestampAsOf at and between every commit; both
    refuse a time before the first commit and after the latest."""
    t = tmp_path / "spark_ict"
    spark.sql(f"""CREATE TABLE delta.`{t}` (id INT, v STRING) USING delta
        TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')""")
    for v in range(1, 4):
        spark.sql(f"INSERT INTO delta.`{t}` VALUES ({v}, 'v{v}')")
    ict = {}
    for v in range(4):
        ci = next(a["commitInfo"] for a in _actions(t, v) if "commitInfo" in a)
        ict[v] = ci["inCommitTimestamp"]
    old = dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    for p in (t / "_delta_log").glob("*.json"):
        os.utime(p, (old, old))

    def at(ms):
        return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)

    instants = {}
    for v in range(4):
        instants[at(ict[v])] = v
        if v < 3:
            instants[at((ict[v] + ict[v + 1]) // 2)] = v
    instants[at(ict[0] - 1000)] = "before"  # before the first commit
    instants[at(ict[3] + 3_600_000)] = "after"  # after the latest commit
    failures = []
    for when, want in sorted(instants.items(), key=lambda kv: kv[0]):
        iso = when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        spark_ts = when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        try:
            theirs = spark_rows(spark_df(spark, t, timestamp=spark_ts), ["id", "v"])
        except Exception as e:  # noqa: BLE001
            theirs = f"error: {str(e).splitlines()[0][:200]}"
        p = cli("read", t, "--timestamp", iso, "--format", "json", check=False)
        if p.returncode != 0:
            mine = f"error: {p.stderr.strip()[:200]}"
        else:
            mine = [(o["id"], o["v"]) for o in map(json.loads, p.stdout.splitlines())]
        if isinstance(want, str):
            # Spark refuses a timestamp before the first or after the latest commit; deltacpp
            # must agree
            if (isinstance(theirs, list) or isinstance(mine, list)
                    or "TimestampOutOfRange" not in mine or want not in theirs.lower()):
                failures.append(f"{iso} ({want} the commits): Spark {theirs!r}, "
                                f"deltacpp {mine!r}")
            continue
        if isinstance(theirs, str) or isinstance(mine, str):
            failures.append(f"{iso} (version {want}): Spark {theirs!r}, deltacpp {mine!r}")
            continue
        try:
            assert_same_rows(theirs, mine, f"{iso}: Spark timestampAsOf (expected) vs deltacpp")
            assert sorted(i for i, _ in mine) == list(range(1, want + 1)), \
                f"{iso}: deltacpp ids {mine}, want version {want}"
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)
    assert_detail_agrees(spark, t)


def _edit_protocol(t, reader_feature):
    """Adds READER_FEATURE to the protocol of T's latest commit by appending a protocol action
    in a new commit (as a writer enabling a feature would)."""
    last = max(int(p.name[:20]) for p in (t / "_delta_log").glob("*.json"))
    proto = None
    for v in range(last + 1):
        for a in _actions(t, v):
            if "protocol" in a:
                proto = a["protocol"]
    proto = {"minReaderVersion": 3, "minWriterVersion": 7,
             "readerFeatures": sorted(set(proto.get("readerFeatures", [])) | {reader_feature}),
             "writerFeatures": sorted(set(proto.get("writerFeatures", [])) | {reader_feature})}
    commit = [{"commitInfo": {"timestamp": 1700000000000, "operation": "SET TBLPROPERTIES",
                              "operationParameters": {}}}, {"protocol": proto}]
    (t / "_delta_log" / f"{last + 1:020d}.json").write_text(
        "".join(json.dumps(a) + "\n" for a in commit), encoding="utf-8")
    return last + 1


def test_unsupported_reader_feature(spark, tmp_path):
    """A reader feature deltacpp does not know (hand-added to a Spark table's protocol) makes
    every deltacpp command on that version exit non-zero with UnsupportedFeature naming it;
    the earlier versions still read."""
    t = tmp_path / "unknown_feature"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT) USING delta "
              f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1), (2)")
    v = _edit_protocol(t, "futureReaderFeatureX")
    for args in (["read", t], ["describe", t], ["files", t], ["read", t, "--version", v]):
        p = cli(*args, check=False)
        assert p.returncode != 0, f"deltacpp {args[0]} accepted the unknown reader feature"
        assert "UnsupportedFeature" in p.stderr and "futureReaderFeatureX" in p.stderr, p.stderr
    assert [r["id"] for r in cpp_read(t, v - 1).to_pylist()] in ([1, 2], [2, 1])
    with pytest.raises(Exception, match="futureReaderFeatureX"):
        spark_df(spark, t).collect()


def test_unsupported_writer_feature(spark, tmp_path):
    """A writer-only feature deltacpp does not know (hand-added to the protocol of a table
    Spark made, as a writer enabling it would) makes `deltacpp write` exit non-zero with
    UnsupportedFeature naming it, leaving the log and the data files as they were; reading
    is still allowed (writer features do not concern readers)."""
    t = tmp_path / "unknown_writer_feature"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT, v STRING) USING delta")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b')")
    proto = [a["protocol"] for v in range(2) for a in _actions(t, v) if "protocol" in a][-1]
    assert (proto["minReaderVersion"], proto["minWriterVersion"]) == (1, 2), proto
    # writer version 7 lists the features writer version 2 implied, plus the unknown one
    commit = [{"commitInfo": {"timestamp": 1700000000000, "operation": "SET TBLPROPERTIES",
                              "operationParameters": {}}},
              {"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
                            "writerFeatures": ["appendOnly", "invariants",
                                               "futureWriterFeatureY"]}}]
    (t / "_delta_log" / f"{2:020d}.json").write_text(
        "".join(json.dumps(a) + "\n" for a in commit), encoding="utf-8")
    log_before = sorted(p.name for p in (t / "_delta_log").iterdir())
    data_before = data_files_on_disk(t)
    src = tmp_path / "in.csv"
    src.write_text("id,v\n3,c\n", encoding="utf-8")
    for args in ([], ["--mode", "overwrite"]):
        p = cli("write", t, src, *args, check=False)
        assert p.returncode != 0, f"deltacpp write {args} accepted the unknown writer feature"
        assert p.stderr.startswith("deltacpp: error: UnsupportedFeature") and \
            "futureWriterFeatureY" in p.stderr, p.stderr
    assert sorted(p.name for p in (t / "_delta_log").iterdir()) == log_before
    assert data_files_on_disk(t) == data_before, "the refused write left data files behind"
    assert sorted(r["id"] for r in cpp_read(t).to_pylist()) == [1, 2]


def test_spark_variant_shredding_is_refused(spark, tmp_path):
    """Spark's variant shredding (table property delta.enableVariantShredding) adds the
    variantShredding-preview reader feature, which deltacpp does not support: it must refuse
    the table with UnsupportedFeature naming the feature, while it reads the version before."""
    t = tmp_path / "variant"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT, v VARIANT) USING delta")
    spark.sql(f"INSERT INTO delta.`{t}` SELECT 1, parse_json('{{\"a\": 1}}')")
    spark.sql(f"ALTER TABLE delta.`{t}` SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')")
    proto = [a["protocol"] for v in range(3) for a in _actions(t, v) if "protocol" in a][-1]
    print("variant-shredding-protocol:", proto)
    feature = next(f for f in proto["readerFeatures"] if f.startswith("variantShredding"))
    p = cli("read", t, check=False)
    assert p.returncode != 0 and "UnsupportedFeature" in p.stderr and feature in p.stderr, \
        p.stderr
    assert [r["id"] for r in cpp_read(t, 1).to_pylist()] == [1]


def test_spark_metadata_columns(spark, tmp_path):
    """deltacpp's `_metadata.file_path` and `_metadata.row_index` agree with Spark's on every
    remaining row of a Spark-written table with deletion vectors, a partition value holding a
    space (percent-encoded in the URI) and several row groups per file, with and without a
    filter that skips row groups."""
    t = tmp_path / "meta"
    spark.sql(f"""CREATE TABLE delta.`{t}` (id BIGINT, v STRING, p STRING) USING delta
        PARTITIONED BY (p) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')""")
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("parquet.block.size", "16384")  # several row groups per file
    try:
        (spark.range(0, 3000).selectExpr("id", "repeat(cast(id AS STRING), 20) AS v",
                                         "if(id % 2 = 0, 'a b', 'c') AS p")
         .coalesce(1).write.format("delta").mode("append").save(str(t)))
    finally:
        hadoop.unset("parquet.block.size")
    files = [f for f in t.rglob("*.parquet") if "_delta_log" not in f.parts]
    assert files and all(pq.ParquetFile(f).num_row_groups > 1 for f in files), \
        [(f.name, pq.ParquetFile(f).num_row_groups) for f in files]
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 7 = 0")
    for where in (None, "id >= 2500 OR id = 3"):  # the filter skips row groups by their stats
        sql = (f"SELECT id, _metadata.file_path AS file_path, _metadata.row_index AS row_index "
               f"FROM delta.`{t}`" + (f" WHERE {where}" if where else ""))
        want = sorted((r.id, r.file_path, r.row_index) for r in spark.sql(sql).collect())
        assert len(want) == (3000 - 429 if where is None else 430)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.parquet")
            cli("read", t, "--columns", "id,_metadata.file_path,_metadata.row_index",
                "--format", "parquet", "--output", out, *(["--where", where] if where else []))
            got_table = pq.read_table(out)
        got = sorted(zip(got_table.column("id").to_pylist(),
                         got_table.column("_metadata.file_path").to_pylist(),
                         got_table.column("_metadata.row_index").to_pylist()))
        assert got == want, where
