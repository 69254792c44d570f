"""Rescore: a new attempt for failed or chosen pairs, through the live scorer's exactly-once path.

After a judge is fixed (a key, a model, a provider outage), its failed pairs would stay failed:
the decision of a (trace, span, scorer, version) is final. ``rescore(live, scorer_id,
failed=..., since=..., trace_ids=...)`` picks the current version's decided pairs (``scored``,
``not_scorable`` or ``failed``; with ``failed`` only those; ``since``: decided at or after that
time; ``trace_ids``: of those traces) and, in one transaction:

- copies each picked decision into ``scoring_decision_history`` as it was (``archived_by =
  'rescore'``); the old ``scores`` row and its ``judge_executions`` stay where they are, linked
  by the old score id;
- turns each pair's decision back into ``pending`` with a new score id (``rescore_id`` of the
  old one) and its attempts reset. A whole-trace decision (``span_id = ''``: the trace could
  not be loaded) is removed instead, and the trace expanded again.

The pending rows are the durable queue the live scorer already keeps: the pairs are scored here
(``source = 'rescore'``) and, should the process die first (even ``kill -9``), by the live
scorer after the restart (``source = 'live'``), each exactly once, its final ``scores`` row under
the new score id. ``dry_run`` counts the pairs and estimates the judge spend instead. Sampled-out
and filtered-out pairs are not picked: sampling and filters are deterministic, so they would be
decided the same way again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._backfill import _estimate_spend, _scorer
from ._errors import ConfigError
from ._rows import PairKey, decision_row, rescore_id
from ._selection import READINESS_COLUMNS, OpenTrace
from ._worker import WorkItem

if TYPE_CHECKING:
    from ._scheduler import LiveScheduler

RESCORABLE = ("scored", "not_scorable", "failed")
"""Decisions a rescore picks (the others are open, or deterministic and decided the same)."""

_COLUMNS = ("trace_id, span_id, scorer_id, scorer_version, decision, attempts, last_error, "
            "next_attempt_at, score_id, created_at, updated_at, session_id")


def select_query(scorer_id: str, version: str, *, failed: bool, since: datetime | None,
                 trace_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The decided pairs of a scorer version a rescore picks."""
    where = ["scorer_id = ?", "scorer_version = ?",
             f"decision IN ({', '.join(repr(d) for d in RESCORABLE)})"]
    params: list[Any] = [scorer_id, version]
    if failed:
        where.append("decision = 'failed'")
    if since is not None:
        where.append("updated_at >= ?")
        params.append(since)
    if trace_ids:
        where.append("trace_id IN (SELECT unnest(?::VARCHAR[]))")
        params.append([t.lower() for t in trace_ids])
    return (f"SELECT {_COLUMNS} FROM scoring_decisions WHERE {' AND '.join(where)} "
            "ORDER BY updated_at, trace_id, span_id", params)


def archive_writer(rows: Sequence[dict[str, Any]], *, now: datetime,
                   reason: str) -> Callable[[Any], None]:
    """The transaction of a rescore: history rows, then pending rows (or, for whole-trace
    decisions, none)."""
    from tracescore.store import insert_arrow, rows_table

    history = rows_table("scoring_decision_history",
                         [{**row, "archived_at": now, "archived_by": "rescore"} for row in rows])
    pending = []
    removed = []
    for row in rows:
        key = _key(row)
        if row["span_id"] == "":
            removed.append([row["trace_id"], row["scorer_id"], row["scorer_version"]])
            continue
        new_id = rescore_id(row["score_id"] or key.score_id)
        pending.append(decision_row(key, "pending", now=now, score_id=new_id,
                                    created_at=row["created_at"], last_error=reason))
    table = rows_table("scoring_decisions", pending) if pending else None

    def write(conn: Any) -> None:
        insert_arrow(conn, "scoring_decision_history", history)
        if table is not None:
            insert_arrow(conn, "scoring_decisions", table, "INSERT OR REPLACE")
        for trace_id, scorer_id, version in removed:
            conn.execute("DELETE FROM scoring_decisions WHERE trace_id = ? AND span_id = '' "
                         "AND scorer_id = ? AND scorer_version = ?",
                         [trace_id, scorer_id, version])

    return write


def _key(row: dict[str, Any], score_id: str | None = None) -> PairKey:
    return PairKey(row["trace_id"], row["span_id"], row["scorer_id"], row["scorer_version"],
                   session_id=row["session_id"], rescored_as=score_id)


WHOLE_TRACES_SQL = f"""
SELECT s.trace_id, {READINESS_COLUMNS}
FROM spans s WHERE s.trace_id IN (SELECT unnest(?::VARCHAR[]))
GROUP BY s.trace_id
"""


async def rescore(
    live: LiveScheduler,
    scorer_id: str,
    *,
    failed: bool = False,
    since: datetime | None = None,
    trace_ids: Sequence[str] = (),
    dry_run: bool = False,
) -> dict[str, Any]:
    """Give a scorer's failed or chosen pairs a new attempt (see the module docstring); returns
    a JSON-ready report. At least one of ``failed``, ``since`` and ``trace_ids`` must be given."""
    if not (failed or since is not None or trace_ids):
        raise ConfigError("say which pairs to rescore: failed, since or trace ids (rescoring "
                          "every pair of a scorer is a new version's work: change its config)")
    if live.coordination.shared and not dry_run:
        raise ConfigError("rescore does not run in cluster mode yet (its archive and new "
                          "pending rows are written to one node's file); count the pairs with "
                          "dry_run, or rescore on a single node")
    reg = _scorer(live, scorer_id)
    rows = await live.read(*select_query(reg.id, reg.version, failed=failed, since=since,
                                         trace_ids=trace_ids))
    picked: dict[str, int] = {}
    for row in rows:
        picked[row["decision"]] = picked.get(row["decision"], 0) + 1
    report: dict[str, Any] = {
        "scorer": reg.id, "version": reg.version, "dry_run": dry_run,
        "since": since.isoformat() if since else None, "trace_ids": list(trace_ids),
        "failed_only": failed, "pairs": len(rows), "picked": picked,
    }
    if dry_run:
        report.update(await _estimate_spend(live, reg, len(rows)))
        return report
    if not rows:
        report["decisions"] = {}
        return report
    now = live.now()
    reason = f"rescore requested at {now:%Y-%m-%d %H:%M:%S}Z"
    await live.store.write(archive_writer(rows, now=now, reason=reason))
    tasks = [live.submit(WorkItem(_key(row, rescore_id(row["score_id"] or _key(row).score_id)),
                                  created_at=row["created_at"]), reg, source="rescore")
             for row in rows if row["span_id"] != "" and not live.is_inflight(_key(row))]
    decisions: dict[str, int] = {}
    whole = sorted({row["trace_id"] for row in rows if row["span_id"] == ""})
    if whole:
        traces = [OpenTrace.of(r) for r in await live.read(WHOLE_TRACES_SQL, [whole])]
        out = await live.expand(traces, [reg], now=live.now(), horizons={}, source="rescore")
        for row in out.decisions:
            if row["decision"] != "pending":
                decisions[row["decision"]] = decisions.get(row["decision"], 0) + 1
        for pair in out.finished:
            if pair.decision != "pending":
                decisions[pair.decision] = decisions.get(pair.decision, 0) + 1
        tasks += [live.submit(WorkItem(key), reg, source="rescore")
                  for key, _ in out.pending if not live.is_inflight(key)]
    for result in await asyncio.gather(*tasks):
        name = result or "pending"
        decisions[name] = decisions.get(name, 0) + 1
    report["decisions"] = decisions
    return report


__all__ = ["RESCORABLE", "archive_writer", "rescore", "select_query"]
