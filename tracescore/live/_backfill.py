"""Backfill and the per-scorer summary: scoring traces from the past, and what each scorer did.

``backfill`` scores the settled traces of a time range that a scorer's current version has not
decided, through the same path as live scoring (filter, sampling, targets, budget, retries,
write-back) with ``source = 'backfill'``; ``dry_run`` only counts the pairs and estimates the
judge tokens and cost from the scorer's history. ``scorer_summary`` counts decisions, the average
score and the judge spend of each registered scorer's current version.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ._errors import ConfigError
from ._expand import Expansion, expand
from ._registry import RegisteredScorer
from ._selection import READINESS_COLUMNS, OpenTrace
from ._sessions import is_session_scorer, session_decisions
from ._worker import WorkItem

if TYPE_CHECKING:
    from ._scheduler import LiveScheduler

CANDIDATES_SQL = f"""
WITH agg AS (
    SELECT s.trace_id, min(s.start_time) AS started,
           {READINESS_COLUMNS}
    FROM spans s
    GROUP BY s.trace_id
)
SELECT a.* FROM agg a
WHERE a.started >= ? AND a.started < ?
  AND NOT EXISTS (SELECT 1 FROM scoring_decisions d
                  WHERE d.trace_id = a.trace_id AND d.scorer_id = ? AND d.scorer_version = ?)
ORDER BY a.started, a.trace_id
LIMIT ?
"""

HISTORY_SQL = """
SELECT scorer_version = ? AS current, count(*) AS runs,
       avg(coalesce(judge_input_tokens, 0)) AS input_tokens,
       avg(coalesce(judge_output_tokens, 0)) AS output_tokens,
       avg(coalesce(judge_total_tokens, 0)) AS total_tokens,
       avg(coalesce(judge_cost, 0)) AS cost
FROM scores WHERE scorer_id = ?
GROUP BY ALL ORDER BY current DESC
"""

SAMPLE_FOR_TARGETS = 20
# naive UTC, like the TIMESTAMP columns; TIMESTAMP_NS ends in 2262
FAR_PAST = datetime(1970, 1, 1, tzinfo=UTC).replace(tzinfo=None)
FAR_FUTURE = datetime(2200, 1, 1, tzinfo=UTC).replace(tzinfo=None)


def _scorer(live: LiveScheduler, scorer_id: str) -> RegisteredScorer:
    reg = live.registry.get(scorer_id)
    if reg is None or reg.scorer is None:
        known = ", ".join(r.id for r in live.registry.enabled()) or "none"
        why = "is disabled" if reg is not None else "is not registered"
        raise ConfigError(f"scorer {scorer_id!r} {why}; the enabled scorers are: {known}")
    return reg


async def backfill(
    live: LiveScheduler,
    scorer_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Score (or, with ``dry_run``, count and estimate) a scorer's undecided past pairs.

    ``since``/``until`` bound the traces' start time (naive UTC); ``limit`` caps the traces.
    Returns a JSON-ready report.
    """
    reg = _scorer(live, scorer_id)
    now = live.now()
    if is_session_scorer(reg):
        return await _backfill_sessions(live, reg, since=since, limit=limit, dry_run=dry_run)
    rows = await live.read(CANDIDATES_SQL, [since or FAR_PAST, until or FAR_FUTURE, reg.id,
                                            reg.version, limit if limit is not None else 2**62])
    traces = [OpenTrace.of(r) for r in rows]
    settle, wait = live._open.settle, live._open.max_wait
    ready = [t for t in traces if t.ready_at(settle=settle, max_wait=wait) <= now]
    report: dict[str, Any] = {
        "scorer": reg.id, "version": reg.version, "dry_run": dry_run,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
        "traces": len(ready), "not_settled": len(traces) - len(ready),
    }
    if dry_run:
        out = await live.classify(ready, [reg], now=now, horizons={})
        report.update(_trace_level_counts(out))
        pairs = await _estimate_pairs(live, reg, out, now)
        report["pairs"] = pairs
        report.update(await _estimate_spend(live, reg, pairs))
        return report
    decisions: dict[str, int] = {}
    batch = live.settings.batch_size
    for start in range(0, len(ready), batch):
        out = await live.expand(ready[start:start + batch], [reg], now=live.now(), horizons={},
                                source="backfill")
        for decision, count in _trace_level_counts(out).items():
            decisions[decision] = decisions.get(decision, 0) + count
        for pair in out.finished:  # inline pairs, scored in the expansion
            if pair.decision != "pending":
                decisions[pair.decision] = decisions.get(pair.decision, 0) + 1
        tasks = [live.submit(WorkItem(key), reg, source="backfill")
                 for key, _ in out.pending if not live.is_inflight(key)]
        for result in await asyncio.gather(*tasks):
            name = result or "pending"
            decisions[name] = decisions.get(name, 0) + 1
    report["pairs"] = sum(v for k, v in decisions.items()
                          if k not in ("sampled_out", "filtered_out"))
    report["decisions"] = decisions
    return report


async def _backfill_sessions(live: LiveScheduler, reg: RegisteredScorer, *,
                             since: datetime | None, limit: int | None,
                             dry_run: bool) -> dict[str, Any]:
    """Backfill of a session scorer: every quiet session state it has not decided."""
    now = live.now()
    rows, pending, _ = await session_decisions(
        live, reg, now=now, since=since or FAR_PAST,
        limit=limit if limit is not None else 2**62)
    report: dict[str, Any] = {
        "scorer": reg.id, "version": reg.version, "dry_run": dry_run,
        "since": since.isoformat() if since else None, "until": None,
        "sessions": len(rows), "pairs": len(pending),
    }
    if dry_run:
        report.update(await _estimate_spend(live, reg, len(pending)))
        return report
    if rows:
        await live.write([], [], rows)
    decisions: dict[str, int] = {}
    for row in rows:
        if row["decision"] != "pending":
            decisions[row["decision"]] = decisions.get(row["decision"], 0) + 1
    tasks = [live.submit(WorkItem(key), reg, source="backfill")
             for key in pending if not live.is_inflight(key)]
    for result in await asyncio.gather(*tasks):
        name = result or "pending"
        decisions[name] = decisions.get(name, 0) + 1
    report["decisions"] = decisions
    return report


def _trace_level_counts(out: Expansion) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in out.decisions:
        if row["decision"] != "pending":
            counts[row["decision"]] = counts.get(row["decision"], 0) + 1
    return counts


async def _estimate_pairs(live: LiveScheduler, reg: RegisteredScorer, out: Expansion,
                          now: datetime) -> int:
    if reg.target == "trace" or not out.to_load:
        return len(out.to_load)
    sample = list(out.to_load)[:SAMPLE_FOR_TARGETS]
    probe = Expansion(to_load={t: out.to_load[t] for t in sample})
    for trace_id in sample:
        await asyncio.to_thread(expand, probe, trace_id, live._load, now=now)
    per_trace = len(probe.pending) / len(sample)
    return round(per_trace * len(out.to_load))


async def _estimate_spend(live: LiveScheduler, reg: RegisteredScorer,
                          pairs: int) -> dict[str, Any]:
    if not reg.uses_judge:
        return {"estimated_judge_tokens": 0, "estimated_judge_cost_usd": 0.0,
                "estimate_basis": "a code scorer: no judge calls"}
    history = await live.read(HISTORY_SQL, [reg.version, reg.id])
    if not history:
        return {"estimated_judge_tokens": None, "estimated_judge_cost_usd": None,
                "estimate_basis": "no earlier runs of this scorer to estimate from"}
    row = history[0]
    which = "this version" if row["current"] else "earlier versions"
    return {
        "estimated_judge_tokens": round(float(row["total_tokens"]) * pairs),
        "estimated_judge_cost_usd": round(float(row["cost"]) * pairs, 6),
        "estimate_basis": f"average of {row['runs']} runs of {which}",
    }


SUMMARY_DECISIONS_SQL = """
WITH v(scorer_id, scorer_version) AS (VALUES {values})
SELECT d.scorer_id, d.decision, count(*) AS n
FROM scoring_decisions d JOIN v USING (scorer_id, scorer_version)
GROUP BY ALL
"""
SUMMARY_SCORES_SQL = """
WITH v(scorer_id, scorer_version) AS (VALUES {values})
SELECT s.scorer_id, avg(s.score) FILTER (WHERE s.status = 'success') AS avg_score,
       count(*) FILTER (WHERE s.status = 'success') AS scores
FROM scores s JOIN v USING (scorer_id, scorer_version)
GROUP BY ALL
"""
SUMMARY_SPEND_SQL = """
WITH v(scorer_id, scorer_version) AS (VALUES {values}),
d AS (SELECT score_id, scorer_id, scorer_version FROM scoring_decisions
      UNION ALL
      SELECT score_id, scorer_id, scorer_version FROM scoring_decision_history)
SELECT d.scorer_id, sum(coalesce(e.input_tokens, 0)) AS input_tokens,
       sum(coalesce(e.output_tokens, 0)) AS output_tokens, sum(e.cost_amount) AS cost,
       count(*) FILTER (WHERE e.cached) AS cache_hits, sum(e.saved_cost) AS saved,
       count(*) FILTER (WHERE e.cost_source = 'unpriced') AS unpriced
FROM judge_executions e
JOIN d ON e.score_id = d.score_id
JOIN v ON d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
GROUP BY ALL
"""
COUNTED = ("scored", "failed", "not_scorable", "pending", "sampled_out", "filtered_out",
           "over_budget")


def scorer_summary(read: Any, scorers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add counts, average score and judge spend (current version) to each scorer's status.

    ``read(sql, params)`` runs a store read; ``scorers`` are dicts with ``id`` and ``version``
    (``LiveScheduler.status()`` rows). Pending counts retrying pairs too. Judge spend counts the
    executions of decisions a rescore replaced too; ``judge_unpriced`` counts executions with
    no known price (their cost is not in ``judge_cost_usd``), ``judge_cache_hits`` answers
    from the judge-call cache and ``judge_saved_usd`` what those would have cost.
    """
    if not scorers:
        return []
    values = ", ".join("(?, ?)" for _ in scorers)
    params = [x for s in scorers for x in (s["id"], s["version"])]
    counts: dict[str, dict[str, int]] = {s["id"]: dict.fromkeys(COUNTED, 0) for s in scorers}
    for row in read(SUMMARY_DECISIONS_SQL.format(values=values), params):
        name = "pending" if row["decision"] == "retrying" else row["decision"]
        if name in counts[row["scorer_id"]]:
            counts[row["scorer_id"]][name] += int(row["n"])
    scores = {r["scorer_id"]: r for r in read(SUMMARY_SCORES_SQL.format(values=values), params)}
    spend = {r["scorer_id"]: r for r in read(SUMMARY_SPEND_SQL.format(values=values), params)}
    out = []
    for item in scorers:
        s, j = scores.get(item["id"], {}), spend.get(item["id"], {})
        out.append({
            **item, **counts[item["id"]],
            "avg_score": s.get("avg_score"),
            "judge_input_tokens": int(j.get("input_tokens") or 0),
            "judge_output_tokens": int(j.get("output_tokens") or 0),
            "judge_cost_usd": j.get("cost"),
            "judge_unpriced": int(j.get("unpriced") or 0),
            "judge_cache_hits": int(j.get("cache_hits") or 0),
            "judge_saved_usd": j.get("saved"),
        })
    return out
