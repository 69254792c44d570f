"""PostgreSQL ``traces`` across nodes: each node's share in ``trace_nodes``, folded into one row.

At each flush a node upserts, for every trace it touched, its whole local ``traces`` row into
``trace_nodes`` (trace, node): the values are absolute, so writing them twice (a flush redone
after a crash) changes nothing. The same transaction folds the touched traces' ``trace_nodes``
rows into ``traces``: counts and totals add up, times take their bounds, the root's project and
service win, ``nodes`` lists the nodes that received spans. Traces are locked by bucket
(``pg_advisory_xact_lock``, in one order) so two nodes folding the same trace take turns.

The fold rule of each column is data (``FOLD``); a column another migration adds to the local
``traces`` takes the latest node's value unless a rule is added for it.
"""

from __future__ import annotations

from typing import Any

from ._pg_schema import SCHEMA

LOCK_BUCKETS = 256
_LOCK_CLASS = 0x7473

_FIRST = "(array_agg({c} ORDER BY {order}) FILTER (WHERE {c} IS NOT NULL))[1]"

FOLD: dict[str, str] = {
    "project": _FIRST.format(c="project", order="has_root DESC, start_time"),
    "service_name": _FIRST.format(c="service_name", order="has_root DESC, start_time"),
    "root_span_id": _FIRST.format(c="root_span_id", order="start_time"),
    "root_span_name": _FIRST.format(c="root_span_name", order="start_time"),
    "start_time": "min(start_time)",
    "end_time": "max(end_time)",
    "duration_ms": "extract(epoch FROM max(end_time) - min(start_time)) * 1000.0",
    "span_count": "sum(span_count)",
    "error_count": "sum(error_count)",
    "has_root": "bool_or(has_root)",
    "root_ended": "bool_or(root_ended)",
    "first_received_at": "min(first_received_at)",
    "last_received_at": "max(last_received_at)",
    "model_call_count": "sum(model_call_count)",
    "tool_call_count": "sum(tool_call_count)",
    "input_tokens": "sum(input_tokens)",
    "output_tokens": "sum(output_tokens)",
    "total_tokens": "sum(total_tokens)",
    "cost_usd": "sum(cost_usd)",
    "unpriced_call_count": "sum(unpriced_call_count)",
    "models": (f"(SELECT array_agg(DISTINCT m ORDER BY m) FROM {SCHEMA}.trace_nodes x, "
               "unnest(x.models) m WHERE x.trace_id = n.trace_id)"),
    "agent_name": _FIRST.format(c="agent_name", order="first_received_at"),
    "session_id": _FIRST.format(c="session_id", order="first_received_at"),
    "user_id": _FIRST.format(c="user_id", order="first_received_at"),
    "totals_received_at": ("CASE WHEN bool_and(totals_received_at IS NOT NULL) "
                           "THEN max(totals_received_at) END"),
}
"""How each ``traces`` column is folded over the trace's ``trace_nodes`` rows."""


def fold_sql(columns: tuple[str, ...]) -> str:
    """Upsert into ``traces`` the fold of the ``trace_nodes`` rows of the trace ids in ``%s``
    (``columns``: the ``traces`` columns besides ``trace_id``, ``nodes``, ``updated_at``)."""
    exprs = [FOLD.get(c) or _FIRST.format(c=c, order="last_received_at DESC")
             for c in columns]
    names = ", ".join(columns)
    select = ", ".join(f"{expr} AS {c}" for expr, c in zip(exprs, columns, strict=True))
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in (*columns, "nodes", "updated_at"))
    return (
        f"INSERT INTO {SCHEMA}.traces (trace_id, {names}, nodes, updated_at) "
        f"SELECT n.trace_id, {select}, array_agg(n.node_id ORDER BY n.node_id), "
        "(now() AT TIME ZONE 'UTC') "
        f"FROM {SCHEMA}.trace_nodes n WHERE n.trace_id = ANY(%s::text[]) GROUP BY n.trace_id "
        f"ON CONFLICT (trace_id) DO UPDATE SET {sets}"
    )


LOCK_SQL = (
    "SELECT pg_advisory_xact_lock(%s, b) FROM (SELECT DISTINCT "
    f"(hashtext(t) & {LOCK_BUCKETS - 1}) AS b FROM unnest(%s::text[]) t) x ORDER BY b"
)
"""Take the bucket locks of the trace ids in parameter 2, in one order (no deadlock)."""


def lock_traces(cur: Any, trace_ids: list[str]) -> None:
    """Lock the buckets of ``trace_ids`` for the rest of the transaction."""
    cur.execute(LOCK_SQL, [_LOCK_CLASS, trace_ids])


__all__ = ["FOLD", "LOCK_BUCKETS", "fold_sql", "lock_traces"]
