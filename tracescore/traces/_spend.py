"""What the agent itself spent: one record per model call of a trace, and the trace's totals.

Model calls are the steps the tree rules marked ``is_model_call`` (``_model_calls``: a wrapper
around calls is not a call, so tokens are counted once). Their model, provider, usage, finish
reason, status and error come from the step tree; three things no step field holds are read here
from the call's span, for every convention at once:

- a cost the client reported: ``gen_ai.usage.cost``, ``llm.cost.total`` (OpenInference),
  ``ai.usage.cost``, ``llm.usage.cost``; in USD.
- cache-creation (cache write) input tokens: ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.cache_creation_input_tokens``,
  ``llm.token_count.prompt_details.cache_write``, ``ai.usage.cacheCreationInputTokens``.
- time to first token: ``ai.response.msToFirstChunk`` / ``ai.stream.msToFirstChunk`` (AI SDK,
  ms), ``gen_ai.response.time_to_first_chunk`` / ``gen_ai.server.time_to_first_token``
  (seconds), else the first streaming event (``ai.stream.firstChunk``, LlamaIndex's ``First
  Token Stream Event``, any event named ``*first*token*`` or ``*first*chunk*``) minus the start.

Session and user ids come from ``_identity``. Pricing is not done here (the traces room imports
no litellm): ``TraceSpend`` carries tokens and reported costs; ``tracescore.live`` prices them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._identity import trace_identity
from ._steps import TOOL_KINDS, Step, walk_steps

if TYPE_CHECKING:
    from ._trace import Trace

_COST_KEYS = ("gen_ai.usage.cost", "llm.cost.total", "ai.usage.cost", "llm.usage.cost")
_CACHE_WRITE_KEYS = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
    "ai.usage.cacheCreationInputTokens",
)
_TTFT_MS_KEYS = ("ai.response.msToFirstChunk", "ai.stream.msToFirstChunk")
_TTFT_S_KEYS = ("gen_ai.response.time_to_first_chunk", "gen_ai.server.time_to_first_token")


@dataclass(frozen=True, slots=True)
class ModelCallRecord:
    """One model call of a trace (a row of the ``model_calls`` table before pricing)."""

    trace_id: str
    span_id: str
    project: str | None
    service_name: str | None
    agent_name: str | None
    model: str | None
    provider: str | None
    started_at_ns: int
    duration_ms: float | None
    time_to_first_token_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cached_input_tokens: int | None
    cache_creation_input_tokens: int | None
    reasoning_tokens: int | None
    reported_cost_usd: float | None
    finish_reason: str | None
    status: str
    error: str | None


@dataclass(frozen=True, slots=True)
class TraceSpend:
    """A trace's model calls and the counts the ``traces`` table keeps besides their sums."""

    trace_id: str
    calls: tuple[ModelCallRecord, ...]
    tool_call_count: int
    agent_name: str | None
    session_id: str | None
    user_id: str | None


def trace_spend(trace: Trace) -> TraceSpend:
    """The model calls of ``trace`` (in start order) with its tool-call count, the name of its
    outermost agent run, and its session and user ids."""
    roots = trace.structure
    calls: list[ModelCallRecord] = []
    tools = 0
    first_agent: str | None = None
    for step in walk_steps(roots):
        if step.kind in TOOL_KINDS:
            tools += 1
        elif step.kind == "agent_run" and first_agent is None:
            first_agent = step.name or None
        if step.is_model_call:
            calls.append(_record(trace, step))
    calls.sort(key=lambda c: (c.started_at_ns, c.span_id))
    session_id, user_id = trace_identity(trace, roots)
    return TraceSpend(trace.trace_id, tuple(calls), tools, first_agent, session_id, user_id)


def _record(trace: Trace, step: Step) -> ModelCallRecord:
    span = trace.by_id.get(step.span_id)
    attrs = step.attributes
    usage = step.usage or {}
    input_tokens = usage.get("input_tokens")
    output_tokens = usage.get("output_tokens")
    total = usage.get("total_tokens")
    if total is None and (input_tokens is not None or output_tokens is not None):
        total = (input_tokens or 0) + (output_tokens or 0)
    return ModelCallRecord(
        trace_id=trace.trace_id,
        span_id=step.span_id,
        project=span.project if span is not None else None,
        service_name=span.service_name if span is not None else None,
        agent_name=_agent_of(step),
        model=step.response_model or step.model,
        provider=step.provider,
        started_at_ns=step.start_time_ns,
        duration_ms=step.duration_ms,
        time_to_first_token_ms=_ttft_ms(step, span.events if span is not None else []),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        cached_input_tokens=usage.get("cached_input_tokens"),
        cache_creation_input_tokens=usage.get("cache_creation_input_tokens")
        or _number(attrs, _CACHE_WRITE_KEYS, int),
        reasoning_tokens=usage.get("reasoning_tokens"),
        reported_cost_usd=_number(attrs, _COST_KEYS, float),
        finish_reason=step.finish_reason,
        status=step.status,
        error=step.error,
    )


def _agent_of(step: Step) -> str | None:
    """The name of the nearest agent run above ``step`` (None outside any agent)."""
    parent = step.parent
    while parent is not None:
        if parent.kind == "agent_run":
            return parent.name or None
        parent = parent.parent
    return None


def _number(attrs: dict[str, Any], keys: tuple[str, ...], kind: type[Any]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is None or isinstance(value, bool):
            continue
        try:
            number = kind(float(value))
        except (TypeError, ValueError):
            continue
        if number >= 0:
            return number
    return None


def _ttft_ms(step: Step, events: list[dict[str, Any]]) -> float | None:
    attrs = step.attributes
    ms = _number(attrs, _TTFT_MS_KEYS, float)
    if ms is not None:
        return float(ms)
    seconds = _number(attrs, _TTFT_S_KEYS, float)
    if seconds is not None:
        return float(seconds) * 1000.0
    for event in events:
        name = str(event.get("name") or "").lower()
        if "first" in name and ("token" in name or "chunk" in name):
            at = event.get("time_unix_nano")
            if isinstance(at, int) and step.start_time_ns and at >= step.start_time_ns:
                return (at - step.start_time_ns) / 1e6
    return None


__all__ = ["ModelCallRecord", "TraceSpend", "trace_spend"]
