"""Canary runs and judge drift.

A canary set is a dataset whose items people labelled (``target_type = 'item'``). ``run_canary``
re-scores its items with the judge's current version, within a spend cap, writes each run as a
``scores`` row (``source = 'canary'``, the item in ``metadata``) with its judge executions, and
one ``canary_runs`` row: κ on the canary with its interval, the models the provider reported,
and ``drift`` when κ left the interval of the version's first canary run (its baseline) or the
reported models differ from the previous run's.

``model_changes`` watches every judge execution instead: when a (scorer, requested model)
starts being answered by a model the provider reports differently than before, that is drift
too. Each drift becomes a ``monitor_events`` row of ``kind = 'judge_drift'`` (``drift_event``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ._agreement import agreement_row, consensus
from ._config import CanaryEntry
from ._labels import utc_now
from ._models import LabelSchema, json_value

CANARY_ITEMS_SQL = """
SELECT i.item_id, i.input, i.ground_truth, i.metadata, i.request_context,
       l."values" AS label_values
FROM dataset_items i
JOIN datasets d ON d.dataset_id = i.dataset_id
JOIN (SELECT item_id, list(v) AS "values" FROM (
          SELECT item_id, annotator, arg_max(numeric_value, (created_at, label_id)) AS v
          FROM labels WHERE target_type = 'item' AND schema_name = ? GROUP BY ALL)
      GROUP BY item_id) l
  ON l.item_id = i.item_id
WHERE d.name = ? AND i.version_removed IS NULL
ORDER BY i.item_id LIMIT ?
"""
BASELINE_SQL = """
SELECT kappa, kappa_low, kappa_high FROM canary_runs
WHERE scorer_id = ? AND scorer_version = ? AND dataset = ? ORDER BY created_at LIMIT 1
"""
LAST_RUN_SQL = "SELECT max(created_at) AS at FROM canary_runs WHERE scorer_id = ?"


def drift_event(scorer_id: str, reason: str, *, now: datetime, value: float | None = None,
                threshold: float | None = None, samples: int | None = None,
                detail: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``monitor_events`` row of ``kind = 'judge_drift'`` for one scorer."""
    return {"event_id": str(uuid.uuid4()), "monitor_id": f"judge-drift:{scorer_id}",
            "scorer_id": scorer_id, "state": "drift", "value": value, "threshold": threshold,
            "window_start": None, "window_end": now, "samples": samples, "notified_at": None,
            "error": None, "created_at": now, "kind": "judge_drift",
            "detail": {"reason": reason, **(detail or {})}}


def drift_text(event: Mapping[str, Any]) -> str:
    """The one-line summary of a drift event (the log line and the webhook's ``text``)."""
    return f"tracescore judge drift on {event['scorer_id']}: {event['detail']['reason']}"


@dataclass
class CanaryOutcome:
    """One canary run: its ``canary_runs`` row and the drift events it raised."""

    run: dict[str, Any]
    events: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    executions: list[dict[str, Any]]


def _score_row(result: Any, error: BaseException | None, *, item_id: str, dataset: str,
               run_id: str, scorer: Any, version: str, inputs: tuple[Any, Any, Any],
               now: datetime) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from tracescore.scoring import execution_rows, step_columns

    score_id = str(uuid.uuid4())
    status = "failed" if error is not None else "not_scorable" if result.score is None \
        else "success"
    usage = result.judge_usage() if result is not None else None
    row = {
        "score_id": score_id, "scorer_id": scorer.id, "scorer_name": scorer.name,
        "scorer_version": version, "source": "canary", "status": status,
        "score": result.score if result is not None else None,
        "reason": result.reason if result is not None else None,
        "run_id": result.run_id if result is not None else None, "created_at": now,
        **step_columns(result, to_json=lambda v: v),
        "input": inputs[0], "output": inputs[1], "ground_truth": inputs[2],
        "error": {"name": type(error).__name__, "message": str(error)[:2000]} if error else None,
        "metadata": {"item_id": item_id, "dataset": dataset, "canary_run_id": run_id},
        "judge_input_tokens": usage.input_tokens if usage else None,
        "judge_output_tokens": usage.output_tokens if usage else None,
        "judge_total_tokens": usage.total_tokens if usage else None,
        "judge_cost": result.judge_cost() if result is not None else None,
    }
    executions = execution_rows(result, score_id=score_id, trace_id=None, scorer_id=scorer.id,
                                now=now, to_json=lambda v: v)
    return row, executions


async def run_canary(read: Any, scorer: Any, *, entry: CanaryEntry, version: str,
                     schema: LabelSchema, resamples: int = 1000, seed: int = 0,
                     now: datetime | None = None, concurrency: int = 4
                     ) -> CanaryOutcome | None:
    """Score the canary items (stopping once ``max_cost_usd`` is spent) and compare; None
    when the dataset has no item labelled with the schema yet.

    ``read(sql, params)`` runs store reads; nothing is written here (the caller writes the
    outcome's rows in one transaction).
    """
    from tracescore.scoring import ScorerRunError

    now = now or utc_now()
    run_id = uuid.uuid4().hex
    rows = read(CANARY_ITEMS_SQL, [schema.name, entry.dataset, entry.max_items])
    if not rows:
        return None
    gate = asyncio.Semaphore(concurrency)
    spent = [0.0]
    scores: list[dict[str, Any]] = []
    executions: list[dict[str, Any]] = []
    pairs: list[tuple[float, float]] = []

    async def one(row: Mapping[str, Any]) -> None:
        async with gate:
            if spent[0] >= entry.max_cost_usd > 0:
                return
            metadata = json_value(row["metadata"]) or {}
            given = json_value(row["input"])
            answer = (metadata.get("output") if isinstance(metadata, Mapping)
                      and "output" in metadata else json_value(row["ground_truth"]))
            result, error = None, None
            try:
                result = await scorer.run(input=given, output=answer,
                                          request_context=json_value(row["request_context"]))
            except ScorerRunError as exc:
                result, error = exc.result, exc
            score, judged = _score_row(result, error, item_id=row["item_id"],
                                       dataset=entry.dataset, run_id=run_id, scorer=scorer,
                                       version=version, inputs=(given, answer, None), now=now)
            spent[0] += score["judge_cost"] or 0.0
            scores.append(score)
            executions.extend(judged)
            label = consensus(schema, row["label_values"])
            if score["status"] == "success" and label is not None:
                pairs.append((label, float(score["score"])))

    await asyncio.gather(*(one(row) for row in rows))
    found = agreement_row(schema, scorer.id, version, [p[0] for p in pairs],
                          [p[1] for p in pairs], resamples=resamples, seed=seed, now=now)
    models = sorted({e["response_model"] for e in executions if e.get("response_model")})
    prints = sorted({e["system_fingerprint"] for e in executions
                     if e.get("system_fingerprint")})
    baseline = read(BASELINE_SQL, [scorer.id, version, entry.dataset])
    low, high = ((baseline[0]["kappa_low"], baseline[0]["kappa_high"]) if baseline
                 else (found["kappa_low"], found["kappa_high"]))
    events: list[dict[str, Any]] = []
    kappa = found["kappa"]
    if baseline and low is not None and high is not None and (
            kappa is None or not low <= kappa <= high):
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        events.append(drift_event(
            scorer.id, f"κ on canary {entry.dataset} is {shown}, outside the first run's "
            f"interval [{low:.2f}, {high:.2f}] (n {len(pairs)})", now=now, value=kappa,
            threshold=low, samples=len(pairs),
            detail={"check": "canary", "dataset": entry.dataset, "baseline_low": low,
                    "baseline_high": high, "version": version}))
    run = {"run_id": run_id, "scorer_id": scorer.id, "scorer_version": version,
           "dataset": entry.dataset, "schema_name": schema.name, "n": len(pairs),
           "kappa": kappa, "kappa_low": found["kappa_low"], "kappa_high": found["kappa_high"],
           "baseline_low": low, "baseline_high": high, "response_models": models,
           "system_fingerprints": prints, "cost_usd": spent[0],
           "drift": "; ".join(e["detail"]["reason"] for e in events) or None,
           "created_at": now}
    return CanaryOutcome(run=run, events=events, scores=scores, executions=executions)


def outcome_writer(outcome: CanaryOutcome) -> Any:
    """A writer function storing a canary run's scores, executions, run row and events."""
    from tracescore.store import insert_arrow, rows_table

    tables = [("scores", rows_table("scores", outcome.scores) if outcome.scores else None),
              ("judge_executions", rows_table("judge_executions", outcome.executions)
               if outcome.executions else None),
              ("canary_runs", rows_table("canary_runs", [outcome.run])),
              ("monitor_events", rows_table("monitor_events", outcome.events)
               if outcome.events else None)]

    def write(conn: Any) -> None:
        for name, table in tables:
            if table is not None:
                insert_arrow(conn, name, table)

    return write


def canary_due(read: Any, entry: CanaryEntry, now: datetime) -> bool:
    """True when the scorer's last canary run is older than ``every`` (or there is none)."""
    [row] = read(LAST_RUN_SQL, [entry.scorer])
    return row["at"] is None or now - row["at"] >= timedelta(seconds=entry.every_s)


MODELS_SQL = """
SELECT scorer_id, judge_model_id, arg_max(response_model, created_at) AS response_model,
       count(*) AS n
FROM judge_executions
WHERE created_at >= ? AND response_model IS NOT NULL AND scorer_id IS NOT NULL
GROUP BY ALL
"""
MODEL_LOOKBACK = timedelta(days=7)
"""How far back the first check looks for the model each judge was last answered by."""
MODEL_OVERLAP = timedelta(seconds=60)
"""Each check re-reads this much before the last one (rows committed late)."""


class ModelWatch:
    """Raises drift when a (scorer, requested model) starts being answered by another model
    than the provider reported before; each ``check`` reads the executions written since the
    previous one (plus ``MODEL_OVERLAP``), so it costs little however large the table."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], str] = {}
        self._mark: datetime | None = None

    def check(self, read: Any, now: datetime) -> list[dict[str, Any]]:
        """Drift events for model changes since the last call (the first call learns)."""
        first = self._mark is None
        since = now - MODEL_LOOKBACK if self._mark is None else self._mark - MODEL_OVERLAP
        self._mark = now
        events = []
        for row in read(MODELS_SQL, [since]):
            key = (row["scorer_id"], row["judge_model_id"] or "")
            before = self.known.get(key)
            self.known[key] = row["response_model"]
            if not first and before is not None and before != row["response_model"]:
                events.append(drift_event(
                    row["scorer_id"], f"the provider now reports model "
                    f"{row['response_model']} for {row['judge_model_id']} (was {before})",
                    now=now, samples=int(row["n"]),
                    detail={"check": "model", "requested_model": row["judge_model_id"],
                            "from": before, "to": row["response_model"]}))
        return events


def event_writer(events: Sequence[Mapping[str, Any]]) -> Any:
    """A writer function inserting drift events into ``monitor_events``."""
    from tracescore.store import insert_arrow, rows_table

    table = rows_table("monitor_events", list(events))

    def write(conn: Any) -> None:
        insert_arrow(conn, "monitor_events", table)

    return write


__all__ = [
    "CanaryOutcome",
    "ModelWatch",
    "canary_due",
    "drift_event",
    "drift_text",
    "event_writer",
    "outcome_writer",
    "run_canary",
]
