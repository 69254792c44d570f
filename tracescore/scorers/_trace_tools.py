"""The navigating judge's tools over a ``TraceView``: ``outline``, ``read_step``, ``read_span``
and ``search_trace``, and the text each returns.

Every answer is bounded: an outline shows at most ``OUTLINE_LINES`` lines (deeper levels folded
into ``+N inside``, long lists paged with ``start``), a read at most ``read_chars`` characters
(paged with ``offset``), a search at most ``SEARCH_HITS`` hits. Each says how to read on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tracescore.scoring import JudgeTool

from ._trace_view import TraceView, ViewStep, shown

OUTLINE_LINES = 80
"""Lines an outline shows at most (the first prompt's may be fewer)."""
READ_CHARS = 4_000
"""Characters one read returns at most."""
SEARCH_HITS = 15
"""Hits one search returns at most."""
SNIPPET_CHARS = 160
ERRORS_LISTED = 10
ERROR_CHARS = 120


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_line(step: ViewStep) -> str:
    """``s12 [tool_call] get_weather · in 18 · out 63 chars`` (and the error, shortened)."""
    bits = [f"{step.id} [{step.kind}] {step.name}".rstrip()]
    sizes = []
    if step.input is not None:
        sizes.append(f"in {len(step.input_text):,}")
    if step.output is not None:
        sizes.append(f"out {len(step.output_text):,}")
    if sizes:
        bits.append(" · ".join(sizes) + " chars")
    if step.error:
        bits.append(f"ERROR: {_one_line(step.error, ERROR_CHARS)}")
    return " · ".join(bits)


def _subtree(view: TraceView, root: ViewStep | None) -> Iterator[ViewStep]:
    stack = [view.by_id[s.id] for s in reversed(view.roots)] if root is None else [root]
    while stack:
        step = stack.pop()
        yield step
        stack.extend(view.by_id[c] for c in reversed(step.children))


def _inside(view: TraceView, step: ViewStep) -> int:
    return sum(1 for _ in _subtree(view, step)) - 1


def _lines(view: TraceView, root: ViewStep | None, levels: int | None) -> list[str]:
    base = root.depth if root is not None else 0
    lines = []
    for step in _subtree(view, root):
        level = step.depth - base
        if levels is not None and level > levels:
            continue
        line = "  " * level + step_line(step)
        if levels is not None and level == levels and step.children:
            line += f" · +{_inside(view, step)} inside"
        lines.append(line)
    return lines


def _levels(view: TraceView, root: ViewStep | None, max_lines: int) -> int:
    """How many levels below the root an outline shows: the most that fit ``max_lines``, or
    one more (paged) when those would show less than half a page."""
    depth, count = 0, len(_lines(view, root, 0))
    while depth < 64:
        deeper = len(_lines(view, root, depth + 1))
        if deeper == count:
            break
        if deeper > max_lines:
            return depth + 1 if count < max_lines // 2 else depth
        depth, count = depth + 1, deeper
    return depth


def outline(view: TraceView, step: str | None = None, depth: int | None = None,
            start: int = 1, max_lines: int = OUTLINE_LINES) -> str:
    """The outline of the whole run (or of ``step``'s subtree): one line per step, indented by
    depth. Without ``depth`` as many levels as fit ``max_lines``; a longer list is paged."""
    root = view.find(step) if step else None
    every = list(_subtree(view, root))
    if depth is None:
        depth = _levels(view, root, max_lines)
    lines = _lines(view, root, max(0, int(depth)))
    errors = [s.id for s in every if s.error]
    scope = f"step {root.id}" if root is not None else "the run"
    listed = ", ".join(errors[:ERRORS_LISTED]) + (", …" if len(errors) > ERRORS_LISTED else "")
    head = (f"Outline of {scope}: {len(every)} steps, {len(errors)} with errors"
            + (f" ({listed})" if errors else "")
            + f"; levels shown: {depth + 1} (call outline with a step id to open a folded "
            "step).")
    first = max(1, int(start))
    shown_lines = lines[first - 1: first - 1 + max_lines]
    text = "\n".join([head, *shown_lines]) if shown_lines else f"{head}\n(no lines from {first})"
    last = first - 1 + len(shown_lines)
    if last < len(lines):
        text += (f"\n… lines {first}–{last} of {len(lines)}; call outline with start={last + 1} "
                 "for more")
    return text


def _page(text: str, offset: int, limit: int, again: str) -> str:
    offset = max(0, int(offset))
    part = text[offset: offset + limit]
    rest = len(text) - offset - len(part)
    if rest > 0:
        part += (f"\n… {rest:,} more chars; call {again} with offset={offset + len(part)} "
                 "to read on")
    return part or f"(nothing from offset {offset}; the text has {len(text):,} chars)"


def step_text(view: TraceView, step: ViewStep) -> str:
    """A step's header, error, input and output in full."""
    where = [f"{step.id} [{step.kind}] {step.name}".rstrip()]
    if step.span_id:
        where.append(f"span {step.span_id}")
    if step.parent:
        where.append(f"inside {step.parent}")
    if step.children:
        where.append(f"steps inside: {step.children[0]}–{step.children[-1]}"
                     if len(step.children) > 1 else f"step inside: {step.children[0]}")
    lines = [" · ".join(where)]
    if step.details:
        lines.append(" · ".join(f"{k}: {shown(v)}" for k, v in step.details.items()))
    if step.error:
        lines.append(f"ERROR: {step.error}")
    if step.input is not None:
        lines += [f"input ({len(step.input_text):,} chars):", step.input_text]
    if step.output is not None:
        lines += [f"output ({len(step.output_text):,} chars):", step.output_text]
    return "\n".join(lines)


def read_step(view: TraceView, step: str, offset: int = 0, limit: int = READ_CHARS) -> str:
    """A step's full text (see ``step_text``), paged."""
    found = view.find(step)
    return _page(step_text(view, found), offset, limit, f"read_step step={found.id}")


def read_span(view: TraceView, span_id: str, offset: int = 0, limit: int = READ_CHARS) -> str:
    """The raw attributes of a step's span, as JSON, paged."""
    found = view.find(span_id)
    if not found.attributes:
        why = ("this run was scored from its data, without its trace" if view.source == "run"
               else "the span has none")
        return f"{step_line(found)}\n(no span attributes: {why}; read_step shows the step)"
    text = json.dumps(found.attributes, ensure_ascii=False, indent=1, sort_keys=True,
                      default=str)
    head = f"{found.id} span {found.span_id or '(none)'} attributes:\n"
    return head + _page(text, offset, limit, f"read_span span_id={found.span_id or found.id}")


def _haystack(step: ViewStep) -> str:
    parts = [step.name, step.input_text, step.output_text, step.error or ""]
    if step.attributes:
        parts.append(shown(step.attributes))
    return "\n".join(parts)


def search_trace(view: TraceView, query: str, max_hits: int = SEARCH_HITS) -> str:
    """The steps whose name, input, output, error or attributes hold every word of ``query``
    (case-insensitive), with a snippet around the first word."""
    words = [w for w in str(query).lower().split() if w]
    if not words:
        raise ValueError("search_trace needs a query: one or more words to look for")
    hits = []
    for step in view.steps:
        text = _haystack(step)
        low = text.lower()
        if all(w in low for w in words):
            at = low.find(words[0])
            left = max(0, at - SNIPPET_CHARS // 2)
            snippet = _one_line(text[left: left + SNIPPET_CHARS], SNIPPET_CHARS)
            hits.append(f"{step.id} [{step.kind}] {step.name}: …{snippet}…")
    if not hits:
        return f"no step holds {' '.join(words)!r}"
    more = len(hits) - max_hits
    text = "\n".join(hits[:max_hits])
    return text + (f"\n… {more} more matching steps; search with more words to narrow"
                   if more > 0 else "")


def whole_text(view: TraceView) -> str:
    """Every step in full, in order (what a judge reads without navigating)."""
    return "\n\n".join(step_text(view, step) for step in view.steps)


def _int(arguments: dict[str, Any], key: str, default: int) -> int:
    value = arguments.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{key} must be a whole number")
    return int(value)


def view_tools(view: TraceView, *, read_chars: int = READ_CHARS) -> tuple[JudgeTool, ...]:
    """The four tools over ``view``."""
    step_ref = {"type": "string", "description": "a step id from the outline, e.g. s12"}
    offset = {"type": "integer", "description": "where to start reading (chars), default 0"}
    return (
        JudgeTool(
            "outline",
            "The run's steps, one line each (id, kind, name, sizes, errors), indented by depth; "
            "give a step id to outline only what is inside it.",
            {"type": "object", "properties": {
                "step": step_ref,
                "depth": {"type": "integer", "description": "levels below the step to show"},
                "start": {"type": "integer", "description": "first line to show, default 1"}}},
            lambda a: outline(view, a.get("step") or None,
                              _int(a, "depth", -1) if "depth" in a else None,
                              _int(a, "start", 1))),
        JudgeTool(
            "read_step",
            "A step's input and output (messages, tool arguments and results), error and "
            "details, in full, paged by offset.",
            {"type": "object", "properties": {"step": step_ref, "offset": offset},
             "required": ["step"]},
            lambda a: read_step(view, str(a["step"]), _int(a, "offset", 0), read_chars)),
        JudgeTool(
            "read_span",
            "The raw OpenTelemetry attributes of a step's span, as JSON, paged by offset.",
            {"type": "object", "properties": {
                "span_id": {"type": "string", "description": "a span id or a step id"},
                "offset": offset}, "required": ["span_id"]},
            lambda a: read_span(view, str(a["span_id"]), _int(a, "offset", 0), read_chars)),
        JudgeTool(
            "search_trace",
            "Find the steps whose text (name, input, output, error, attributes) contains every "
            "word of the query, case-insensitive.",
            {"type": "object", "properties": {"query": {"type": "string"}},
             "required": ["query"]},
            lambda a: search_trace(view, str(a["query"]))),
    )


__all__ = ["OUTLINE_LINES", "READ_CHARS", "outline", "read_span", "read_step", "search_trace",
           "step_line", "step_text", "view_tools", "whole_text"]
