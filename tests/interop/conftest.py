"""Fixtures of the interoperability suite.

One Spark session per test module (local[2], UTC, Delta extension and catalog, tiny shuffles,
no UI). Delta's jars come from Maven Central through spark.jars.packages, cached in ~/.ivy2.
If Spark or its jars cannot start, every test that needs Spark FAILS with the reason: this
suite is never skipped."""
from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

import pytest

os.environ["TZ"] = "UTC"
time.tzset()
sys.path.insert(0, str(Path(__file__).resolve().parent))

import interop_util  # noqa: E402


def delta_maven_coordinate() -> str:
    """io.delta:delta-spark_2.13:<the pip delta-spark version> (the jar and the Python API
    are released together; delta-spark_2.13 is built for the newest Spark it supports)."""
    from importlib.metadata import version
    return f"io.delta:delta-spark_2.13:{version('delta-spark')}"


def _start_spark():
    from pyspark.sql import SparkSession
    ivy = os.environ.get("DELTACPP_IVY_DIR", str(Path.home() / ".ivy2"))
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("deltacpp-interop")
        .config("spark.jars.packages", delta_maven_coordinate())
        .config("spark.jars.ivy", ivy)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # prove that Delta is really loaded (the jars and the extension are used lazily otherwise)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        spark.sql(f"CREATE TABLE delta.`{d}/probe` (a INT) USING delta")
        spark.read.format("delta").load(f"{d}/probe").collect()
    return spark


class SparkOrFailure:
    """Stands for the module's SparkSession; when Spark could not start, any use of it fails
    the test with the reason."""

    def __init__(self):
        self._spark = None
        self._error = None
        try:
            self._spark = _start_spark()
        except BaseException as e:  # noqa: BLE001 - any failure to start is reported
            self._error = "".join(traceback.format_exception_only(type(e), e)).strip()

    def __getattr__(self, name):
        if self._error is not None:
            pytest.fail(f"Spark with Delta ({delta_maven_coordinate()}) could not start: "
                        f"{self._error}", pytrace=False)
        return getattr(self._spark, name)

    def stop(self):
        if self._spark is not None:
            self._spark.stop()


@pytest.fixture(scope="module")
def spark():
    s = SparkOrFailure()
    yield s
    s.stop()


@pytest.fixture(scope="session", autouse=True)
def _deltacpp_cli_exists():
    p = Path(interop_util.DELTACPP)
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"deltacpp CLI not found at {p} (set DELTACPP_CLI or run `make build`)",
                    pytrace=False)
