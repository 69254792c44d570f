"""The normalized step tree as text (for ``tracescore trace show``) or as JSON-ready dicts."""

from __future__ import annotations

from typing import Any

from tracescore.model import counted

from ._conversation import agent_input
from ._steps import TOOL_KINDS, Step
from ._trace import Trace
from ._values import jsonable, text_of


def _short(value: Any, limit: int) -> str:
    text = text_of(value).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_summary(step: Step, *, children: bool = True) -> dict[str, Any]:
    """A JSON-ready description of a step (and, by default, its subtree)."""
    out: dict[str, Any] = {
        "span_id": step.span_id,
        "kind": step.kind,
        "name": step.name,
        "span_name": step.span_name,
        "convention": step.convention,
        "status": step.status,
        "duration_ms": step.duration_ms,
    }
    optional = {
        "model_call": step.is_model_call or None,
        "model": step.model,
        "usage": step.usage if step.is_model_call else None,
        "finish_reason": step.finish_reason,
        "tool_name": step.tool_name if step.kind in TOOL_KINDS else None,
        "tool_call_id": step.tool_call_id,
        "tool_args": jsonable(step.tool_args) if step.kind in TOOL_KINDS else None,
        "tool_result": jsonable(step.tool_result) if step.kind in TOOL_KINDS else None,
        "agent_id": step.agent_id,
        "workflow_id": step.workflow_id,
        "step_id": step.step_id,
        "error": step.error,
    }
    out.update({k: v for k, v in optional.items() if v is not None})
    if children:
        out["children"] = [step_summary(c) for c in step.children]
    return out


def _line(step: Step, width: int) -> str:
    bits = [f"{step.kind} {step.name}".rstrip()]
    if step.is_model_call:
        usage = step.usage or {}
        tokens = f"{usage.get('input_tokens', '?')}→{usage.get('output_tokens', '?')} tokens"
        bits.append(
            f"(model call, {tokens}" + (f", {step.finish_reason})" if step.finish_reason else ")")
        )
    if step.kind in TOOL_KINDS:
        bits.append(
            _short(step.tool_args, width // 3) + " → " + _short(step.tool_result, width // 3)
        )
    duration = step.duration_ms
    bits.append(
        f"[{step.span_id}" + (f" {duration:.1f} ms" if duration is not None else " running") + "]"
    )
    if step.status == "error":
        bits.append("ERROR" + (f": {_short(step.error, width // 2)}" if step.error else ""))
    return "  ".join(bits)


def render_tree(trace: Trace, *, width: int = 120) -> str:
    """The trace's normalized step tree, one line per step, indented by depth."""
    lines = [f"trace {trace.trace_id}  ({counted(len(trace.spans), 'span')})"]
    if not trace.steps:
        lines.append("  (no spans)")
    stack: list[tuple[Step, int]] = [(root, 0) for root in reversed(trace.steps)]
    while stack:
        step, depth = stack.pop()
        lines.append("  " * (depth + 1) + "- " + _line(step, width))
        if step.kind == "agent_run" or step.stands_as_agent:
            # The input as agent scorers see it (derived from the model calls when the agent
            # span carries none).
            user = [m.content for m in agent_input(step).input_messages if m.content]
            if user:
                lines.append("  " * (depth + 2) + "  input: " + _short(user[-1], width))
        stack.extend((child, depth + 1) for child in reversed(step.children))
    return "\n".join(lines)


__all__ = ["render_tree", "step_summary"]
