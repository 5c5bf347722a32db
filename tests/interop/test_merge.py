"""deltacpp's MERGE read by the peers, and deltacpp's MERGE on tables the peers made.

For a table deltacpp created with the change data feed on, in copy-on-write mode and with
deletion vectors, `deltacpp merge` commits four MERGEs (an upsert that also moves a row to
another partition; a conditional matched DELETE before a matched UPDATE and a conditional
INSERT; NOT MATCHED BY SOURCE DELETE and UPDATE; several conditional clauses of each kind, where
the first clause whose condition holds wins). At every version Spark reads what deltacpp reads
and both hold the rows of the test's own model of MERGE; delta-rs (in a process of its own)
reads every copy-on-write version the same and refuses every deletion-vector one. Spark's
history shows each MERGE with delta-spark's operation parameters and metric names and the row
counts the model predicts; Spark's change feed of the MERGE versions equals `deltacpp changes`
on every column and holds exactly the model's change rows.

deltacpp merges into Spark-made tables with deletion vectors, column mapping (name mode), the
change data feed and an identity column; Spark reads the results as the model says and MERGEs or
UPDATEs on top, and deltacpp reads Spark's versions alike. The exam-scores tutorial (create,
UPDATE, MERGE with the CLI) is checked by Spark at every version and in its change feed."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable

import pytest

from interop_util import (arrow_rows, assert_history_agrees, assert_same_rows, cli,
                          committed_version, compare_version_with_spark, cpp_read,
                          rs_read_isolated, spark_df, spark_history, spark_rows, write_jsonl)
from test_change_feed_reads import assert_changes_agree, commit_actions, cpp_changes

COLS = ["id", "name", "score", "part"]
CHANGE_COLS = ["_change_type", "_commit_version"]
PARAMETER_NAMES = {"predicate", "matchedPredicates", "notMatchedPredicates",
                   "notMatchedBySourcePredicates"}
# The operation metrics delta-spark 4.4 records for MERGE (test_spark_made_deletion_vectors
# checks this list against Spark's own MERGE); materializeSourceTimeMs times Spark's
# materialisation of the source, a step deltacpp does not have.
SPARK_MERGE_METRICS = {
    "numSourceRows", "numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted",
    "numTargetRowsCopied", "numTargetRowsMatchedUpdated", "numTargetRowsMatchedDeleted",
    "numTargetRowsNotMatchedBySourceUpdated", "numTargetRowsNotMatchedBySourceDeleted",
    "numOutputRows", "numTargetFilesAdded", "numTargetFilesRemoved", "numTargetBytesAdded",
    "numTargetBytesRemoved", "numTargetDeletionVectorsAdded", "numTargetDeletionVectorsRemoved",
    "numTargetDeletionVectorsUpdated", "numTargetChangeFilesAdded", "executionTimeMs",
    "scanTimeMs", "rewriteTimeMs", "materializeSourceTimeMs"}
SPARK_ONLY_METRICS = {"materializeSourceTimeMs"}


# ---------------------------------------------------------------------------------------------
# SQL's three-valued logic for the model's conditions: None is NULL (unknown)
# ---------------------------------------------------------------------------------------------
def _null_or(op):
    return lambda a, b: None if a is None or b is None else op(a, b)


eq = _null_or(lambda a, b: a == b)
lt = _null_or(lambda a, b: a < b)
gt = _null_or(lambda a, b: a > b)
add = _null_or(lambda a, b: a + b)


def upper(x):
    return None if x is None else x.upper()


def concat(*xs):
    return None if any(x is None for x in xs) else "".join(xs)


def coalesce(*xs):
    return next((x for x in xs if x is not None), None)


# ---------------------------------------------------------------------------------------------
# The model of MERGE
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Clause:
    """One WHEN clause, twice: as the `deltacpp merge` option and its value, and in Python.
    cond is None (no condition) or gives True, False or None (NULL): of (target, source) rows
    for WHEN MATCHED, of the source row for WHEN NOT MATCHED, of the target row for WHEN NOT
    MATCHED BY SOURCE. change gives, for an update, the changed columns (same arguments as
    cond) and, for an insert, the whole new row (of the source row); a delete has none."""
    option: str
    value: str | None = None
    cond: Callable | None = None
    change: Callable | None = None

    @property
    def kind(self) -> str:
        if self.option.startswith("--when-not-matched-by-source"):
            return "notMatchedBySource"
        return "notMatched" if self.option.startswith("--when-not-matched") else "matched"

    @property
    def action(self) -> str:
        for a in ("delete", "insert", "update"):
            if f"-{a}" in self.option:
                return a
        raise AssertionError(self.option)

    def args(self) -> list[str]:
        return [self.option] if self.value is None else [self.option, self.value]

    def applies(self, *rows) -> bool:
        return self.cond is None or self.cond(*rows) is True


class Model:
    """The table's rows as the test wrote and merged them, per version, with the change rows
    and the MERGE metrics each version should have."""

    def __init__(self, cols):
        self.cols = cols
        self.rows: list[dict] = []
        self.versions: dict[int, list[tuple]] = {}
        self.changes: dict[int, list[tuple]] = {}
        self.metrics: dict[int, dict[str, int]] = {}

    def _tuple(self, r, *extra):
        return tuple(r[c] for c in self.cols) + extra

    def snapshot(self, version):
        self.versions[version] = [self._tuple(r) for r in self.rows]

    def append(self, version, rows):
        self.rows += [dict(r) for r in rows]
        self.changes[version] = [self._tuple(r, "insert", version) for r in rows]
        self.snapshot(version)

    def merge(self, version, source, on, clauses):
        """MERGE as delta-spark defines it: each target row matched by a source row (on is
        True) takes the first WHEN MATCHED clause whose condition holds, every other target row
        the first WHEN NOT MATCHED BY SOURCE clause whose condition holds, every source row that
        matches no target row the first WHEN NOT MATCHED clause whose condition holds; a row
        no clause takes stays as it is (a source row: is not inserted)."""
        of_kind = {k: [c for c in clauses if c.kind == k]
                   for k in ("matched", "notMatched", "notMatchedBySource")}
        n = dict.fromkeys(["inserted", "matchedUpdated", "matchedDeleted",
                           "notMatchedBySourceUpdated", "notMatchedBySourceDeleted"], 0)
        changes, out = [], []
        for t in self.rows:
            matches = [s for s in source if on(t, s) is True]
            assert len(matches) <= 1, "the test's sources match each target row at most once"
            kind, args = (("matched", (t, matches[0])) if matches
                          else ("notMatchedBySource", (t,)))
            clause = next((c for c in of_kind[kind] if c.applies(*args)), None)
            if clause is None:
                out.append(t)
            elif clause.action == "delete":
                changes.append(self._tuple(t, "delete", version))
                n[f"{kind}Deleted"] += 1
            else:
                new = dict(t, **clause.change(*args))
                changes += [self._tuple(t, "update_preimage", version),
                            self._tuple(new, "update_postimage", version)]
                n[f"{kind}Updated"] += 1
                out.append(new)
        for s in source:
            if any(on(t, s) is True for t in self.rows):
                continue
            clause = next((c for c in of_kind["notMatched"] if c.applies(s)), None)
            if clause is not None:
                new = {c: None for c in self.cols} | clause.change(s)
                changes.append(self._tuple(new, "insert", version))
                n["inserted"] += 1
                out.append(new)
        self.rows = out
        self.changes[version] = changes
        self.metrics[version] = {
            "numSourceRows": len(source),
            "numTargetRowsInserted": n["inserted"],
            "numTargetRowsUpdated": n["matchedUpdated"] + n["notMatchedBySourceUpdated"],
            "numTargetRowsDeleted": n["matchedDeleted"] + n["notMatchedBySourceDeleted"],
            "numTargetRowsMatchedUpdated": n["matchedUpdated"],
            "numTargetRowsMatchedDeleted": n["matchedDeleted"],
            "numTargetRowsNotMatchedBySourceUpdated": n["notMatchedBySourceUpdated"],
            "numTargetRowsNotMatchedBySourceDeleted": n["notMatchedBySourceDeleted"]}
        self.snapshot(version)

    def changes_of(self, first, last) -> list[tuple]:
        return [c for v in range(first, last + 1) for c in self.changes.get(v, [])]


def cpp_merge(table, source: Path, on: str, clauses: list[Clause], aliases=("t", "s")) -> int:
    """`deltacpp merge` with the clauses in order; returns the version it committed."""
    args = ["merge", table, "--source", source, "--on", on]
    if aliases is not None:
        args += ["--target-alias", aliases[0], "--source-alias", aliases[1]]
    for c in clauses:
        args += c.args()
    return committed_version(cli(*args))


def _source(tmp: Path, name: str, rows: list[tuple], cols=COLS) -> tuple[Path, list[dict]]:
    dicts = [dict(zip(cols, r)) for r in rows]
    return write_jsonl(tmp / f"{name}.json", dicts), dicts


def assert_merge_history(row, model: Model, version, clauses: list[Clause]):
    """Spark's DESCRIBE HISTORY row of a deltacpp MERGE: operation MERGE, delta-spark's four
    operation parameters (the clauses' action types in order, a predicate where the clause has a
    condition) and delta-spark's metric names with the model's row counts."""
    assert row.operation == "MERGE", (version, row.operation)
    params = dict(row.operationParameters)
    assert set(params) == PARAMETER_NAMES, params
    assert len(json.loads(params["predicate"])) == 1, params
    for kind in ("matched", "notMatched", "notMatchedBySource"):
        listed = json.loads(params[f"{kind}Predicates"])
        want = [(c.action, c.cond is not None) for c in clauses if c.kind == kind]
        assert [(p["actionType"], "predicate" in p) for p in listed] == want, (kind, listed)
    metrics = dict(row.operationMetrics)
    assert set(metrics) == SPARK_MERGE_METRICS - SPARK_ONLY_METRICS, \
        sorted(set(metrics) ^ (SPARK_MERGE_METRICS - SPARK_ONLY_METRICS))
    got = {k: int(metrics[k]) for k in model.metrics[version]}
    assert got == model.metrics[version], f"version {version}: metrics {got}"


# ---------------------------------------------------------------------------------------------
# A deltacpp table and four MERGEs
# ---------------------------------------------------------------------------------------------
FIRST = [(i, None if i == 4 else f"n{i}", i * 10, "a" if i <= 4 else "b") for i in range(1, 7)]
SECOND = [(7, "n7", 70, "a"), (8, "n8", 80, "c"), (9, None, None, "c")]


def _merges(tmp: Path) -> list[tuple]:
    """The four MERGEs: (source rows, on as SQL, on in Python, clauses, aliases)."""
    by_id = (lambda t, s: eq(t["id"], s["id"]))
    upsert = ([(2, "B2", 5, "a"), (5, "E5", 7, "c"), (9, "I9", 1, "c"), (10, "n10", 100, "b"),
               (11, None, None, "a")],
              "t.id = s.id", by_id, [
                  Clause("--when-matched-update",
                         "name = s.name, score = t.score + s.score, part = s.part",
                         change=lambda t, s: {"name": s["name"], "part": s["part"],
                                              "score": add(t["score"], s["score"])}),
                  Clause("--when-not-matched-insert-all", change=lambda s: dict(s))],
              ("t", "s"))
    # default aliases (target, source); a NULL score makes the delete's condition unknown, so
    # the update takes the row; a NULL key matches nothing
    matched_delete = ([(3, "x", -1, "a"), (6, "keep", 1, "b"), (4, "y", None, "a"),
                       (11, "z", -2, "a"), (12, "n12", -5, "c"), (13, "n13", 130, "c"),
                       (None, "nul", 3, "b")],
                      "target.id = source.id", by_id, [
                          Clause("--when-matched-delete", "source.score < 0",
                                 cond=lambda t, s: lt(s["score"], 0)),
                          Clause("--when-matched-update", "name = concat(source.name, '!')",
                                 change=lambda t, s: {"name": concat(s["name"], "!")}),
                          Clause("--when-not-matched-insert",
                                 "AND source.score > 0 THEN id = source.id, "
                                 "name = upper(source.name), part = source.part",
                                 cond=lambda s: gt(s["score"], 0),
                                 change=lambda s: {"id": s["id"], "name": upper(s["name"]),
                                                   "part": s["part"]})],
                      None)
    by_source = ([(1, "A1", 11, "a"), (8, "H8", 88, "d")],
                 "t.id = s.id", by_id, [
                     Clause("--when-matched-update-all", change=lambda t, s: dict(s)),
                     Clause("--when-not-matched-by-source-delete", "t.part = 'b'",
                            cond=lambda t: eq(t["part"], "b")),
                     Clause("--when-not-matched-by-source-update",
                            "score = coalesce(t.score, 0) - 1",
                            change=lambda t: {"score": coalesce(t["score"], 0) - 1})],
                 ("t", "s"))
    # each kind twice or thrice with conditions; rows that meet two conditions take the first
    ordered = ([(1, "gone", 200, "a"), (7, "q", 150, "a"), (8, "r", 60, "d"),
                (5, "p", 10, "c"), (20, "t", None, "a"), (21, "u", 5, "a"), (22, "v", 7, "c"),
                (23, "w", None, "c")],
               "t.id = s.id", by_id, [
                   Clause("--when-matched-delete", "s.name = 'gone'",
                          cond=lambda t, s: eq(s["name"], "gone")),
                   Clause("--when-matched-update",
                          "AND s.score > 100 THEN name = upper(t.name), score = s.score",
                          cond=lambda t, s: gt(s["score"], 100),
                          change=lambda t, s: {"name": upper(t["name"]), "score": s["score"]}),
                   Clause("--when-matched-update", "AND s.score > 50 THEN score = s.score",
                          cond=lambda t, s: gt(s["score"], 50),
                          change=lambda t, s: {"score": s["score"]}),
                   Clause("--when-not-matched-insert",
                          "AND s.part = 'a' THEN id = s.id, name = concat('a:', s.name), "
                          "score = s.score, part = s.part",
                          cond=lambda s: eq(s["part"], "a"),
                          change=lambda s: dict(s, name=concat("a:", s["name"]))),
                   Clause("--when-not-matched-insert-all", "s.score IS NOT NULL",
                          cond=lambda s: s["score"] is not None, change=lambda s: dict(s)),
                   Clause("--when-not-matched-by-source-update",
                          "AND t.score < 20 THEN score = t.score + 1000",
                          cond=lambda t: lt(t["score"], 20),
                          change=lambda t: {"score": add(t["score"], 1000)}),
                   Clause("--when-not-matched-by-source-delete", "t.score < 30",
                          cond=lambda t: lt(t["score"], 30))],
               ("t", "s"))
    return [upsert, matched_delete, by_source, ordered]


@dataclasses.dataclass
class Merged:
    path: Path
    dv: bool
    model: Model
    merges: dict[int, list[Clause]]


@pytest.fixture(scope="module", params=[False, True], ids=["copy_on_write", "deletion_vectors"])
def merged(request, tmp_path_factory) -> Merged:
    tmp = tmp_path_factory.mktemp("merge")
    t = tmp / "t"
    dv = request.param
    cli("create", t, "--schema", "id long, name string, score int, part string",
        "--partition-by", "part",
        "--property", f"delta.enableDeletionVectors={str(dv).lower()}",
        "--property", "delta.enableChangeDataFeed=true")                     # v0
    model = Model(COLS)
    model.snapshot(0)
    for v, rows in ((1, FIRST), (2, SECOND)):
        path, dicts = _source(tmp, f"w{v}", rows)
        assert committed_version(cli("write", t, path)) == v
        model.append(v, dicts)
    merges = {}
    for i, (rows, on_sql, on, clauses, aliases) in enumerate(_merges(tmp)):
        path, dicts = _source(tmp, f"m{i}", rows)
        v = cpp_merge(t, path, on_sql, clauses, aliases)
        assert v == 3 + i
        model.merge(v, dicts, on, clauses)
        merges[v] = clauses
    return Merged(t, dv, model, merges)


def test_every_merge_version_reads_alike_in_spark_deltacpp_and_the_model(spark, merged):
    t, model = merged.path, merged.model
    # The model's versions are not trivial: every MERGE changed something, and the last one
    # leaves the rows the clauses' order gives.
    assert all(model.changes[v] for v in merged.merges)
    assert sorted(model.versions[6], key=lambda r: r[0]) == [
        (4, "y!", 39, "a"), (5, "E5", 56, "c"), (7, "N7", 150, "a"), (8, "H8", 60, "d"),
        (9, "I9", 999, "c"), (13, "N13", 999, "c"), (20, "a:t", None, "a"),
        (21, "a:u", 5, "a"), (22, "v", 7, "c")]
    failures = []
    for v in range(7):
        try:
            mine = compare_version_with_spark(spark, t, v)
            assert_same_rows(model.versions[v], arrow_rows(mine, COLS),
                             f"v{v}: the model (expected) vs deltacpp and Spark (actual)")
        except AssertionError as e:
            failures.append(f"version {v}: {e}")
    assert not failures, "\n".join(failures)


def test_merges_used_deletion_vectors_only_where_enabled(merged):
    """With deletion vectors, the MERGEs that drop rows from a file keep the file and add a
    deletion vector; copy-on-write rewrites it. (So each table is what its name says.)"""
    dvs = [a["add"] for v in merged.merges for a in commit_actions(merged.path, v)
           if "add" in a and a["add"].get("deletionVector")]
    assert bool(dvs) == merged.dv, dvs


def test_delta_rs_reads_copy_on_write_versions_and_refuses_deletion_vectors(merged):
    t, model = merged.path, merged.model
    got = rs_read_isolated(t, range(7))
    failures = []
    for v, res in got.items():
        if merged.dv:
            if not (isinstance(res, str) and "deletionVectors" in res):
                failures.append(f"version {v}: delta-rs did not refuse deletion vectors: "
                                f"{res if isinstance(res, str) else res.num_rows}")
            continue
        if isinstance(res, str):
            failures.append(f"version {v}: delta-rs failed: {res}")
            continue
        try:
            assert_same_rows(model.versions[v], arrow_rows(res, COLS),
                             f"v{v}: the model (expected) vs delta-rs (actual)")
            assert_same_rows(arrow_rows(cpp_read(t, v), COLS), arrow_rows(res, COLS),
                             f"v{v}: deltacpp (expected) vs delta-rs (actual)")
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_spark_history_shows_merge_parameters_and_metrics(spark, merged):
    history = spark_history(spark, merged.path)
    assert [history[v].operation for v in range(3)] == ["CREATE TABLE", "WRITE", "WRITE"]
    for v, clauses in merged.merges.items():
        assert_merge_history(history[v], merged.model, v, clauses)
        assert dict(history[v].operationParameters)["predicate"] == json.dumps(
            ["target.id = source.id" if v == 4 else "t.id = s.id"])
    # `deltacpp history` names the same operations (delta-rs is left out: it would have to run
    # in this process)
    assert_history_agrees(spark, merged.path, rs=False)


def test_change_feed_of_the_merges(spark, merged):
    t, model = merged.path, merged.model
    first, last = min(merged.merges), max(merged.merges)
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", first).option("endingVersion", last).load(str(t)))
    assert_same_rows(model.changes_of(first, last), spark_rows(feed, COLS + CHANGE_COLS),
                     "the model's changes (expected) vs Spark's change feed of the MERGEs")
    assert_same_rows(model.changes_of(first, last),
                     arrow_rows(cpp_changes(t, first, last), COLS + CHANGE_COLS),
                     "the model's changes (expected) vs deltacpp changes of the MERGEs")
    # every column, _commit_timestamp included, per version and over the whole range
    for v in merged.merges:
        assert_changes_agree(spark, t, v, v)
    assert_changes_agree(spark, t, 0, None)


# ---------------------------------------------------------------------------------------------
# deltacpp MERGE into Spark-made tables
# ---------------------------------------------------------------------------------------------
def _latest(spark, t) -> int:
    return max(spark_history(spark, t))


def _check_all_versions(spark, t):
    failures = []
    for v in range(_latest(spark, t) + 1):
        try:
            compare_version_with_spark(spark, t, v)
        except AssertionError as e:
            failures.append(f"version {v}: {e}")
    assert not failures, "\n".join(failures)


def test_spark_made_deletion_vectors(spark, tmp_path):
    t = tmp_path / "dv"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING, score INT) USING delta "
              "TBLPROPERTIES (delta.enableDeletionVectors = true)")
    spark.sql(f"INSERT INTO delta.`{t}` SELECT /*+ COALESCE(1) */ * FROM VALUES "
              "(1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40), (5, 'e', 50) "
              "AS v(id, name, score)")
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1")          # the file gets Spark's DV
    cols = ["id", "name", "score"]
    model = Model(cols)
    model.rows = [dict(zip(cols, r)) for r in [(2, "b", 20), (3, "c", 30), (4, "d", 40),
                                                (5, "e", 50)]]
    src, rows = _source(tmp_path, "dv", [(2, "B", 21), (3, "gone", 0), (6, "f", 60)], cols)
    clauses = [Clause("--when-matched-delete", "s.name = 'gone'",
                      cond=lambda t, s: eq(s["name"], "gone")),
               Clause("--when-matched-update-all", change=lambda t, s: dict(s)),
               Clause("--when-not-matched-insert-all", change=lambda s: dict(s))]
    v = cpp_merge(t, src, "t.id = s.id", clauses)
    model.merge(v, rows, lambda t, s: eq(t["id"], s["id"]), clauses)
    # deltacpp widened the deletion vector of the file that already had Spark's
    with_dv = [a["add"] for a in commit_actions(t, v) if "add" in a and
               a["add"].get("deletionVector")]
    assert with_dv and all(a["deletionVector"]["cardinality"] == 3 for a in with_dv), with_dv
    assert_same_rows(model.versions[v], spark_rows(spark_df(spark, t), cols),
                     "Spark after deltacpp's MERGE")

    spark.sql(f"""MERGE INTO delta.`{t}` AS t
                  USING (SELECT * FROM VALUES (4, 'D', 41), (7, 'g', 70) AS s(id, name, score))
                  AS s ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET t.name = s.name, t.score = s.score
                  WHEN NOT MATCHED THEN INSERT *""")
    history = spark_history(spark, t)
    assert set(history[v + 1].operationMetrics) == SPARK_MERGE_METRICS, \
        sorted(set(history[v + 1].operationMetrics) ^ SPARK_MERGE_METRICS)
    assert_merge_history(history[v], model, v, clauses)
    expected = [(2, "B", 21), (4, "D", 41), (5, "e", 50), (6, "f", 60), (7, "g", 70)]
    assert_same_rows(expected, arrow_rows(cpp_read(t), cols), "deltacpp after Spark's MERGE")
    _check_all_versions(spark, t)


def test_spark_made_column_mapping(spark, tmp_path):
    t = tmp_path / "mapped"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING, score INT, part STRING) "
              "USING delta PARTITIONED BY (part) TBLPROPERTIES "
              "(delta.columnMapping.mode = 'name')")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x'), "
              "(3, 'c', 30, 'y'), (4, 'd', 40, 'y')")
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN name TO label")
    spark.sql(f"ALTER TABLE delta.`{t}` DROP COLUMN score")
    spark.sql(f"ALTER TABLE delta.`{t}` ADD COLUMNS (score INT)")   # a new column, no values
    cols = ["id", "label", "part", "score"]
    model = Model(cols)
    model.rows = [dict(zip(cols, r)) for r in [(1, "a", "x", None), (2, "b", "x", None),
                                                (3, "c", "y", None), (4, "d", "y", None)]]
    src, rows = _source(tmp_path, "mapped", [(2, "B", "y", 2), (3, "C", "y", 3),
                                             (5, "e", "z", 5)], cols)
    clauses = [Clause("--when-matched-update",
                      "AND s.id = 2 THEN label = s.label, part = s.part, score = s.score",
                      cond=lambda t, s: eq(s["id"], 2),
                      change=lambda t, s: {"label": s["label"], "part": s["part"],
                                           "score": s["score"]}),
               Clause("--when-matched-update-all", change=lambda t, s: dict(s)),
               Clause("--when-not-matched-insert-all", change=lambda s: dict(s)),
               Clause("--when-not-matched-by-source-delete", "t.part = 'y'",
                      cond=lambda t: eq(t["part"], "y"))]
    v = cpp_merge(t, src, "t.id = s.id", clauses)
    model.merge(v, rows, lambda t, s: eq(t["id"], s["id"]), clauses)
    assert model.versions[v] and model.metrics[v]["numTargetRowsNotMatchedBySourceDeleted"] == 1
    assert_same_rows(model.versions[v], spark_rows(spark_df(spark, t), cols),
                     "Spark after deltacpp's MERGE")
    spark.sql(f"UPDATE delta.`{t}` SET label = concat(label, '+'), score = 0 WHERE part = 'x'")
    expected = [(1, "a+", "x", 0), (2, "B", "y", 2), (3, "C", "y", 3), (5, "e", "z", 5)]
    assert_same_rows(expected, arrow_rows(cpp_read(t), cols), "deltacpp after Spark's UPDATE")
    _check_all_versions(spark, t)


def test_spark_made_change_data_feed(spark, tmp_path):
    t = tmp_path / "cdf"
    spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT, name STRING) USING delta "
              "TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    cols = ["id", "name"]
    model = Model(cols)
    model.rows = [dict(zip(cols, r)) for r in [(1, "a"), (2, "b"), (3, "c")]]
    src, rows = _source(tmp_path, "cdf", [(1, "gone"), (2, "B"), (4, "d")], cols)
    clauses = [Clause("--when-matched-delete", "s.name = 'gone'",
                      cond=lambda t, s: eq(s["name"], "gone")),
               Clause("--when-matched-update", "name = s.name",
                      change=lambda t, s: {"name": s["name"]}),
               Clause("--when-not-matched-insert-all", change=lambda s: dict(s)),
               Clause("--when-not-matched-by-source-update", "name = upper(t.name)",
                      change=lambda t: {"name": upper(t["name"])})]
    v = cpp_merge(t, src, "t.id = s.id", clauses)
    model.merge(v, rows, lambda t, s: eq(t["id"], s["id"]), clauses)
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", v).option("endingVersion", v).load(str(t)))
    assert_same_rows(model.changes[v], spark_rows(feed, cols + CHANGE_COLS),
                     "Spark's change feed of deltacpp's MERGE")
    assert_same_rows(model.versions[v], spark_rows(spark_df(spark, t), cols), "Spark")
    spark.sql(f"""MERGE INTO delta.`{t}` AS t
                  USING (SELECT * FROM VALUES (4, 'D'), (5, 'e') AS s(id, name)) AS s
                  ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET *
                  WHEN NOT MATCHED THEN INSERT *""")
    assert_same_rows([(2, "B"), (3, "C"), (4, "D"), (5, "e")], arrow_rows(cpp_read(t), cols),
                     "deltacpp after Spark's MERGE")
    for start in range(v + 2):
        assert_changes_agree(spark, t, start, start)
    assert_changes_agree(spark, t, 0, None)
    _check_all_versions(spark, t)


def test_spark_made_identity_column(spark, tmp_path):
    t = tmp_path / "identity"
    spark.sql(f"""CREATE TABLE delta.`{t}` (
                   id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10),
                   k STRING, v INT) USING delta""")
    spark.sql(f"INSERT INTO delta.`{t}` (k, v) VALUES ('a', 1), ('b', 2)")
    before = {k: i for i, k, _ in spark_rows(spark_df(spark, t), ["id", "k", "v"])}
    assert sorted(before.values()) == [100, 110], before
    src, _ = _source(tmp_path, "ident", [("b", 20), ("c", 3), ("d", 4)], ["k", "v"])
    v = cpp_merge(t, src, "t.k = s.k", [
        Clause("--when-matched-update", "v = s.v"),
        Clause("--when-not-matched-insert", "k = s.k, v = s.v")])
    after = {k: (i, val) for i, k, val in spark_rows(spark_df(spark, t), ["id", "k", "v"])}
    assert set(after) == {"a", "b", "c", "d"}, after
    assert after["a"] == (before["a"], 1) and after["b"] == (before["b"], 20), after
    assert (after["c"][1], after["d"][1]) == (3, 4), after
    new_ids = {after["c"][0], after["d"][0]}
    assert len(new_ids) == 2 and all(i > 110 and (i - 100) % 10 == 0 for i in new_ids), after
    # the MERGE moved the identity column's high-water mark to the largest value it gave
    marks = [json.loads(a["metaData"]["schemaString"]) for a in commit_actions(t, v)
             if "metaData" in a]
    assert marks, "deltacpp's MERGE did not record the identity high-water mark"
    field = next(f for f in marks[-1]["fields"] if f["name"] == "id")
    assert field["metadata"]["delta.identity.highWaterMark"] == max(new_ids), field
    spark.sql(f"INSERT INTO delta.`{t}` (k, v) VALUES ('e', 5), ('f', 6)")
    rows = spark_rows(spark_df(spark, t), ["id", "k", "v"])
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)) == 6, rows
    assert min(i for i, k, _ in rows if k in ("e", "f")) > max(new_ids), rows
    assert all((i - 100) % 10 == 0 for i in ids), rows
    assert_same_rows(rows, arrow_rows(cpp_read(t), ["id", "k", "v"]),
                     "Spark (expected) vs deltacpp")
    assert spark_history(spark, t)[v].operation == "MERGE"
    _check_all_versions(spark, t)


# ---------------------------------------------------------------------------------------------
# The exam-scores tutorial
# ---------------------------------------------------------------------------------------------
def test_exam_scores_tutorial(spark, tmp_path):
    t = tmp_path / "scores"
    scores = tmp_path / "scores.csv"
    scores.write_text("id,nama,nilai\n1,Ali,85\n2,Budi,90\n3,Citra,78\n", encoding="utf-8")
    new_scores = tmp_path / "new_scores.csv"
    new_scores.write_text("id,nama,nilai\n2,Budi,95\n4,Dewi,92\n", encoding="utf-8")
    assert committed_version(cli("write", t, scores, "--schema", "id long, nama string, "
                                 "nilai long", "--property",
                                 "delta.enableChangeDataFeed=true")) == 0
    assert committed_version(cli("update", t, "--set", "nilai = 88", "--where",
                                 "nama = 'Citra'")) == 1
    assert committed_version(cli("merge", t, "--source", new_scores, "--target-alias", "t",
                                 "--source-alias", "s", "--on", "t.id = s.id",
                                 "--when-matched-update", "nilai = s.nilai",
                                 "--when-not-matched-insert-all")) == 2
    cols = ["id", "nama", "nilai"]
    expected = {0: [(1, "Ali", 85), (2, "Budi", 90), (3, "Citra", 78)],
                1: [(1, "Ali", 85), (2, "Budi", 90), (3, "Citra", 88)],
                2: [(1, "Ali", 85), (2, "Budi", 95), (3, "Citra", 88), (4, "Dewi", 92)]}
    for v, rows in expected.items():
        mine = compare_version_with_spark(spark, t, v)
        assert_same_rows(rows, arrow_rows(mine, cols), f"version {v}")
    assert {v: r.operation for v, r in spark_history(spark, t).items()} == \
        {0: "WRITE", 1: "UPDATE", 2: "MERGE"}
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", 1).option("endingVersion", 2).load(str(t)))
    assert_same_rows([(3, "Citra", 78, "update_preimage", 1),
                      (3, "Citra", 88, "update_postimage", 1),
                      (2, "Budi", 90, "update_preimage", 2),
                      (2, "Budi", 95, "update_postimage", 2),
                      (4, "Dewi", 92, "insert", 2)],
                     spark_rows(feed, cols + CHANGE_COLS), "Spark's change feed of versions 1-2")
    assert_changes_agree(spark, t, 1, 2)
