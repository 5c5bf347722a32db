"""Filters on floating-point columns holding NaN give Spark's rows: on a table Spark wrote (its
statistics record NaN as the maximum of a file holding one, and as both bounds of an all-NaN
file), `deltacpp read --where` returns what Spark's WHERE returns, with data skipping on."""
from __future__ import annotations

import json
from pathlib import Path

from interop_util import cli

PREDICATES = [
    "d > 1.0", "d > 2.5", "d >= 'NaN'", "d > 'NaN'", "d = 'NaN'", "d <=> 'NaN'", "d < 1.0",
    "d < 'NaN'", "d <= 'NaN'", "d <> 1.0", "d != 'NaN'", "d IN ('NaN', '3')",
    "d NOT IN ('NaN', '3')", "d BETWEEN 2 AND 'NaN'", "d = 0", "NOT (d <= 1.0)", "d < -1",
    "f > 1.0", "f = 'NaN'", "f < 1.0", "f >= 'Infinity'", "p = 'NaN'", "p > 1", "p < 1",
]


def cpp_ids(table: Path, where: str) -> list[int]:
    out = cli("read", table, "--columns", "id", "--where", where, "--format", "json").stdout
    return sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip())


def test_nan_filters_match_spark(spark, tmp_path):
    t = tmp_path / "nan_table"
    spark.sql(f"CREATE TABLE delta.`{t}` (id INT, d DOUBLE, f FLOAT, p DOUBLE) "
              f"USING delta PARTITIONED BY (p)")
    nan = "double('NaN')"
    fnan = "float('NaN')"
    for values in (
        f"(1, 1.0, 1.0, 0.5), (2, {nan}, {fnan}, 0.5), (3, -2.5, -2.5, 0.5), "
        f"(4, NULL, NULL, 0.5), (5, {nan}, {fnan}, 0.5), (6, 0.5, 0.5, 0.5)",
        "(7, 3.0, 3.0, 2.0), (8, -0.0, -0.0, 2.0), (9, 2.0, 2.0, 2.0)",
        f"(10, {nan}, {fnan}, {nan}), (11, {nan}, {fnan}, {nan})",
    ):
        spark.sql(f"INSERT INTO delta.`{t}` VALUES {values}")

    # The case this is about: Spark's statistics carry NaN bounds.
    stats = [json.loads(json.loads(line)["add"]["stats"])
             for log in sorted((t / "_delta_log").glob("*.json"))
             for line in log.read_text().splitlines() if '"add"' in line]
    assert any(s["maxValues"].get("d") == "NaN" for s in stats), stats

    for where in PREDICATES:
        theirs = sorted(r.id for r in spark.sql(f"SELECT id FROM delta.`{t}` WHERE {where}")
                        .collect())
        assert cpp_ids(t, where) == theirs, where
