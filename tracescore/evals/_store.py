"""Writing eval scores next to live scores: ``scores`` and ``judge_executions`` rows with
``source = 'eval'`` and the run's ``eval_run_id``, into a database file or a running server."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic_core import to_jsonable_python

from tracescore.model import ScorerRunResult
from tracescore.scoring import UNPRICED, cost_source_of, execution_rows, step_columns

from ._execute import ItemOutcome, ScorerOutcome

RESULTS_PER_REQUEST = 1_000
"""Experiment results sent to a server per ``POST /api/experiments`` (its ``api_max_items``
defaults to 10,000)."""


def _json(value: Any) -> Any:
    return to_jsonable_python(value, fallback=repr)


def is_url(store: Any) -> bool:
    """True for an ``http://`` or ``https://`` address."""
    return isinstance(store, str) and store.startswith(("http://", "https://"))


class ScoreSink:
    """Where rows go: a ``Store`` opened on a path, a ``Store`` given open, or a server URL."""

    def __init__(self, store: Any, *, api_key: str | None = None) -> None:
        self._given = store
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._store: Any = None
        self._owns_store = False
        self._client: Any = None
        self._url: str | None = None

    @property
    def trace_store(self) -> Any:
        """What ``load_trace`` reads from: the open ``Store``, or the server's SQL endpoint."""
        if self._store is not None:
            return self._store if callable(getattr(self._store, "fetch_trace_rows", None)) \
                else None
        return HttpTraceRows(self._url, headers=self._headers) if self._url else None

    async def open(self) -> None:
        """Open the database (or the HTTP client) before the first item runs."""
        store = self._given
        if is_url(store):
            import httpx

            self._url = store.rstrip("/")
            self._client = httpx.AsyncClient(timeout=30.0, headers=self._headers)
        elif isinstance(store, (str, os.PathLike)):
            from tracescore.store import Store

            self._store = Store(os.fspath(store))
            self._store.open()
            self._owns_store = True
        elif callable(getattr(store, "write_scores", None)):
            self._store = store
        else:
            from ._errors import EvalValidationError

            raise EvalValidationError(
                f"store must be a database path, an http(s) URL of a running tracescore server, "
                f"or a Store; got {type(store).__name__}"
            )

    async def _post(self, path: str, body: dict[str, Any]) -> None:
        response = await self._client.post(f"{self._url}{path}", json=_json(body))
        if response.status_code >= 400:
            raise RuntimeError(
                f"POST {self._url}{path} answered {response.status_code}: {response.text[:300]}"
            )

    async def write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]]) -> None:
        """Write one item's rows (one transaction, or one POST)."""
        if not scores:
            return
        if self._client is not None:
            await self._post("/api/scores", {"scores": scores, "judge_executions": executions})
            return
        await self._store.write_scores(scores, executions)

    async def write_experiment(self, experiment: dict[str, Any],
                               results: list[dict[str, Any]]) -> None:
        """Write an experiment's row (replacing it) and append its result rows."""
        if self._client is not None:
            # the server takes at most api_max_items results per request; results are keyed
            # (experiment, item, scorer, repetition), so every chunk can carry the row again
            for start in range(0, max(len(results), 1), RESULTS_PER_REQUEST):
                await self._post("/api/experiments", {
                    "experiment": experiment,
                    "results": results[start:start + RESULTS_PER_REQUEST]})
            return
        from tracescore.store import experiment_writer

        await self._store.write(experiment_writer(experiment, results))

    def judge_cache(self) -> Any:
        """The database's judge-call cache (``StoreJudgeCache``), or None when rows go to a
        server URL (its cache is the server's own; pass ``run_evals(judge_cache=...)``)."""
        if self._store is None or not callable(getattr(self._store, "write", None)):
            return None
        from tracescore.store import StoreJudgeCache

        return StoreJudgeCache(self._store)
    async def read(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows of a read-only statement (the store's cursor, or the server's /api/sql)."""
        if self._client is not None:
            response = await self._client.post(f"{self._url}/api/sql",
                                               json={"sql": sql, "params": params})
            if response.status_code >= 400:
                raise RuntimeError(f"POST {self._url}/api/sql answered {response.status_code}: "
                                   f"{response.text[:300]}")
            body = response.json()
            return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]
        rows: list[dict[str, Any]] = await self._store.aread(sql, params)
        return rows

    async def aclose(self) -> None:
        """Close what ``open`` opened (a Store passed in open is left open)."""
        if self._client is not None:
            await self._client.aclose()
        if self._owns_store and self._store is not None:
            self._store.close()


_HEX = frozenset("0123456789abcdef")
_SPAN_ROWS_SQL = (
    "SELECT trace_id, span_id, parent_span_id, project, service_name, name, kind, "
    "epoch_ns(start_time) AS start_time_ns, epoch_ns(end_time) AS end_time_ns, duration_ms, "
    "status_code, status_message, attributes, resource_attributes, events, links, scope_name, "
    "scope_version FROM spans WHERE trace_id = ? ORDER BY start_time, span_id"
)


class HttpTraceRows:
    """Span rows of a trace read from a running server through ``POST /api/sql``.

    ``blocking`` tells the caller to run ``load_trace`` on it in a worker thread.
    """

    blocking = True

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None) -> None:
        self._url = url
        self._headers = dict(headers or {})

    def fetch_trace_rows(self, trace_id: str) -> list[dict[str, Any]]:
        """The trace's span rows (JSON columns as text; ``load_trace`` parses them)."""
        import httpx

        trace_id = trace_id.lower()
        if len(trace_id) != 32 or not set(trace_id) <= _HEX:
            return []
        response = httpx.post(f"{self._url}/api/sql",
                              json={"sql": _SPAN_ROWS_SQL, "params": [trace_id]},
                              headers=self._headers, timeout=30.0)
        response.raise_for_status()
        body = response.json()
        return [dict(zip(body["columns"], row, strict=False)) for row in body["rows"]]


def rows_for_item(
    outcome: ItemOutcome, *, eval_run_id: str, target: str | None,
    experiment_id: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``scores`` and ``judge_executions`` rows of one item's scorer runs."""
    scores: list[dict[str, Any]] = []
    executions: list[dict[str, Any]] = []
    for run in outcome.runs:
        row, judge_rows = _rows(run, eval_run_id=eval_run_id, target=target)
        if experiment_id is not None:
            row["experiment_id"] = experiment_id
        scores.append(row)
        executions.extend(judge_rows)
    return scores, executions


def _error_of(run: ScorerOutcome) -> dict[str, Any] | None:
    error = run.error
    if error is None:
        return None
    to_dict = getattr(error, "to_dict", None)
    if callable(to_dict):
        value = to_dict()
        if isinstance(value, Mapping):
            return dict(value)
    return {"name": type(error).__name__, "message": str(error)}


def _rows(
    run: ScorerOutcome, *, eval_run_id: str, target: str | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    now = datetime.now(UTC)
    result: ScorerRunResult | None = run.result
    score_id = str(uuid.uuid4())
    scorer = run.assertion.scorer
    if run.error is not None:
        status = "failed"
    elif run.score is None:
        status = "not_scorable"
    else:
        status = "success"
    usage = result.judge_usage() if result is not None else None
    reason = result.reason if result is not None else None
    if status == "not_scorable" and result is not None and result.not_scorable is not None:
        reason = reason or result.not_scorable.reason
    metadata = {
        "eval_run_id": eval_run_id,
        "item_index": run.item_index,
        "turn_index": run.turn_index,
        "step_id": run.step_id,
        "group": run.assertion.group_label,
        "role": "gate" if run.assertion.is_gate else "scorer",
        "target": target,
    }
    if run.assertion.id != getattr(scorer, "id", run.assertion.id):
        metadata["key"] = run.assertion.id
    if result is not None and result.not_scorable is not None:
        metadata["not_scorable"] = _json(result.not_scorable)
    row: dict[str, Any] = {
        "score_id": score_id,
        "trace_id": run.trace_id,
        "span_id": run.span_id,
        "project": None,
        "scorer_id": getattr(scorer, "id", None) or run.assertion.id,
        "scorer_name": getattr(scorer, "name", None) or run.assertion.id,
        "scorer_version": getattr(scorer, "version", None),
        "source": "eval",
        "eval_run_id": eval_run_id,
        "status": status,
        "score": run.score,
        "reason": reason,
        "run_id": result.run_id if result is not None else None,
        "created_at": now,
        "duration_ms": run.duration_ms,
        **step_columns(result, to_json=_json),
        "input": _json(run.input),
        "output": _json(run.output),
        "ground_truth": _json(result.ground_truth) if result else None,
        "error": _error_of(run),
        "metadata": metadata,
        "judge_input_tokens": usage.input_tokens if usage else None,
        "judge_output_tokens": usage.output_tokens if usage else None,
        "judge_total_tokens": usage.total_tokens if usage else None,
        "judge_reasoning_tokens": usage.reasoning_tokens if usage else None,
        "judge_cached_input_tokens": usage.cached_input_tokens if usage else None,
        "judge_cost": result.judge_cost() if result is not None else None,
    }
    judge_rows = execution_rows(result, score_id=score_id, trace_id=run.trace_id,
                                scorer_id=row["scorer_id"], now=now, to_json=_json)
    row["cost_source"] = cost_source_of(judge_rows)
    if row["cost_source"] == UNPRICED:
        row["judge_cost"] = None  # never a partial sum that reads as the whole cost
    row["decided_by"] = result.decided_by if result is not None else None
    return row, judge_rows
