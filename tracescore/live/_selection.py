"""Which work is there: traces that settled and are not yet decided, and decisions that are due.

Four SQL reads, each run on a store read cursor in a worker thread:

- ``scan``: spans that arrived since a mark, grouped by trace (first/last arrival, root seen),
  keeping only traces some enabled scorer version has not decided.
  The result is merged into ``OpenTraces``, the in-memory set of traces still to decide, so each
  tick reads only the spans that arrived since the last one (plus a safety margin).
- ``decided``: the (scorer id, version) pairs already decided for a list of traces; with it,
  ``internal``: which of them carry tracescore's own marker (read once per trace, not by
  every scan).
- ``due``: open decisions (pending, retrying, over budget) whose time has come.

A trace is *ready* when its root span (no parent) has arrived and no span arrived for
``settle_seconds``, or ``max_wait_seconds`` after its first span arrived.

Traces that tracescore itself produced are never scored: a span or resource attribute
``tracescore.internal`` set to true marks them (set ``OTEL_RESOURCE_ATTRIBUTES=
tracescore.internal=true`` on a process whose judge calls are traced into tracescore).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

INTERNAL_MARKER = "tracescore.internal"

IS_INTERNAL = f"""CASE WHEN contains(s.resource_attributes, '{INTERNAL_MARKER}')
                 OR contains(s.attributes, '{INTERNAL_MARKER}')
           THEN lower(coalesce(
               json_extract_string(s.resource_attributes, '$."{INTERNAL_MARKER}"'),
               json_extract_string(s.attributes, '$."{INTERNAL_MARKER}"'), '')) IN ('true', '1')
           ELSE false END"""
"""True for a span ``s`` carrying the marker. Reading a JSON path costs a few microseconds per
span, so only spans whose JSON text names the marker are read (the store's JSON never escapes
the marker's plain ASCII characters)."""
ARRIVAL_COLUMNS = """min(s.received_at) AS first_received,
           max(s.received_at) AS last_received,
           bool_or(s.parent_span_id IS NULL OR s.parent_span_id = '') AS has_root"""
READINESS_COLUMNS = f"""{ARRIVAL_COLUMNS},
           bool_or({IS_INTERNAL}) AS internal"""
"""Per-trace aggregates over spans ``s`` that ``OpenTrace`` is built from."""


@dataclass(frozen=True, slots=True)
class VersionWindow:
    """A scorer version and the earliest first arrival of the traces it scores."""

    scorer_id: str
    scorer_version: str
    horizon: datetime


def _versions_cte(versions: Sequence[VersionWindow]) -> tuple[str, list[Any]]:
    values = ", ".join("(?, ?, ?::TIMESTAMP)" for _ in versions)
    params: list[Any] = []
    for v in versions:
        params += [v.scorer_id, v.scorer_version, v.horizon]
    return f"versions(scorer_id, scorer_version, horizon) AS (VALUES {values})", params


def scan_query(since: datetime, versions: Sequence[VersionWindow], *,
               decided_since: datetime | None = None) -> tuple[str, list[Any]]:
    """Traces with spans received at or after ``since`` that a version has not decided, with
    the readiness aggregates of those spans only (``OpenTraces.merge`` widens them with what
    earlier scans saw, so each scan reads only recent row groups).

    ``decided_since``: only decisions written since then are looked at (their row groups, not
    the whole decision history). A trace decided before that and getting a late span shows up
    as undecided; ``decided_query`` (which reads every decision of the traces it is given)
    then finds it decided, so nothing is decided twice."""
    cte, params = _versions_cte(versions)
    recent = "" if decided_since is None else "AND d.created_at >= ?"
    sql = f"""
WITH agg AS (
    SELECT s.trace_id,
           {ARRIVAL_COLUMNS}
    FROM spans s
    WHERE s.received_at >= ?
    GROUP BY s.trace_id
), {cte}
SELECT a.trace_id, a.first_received, a.last_received, a.has_root
FROM agg a
WHERE EXISTS (
    SELECT 1 FROM versions v
    WHERE a.first_received >= v.horizon
      AND NOT EXISTS (
          SELECT 1 FROM scoring_decisions d
          WHERE d.trace_id = a.trace_id AND d.scorer_id = v.scorer_id
            AND d.scorer_version = v.scorer_version {recent}))
"""
    return sql, [since, *params, *([] if decided_since is None else [decided_since])]


def internal_query(trace_ids: Sequence[str], since: datetime) -> tuple[str, list[Any]]:
    """The traces among ``trace_ids`` with a span received since ``since`` that carries the
    ``tracescore.internal`` marker.

    Asked once per trace, when it is about to be decided (``classify``), rather than by every
    scan: a scan re-reads its margin of recent spans each tick, and the marker is the one part
    of it that reads JSON."""
    return (
        f"SELECT DISTINCT s.trace_id FROM spans s WHERE s.received_at >= ? "
        f"AND s.trace_id IN (SELECT unnest(?::VARCHAR[])) AND {IS_INTERNAL}",
        [since, list(trace_ids)],
    )


def decided_query(trace_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The (trace, scorer id, version) combinations with any decision, for these traces."""
    return (
        "SELECT DISTINCT trace_id, scorer_id, scorer_version FROM scoring_decisions "
        "WHERE trace_id IN (SELECT unnest(?::VARCHAR[]))",
        [list(trace_ids)],
    )


def due_query(
    versions: Sequence[tuple[str, str]], *, now: datetime, limit: int
) -> tuple[str, list[Any]]:
    """Open decisions of these (scorer id, version) pairs that may run now, oldest first."""
    values = ", ".join("(?, ?)" for _ in versions)
    params: list[Any] = [x for pair in versions for x in pair]
    sql = f"""
WITH versions(scorer_id, scorer_version) AS (VALUES {values})
SELECT d.trace_id, d.span_id, d.scorer_id, d.scorer_version, d.decision, d.attempts,
       d.created_at, d.next_attempt_at, d.session_id, d.score_id
FROM scoring_decisions d
JOIN versions v ON d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
WHERE d.decision IN ('pending', 'retrying', 'over_budget')
  AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= ?)
ORDER BY coalesce(d.next_attempt_at, d.created_at), d.created_at
LIMIT ?
"""
    return sql, [*params, now, limit]


def open_stats_query(versions: Sequence[tuple[str, str]]) -> tuple[str, list[Any]]:
    """Traces with open decisions, and the oldest such decision (for the lag gauge)."""
    values = ", ".join("(?, ?)" for _ in versions)
    params: list[Any] = [x for pair in versions for x in pair]
    sql = f"""
WITH versions(scorer_id, scorer_version) AS (VALUES {values})
SELECT count(DISTINCT d.trace_id) AS traces, min(d.created_at) AS oldest
FROM scoring_decisions d
JOIN versions v ON d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
WHERE d.decision IN ('pending', 'retrying', 'over_budget')
"""
    return sql, params


def filter_query(predicate: str, trace_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The traces among ``trace_ids`` that match a scorer's filter (over the maintained
    ``traces`` table, one row per trace)."""
    return (
        f"SELECT trace_id FROM traces WHERE list_contains(?::VARCHAR[], trace_id) "
        f"AND ({predicate})",
        [list(trace_ids)],
    )


_TRACE_ID = re.compile(r"^[0-9a-f]{1,64}$")


def shared_filter_query(predicate: str, trace_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """``filter_query`` over a cluster's ``traces`` (PostgreSQL's, every node's spans folded):
    the ids are written into the statement as a list of literals (hex digits only), which the
    PostgreSQL scanner hands to PostgreSQL as an ``IN`` filter on the table's key; a list
    parameter would make DuckDB read the whole table first."""
    ids = [t for t in trace_ids if _TRACE_ID.match(t)] or [""]
    listed = ", ".join(f"'{t}'" for t in ids)
    return f"SELECT trace_id FROM traces WHERE trace_id IN ({listed}) AND ({predicate})", []


def filter_check_query(predicate: str) -> str:
    """A query that fails when the filter is not a valid predicate over ``traces``."""
    return f"SELECT trace_id FROM traces WHERE ({predicate}) LIMIT 0"


VERSION_STARTS_SQL = """
SELECT scorer_id, scorer_version, min(created_at) AS first_decided
FROM scoring_decisions GROUP BY scorer_id, scorer_version
"""


@dataclass(slots=True)
class OpenTrace:
    """A trace seen but not yet decided for every scorer version."""

    trace_id: str
    first_received: datetime
    last_received: datetime
    has_root: bool
    internal: bool | None
    """Whether a span carries the ``tracescore.internal`` marker; None until checked (a scan
    does not check: ``internal_query``)."""

    @classmethod
    def of(cls, row: dict[str, Any]) -> OpenTrace:
        """From a row with the ``READINESS_COLUMNS`` (or a scan row, without ``internal``)."""
        internal = row.get("internal")
        return cls(row["trace_id"], row["first_received"], row["last_received"],
                   bool(row["has_root"]), None if internal is None else bool(internal))

    def ready_at(self, *, settle: timedelta, max_wait: timedelta) -> datetime:
        """When the trace is (or will be) ready to score."""
        by_wait = self.first_received + max_wait
        if self.has_root:
            return min(self.last_received + settle, by_wait)
        return by_wait


class OpenTraces:
    """The in-memory set of traces still to decide, fed by ``scan`` reads."""

    def __init__(self, *, settle_s: float, max_wait_s: float) -> None:
        self.settle = timedelta(seconds=settle_s)
        self.max_wait = timedelta(seconds=max_wait_s)
        self._traces: dict[str, OpenTrace] = {}

    def __len__(self) -> int:
        return len(self._traces)

    def clear(self) -> None:
        """Forget every trace (before a full rescan)."""
        self._traces.clear()

    def merge(self, rows: Iterable[dict[str, Any]]) -> None:
        """Add or widen traces from ``scan`` rows."""
        for row in rows:
            trace_id = row["trace_id"]
            seen = self._traces.get(trace_id)
            if seen is None:
                self._traces[trace_id] = OpenTrace.of(row)
                continue
            seen.first_received = min(seen.first_received, row["first_received"])
            seen.last_received = max(seen.last_received, row["last_received"])
            seen.has_root = seen.has_root or bool(row["has_root"])
            if row.get("internal"):
                seen.internal = True

    def ready(self, now: datetime) -> list[OpenTrace]:
        """The traces ready at ``now``, the longest-ready first."""
        items = [(t.ready_at(settle=self.settle, max_wait=self.max_wait), t)
                 for t in self._traces.values()]
        return [t for at, t in sorted(items, key=lambda p: p[0]) if at <= now]

    def drop(self, trace_ids: Iterable[str]) -> None:
        """Forget traces decided for every version."""
        for trace_id in trace_ids:
            self._traces.pop(trace_id, None)

    def get(self, trace_id: str) -> OpenTrace | None:
        """The open trace with this id, if any."""
        return self._traces.get(trace_id)


Versions = frozenset[tuple[str, str]]
"""A set of (scorer id, version)."""


class DecidedHere:
    """The traces this node's expansions decided for every version of a set (the most recent
    ``limit``): on a shared queue a scan's re-read of its margin finds them again each tick,
    and need not ask the queue about them. A different set of versions forgets them all."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self._versions: Versions = frozenset()
        self._ids: dict[str, None] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def note(self, trace_ids: Iterable[str], versions: Versions) -> None:
        """``trace_ids`` were decided for every version of ``versions`` (an expansion)."""
        if versions != self._versions:
            self._ids.clear()
            self._versions = versions
        for trace_id in trace_ids:
            self._ids.pop(trace_id, None)
            self._ids[trace_id] = None  # the newest last
        while len(self._ids) > self.limit:
            del self._ids[next(iter(self._ids))]

    def holds(self, trace_id: str, versions: Versions) -> bool:
        """True when this node decided ``trace_id`` for every version of ``versions``."""
        return versions == self._versions and trace_id in self._ids
