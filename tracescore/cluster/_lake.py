"""The lake: DuckLake tables ``spans``, ``logs``, ``model_calls`` (and ``flushes``) with their
catalog in PostgreSQL and their Parquet files under ``data_path``.

The extensions come from the ``[cluster]`` extra's wheels (``duckdb-extension-ducklake``,
``duckdb-extension-postgres-scanner``), built for exactly one duckdb version; ``LOAD`` takes
their files, so nothing is downloaded at run time (autoinstall and autoload are off). The lake
tables are the local tables' columns (``store.TABLES``) plus ``node_id`` (the node that received
the row); ``model_calls`` adds ``received_at`` (the trace's last arrival its totals include), so
all three are partitioned by day of arrival. ``flushes`` (the columns of the local
``cluster_flushes``) holds one row per (node, flush), written in the flush's own transaction:
a node reads its high-water mark back from it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ._config import ClusterSettings
from ._errors import ClusterUnavailable

log = logging.getLogger(__name__)

T = TypeVar("T")

DUCKDB_VERSION = "1.5.5"
"""The duckdb the extension wheels are built for (the ``[cluster]`` extra pins it)."""

LAKE = "lake"
"""Catalog name of the attached lake (users may read ``lake.spans`` directly)."""
PG = "pg"
"""Catalog name of the attached PostgreSQL database (read-only)."""

PARTITION = "year(received_at), month(received_at), day(received_at)"

def extension_files() -> tuple[str, str]:
    """The postgres and ducklake extension files of the installed wheels; raises
    ``ClusterUnavailable`` with what to install when they (or the matching duckdb) are missing."""
    import duckdb

    hint = "install the cluster extra: pip install 'tracescore[cluster]'"
    if duckdb.__version__ != DUCKDB_VERSION:
        raise ClusterUnavailable(
            f"cluster mode needs duckdb {DUCKDB_VERSION} (its DuckLake and postgres extension "
            f"wheels are built for it) but duckdb {duckdb.__version__} is installed; {hint}")
    files = []
    for module, name in (("duckdb_extension_postgres_scanner", "postgres_scanner"),
                         ("duckdb_extension_ducklake", "ducklake")):
        try:
            package = __import__(module)
        except ImportError:
            raise ClusterUnavailable(f"the {name} extension wheel ({module}) is missing; "
                                     f"{hint}") from None
        path = (Path(str(package.__file__)).parent / "extensions" / f"v{DUCKDB_VERSION}"
                / f"{name}.duckdb_extension")
        if not path.is_file():
            raise ClusterUnavailable(f"{path} is missing; reinstall: {hint}")
        files.append(str(path))
    return files[0], files[1]


def lake_tables() -> dict[str, tuple[tuple[str, str], ...]]:
    """The lake's tables (columns as DuckDB types), derived from ``store.TABLES`` now."""
    from tracescore.store import TABLES

    node = ("node_id", "VARCHAR")
    return {
        "spans": (*TABLES["spans"], node),
        "logs": (*TABLES["logs"], node),
        "model_calls": (*TABLES["model_calls"], ("received_at", "TIMESTAMP"), node),
        "flushes": TABLES["cluster_flushes"],
    }


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def load_extensions(conn: Any) -> None:
    """Load the two extensions from the wheels' files into ``conn``'s database."""
    postgres, ducklake = extension_files()
    conn.execute("SET autoinstall_known_extensions = false")
    conn.execute("SET autoload_known_extensions = false")
    conn.execute(f"LOAD {quote(postgres)}")
    conn.execute(f"LOAD {quote(ducklake)}")


def attach(conn: Any, settings: ClusterSettings, *, read_only: bool = False) -> None:
    """Attach the lake (``lake``) and PostgreSQL (``pg``, always read-only) to ``conn``'s
    database, and create or widen the lake's tables (unless ``read_only``)."""
    load_extensions(conn)
    Path(settings.data_path).mkdir(parents=True, exist_ok=True)
    mode = ", READ_ONLY" if read_only else ""
    try:
        conn.execute(
            f"ATTACH {quote('ducklake:postgres:' + settings.postgres)} AS {LAKE} "
            f"(DATA_PATH {quote(settings.data_path)}, METADATA_SCHEMA 'ducklake'{mode})")
        conn.execute(f"ATTACH {quote(settings.postgres)} AS {PG} (TYPE postgres, READ_ONLY)")
    except Exception as exc:
        raise ClusterUnavailable(
            f"cannot attach the lake through PostgreSQL ([cluster].postgres): "
            f"{str(exc).splitlines()[0]}; check that PostgreSQL is up and the connection "
            "string is right") from None
    conn.execute("SET ducklake_max_retry_count = 10")
    if not read_only:
        with_catalog_retry(lambda: ensure_tables(conn))


def ensure_tables(conn: Any) -> None:
    """Create missing lake tables (partitioned by day of arrival) and add missing columns."""
    existing: dict[str, set[str]] = {}
    for table, column in conn.execute(
            "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = ?",
            [LAKE]).fetchall():
        existing.setdefault(table, set()).add(column)
    for name, columns in lake_tables().items():
        if name not in existing:
            body = ", ".join(f"{column} {sql_type.replace(' NOT NULL', '')}"
                             for column, sql_type in columns)
            conn.execute("BEGIN")
            try:
                conn.execute(f"CREATE TABLE IF NOT EXISTS {LAKE}.{name} ({body})")
                if name != "flushes":
                    conn.execute(f"ALTER TABLE {LAKE}.{name} SET PARTITIONED BY ({PARTITION})")
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
            continue
        for column, sql_type in columns:
            if column not in existing[name]:
                conn.execute(f"ALTER TABLE {LAKE}.{name} ADD COLUMN IF NOT EXISTS {column} "
                             f"{sql_type.split()[0]}")


def with_catalog_retry(fn: Callable[[], T], *, attempts: int = 5, base_s: float = 0.05,
                       on_retry: Callable[[BaseException], None] | None = None) -> T:
    """Run ``fn`` (one lake transaction that rolls itself back when it fails) again after a
    failed commit, with a short jittered wait. DuckLake already retries the catalog part of a
    commit that met another node's commit (``ducklake_max_retry_count``, without rewriting the
    data files); this covers what is left (a table created by two nodes at once, retries used
    up). No lock is taken around writes."""
    import duckdb

    for attempt in range(attempts):
        try:
            return fn()
        except (duckdb.TransactionException, duckdb.CatalogException) as exc:
            if attempt == attempts - 1:
                raise
            if on_retry is not None:
                on_retry(exc)
            wait_s = base_s * (2 ** attempt) * (0.5 + random.random())
            log.info("lake commit conflicted (%s); retrying in %.0f ms",
                     str(exc).splitlines()[0], wait_s * 1000)
            time.sleep(wait_s)
    raise AssertionError("unreachable")


@contextmanager
def transaction(store: Any) -> Iterator[Any]:
    """A cursor of ``store`` inside one transaction, committed when the block ends and rolled
    back when it raises (``Discard`` rolls back quietly)."""
    cur = store.cursor()
    try:
        cur.execute("BEGIN TRANSACTION")
        try:
            yield cur
        except Discard:
            rollback(cur)
            return
        except BaseException:
            rollback(cur)
            raise
        cur.execute("COMMIT")
    finally:
        cur.close()


class Discard(Exception):  # noqa: N818 - a signal, not an error
    """Raised inside ``transaction`` to roll it back without an error."""


def rollback(conn: Any) -> None:
    """Roll back ``conn``'s transaction if one is open."""
    try:
        conn.execute("ROLLBACK")
    except Exception:  # no transaction open
        pass


def snapshot_tag(node_id: str, flush_no: int, span_mark: Any, calls_mark: Any) -> str:
    """The DuckLake ``extra_info`` of a flush's commit (JSON text)."""
    import orjson

    return orjson.dumps({"node_id": node_id, "flush_no": flush_no,
                         "span_mark": str(span_mark), "calls_mark": str(calls_mark)}).decode()


__all__ = [
    "DUCKDB_VERSION",
    "LAKE",
    "PG",
    "attach",
    "ensure_tables",
    "extension_files",
    "lake_tables",
    "load_extensions",
    "quote",
    "Discard",
    "rollback",
    "transaction",
    "snapshot_tag",
    "with_catalog_retry",
]
