"""Users' SQL on a cluster node: the ``cluster`` catalog, whose views are the tables as one
node would have them.

``spans``, ``logs`` and ``model_calls`` are the lake's rows plus this node's rows not yet
flushed: past the marks of its last flush as its file notes them (``cluster_flushes``, read in
the same query; reading the marks from the lake would cost a catalog round trip per query).
The note follows the lake commit, so no row is ever missed; in the moment between the two a
query can see that flush's rows twice. Each has a ``node_id`` column. The tables
PostgreSQL holds (``traces``, ``scores``, ``scoring_decisions``, …) are views over the
read-only PostgreSQL attachment, JSON columns cast back to JSON. Tables only the node has
(``cluster_flushes``, ``schema_version``) read the node's file, and the file's views
(``sessions``) are created again over these views. Queries run with ``USE cluster``: one
dialect, DuckDB's, as on one node.
"""

from __future__ import annotations

from typing import Any

from ._lake import LAKE, PG, quote
from ._pg_schema import LAKE_TABLES, SCHEMA, duckdb_view_select, pg_tables

CLUSTER = "cluster"
"""The attached in-memory catalog holding the views (``USE cluster`` before users' SQL)."""


def _marks(local: str, node_id: str) -> tuple[str, str]:
    def mark(column: str) -> str:
        return (f'coalesce((SELECT max({column}) FROM "{local}".main.cluster_flushes '
                f"WHERE node_id = {quote(node_id)}), TIMESTAMP '1970-01-01')")

    return mark("span_mark"), mark("calls_mark")


def view_statements(conn: Any, *, local: str, node_id: str) -> list[str]:
    """The ``CREATE OR REPLACE VIEW`` statements of the ``cluster`` catalog (run after
    ``USE cluster``); the local file's own views come last."""
    from tracescore.store import column_names

    node = quote(node_id)
    here = f'"{local}".main'
    span_mark, calls_mark = _marks(local, node_id)
    out = []
    for table in ("spans", "logs"):
        names = ", ".join(column_names(table))
        out.append(
            f"CREATE OR REPLACE VIEW {table} AS SELECT {names}, node_id FROM {LAKE}.main.{table} "
            f"UNION ALL SELECT {names}, {node} AS node_id FROM {here}.{table} "
            f"WHERE received_at > {span_mark}")
    calls = column_names("model_calls")
    out.append(
        f"CREATE OR REPLACE VIEW model_calls AS SELECT {', '.join(calls)}, received_at, node_id "
        f"FROM {LAKE}.main.model_calls UNION ALL SELECT "
        f"{', '.join('m.' + c for c in calls)}, t.totals_received_at AS received_at, "
        f"{node} AS node_id FROM {here}.model_calls m JOIN {here}.traces t "
        f"ON m.trace_id = t.trace_id WHERE t.last_received_at > {calls_mark}")
    covered = set(LAKE_TABLES)
    for name, pg_table in pg_tables().items():
        covered.add(name)
        out.append(f"CREATE OR REPLACE VIEW {name} AS "
                   f"{duckdb_view_select(pg_table, f'{PG}.{SCHEMA}.{name}')}")
    tables = conn.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
        "ORDER BY table_name", [local]).fetchall()
    for (name,) in tables:
        if name not in covered:
            out.append(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM {here}."{name}"')
    views = conn.execute(
        "SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'main' "
        "AND NOT internal ORDER BY view_name", [local]).fetchall()
    for (sql,) in views:
        text = sql.strip().rstrip(";")
        if text.upper().startswith("CREATE VIEW"):
            text = "CREATE OR REPLACE VIEW" + text[len("CREATE VIEW"):]
        out.append(text)
    return out


def create_views(conn: Any, *, local: str, node_id: str) -> None:
    """Attach the in-memory ``cluster`` catalog to ``conn``'s database and create its views."""
    attached = {row[0] for row in conn.execute(
        "SELECT database_name FROM duckdb_databases()").fetchall()}
    if CLUSTER not in attached:
        conn.execute(f"ATTACH ':memory:' AS {CLUSTER}")
    statements = view_statements(conn, local=local, node_id=node_id)
    cur = conn.cursor()
    try:
        cur.execute(f"USE {CLUSTER}")
        for statement in statements:
            cur.execute(statement)
    finally:
        cur.close()


__all__ = ["CLUSTER", "create_views", "view_statements"]
