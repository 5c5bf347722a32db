"""deltacpp's DELETE and UPDATE read by the peers. For a copy-on-write table and a table with
deletion vectors (both with the change data feed), written by deltacpp, every version after
each `deltacpp delete` / `deltacpp update` reads the same in Spark and deltacpp and holds the
rows the test expects from its own model of the data; delta-rs reads the copy-on-write versions
the same way and refuses the deletion-vector ones; Spark's change feed over the DML versions
holds exactly the changes the model predicts. A Spark-made table with deletion vectors, column
mapping and the change data feed takes deltacpp's DELETE and UPDATE and Spark reads it back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from interop_util import assert_same_rows, cli, cpp_read, arrow_rows, rs_read, spark_df, \
    spark_rows, write_jsonl

COLS = ["id", "name", "part"]


class Model:
    """The table's rows as the test wrote and changed them, and the changes per version."""

    def __init__(self):
        self.rows: dict[int, dict] = {}
        self.changes: list[tuple] = []   # (id, name, part, _change_type, _commit_version)
        self.versions: dict[int, list[tuple]] = {}

    def snapshot(self, version):
        self.versions[version] = [tuple(r[c] for c in COLS) for r in self.rows.values()]

    def delete(self, version, pred):
        for i, r in list(self.rows.items()):
            if pred(r):
                self.changes.append((r["id"], r["name"], r["part"], "delete", version))
                del self.rows[i]
        self.snapshot(version)

    def update(self, version, pred, change):
        for i, r in list(self.rows.items()):
            if pred(r):
                new = dict(r, **change(r))
                self.changes.append((r["id"], r["name"], r["part"], "update_preimage", version))
                self.changes.append((new["id"], new["name"], new["part"], "update_postimage",
                                     version))
                del self.rows[i]
                self.rows[new["id"]] = new
        self.snapshot(version)


def _version(out: str) -> int:
    line = out.splitlines()[0]
    assert line.startswith("committed version "), out
    return int(line.split()[-1])


def _spark_changes(spark, table, first, last):
    df = (spark.read.format("delta").option("readChangeFeed", "true")
          .option("startingVersion", first).option("endingVersion", last).load(str(table)))
    return spark_rows(df, COLS + ["_change_type", "_commit_version"])


def _run_dml(t: Path, tmp_path: Path, model: Model) -> list[int]:
    first = [{"id": i, "name": f"n{i}", "part": "a" if i <= 4 else "b"} for i in range(1, 7)]
    second = [{"id": 7, "name": None, "part": "a"}, {"id": 8, "name": "n8", "part": "c"},
              {"id": 9, "name": "n9", "part": "c"}]
    cli("write", t, write_jsonl(tmp_path / "first.json", first))    # v1
    cli("write", t, write_jsonl(tmp_path / "second.json", second))  # v2
    for r in first + second:
        model.rows[r["id"]] = dict(r)
    model.snapshot(2)
    dml = []
    v = _version(cli("delete", t, "--where", "id = 2").stdout)
    model.delete(v, lambda r: r["id"] == 2)
    dml.append(v)
    v = _version(cli("update", t, "--set", "name = upper(name)", "--where",
                     "id IN (3, 7, 8)").stdout)
    model.update(v, lambda r: r["id"] in (3, 7, 8),
                 lambda r: {"name": r["name"].upper() if r["name"] is not None else None})
    dml.append(v)
    v = _version(cli("delete", t, "--where", "part = 'b'").stdout)     # whole files
    model.delete(v, lambda r: r["part"] == "b")
    dml.append(v)
    v = _version(cli("update", t, "--set", "id = id + 100", "--set", "part = 'd'",
                     "--where", "id >= 4").stdout)
    model.update(v, lambda r: r["id"] >= 4, lambda r: {"id": r["id"] + 100, "part": "d"})
    dml.append(v)
    v = _version(cli("delete", t, "--where", "name <> 'N3'").stdout)   # NULL names stay
    model.delete(v, lambda r: r["name"] is not None and r["name"] != "N3")
    dml.append(v)
    return dml


@pytest.mark.parametrize("dv", [False, True], ids=["copy_on_write", "deletion_vectors"])
def test_deltacpp_dml_versions_and_change_feed(spark, tmp_path, dv):
    t = tmp_path / "t"
    cli("create", t, "--schema", "id long, name string, part string", "--partition-by", "part",
        "--property", f"delta.enableDeletionVectors={'true' if dv else 'false'}",
        "--property", "delta.enableChangeDataFeed=true")
    model = Model()
    dml = _run_dml(t, tmp_path, model)
    assert dml == [3, 4, 5, 6, 7]
    for v in [2] + dml:
        expected = model.versions[v]
        assert_same_rows(expected, arrow_rows(cpp_read(t, v), COLS), f"deltacpp v{v}")
        assert_same_rows(expected, spark_rows(spark_df(spark, t, v), COLS), f"Spark v{v}")
        if dv:
            with pytest.raises(Exception, match="deletionVectors"):
                rs_read(t, v)
        else:
            assert_same_rows(expected, arrow_rows(rs_read(t, v), COLS), f"delta-rs v{v}")
    assert_same_rows(model.changes, _spark_changes(spark, t, dml[0], dml[-1]),
                     "Spark's change feed over the DML versions")
    history = {r.version: (r.operation, r.operationParameters)
               for r in spark.sql(f"DESCRIBE HISTORY delta.`{t}`").collect()}
    assert history[dml[0]] == ("DELETE", {"predicate": '["id = 2"]'})
    assert history[dml[1]][0] == "UPDATE"


def test_deltacpp_dml_on_a_spark_table_with_dvs_column_mapping_and_cdf(spark, tmp_path):
    t = tmp_path / "spark_made"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING, part STRING) USING delta "
              "PARTITIONED BY (part) TBLPROPERTIES (delta.enableDeletionVectors = true, "
              "delta.columnMapping.mode = 'name', delta.enableChangeDataFeed = true)")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), "
              "(4, NULL, 'y')")
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1")   # a Spark-made DV first
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN name TO label")
    before = int(spark.sql(f"DESCRIBE HISTORY delta.`{t}`").agg({"version": "max"}).first()[0])

    d = _version(cli("delete", t, "--where", "id = 2 OR label IS NULL").stdout)
    u = _version(cli("update", t, "--set", "label = concat(label, '!')", "--where",
                     "part = 'y'").stdout)
    assert (d, u) == (before + 1, before + 2)
    cols = ["id", "label", "part"]
    expected = [(3, "c!", "y")]
    assert_same_rows(expected, spark_rows(spark_df(spark, t), cols), "Spark after deltacpp")
    assert_same_rows(expected, arrow_rows(cpp_read(t), cols), "deltacpp")
    changes = (spark.read.format("delta").option("readChangeFeed", "true")
               .option("startingVersion", d).option("endingVersion", u).load(str(t)))
    assert_same_rows([(2, "b", "x", "delete", d), (4, None, "y", "delete", d),
                      (3, "c", "y", "update_preimage", u), (3, "c!", "y", "update_postimage", u)],
                     spark_rows(changes, cols + ["_change_type", "_commit_version"]),
                     "Spark's change feed of deltacpp's commits")
    # Spark can go on writing after deltacpp's commits.
    spark.sql(f"UPDATE delta.`{t}` SET label = 'z' WHERE id = 3")
    assert_same_rows([(3, "z", "y")], arrow_rows(cpp_read(t), cols), "deltacpp after Spark")
