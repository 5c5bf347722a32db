"""VACUUM and RESTORE against delta-spark. VACUUM: on a deltacpp table (partitioned, change data feed, rewrites and
whole-file deletes, orphans, hidden folders, a fresh uncommitted file) and on a Spark-made
table with deletion vectors and vacuumProtocolCheck, Spark's VACUUM DRY RUN and deltacpp's dry
run name the same files, at the table's retention and at zero hours; after deltacpp's VACUUM
Spark reads the latest version as deltacpp does, finds nothing more to delete and shows the
VACUUM START / END commits in its history; after a VACUUM at the table's retention Spark
reads every version as deltacpp does; delta-rs reads the copy-on-write table too.
RESTORE of a table with deletion vectors: Spark reads the restored version as the version it
restored and every version as deltacpp does, Spark's own RESTORE of a copy records the same
metrics, delta-rs refuses the table; RESTORE of a copy-on-write table: Spark and delta-rs read
every version as deltacpp does."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from urllib.parse import unquote

from interop_util import arrow_rows, assert_detail_agrees, assert_same_rows, cli, cpp_describe, \
    cpp_read, cpp_versions, compare_versions_all, rs_read, rs_read_isolated, spark_df, \
    spark_rows, write_jsonl

COLS = ["id", "name", "part"]
DAY = 24 * 3600


def _age(table: Path, days: int, skip: set[str] = frozenset()):
    """Sets every file outside _delta_log `days` days back, except the relative paths in skip."""
    then = time.time() - days * DAY
    for dirpath, dirnames, filenames in os.walk(table):
        if "_delta_log" in dirnames:
            dirnames.remove("_delta_log")
        for f in filenames:
            p = Path(dirpath) / f
            if str(p.relative_to(table)) not in skip:
                os.utime(p, (then, then))


def _cpp_dry_run(table: Path, *args) -> set[str]:
    out = cli("vacuum", table, "--dry-run", *args).stdout
    return {line.split("\t")[0] for line in out.splitlines() if "\t" in line}


def _spark_dry_run(spark, table: Path, retain_hours=None) -> set[str]:
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    # VACUUM lists folders in as many Spark tasks as this says (10,000 by default: most of a
    # minute on two cores for a table of a few files).
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.parallelism", "4")
    retain = "" if retain_hours is None else f" RETAIN {retain_hours} HOURS"
    rows = spark.sql(f"VACUUM delta.`{table}`{retain} DRY RUN").collect()
    root = str(table.resolve())
    out = set()
    for r in rows:
        p = r["path"]
        if p.startswith("file:"):
            p = p[len("file:"):]
            while p.startswith("//"):
                p = p[1:]
        p = unquote(p)
        assert p.startswith(root + "/"), (p, root)
        out.add(p[len(root) + 1:])
    return out


def _make_cpp_table(t: Path, tmp: Path):
    cli("create", t, "--schema", "id long, name string, part string", "--partition-by", "part",
        "--property", "delta.enableChangeDataFeed=true")
    first = [{"id": i, "name": f"n{i}", "part": "a" if i <= 4 else "b"} for i in range(1, 9)]
    cli("write", t, write_jsonl(tmp / "first.json", first))
    cli("write", t, write_jsonl(tmp / "second.json",
                                [{"id": 9, "name": "n9", "part": "c"}]))
    cli("delete", t, "--where", "id = 2")            # rewrites part=a, writes change data
    cli("update", t, "--set", "name = 'x'", "--where", "id = 5")
    cli("delete", t, "--where", "part = 'c'")        # removes a whole file
    (t / "part=a" / "orphan.parquet").write_bytes(b"left by a crashed writer")
    (t / "stray.txt").write_text("old")
    (t / "_checkpoints").mkdir()
    (t / "_checkpoints" / "0").write_text("a stream's checkpoint")
    (t / ".hidden").write_text("hidden")
    _age(t, 30)
    (t / "part=b" / "fresh.parquet").write_bytes(b"a writer's file, not committed yet")


def test_dry_runs_agree_on_a_deltacpp_table_and_spark_reads_after_vacuum(spark, tmp_path):
    t = tmp_path / "t"
    _make_cpp_table(t, tmp_path)
    before = spark_rows(spark_df(spark, t), COLS)

    # The table's retention (7 days): the removes are fresh, so only old untracked files and
    # old change data go; the fresh file stays.
    mine = _cpp_dry_run(t)
    theirs = _spark_dry_run(spark, t)
    assert mine == theirs, (sorted(mine), sorted(theirs))
    assert "part=a/orphan.parquet" in mine and "stray.txt" in mine
    assert not any(p.startswith("_checkpoints") or p.startswith(".") for p in mine)
    assert "part=b/fresh.parquet" not in mine
    assert any(p.startswith("_change_data/") for p in mine), "old change data goes"

    # A real run at the table's retention deletes only files no version needs: Spark and
    # deltacpp still read every version alike.
    cli("vacuum", t)
    assert not (t / "part=a" / "orphan.parquet").exists()
    assert (t / "part=b" / "fresh.parquet").exists()
    compare_versions_all(spark, t, cpp_versions(t), rs=False)

    # Zero hours: everything the latest version does not have, fresh files included.
    mine0 = _cpp_dry_run(t, "--retain", "0", "--no-retention-check")
    # Spark's dry run also names the folders the first run left empty (`_change_data/part=a`);
    # deltacpp's lists files only (its real run removes such folders): compare the files.
    theirs0 = {p for p in _spark_dry_run(spark, t, 0) if not (t / p).is_dir()}
    assert mine0 == theirs0, (sorted(mine0), sorted(theirs0))
    assert not (mine & mine0), "what the first run deleted is gone"
    assert "part=b/fresh.parquet" in mine0

    cli("vacuum", t, "--retain", "0", "--no-retention-check")
    assert _spark_dry_run(spark, t, 0) == set(), "Spark finds nothing left to delete"
    assert (t / "_checkpoints" / "0").exists() and (t / ".hidden").exists()
    after = spark_rows(spark_df(spark, t), COLS)
    assert_same_rows(before, after, "Spark, latest version after VACUUM")
    assert_same_rows(after, arrow_rows(cpp_read(t), COLS), "deltacpp, latest version")
    latest = max(int(r["version"]) for r in
                 spark.sql(f"DESCRIBE HISTORY delta.`{t}`").collect())
    assert_same_rows(after, arrow_rows(rs_read(t, latest), COLS), "delta-rs, latest version")
    ops = [r["operation"] for r in
           spark.sql(f"DESCRIBE HISTORY delta.`{t}` LIMIT 2").collect()]
    assert ops == ["VACUUM END", "VACUUM START"], ops


def test_dry_runs_agree_on_a_spark_table_with_deletion_vectors(spark, tmp_path):
    t = tmp_path / "s"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING, part STRING) USING delta "
              "PARTITIONED BY (part) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
              "'delta.feature.vacuumProtocolCheck' = 'supported')")
    spark.createDataFrame([(i, f"n{i}", "a" if i % 2 else "b") for i in range(1, 201)],
                          COLS).coalesce(1).write.format("delta").mode("append").save(str(t))
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 7 = 0")
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 5 = 0")   # replaces the deletion vectors
    spark.sql(f"UPDATE delta.`{t}` SET name = 'u' WHERE id = 1")
    (t / "part=a" / "orphan.parquet").write_bytes(b"orphan")
    _age(t, 30)
    before = spark_rows(spark_df(spark, t), COLS)

    mine = _cpp_dry_run(t)
    theirs = _spark_dry_run(spark, t)
    assert mine == theirs == {"part=a/orphan.parquet"}, (sorted(mine), sorted(theirs))
    mine0 = _cpp_dry_run(t, "--retain", "0", "--no-retention-check")
    theirs0 = _spark_dry_run(spark, t, 0)
    assert mine0 == theirs0, (sorted(mine0), sorted(theirs0))
    assert any(p.endswith(".bin") for p in mine0), "replaced deletion vector files are deletable"

    cli("vacuum", t, "--retain", "0", "--no-retention-check")
    assert _spark_dry_run(spark, t, 0) == set()
    after = spark_rows(spark_df(spark, t), COLS)
    assert_same_rows(before, after, "Spark after deltacpp's VACUUM")
    assert_same_rows(after, arrow_rows(cpp_read(t), COLS), "deltacpp after VACUUM")


def _restore_table(t: Path, tmp: Path):
    cli("create", t, "--schema", "id long, name string, part string", "--partition-by", "part",
        "--property", "delta.enableDeletionVectors=true")
    rows = [{"id": i, "name": f"n{i}", "part": "a" if i % 2 else "b"} for i in range(1, 41)]
    cli("write", t, write_jsonl(tmp / "rows.json", rows))                         # v1
    cli("write", t, write_jsonl(tmp / "more.json",
                                [{"id": 50, "name": "x", "part": "c"}]))           # v2
    cli("delete", t, "--where", "id % 3 = 0")                                    # v3: DVs
    cli("update", t, "--set", "name = 'u'", "--where", "id < 10")                 # v4
    cli("delete", t, "--where", "part = 'c'")                                    # v5


def test_restore_reads_in_spark_and_matches_sparks_own_restore(spark, tmp_path):
    t = tmp_path / "r"
    _restore_table(t, tmp_path)
    theirs = tmp_path / "r-spark"
    shutil.copytree(t, theirs)
    out = cli("restore", t, "--version", "2").stdout
    assert out.startswith("restored version 2 as version 6"), out
    expected = spark_rows(spark_df(spark, t, version=2), COLS)
    assert_same_rows(expected, spark_rows(spark_df(spark, t), COLS), "Spark, after RESTORE")
    assert_same_rows(expected, arrow_rows(cpp_read(t), COLS), "deltacpp, after RESTORE")

    spark.sql(f"RESTORE TABLE delta.`{theirs}` TO VERSION AS OF 2")
    mine = spark.sql(f"DESCRIBE HISTORY delta.`{t}` LIMIT 1").collect()[0]
    spark_made = spark.sql(f"DESCRIBE HISTORY delta.`{theirs}` LIMIT 1").collect()[0]
    assert mine["operation"] == spark_made["operation"] == "RESTORE"
    assert mine["operationParameters"]["version"] == "2"
    for m in ("numRemovedFiles", "numRestoredFiles", "numOfFilesAfterRestore",
              "tableSizeAfterRestore", "removedFilesSize", "restoredFilesSize"):
        assert mine["operationMetrics"][m] == spark_made["operationMetrics"][m], \
            (m, dict(mine["operationMetrics"]), dict(spark_made["operationMetrics"]))
    assert_same_rows(expected, spark_rows(spark_df(spark, theirs), COLS), "Spark's own RESTORE")
    # Every version, before and after the restore, reads in Spark as in deltacpp (delta-rs
    # refuses tables with deletion vectors: asserted in the copy-on-write case below).
    compare_versions_all(spark, t, range(0, 7), rs=False)


def test_restore_of_a_copy_on_write_table_reads_alike_in_spark_and_delta_rs(spark, tmp_path):
    t = tmp_path / "cow"
    cli("create", t, "--schema", "id long, name string, part string", "--partition-by", "part")
    rows = [{"id": i, "name": f"n{i}", "part": "a" if i % 2 else "b"} for i in range(1, 21)]
    cli("write", t, write_jsonl(tmp_path / "rows.json", rows))                    # v1
    cli("delete", t, "--where", "id % 3 = 0")                                    # v2: rewrites
    cli("update", t, "--set", "name = 'u'", "--where", "id < 6")                  # v3
    out = cli("restore", t, "--version", "1").stdout                              # v4
    assert out.startswith("restored version 1 as version 4"), out
    expected = arrow_rows(cpp_read(t, 1), COLS)
    assert_same_rows(expected, arrow_rows(cpp_read(t), COLS), "deltacpp, after RESTORE")
    compare_versions_all(spark, t, range(0, 5), rs=False)
    rs = rs_read_isolated(t, list(range(0, 5)))
    for v in range(0, 5):
        assert not isinstance(rs[v], str), f"delta-rs v{v}: {rs[v]}"
        assert_same_rows(arrow_rows(cpp_read(t, v), COLS), arrow_rows(rs[v], COLS),
                         f"delta-rs v{v} after RESTORE")


def test_restore_of_a_table_with_deletion_vectors_is_refused_by_delta_rs(tmp_path):
    t = tmp_path / "dv"
    _restore_table(t, tmp_path)
    cli("restore", t, "--version", "2")
    rs = rs_read_isolated(t, [6])
    assert isinstance(rs[6], str) and "deletionVectors" in rs[6], rs[6]


def test_detail_matches_sparks_describe_detail(spark, tmp_path):
    t = tmp_path / "d"
    _restore_table(t, tmp_path)
    cli("alter", t, "set-properties", "owner=team")
    mine = json.loads(cli("detail", t, "--format", "json").stdout.splitlines()[0])
    theirs = spark.sql(f"DESCRIBE DETAIL delta.`{t}`").collect()[0].asDict(recursive=True)
    assert mine["format"] == theirs["format"] == "delta"
    for key in ("id", "name", "description", "partitionColumns", "numFiles", "sizeInBytes",
                "minReaderVersion", "minWriterVersion"):
        assert mine[key] == theirs[key], (key, mine[key], theirs[key])
    assert mine["clusteringColumns"] == (theirs.get("clusteringColumns") or [])
    assert mine["properties"] == theirs["properties"], (mine["properties"], theirs["properties"])
    assert sorted(mine["tableFeatures"]) == sorted(theirs["tableFeatures"])
    assert unquote(theirs["location"]).rstrip("/") == mine["location"].rstrip("/")
    for key in ("createdAt", "lastModified"):
        spark_ms = int(theirs[key].replace(tzinfo=__import__("datetime").timezone.utc)
                       .timestamp() * 1000)
        assert abs(spark_ms - _iso_ms(mine[key])) < 1000, (key, theirs[key], mine[key])
    # `describe` shows the same facts.
    described = cpp_describe(t)
    assert described["format"] == "delta" and described["id"] == theirs["id"]
    assert _iso_ms(described["created at"]) == _iso_ms(mine["createdAt"])
    assert _iso_ms(described["last modified"]) == _iso_ms(mine["lastModified"])
    assert "clustering columns" not in described
    assert_detail_agrees(spark, t)


def _iso_ms(text: str) -> int:
    from datetime import datetime
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
