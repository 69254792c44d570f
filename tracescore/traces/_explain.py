"""Why each span became what it did: ``tracescore trace show TRACE_ID --explain``.

Built from what the tree builder recorded (each step's convention, kind and ``notes``) and from
the trajectory's own rule for each kind, not from a second pass over the spans, so a user whose
framework is not yet supported can see where the mapping goes wrong.
"""

from __future__ import annotations

from typing import Any

from tracescore.model import counted

from ._steps import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, WORKFLOW_KINDS, Step
from ._targets import choose_target
from ._trace import Trace


def _fate(step: Step) -> str:
    """What the step is in the trajectory (the rule ``_trajectory.convert`` applies)."""
    if step.stands_as_agent:
        return "the agent of a plain LLM-call trace; a model_generation step"
    if step.is_model_call:
        return "a model_generation step (one model call, tokens counted here)"
    kind = step.kind
    if kind in MODEL_KINDS:
        return (
            "dropped: a model-call wrapper (model work with model calls beneath: those are "
            "the steps, their tokens counted there)"
        )
    if kind in TOOL_KINDS:
        return f"a {kind} step"
    if kind in RUN_KINDS or kind in WORKFLOW_KINDS:
        article = "an" if kind.startswith("agent") else "a"
        return f"{article} {kind} (a container of steps)"
    if kind == "generic":
        return "dropped: plumbing (its children are promoted)"
    return f"dropped: {kind} is not a trajectory step (its children are promoted)"


def _default_note(step: Step) -> list[str]:
    """Why a span no rule changed is what it is, where that is not obvious (a chain inside a
    run is plumbing by the containers rule, which notes nothing for it)."""
    if step.kind != "generic" or step.hint != "chain":
        return []
    node = step.parent
    while node is not None:
        if node.kind == "agent_run":
            return ["chain inside an agent run: plumbing (dropped, children promoted)"]
        node = node.parent
    return []


def explain(trace: Trace) -> dict[str, Any]:
    """Per span: the adapter that claimed it, the step it became and why; and the default target.

    ``{"trace_id", "target": {"span_id", "kind", "name", "reason"}, "spans": [{"span_id",
    "span_name", "depth", "adapter", "kind", "name", "became", "notes"}]}``, spans depth first.
    """
    target, reason = choose_target(trace)
    spans: list[dict[str, Any]] = []
    stack: list[tuple[Step, int]] = [(root, 0) for root in reversed(trace.steps)]
    while stack:
        step, depth = stack.pop()
        spans.append(
            {
                "span_id": step.span_id,
                "span_name": step.span_name,
                "depth": depth,
                "adapter": step.convention,
                "kind": step.kind,
                "name": step.name,
                "became": _fate(step),
                "notes": list(step.notes or ()) or _default_note(step),
            }
        )
        stack.extend((child, depth + 1) for child in reversed(step.children))
    return {
        "trace_id": trace.trace_id,
        "target": None
        if target is None
        else {
            "span_id": target.span_id or None,
            "kind": target.kind,
            "name": target.name,
            "reason": reason,
        },
        "spans": spans,
    }


def render_explain(trace: Trace) -> str:
    """``explain`` as text: one block per span, indented by depth, then the default target."""
    data = explain(trace)
    lines = [f"trace {data['trace_id']}  ({counted(len(trace.spans), 'span')})"]
    for span in data["spans"]:
        pad = "  " * (span["depth"] + 1)
        lines.append(
            f"{pad}- {span['span_name']!r} [{span['span_id']}]: {span['adapter']} adapter → "
            f"{span['kind']} {span['name']!r}; {span['became']}"
        )
        for text in span["notes"]:
            lines.append(f"{pad}    because: {text}")
    target = data["target"]
    if target is None:
        lines.append("default target: none (" + (choose_target(trace)[1]) + ")")
    else:
        lines.append(
            f"default target: {target['kind']} {target['name']!r} "
            f"[{target['span_id'] or 'no span id'}]: {target['reason']}"
        )
    return "\n".join(lines)


__all__ = ["explain", "render_explain"]
