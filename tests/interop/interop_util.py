"""Helpers shared by the interoperability tests: run the deltacpp CLI, read a table version
with deltacpp, delta-rs and Spark, and compare the results as multisets of rows."""
from __future__ import annotations

import collections
import datetime as dt
import decimal
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
DELTACPP = os.environ.get("DELTACPP_CLI", str(REPO / "build" / "deltacpp"))


# ---------------------------------------------------------------------------------------------
# deltacpp CLI
# ---------------------------------------------------------------------------------------------
def cli(*args, check=True, input=None) -> subprocess.CompletedProcess:
    """Runs `deltacpp ARGS...`; with check, a non-zero exit fails with the CLI's output."""
    cmd = [DELTACPP, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(
            f"deltacpp failed (exit {p.returncode}): {' '.join(cmd)}\n"
            f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def cpp_read(table, version=None, timestamp=None) -> pa.Table:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.parquet"
        args = ["read", table, "--format", "parquet", "--output", out]
        if version is not None:
            args += ["--version", version]
        if timestamp is not None:
            args += ["--timestamp", timestamp]
        cli(*args)
        return pq.read_table(out)


def cpp_history(table) -> list[dict]:
    out = cli("history", table, "--format", "json").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def cpp_versions(table) -> list[int]:
    return sorted(int(h["version"]) for h in cpp_history(table))


def cpp_describe(table, version=None) -> dict:
    args = ["describe", table, "--format", "json"]
    if version is not None:
        args += ["--version", version]
    out = cli(*args).stdout
    props = {}
    for line in out.splitlines():
        if line.strip():
            o = json.loads(line)
            props[o["property"]] = o["value"]
    return props


# ---------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------
def rs_table(table, version=None):
    import deltalake
    if version is None:
        return deltalake.DeltaTable(str(table))
    return deltalake.DeltaTable(str(table), version=version)


def rs_read(table, version) -> pa.Table:
    return rs_table(table, version).to_pyarrow_table()


def spark_df(spark, table, version=None, timestamp=None):
    r = spark.read.format("delta")
    if version is not None:
        r = r.option("versionAsOf", version)
    if timestamp is not None:
        r = r.option("timestampAsOf", timestamp)
    return r.load(str(table))


# ---------------------------------------------------------------------------------------------
# Normalisation and comparison
# ---------------------------------------------------------------------------------------------
def norm_value(v):
    """One Python value for the same SQL value, whichever reader produced it: aware datetimes
    become naive UTC (Spark returns naive datetimes in the process zone, which is UTC here)."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(v, decimal.Decimal):
        return v.normalize() if v == v else v
    if isinstance(v, tuple) and hasattr(v, "asDict"):   # a Spark Row: a struct value
        v = v.asDict(recursive=False)
    if isinstance(v, dict):   # a struct (Arrow) or a map (Spark, or Arrow via _maps_as_dicts)
        return tuple(sorted((norm_value(k), norm_value(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(norm_value(x) for x in v)
    return v


def _maps_as_dicts(v, ty: "pa.DataType"):
    """An Arrow value as Spark's Row.asDict() gives it: maps (lists of (key, value) pairs in
    to_pylist()) become dicts, so that both readers' maps normalise alike whatever the order
    of their entries."""
    if v is None:
        return None
    if pa.types.is_map(ty):
        return {_maps_as_dicts(k, ty.key_type): _maps_as_dicts(x, ty.item_type) for k, x in v}
    if pa.types.is_struct(ty):
        return {f.name: _maps_as_dicts(v[f.name], f.type) for f in ty}
    if pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_list_view(ty):
        return [_maps_as_dicts(x, ty.value_type) for x in v]
    return v


def arrow_rows(t: pa.Table, cols: list[str]) -> list[tuple]:
    missing = [c for c in cols if c not in t.column_names]
    assert not missing, f"columns {missing} missing from {t.column_names}"
    t = t.select(cols)
    types = [t.schema.field(c).type for c in cols]
    data = t.to_pylist()
    return [tuple(norm_value(_maps_as_dicts(r[c], ty)) for c, ty in zip(cols, types))
            for r in data]


def spark_rows(df, cols: list[str]) -> list[tuple]:
    missing = [c for c in cols if c not in df.columns]
    assert not missing, f"columns {missing} missing from Spark's {df.columns}"
    return [tuple(norm_value(v) for v in r) for r in df.select(*[f"`{c}`" for c in cols]).collect()]


def assert_same_rows(expected: list[tuple], actual: list[tuple], what: str):
    e, a = collections.Counter(expected), collections.Counter(actual)
    if e != a:
        only_e = sorted((e - a).elements(), key=repr)
        only_a = sorted((a - e).elements(), key=repr)
        raise AssertionError(
            f"{what}: rows differ ({len(expected)} vs {len(actual)} rows)\n"
            f"  only in expected: {only_e[:20]}\n  only in actual:   {only_a[:20]}")


_SPARK_TYPE = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
# Delta's names for the integer types inside a nested type string, e.g. struct<a:integer>
_NESTED_INT = re.compile(r"(?<=[<:,])(long|integer|short|byte)(?=[>,]|$)")


def cpp_columns(table, version=None) -> dict[str, tuple[str, bool]]:
    """{column: (spark simple type name, nullable)} from `deltacpp describe`."""
    out = {}
    for k, v in cpp_describe(table, version).items():
        if k.startswith("column "):
            typ = v
            nullable = True
            if typ.endswith(" NOT NULL"):
                typ, nullable = typ[: -len(" NOT NULL")], False
            typ = typ.strip().lower()
            # Spark's simpleString shows no nullability inside nested types (compared on their
            # own through spark_arrow_columns)
            typ = re.sub(r" not null(?=[>,])", "", typ)
            typ = _NESTED_INT.sub(lambda m: _SPARK_TYPE[m.group(1)], _SPARK_TYPE.get(typ, typ))
            out[k[len("column "):]] = (typ, nullable)
    return out


def spark_columns(df) -> dict[str, tuple[str, bool]]:
    return {f.name: (f.dataType.simpleString(), f.nullable) for f in df.schema.fields}


def arrow_type_name(ty: "pa.DataType") -> str:
    """An Arrow type as text, nested fields with their nullability ("?" when nullable), the
    same for the same logical type in another physical layout (large/view strings and binaries
    and lists) and whatever the names of list elements and map entries."""
    def field(f):
        return arrow_type_name(f.type) + ("?" if f.nullable else "")
    if pa.types.is_large_string(ty) or pa.types.is_string_view(ty):
        return "string"
    if pa.types.is_large_binary(ty) or pa.types.is_binary_view(ty):
        return "binary"
    if pa.types.is_struct(ty):
        return "struct<" + ", ".join(f"{f.name}: {field(f)}" for f in ty) + ">"
    if pa.types.is_map(ty):
        return f"map<{field(ty.key_field)}, {field(ty.item_field)}>"
    if pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_list_view(ty):
        return f"list<{field(ty.value_field)}>"
    return str(ty)


def arrow_columns(t: pa.Table) -> dict[str, tuple[str, bool]]:
    return {f.name: (arrow_type_name(f.type), f.nullable) for f in t.schema}


def spark_arrow_columns(df) -> dict[str, tuple[str, bool]]:
    """Spark's schema of DF as Arrow types (pyspark's own mapping), in arrow_columns' form:
    the nullability of nested fields, array elements and map values included."""
    from pyspark.sql.pandas.types import to_arrow_schema
    return {f.name: (arrow_type_name(f.type), f.nullable)
            for f in to_arrow_schema(df.schema, timezone="UTC")}


def compare_version_with_rs(table, version, check_nullability=True):
    """deltacpp and delta-rs read VERSION of TABLE identically (rows, column types)."""
    mine = cpp_read(table, version)
    theirs = rs_read(table, version)
    cols = mine.column_names
    assert sorted(cols) == sorted(theirs.column_names), \
        f"v{version}: columns deltacpp {cols} vs delta-rs {theirs.column_names}"
    mc, tc = arrow_columns(mine), arrow_columns(theirs)
    if not check_nullability:
        mc = {k: (t, True) for k, (t, _) in mc.items()}
        tc = {k: (t, True) for k, (t, _) in tc.items()}
    assert mc == tc, f"v{version}: column types deltacpp {mc} vs delta-rs {tc}"
    assert_same_rows(arrow_rows(mine, cols), arrow_rows(theirs, cols),
                     f"{table} v{version}: deltacpp (expected) vs delta-rs (actual)")
    return mine


def compare_version_with_spark(spark, table, version, check_nullability=True):
    """deltacpp and Spark read VERSION of TABLE identically (rows, column types)."""
    mine = cpp_read(table, version)
    df = spark_df(spark, table, version)
    cols = mine.column_names
    assert sorted(cols) == sorted(df.columns), \
        f"v{version}: columns deltacpp {cols} vs Spark {df.columns}"
    mc, sc = cpp_columns(table, version), spark_columns(df)
    if not check_nullability:
        mc = {k: (t, True) for k, (t, _) in mc.items()}
        sc = {k: (t, True) for k, (t, _) in sc.items()}
    assert mc == sc, f"v{version}: column types deltacpp {mc} vs Spark {sc}"
    assert_same_rows(arrow_rows(mine, cols), spark_rows(df, cols),
                     f"{table} v{version}: deltacpp (expected) vs Spark (actual)")
    return mine


def write_parquet(path: Path, rows: list[dict], fields: list[tuple[str, "pa.DataType"]]) -> Path:
    """Writes ROWS (dicts; values as pyarrow accepts them, strings for dates, timestamps and
    decimals are converted here) as a Parquet input file for `deltacpp write`."""
    import datetime as _dt
    schema = pa.schema([pa.field(n, t) for n, t in fields])
    cols = {}
    for name, typ in fields:
        vals = []
        for r in rows:
            v = r.get(name)
            if isinstance(v, str) and pa.types.is_date(typ):
                v = _dt.date.fromisoformat(v)
            elif isinstance(v, str) and pa.types.is_timestamp(typ):
                v = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
            elif isinstance(v, str) and pa.types.is_decimal(typ):
                v = decimal.Decimal(v)
            vals.append(v)
        cols[name] = pa.array(vals, type=typ)
    pq.write_table(pa.table(cols, schema=schema), path)
    return path


def rs_read_sql(table, version=None) -> pa.Table:
    """delta-rs reading through its SQL engine (deltalake.QueryBuilder, DataFusion), which
    applies column mapping; to_pyarrow_table() does not (see docs/interop.md)."""
    from deltalake import QueryBuilder
    res = QueryBuilder().register("t", rs_table(table, version)).execute("SELECT * FROM t")
    return pa.table(res.read_all())


def _compare_with_rs(mine, table, version, check_nullability, rs_via):
    theirs = rs_read_sql(table, version) if rs_via == "sql" else rs_read(table, version)
    cols = mine.column_names
    assert sorted(cols) == sorted(theirs.column_names), \
        f"v{version}: columns deltacpp {cols} vs delta-rs {theirs.column_names}"
    mc, tc = arrow_columns(mine), arrow_columns(theirs)
    if not check_nullability:
        mc = {k: (t, True) for k, (t, _) in mc.items()}
        tc = {k: (t, True) for k, (t, _) in tc.items()}
    assert mc == tc, f"v{version}: column types deltacpp {mc} vs delta-rs {tc}"
    assert_same_rows(arrow_rows(mine, cols), arrow_rows(theirs, cols),
                     f"{table} v{version}: deltacpp (expected) vs delta-rs (actual)")


def _compare_with_spark(mine, spark, table, version, check_nullability):
    df = spark_df(spark, table, version)
    cols = mine.column_names
    assert sorted(cols) == sorted(df.columns), \
        f"v{version}: columns deltacpp {cols} vs Spark {df.columns}"
    mc, sc = cpp_columns(table, version), spark_columns(df)
    if not check_nullability:
        mc = {k: (t, True) for k, (t, _) in mc.items()}
        sc = {k: (t, True) for k, (t, _) in sc.items()}
    assert mc == sc, f"v{version}: column types deltacpp {mc} vs Spark {sc}"
    assert_same_rows(arrow_rows(mine, cols), spark_rows(df, cols),
                     f"{table} v{version}: deltacpp (expected) vs Spark (actual)")


def _short(e: BaseException) -> str:
    """An exception in one line or a few (Py4J errors without the Java stack)."""
    text = f"{type(e).__name__}: {e}"
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("at ")]
    return "\n".join(lines[:12])


def compare_version_all(spark, table, version, rs=True, check_nullability=True, rs_via="dataset"):
    """deltacpp, delta-rs (unless rs=False; rs_via="sql" reads through delta-rs's SQL engine)
    and Spark (unless spark is None) read VERSION of TABLE identically (rows and column types);
    deltacpp reads the version once and every peer is checked even when another differs.
    Returns deltacpp's Arrow table."""
    mine = cpp_read(table, version)
    failures = []
    if rs:
        try:
            _compare_with_rs(mine, table, version, check_nullability, rs_via)
        except Exception as e:  # noqa: BLE001 - a reader's exception is a difference too
            failures.append(f"delta-rs: {_short(e)}")
    if spark is not None:
        try:
            _compare_with_spark(mine, spark, table, version, check_nullability)
        except Exception as e:  # noqa: BLE001
            failures.append(f"Spark: {_short(e)}")
    if failures:
        raise AssertionError("\n  ".join(failures))
    return mine


def compare_versions_all(spark, table, versions, notes=None, rs=True, check_nullability=True,
                         rs_via="dataset"):
    """compare_version_all for each version; one assertion listing every version that differs."""
    failures = []
    for v in versions:
        try:
            compare_version_all(spark, table, v, rs=rs, check_nullability=check_nullability,
                                rs_via=rs_via)
        except Exception as e:  # noqa: BLE001 - a reader's exception is a difference too
            what = f" ({notes[v]})" if notes and v in notes else ""
            failures.append(f"version {v}{what}: {_short(e)}")
    assert not failures, "\n".join(failures)


def assert_history_agrees(spark, table, rs=True):
    """`deltacpp history`, Spark DESCRIBE HISTORY and delta-rs DeltaTable.history() (unless
    rs=False: for tables delta-rs refuses to open) list the same versions with the same
    operations."""
    mine = {int(h["version"]): h["operation"] for h in cpp_history(table)}
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").select("version", "operation").collect()
    spark_ops = {r.version: r.operation for r in rows}
    rs_ops = ({int(h["version"]): h.get("operation") for h in rs_table(table).history()}
              if rs else dict(spark_ops))
    assert mine, f"{table}: deltacpp history is empty"
    diff = [f"version {v}: deltacpp {mine.get(v)!r}, Spark {spark_ops.get(v)!r}, "
            f"delta-rs {rs_ops.get(v)!r}"
            for v in sorted(set(mine) | set(spark_ops) | set(rs_ops))
            if not mine.get(v) == spark_ops.get(v) == rs_ops.get(v)]
    assert not diff, f"{table}: histories differ:\n  " + "\n  ".join(diff)


def log_versions_on_disk(table) -> list[int]:
    """Versions of the NNN.json commit files in TABLE/_delta_log."""
    return sorted(int(p.name[:20]) for p in (Path(table) / "_delta_log").glob("*.json")
                  if p.name[:20].isdigit())


def data_files_on_disk(table) -> set[str]:
    """Every Parquet data file under TABLE (relative paths), outside _delta_log."""
    root = Path(table)
    return {str(p.relative_to(root)) for p in root.rglob("*.parquet")
            if "_delta_log" not in p.parts}


def spark_detail(spark, table):
    return spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]


def assert_detail_agrees(spark, table):
    """Spark DESCRIBE DETAIL and `deltacpp describe` agree on files, size, partition columns,
    properties, protocol versions and table features."""
    d = spark_detail(spark, table)
    mine = cpp_describe(table)
    props = {k[len("property "):]: v for k, v in mine.items() if k.startswith("property ")}
    parts = [c.strip() for c in mine.get("partition columns", "").split(",") if c.strip()]
    feats = {f.strip() for f in mine.get("table features", "").split(",") if f.strip()}
    theirs = {"numFiles": d.numFiles, "sizeInBytes": d.sizeInBytes,
              "partitionColumns": list(d.partitionColumns), "properties": dict(d.properties),
              "minReaderVersion": d.minReaderVersion, "minWriterVersion": d.minWriterVersion,
              "tableFeatures": set(d.tableFeatures)}
    ours = {"numFiles": int(mine["number of files"]), "sizeInBytes": int(mine["size in bytes"]),
            "partitionColumns": parts, "properties": props,
            "minReaderVersion": int(mine["min reader version"]),
            "minWriterVersion": int(mine["min writer version"]), "tableFeatures": feats}
    diff = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not diff, f"{table}: deltacpp describe vs Spark DESCRIBE DETAIL differ: " + \
        "; ".join(f"{k}: deltacpp {a!r} vs Spark {b!r}" for k, (a, b) in diff.items())


# ---------------------------------------------------------------------------------------------
# delta-rs in a process of its own
# ---------------------------------------------------------------------------------------------
_RS_READ_VERSIONS = r"""
import json, os, sys
import pyarrow as pa
import pyarrow.parquet as pq
import deltalake
table, out, via, versions = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
for v in versions:
    try:
        dtab = deltalake.DeltaTable(table, version=v)
        if via == "sql":
            res = deltalake.QueryBuilder().register("t", dtab).execute("SELECT * FROM t")
            got = pa.table(res.read_all())
        else:
            got = dtab.to_pyarrow_table()
        pq.write_table(got, os.path.join(out, f"{v}.parquet"))
    except Exception as e:
        with open(os.path.join(out, f"{v}.err"), "w", encoding="utf-8") as f:
            f.write(f"{type(e).__name__}: {e}")
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


def rs_read_isolated(table, versions, via="dataset") -> dict[int, "pa.Table | str"]:
    """delta-rs reads each of VERSIONS of TABLE in one Python process of its own (deltalake's
    process can abort while exiting after a read, which must not take the test run with it):
    {version: its Arrow table, or the text of the exception delta-rs raised}. via="sql" reads
    through delta-rs's SQL engine. Each result is taken from the file the child wrote, so its
    exit status does not matter, only that it wrote one file per version."""
    import sys
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, "-c", _RS_READ_VERSIONS, str(table), d, via,
                            json.dumps([int(v) for v in versions])],
                           capture_output=True, text=True, timeout=300)
        out = {}
        for v in versions:
            data, err = Path(d) / f"{v}.parquet", Path(d) / f"{v}.err"
            if data.exists():
                out[v] = pq.read_table(data)
            elif err.exists():
                out[v] = err.read_text(encoding="utf-8")
            else:
                raise AssertionError(f"delta-rs wrote nothing for version {v} of {table} "
                                     f"(exit {p.returncode}): {p.stderr[-2000:]}")
        return out


def committed_version(p: subprocess.CompletedProcess) -> int:
    """The version in the first line of a deltacpp command's output, "committed version N"
    (DML) or "committed version N: ..." (write)."""
    line = p.stdout.splitlines()[0] if p.stdout else ""
    assert line.startswith("committed version "), p.stdout
    return int(line[len("committed version "):].split(":")[0])


def spark_history(spark, table) -> dict[int, "object"]:
    """{version: Spark's DESCRIBE HISTORY row}."""
    return {r.version: r for r in spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()}
