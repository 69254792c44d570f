"""The PostgreSQL side of cluster mode, derived from the local schema (``store.TABLES``).

Every local table but the lake's (``spans``, ``logs``, ``model_calls``) and the node's own notes
lives in PostgreSQL schema ``tracescore`` with the same columns and keys: ``TABLES`` stays the
one description, so a column another migration adds appears here at the next start (``ensure``
adds missing columns; nothing is dropped). On top of the local columns:

- ``traces.nodes``: the nodes that received the trace's spans; ``traces.updated_at``.
- ``trace_nodes``: one row per (trace, node) with that node's span columns and totals, written
  whole at each flush (an idempotent upsert), from which ``traces`` is folded.
- ``scoring_decisions.owner``, ``lease_until``, ``fence``: the claim on a pair
  (``_pg_coordination.py``); ``home``: the node that decided it (its trace is in that node's
  file and cache: other nodes take its pairs only once they waited).
- ``node_flushes``: each node's last flush whose ``traces`` upsert committed.

Long values (scorer inputs, judge prompts, JSON results) are compressed with lz4 where the
server has it (``compression_statements``): with PostgreSQL's default, pglz, a judge pair's
completion took ~1.6x the time and a batch of decisions with code scores ~1.7x, on analyzed
tables (``tests/bench/bench_pg_writes.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ClusterError

SCHEMA = "tracescore"
"""The PostgreSQL schema of tracescore's tables (the lake's catalog uses ``ducklake``)."""

LAKE_TABLES = ("spans", "logs", "model_calls")
"""Tables stored in the lake (partitioned by day of arrival), not in PostgreSQL."""

LOCAL_ONLY = (
    "cluster_flushes",
    "session_turns",  # the totals maintainer's read of the node's own session traces
    # Labels, review queues and judge agreement are written by the node that took the
    # request (their SQL is DuckDB's): each node's own, read from its file.
    "label_schemas", "labels", "review_queues", "review_items", "review_claims",
    "judge_agreement", "annotator_agreement", "scorer_versions", "canary_runs",
)
"""Tables that stay in each node's file (``/api/sql`` on the node reads its own)."""

_TYPES = {
    "VARCHAR": "text",
    "TEXT": "text",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP_NS": "timestamp",
    "TIMESTAMPTZ": "timestamptz",
    "DATE": "date",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "REAL": "real",
    "BIGINT": "bigint",
    "INTEGER": "integer",
    "SMALLINT": "smallint",
    "BOOLEAN": "boolean",
    "JSON": "jsonb",
    "BLOB": "bytea",
    "VARCHAR[]": "text[]",
}
"""DuckDB column type → PostgreSQL type (``TIMESTAMP_NS`` keeps microseconds there)."""

EXTRA_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "traces": (("nodes", "VARCHAR[]"), ("updated_at", "TIMESTAMP")),
    "scoring_decisions": (("owner", "VARCHAR"), ("lease_until", "TIMESTAMP"),
                          ("fence", "BIGINT"), ("home", "VARCHAR")),
}
"""Columns the PostgreSQL tables have beyond the local ones (DuckDB types)."""

NODE_FLUSHES: tuple[tuple[str, str], ...] = (
    ("node_id", "VARCHAR NOT NULL"),
    ("flush_no", "BIGINT NOT NULL"),
    ("span_mark", "TIMESTAMP"),
    ("calls_mark", "TIMESTAMP"),
    ("traces", "BIGINT"),
    ("updated_at", "TIMESTAMP"),
)

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS traces_last_received ON {s}.traces (last_received_at)",
    "CREATE INDEX IF NOT EXISTS traces_start ON {s}.traces (start_time)",
    "CREATE INDEX IF NOT EXISTS traces_page ON {s}.traces (start_time DESC NULLS LAST, "
    "trace_id)",
    "CREATE INDEX IF NOT EXISTS scores_trace ON {s}.scores (trace_id)",
    "CREATE INDEX IF NOT EXISTS judge_executions_score ON {s}.judge_executions (score_id)",
    "CREATE INDEX IF NOT EXISTS judge_executions_created ON {s}.judge_executions (created_at)",
    "CREATE INDEX IF NOT EXISTS decisions_due ON {s}.scoring_decisions "
    "(scorer_id, scorer_version, (coalesce(next_attempt_at, created_at)), created_at) "
    "WHERE decision IN ('pending', 'retrying', 'over_budget')",
    "CREATE INDEX IF NOT EXISTS decisions_unmarked ON {s}.scoring_decisions "
    "(scorer_id, scorer_version, (coalesce(next_attempt_at, created_at))) "
    "WHERE decision IN ('pending', 'retrying')",
)
"""The indexes; ``decisions_due`` holds the open pairs of each scorer version in the order a
claim takes them (due time, then age), so a claim reads its batch, not the whole backlog;
``decisions_unmarked`` the ones not marked ``over_budget``, so marking a spent budget's new
pairs reads those, not the ones marked before."""

_RETIRED_INDEXES = ("decisions_open", "decisions_trace")
"""Indexes of earlier schemas, dropped by ``ensure`` where present (every write of the table kept
them up to date for no reader): ``decisions_open``, replaced by ``decisions_due``;
``decisions_trace`` on ``(trace_id)``, which the primary key ``(trace_id, span_id, scorer_id,
scorer_version)`` serves as well (its leading column), so a decision's insert and a
completion's update each wrote one index entry more than they needed."""

_SCHEMA_LOCK = 0x7472_6163_6573_01
"""``pg_advisory_xact_lock`` key held while a node creates or widens the schema."""


@dataclass(frozen=True, slots=True)
class PgTable:
    """One PostgreSQL table: columns as (name, DuckDB type), and its key."""

    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        """The column names in order."""
        return tuple(name for name, _ in self.columns)

    def type_of(self, column: str) -> str:
        """The DuckDB type of ``column`` without its constraints."""
        for name, sql_type in self.columns:
            if name == column:
                return base_type(sql_type)
        raise KeyError(column)


def base_type(sql_type: str) -> str:
    """``"VARCHAR NOT NULL"`` → ``"VARCHAR"``."""
    return sql_type.split()[0].upper()


def pg_type(table: str, column: str, sql_type: str) -> str:
    """The PostgreSQL type of a DuckDB column type (constraints kept); raises ``ClusterError``
    for a type cluster mode does not map yet, naming the column."""
    base, _, rest = sql_type.strip().partition(" ")
    mapped = _TYPES.get(base.upper())
    if mapped is None:
        raise ClusterError(
            f"{table}.{column} has DuckDB type {base}, which cluster mode cannot store in "
            f"PostgreSQL yet; add it to tracescore/cluster/_pg_schema.py _TYPES")
    return f"{mapped} {rest}".strip()


def pg_tables() -> dict[str, PgTable]:
    """Every PostgreSQL table, derived from ``store.TABLES`` now (with ``EXTRA_COLUMNS``,
    ``trace_nodes`` and ``node_flushes``)."""
    from tracescore.store import PRIMARY_KEYS, TABLES

    out: dict[str, PgTable] = {}
    for name, columns in TABLES.items():
        if name in LAKE_TABLES or name in LOCAL_ONLY:
            continue
        out[name] = PgTable(name, (*columns, *EXTRA_COLUMNS.get(name, ())),
                            PRIMARY_KEYS.get(name, ()))
    trace_columns = tuple(c for c in TABLES["traces"] if c[0] != "trace_id")
    out["trace_nodes"] = PgTable(
        "trace_nodes",
        (("trace_id", "VARCHAR NOT NULL"), ("node_id", "VARCHAR NOT NULL"), *trace_columns,
         ("updated_at", "TIMESTAMP")),
        ("trace_id", "node_id"))
    out["node_flushes"] = PgTable("node_flushes", NODE_FLUSHES, ("node_id",))
    return out


def create_statements(tables: Iterable[PgTable], *,
                      existing: Mapping[str, set[str]] | None = None,
                      indexes: set[str] | None = None) -> list[str]:
    """``CREATE TABLE IF NOT EXISTS`` and ``ADD COLUMN IF NOT EXISTS`` for each table (a column
    added later is nullable: rows written before it have no value), then the indexes (and the
    drop of a retired one still there). Given
    the ``existing`` tables' columns and the ``indexes`` there, only what is missing (an
    ``ALTER TABLE`` takes the table's strongest lock even when the column exists, which would
    stop, or deadlock with, the scoring transactions of the nodes already running)."""
    out = [f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"] if existing is None else []
    for table in tables:
        have = None if existing is None else existing.get(table.name)
        if have is None:
            parts = [f"{name} {pg_type(table.name, name, sql_type)}"
                     for name, sql_type in table.columns]
            if table.key:
                parts.append(f"PRIMARY KEY ({', '.join(table.key)})")
            body = ",\n    ".join(parts)
            out.append(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{table.name} (\n    {body}\n)")
        for name, sql_type in table.columns:
            if have is not None and name in have:
                continue
            nullable = pg_type(table.name, name, sql_type).replace(" NOT NULL", "")
            out.append(f"ALTER TABLE {SCHEMA}.{table.name} ADD COLUMN IF NOT EXISTS {name} "
                       f"{nullable}")
    out += [index.format(s=SCHEMA) for index in _INDEXES
            if indexes is None or index.split()[5] not in indexes]
    out += [f"DROP INDEX IF EXISTS {SCHEMA}.{name}" for name in _RETIRED_INDEXES
            if indexes is not None and name in indexes]
    return out


COMPRESSION = "lz4"
"""How PostgreSQL compresses the schema's long values, when the server was built with it."""

_LZ4_CODE = "l"
"""``pg_attribute.attcompression`` of a column set to lz4 (empty: the server's default)."""


def compression_statements(columns: Iterable[tuple[str, str, str]]) -> list[str]:
    """``ALTER TABLE … SET COMPRESSION lz4`` for the compressible columns, given as (table,
    column, ``pg_attribute.attcompression``) with ``l`` for lz4: one statement per table that
    has a column without it, none when every column has it (an ``ALTER TABLE`` takes the
    table's strongest lock). Only values written afterwards are compressed so."""
    pending: dict[str, list[str]] = {}
    for table, column, compression in columns:
        if compression != _LZ4_CODE:
            pending.setdefault(table, []).append(column)
    return [f"ALTER TABLE {SCHEMA}.{table} " + ", ".join(
                f"ALTER COLUMN {name} SET COMPRESSION {COMPRESSION}" for name in names)
            for table, names in sorted(pending.items())]


_COMPRESSIBLE_SQL = """
SELECT c.relname, a.attname, a.attcompression::text
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
  AND a.attstorage <> 'p'
"""


def compressible_columns(cur: Any) -> list[tuple[str, str, str]]:
    """The schema's columns whose values can be compressed (not fixed-width) as (table,
    column, ``attcompression``), read on a psycopg cursor."""
    cur.execute(_COMPRESSIBLE_SQL, [SCHEMA])
    return [(row[0], row[1], row[2]) for row in cur.fetchall()]


def _has_lz4(cur: Any) -> bool:
    cur.execute("SELECT %s = ANY(enumvals) FROM pg_settings "
                "WHERE name = 'default_toast_compression'", [COMPRESSION])
    row = cur.fetchone()
    return bool(row and row[0])


def ensure(conn: Any) -> dict[str, PgTable]:
    """Create or widen the schema on a psycopg connection (one transaction, under an advisory
    lock so nodes starting together do not race; only what is missing, so a node joining a
    running cluster takes no lock the others' transactions wait on); returns the tables."""
    tables = pg_tables()
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        cur.execute("SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = %s", [SCHEMA])
        existing: dict[str, set[str]] = {}
        for table, column in cur.fetchall():
            existing.setdefault(table, set()).add(column)
        cur.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", [SCHEMA])
        indexes = {row[0] for row in cur.fetchall()}
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        for statement in create_statements(tables.values(), existing=existing,
                                           indexes=indexes):
            cur.execute(statement)
        if _has_lz4(cur):
            for statement in compression_statements(compressible_columns(cur)):
                cur.execute(statement)
    return tables


def duckdb_view_select(table: PgTable, source: str) -> str:
    """A SELECT over the attached PostgreSQL table ``source`` giving the local column types
    (JSON columns come back from PostgreSQL as text: cast, so users' SQL reads them as on one
    node)."""
    parts = []
    for name, sql_type in table.columns:
        base = base_type(sql_type)
        if base == "JSON":
            parts.append(f"CAST({name} AS JSON) AS {name}")
        elif base == "TIMESTAMP_NS":
            parts.append(f"CAST({name} AS TIMESTAMP_NS) AS {name}")
        else:
            parts.append(name)
    return f"SELECT {', '.join(parts)} FROM {source}"


def check_columns(table: PgTable, rows: Iterable[Mapping[str, Any]]) -> None:
    """Raise ``ClusterError`` for a row key that is not a column of ``table``."""
    known = set(table.column_names)
    for row in rows:
        unknown = set(row) - known
        if unknown:
            raise ClusterError(f"{table.name}: unknown columns {sorted(unknown)}; the columns "
                               f"are {list(table.column_names)}")


__all__ = [
    "EXTRA_COLUMNS",
    "LAKE_TABLES",
    "LOCAL_ONLY",
    "SCHEMA",
    "PgTable",
    "base_type",
    "check_columns",
    "compressible_columns",
    "compression_statements",
    "create_statements",
    "duckdb_view_select",
    "ensure",
    "pg_tables",
    "pg_type",
]
