"""Scorers of the embedded default config, as factories a ``[[scorers]]`` entry can ``use``.

Code scorers over the trajectory (no model needed) wrap the trajectory utilities of
``tracescore.scorers``; the judge scorers wrap its LLM factories with a judge built from
``model`` (and ``api_base``), which the registry passes for entries marked ``needs_judge``.
A trace without an agent or workflow run is not scorable for them, rather than a perfect score.
"""

from __future__ import annotations

from typing import Any

from tracescore.model import counted
from tracescore.scoring import Scorer, create_scorer, not_scorable


def _steps_of(run: Any) -> list[Any]:
    return list(getattr(run.output, "steps", None) or [])


def tool_failures_scorer(
    *, max_retries_per_tool: int = 2, id: str = "tool-failures"  # noqa: A002
) -> Scorer[Any, Any]:
    """1 minus 0.2 per retry of a failed tool beyond ``max_retries_per_tool`` (trajectory)."""
    from tracescore.scorers import analyze_tool_failures

    def preprocess(run: Any) -> Any:
        if not _steps_of(run):
            return not_scorable("the trace has no agent or workflow steps")
        return analyze_tool_failures(run.output, max_retries_per_tool=max_retries_per_tool)

    def reason(run: Any, results: Any, score: float) -> str:
        found = results.preprocess_step_result
        if not found["patterns"]:
            return "no failed tool call was retried"
        tools = ", ".join(f"{p['tool_name']} ({p['retry_count']} retries)"
                          for p in found["patterns"])
        return f"retried after failures: {tools}"

    return (
        create_scorer(id, "Retries of failed tool calls and fallbacks", name="Tool failures",
                      type="trajectory")
        .preprocess(preprocess)
        .generate_score(lambda run, results: results.preprocess_step_result["score"])
        .generate_reason(reason)
    )


def trajectory_efficiency_scorer(
    *,
    max_steps: int | None = None,
    max_total_tokens: int | None = None,
    max_total_duration_ms: float | None = None,
    no_redundant_calls: bool = True,
    id: str = "trajectory-efficiency",  # noqa: A002
) -> Scorer[Any, Any]:
    """Step, token and time budgets and repeated identical tool calls (trajectory)."""
    from tracescore.scorers import check_trajectory_efficiency

    def preprocess(run: Any) -> Any:
        if not _steps_of(run):
            return not_scorable("the trace has no agent or workflow steps")
        return check_trajectory_efficiency(
            run.output, max_steps=max_steps, max_total_tokens=max_total_tokens,
            max_total_duration_ms=max_total_duration_ms, no_redundant_calls=no_redundant_calls)

    def reason(run: Any, results: Any, score: float) -> str:
        found = results.preprocess_step_result
        parts = [counted(found["total_steps"], "step")]
        if found["over_step_budget"]:
            parts.append(f"over the budget of {max_steps}")
        if found["over_token_budget"]:
            parts.append(f"{found['total_tokens']} tokens, over {max_total_tokens}")
        if found["over_duration_budget"]:
            parts.append(f"{found['total_duration_ms']:.0f} ms, over {max_total_duration_ms}")
        if found["redundant_calls"]:
            names = ", ".join(c["name"] for c in found["redundant_calls"])
            parts.append(f"repeated calls: {names}")
        return "; ".join(parts)

    return (
        create_scorer(id, "Trajectory budgets and redundant calls",
                      name="Trajectory efficiency", type="trajectory")
        .preprocess(preprocess)
        .generate_score(lambda run, results: results.preprocess_step_result["score"])
        .generate_reason(reason)
    )


def _judge_of(model: str, api_base: str | None) -> Any:
    from tracescore.scoring import Judge

    return Judge(model=model, api_base=api_base) if api_base else model


def _tool_results(run: Any, *_: Any) -> list[str]:
    """The agent's tool results as context pieces (``tool_name: result``)."""
    import json

    from tracescore.scorers import extract_tool_results

    pieces = []
    for item in extract_tool_results(run.output):
        result = item["result"]
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                                 default=str)
        pieces.append(f"{item['tool_name']}: {text}")
    return pieces


def answer_relevancy_scorer(
    *, model: str, api_base: str | None = None, **options: Any
) -> Scorer[Any, Any]:
    """``create_answer_relevancy_scorer`` judged by ``model`` (options: uncertainty_weight,
    scale)."""
    from tracescore.scorers import create_answer_relevancy_scorer

    return create_answer_relevancy_scorer(_judge_of(model, api_base), options=options)


def faithfulness_scorer(
    *, model: str, api_base: str | None = None, **options: Any
) -> Scorer[Any, Any]:
    """``create_faithfulness_scorer`` judged by ``model``; the context is the agent's tool
    results (options: scale, context)."""
    from tracescore.scorers import create_faithfulness_scorer

    return create_faithfulness_scorer(_judge_of(model, api_base), options=options)


def hallucination_scorer(
    *, model: str, api_base: str | None = None, **options: Any
) -> Scorer[Any, Any]:
    """``create_hallucination_scorer`` judged by ``model``, with the agent's tool results as
    the context (options: scale, context)."""
    from tracescore.scorers import create_hallucination_scorer

    if "context" not in options:
        options.setdefault("get_context", _tool_results)
    return create_hallucination_scorer(_judge_of(model, api_base), options=options)
