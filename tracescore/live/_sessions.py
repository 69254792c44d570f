"""Session selection: which conversations a ``target = "session"`` scorer scores, and when.

A session is quiet when no trace of it arrived for ``[live] session_settle_seconds`` and every
one of its traces has its totals computed (so its session id is known). Each quiet state of a
conversation is one decision: the key is (session, scorer, version, turn count), stored in
``scoring_decisions`` as ``trace_id`` = the session's last trace, ``span_id`` =
``session:<turn_count>`` and ``session_id``. A conversation that goes on after being scored has
a new turn count, so it is decided (and scored) again when it next goes quiet; the same state is
never decided twice, across restarts too, because the decision row is the durable record.

Sampling hashes the session id (a sampled conversation is scored at every state, an unsampled
one never); a filter is a predicate over the ``traces`` table that some trace of the session
must match. Pending session decisions then run through the same dispatch, retries, budgets and
write-back as trace pairs (``_worker.py`` builds their input with ``load_session``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._registry import RegisteredScorer
from ._rows import PairKey, decision_row
from ._sampling import is_sampled

if TYPE_CHECKING:
    from tracescore.traces import Session

SESSION_TARGET = "session"
"""``[[scorers]] target`` of a scorer that scores whole conversations."""

SESSION_SPAN_PREFIX = "session:"
"""``scoring_decisions.span_id`` of a session decision: this prefix and the turn count."""

RECENT_SQL = """
SELECT DISTINCT session_id FROM traces
WHERE session_id IS NOT NULL AND last_received_at >= ? AND last_received_at <= ?
"""
"""Sessions with a trace that arrived in a time range (the candidates of one tick)."""

SCAN_MARGIN = timedelta(minutes=5)
"""Each tick re-reads this much before the previous one's end: a trace's session id is known
only once the totals maintainer computed it, which may lag behind under a backlog."""

QUIET_SQL = """
SELECT s.session_id, s.last_trace_id, s.turn_count, s.project, s.last_received_at
FROM sessions s
WHERE s.last_received_at <= ? AND s.last_received_at >= ? {candidates}
  AND NOT EXISTS (
      SELECT 1 FROM traces t
      WHERE t.session_id = s.session_id
        AND (t.totals_received_at IS NULL OR t.last_received_at > t.totals_received_at))
  AND NOT EXISTS (
      SELECT 1 FROM scoring_decisions d
      WHERE d.session_id = s.session_id AND d.scorer_id = ? AND d.scorer_version = ?
        AND d.span_id = ? || s.turn_count::VARCHAR)
ORDER BY s.last_received_at, s.session_id
LIMIT ?
"""


def is_session_scorer(reg: RegisteredScorer) -> bool:
    """True for a scorer whose target is a whole conversation."""
    return reg.target == SESSION_TARGET


def session_key(row: dict[str, Any], reg: RegisteredScorer) -> PairKey:
    """The decision key of a session's current state for one scorer version."""
    return PairKey(str(row["last_trace_id"]), f"{SESSION_SPAN_PREFIX}{int(row['turn_count'])}",
                   reg.id, reg.version, session_id=str(row["session_id"]))


def is_session_key(key: PairKey) -> bool:
    """True for the key of a session decision."""
    return key.session_id is not None and key.span_id.startswith(SESSION_SPAN_PREFIX)


def quiet_query(reg: RegisteredScorer, *, now: datetime, settle_s: float, since: datetime,
                limit: int, candidates: Sequence[str] | None = None) -> tuple[str, list[Any]]:
    """Quiet sessions (no trace for ``settle_s``, last arrival after ``since``; among
    ``candidates`` when given, which lets DuckDB read only their traces below the view's
    GROUP BY) whose current state this scorer version has not decided, longest quiet first."""
    params: list[Any] = [now - timedelta(seconds=settle_s), since]
    where = ""
    if candidates is not None:
        where = "AND list_contains(?::VARCHAR[], s.session_id)"
        params.append(list(candidates))
    return QUIET_SQL.format(candidates=where), [*params, reg.id, reg.version,
                                                SESSION_SPAN_PREFIX, limit]


def filter_sessions_query(predicate: str, session_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The sessions among ``session_ids`` with a trace matching a scorer's filter."""
    return (
        f"SELECT DISTINCT session_id FROM traces WHERE list_contains(?::VARCHAR[], session_id) "
        f"AND ({predicate})",
        [list(session_ids)],
    )


async def session_decisions(live: Any, reg: RegisteredScorer, *, now: datetime,
                            since: datetime, limit: int,
                            candidates: Sequence[str] | None = None,
                            ) -> tuple[list[dict[str, Any]], list[PairKey], bool]:
    """The decisions (pending, sampled out, filtered out) for up to ``limit`` quiet, undecided
    session states of one scorer version whose last trace arrived after ``since``; the pending
    keys; and whether more are waiting. Nothing is written."""
    rows = await live.read(*quiet_query(reg, now=now, settle_s=live.settings.session_settle_seconds,
                                        since=since, limit=limit + 1, candidates=candidates))
    more = len(rows) > limit
    rows = rows[:limit]
    matching: set[str] | None = None
    if reg.filter is not None and rows:
        found = await live.read(*filter_sessions_query(
            reg.filter, [r["session_id"] for r in rows]))
        matching = {r["session_id"] for r in found}
    decisions: list[dict[str, Any]] = []
    pending: list[PairKey] = []
    for row in rows:
        key = session_key(row, reg)
        if matching is not None and row["session_id"] not in matching:
            decisions.append(decision_row(key, "filtered_out", now=now,
                                          last_error=f"filter: {reg.filter}"))
        elif not is_sampled(str(row["session_id"]), reg.sample_rate):
            decisions.append(decision_row(key, "sampled_out", now=now,
                                          last_error=f"sample_rate {reg.sample_rate:g}"))
        else:
            decisions.append(decision_row(key, "pending", now=now, score_id=key.score_id))
            pending.append(key)
    return decisions, pending, more


class SessionSelector:
    """The scheduler's session selection: each tick looks only at sessions with a trace that
    arrived since the previous tick's window (less ``SCAN_MARGIN``); the first tick of a
    scorer version looks back to its horizon."""

    def __init__(self) -> None:
        self._marks: dict[tuple[str, str], datetime] = {}

    async def decide(self, live: Any, scorers: Sequence[RegisteredScorer], *, now: datetime,
                     limit: int) -> bool:
        """Write a decision for each quiet, undecided session state of each session scorer
        (the tick dispatches the pending ones); True when a scorer had more than ``limit``."""
        more = False
        decisions: list[dict[str, Any]] = []
        settled_before = now - timedelta(seconds=live.settings.session_settle_seconds)
        for reg in scorers:
            horizon = live.horizon(reg, now)
            mark = self._marks.get((reg.id, reg.version))
            since = max(horizon, mark - SCAN_MARGIN) if mark is not None else horizon
            found = await live.read(RECENT_SQL, [since, settled_before])
            candidates = [row["session_id"] for row in found]
            left = False
            if candidates:
                rows, _, left = await session_decisions(live, reg, now=now, since=horizon,
                                                        limit=limit, candidates=candidates)
                decisions += rows
            if not left:
                self._marks[(reg.id, reg.version)] = settled_before
            more = more or left
        if decisions:
            await live.write([], [], decisions)
            for row in decisions:
                live.stats.decisions_total[(row["scorer_id"], row["decision"])] += 1
        return more


def load_scored_session(store: Any, key: PairKey) -> Session:
    """The conversation of a session decision as it was when decided: its turns up to and
    including the decision's last trace (turns that arrived later are the next state's)."""
    from tracescore.traces import Session, load_session

    assert key.session_id is not None
    session = load_session(store, key.session_id)
    ids = [turn.trace_id for turn in session.turns]
    if key.trace_id in ids:
        return Session(session.session_id, session.turns[: ids.index(key.trace_id) + 1],
                       project=session.project)
    return session


__all__ = [
    "SESSION_SPAN_PREFIX",
    "SESSION_TARGET",
    "SessionSelector",
    "is_session_key",
    "is_session_scorer",
    "load_scored_session",
    "quiet_query",
    "session_decisions",
    "session_key",
]
