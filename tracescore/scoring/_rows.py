"""Plain row dicts from a ``ScorerRunResult``: the ``judge_executions`` rows and the step
columns of a ``scores`` row, shared by the live scorer and the eval runner (no DuckDB here)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from tracescore.model import JudgeExecution, ScorerRunResult, new_run_id

UNPRICED = "unpriced"
"""``cost_source`` of a judge execution (and a score) whose judge model has no known price."""

JsonFn = Callable[[Any], Any]
"""Turns a value that may hold pydantic models into plain JSON-ready values."""


def step_columns(result: ScorerRunResult | None, *, to_json: JsonFn) -> dict[str, Any]:
    """The ``scores`` columns holding the pipeline's step results and prompts (``None`` each
    when there is no result)."""
    r = result
    return {
        "preprocess_step_result": to_json(r.preprocess_step_result) if r else None,
        "analyze_step_result": to_json(r.analyze_step_result) if r else None,
        "preprocess_prompt": r.preprocess_prompt if r else None,
        "analyze_prompt": r.analyze_prompt if r else None,
        "generate_score_prompt": r.generate_score_prompt if r else None,
        "generate_reason_prompt": r.generate_reason_prompt if r else None,
    }


def execution_rows(
    result: ScorerRunResult | None,
    *,
    score_id: str,
    trace_id: str | None,
    scorer_id: str | None,
    now: datetime,
    to_json: JsonFn,
) -> list[dict[str, Any]]:
    """One ``judge_executions`` row per judge execution of the run (none for code scorers)."""
    if result is None:
        return []
    return [
        execution_row(ex, step=step, score_id=score_id, trace_id=trace_id,
                      scorer_id=scorer_id, now=now, to_json=to_json)
        for step, record in (result.judge or {}).items()
        for ex in record.executions
    ]


def execution_row(
    ex: JudgeExecution,
    *,
    step: str,
    score_id: str,
    trace_id: str | None,
    scorer_id: str | None,
    now: datetime,
    to_json: JsonFn,
) -> dict[str, Any]:
    """The ``judge_executions`` row of one judge execution (a fresh ``execution_id``)."""
    u, c, e = ex.usage, ex.cost, ex.error
    return {
        "execution_id": new_run_id(),
        "score_id": score_id,
        "trace_id": trace_id,
        "scorer_id": scorer_id,
        "step": step,
        "status": ex.status,
        "prompt": ex.prompt,
        "judge_model_id": ex.judge_model_id,
        "judge_provider": ex.judge_provider,
        "attempt_count": ex.attempt_count,
        "model_call_count": ex.model_call_count,
        "duration_ms": ex.duration_ms,
        "output": to_json(ex.output),
        "raw_output": ex.raw_output,
        "finish_reason": ex.finish_reason,
        "input_tokens": u.input_tokens if u else None,
        "output_tokens": u.output_tokens if u else None,
        "total_tokens": u.total_tokens if u else None,
        "reasoning_tokens": u.reasoning_tokens if u else None,
        "cached_input_tokens": u.cached_input_tokens if u else None,
        "cache_creation_input_tokens": u.cache_creation_input_tokens if u else None,
        "cost_amount": c.amount if c else None,
        "cost_unit": c.unit if c else None,
        "cost_source": c.source if c else (UNPRICED if ex.unpriced else None),
        "error_name": e.name if e else None,
        "error_message": e.message if e else None,
        "error_code": str(e.code) if e and e.code is not None else None,
        "created_at": now,
        "response_model": ex.response_model,
        "system_fingerprint": ex.system_fingerprint,
        "cached": ex.cached,
        "saved_cost": ex.saved_cost,
    }


def cost_source_of(executions: list[dict[str, Any]]) -> str | None:
    """The ``scores.cost_source`` of a run's ``judge_executions`` rows: ``unpriced`` when one
    that reached the provider has no price (its ``judge_cost`` is then NULL, never a partial
    sum), ``cache`` when every answer came from the cache, else where the prices came from
    (``litellm``, ``config``, or both joined by ``+``); None without executions."""
    sources = {row.get("cost_source") for row in executions}
    if UNPRICED in sources:
        return UNPRICED
    named = sorted(source for source in sources if source)
    if len(named) > 1 and "cache" in named:
        named.remove("cache")
    return "+".join(named) or None
