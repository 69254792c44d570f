"""Genkit's own spans: ``genkit:type``, ``genkit:metadata:subtype``, ``genkit:input``/``output``.

Kinds: an ``action`` of subtype ``model`` is a model call (messages in ``genkit:input``, the
answer, ``finishReason`` and ``usage`` in ``genkit:output``), ``tool`` a tool call, ``agent`` an
agent run, ``flow`` a workflow run; a ``flowStep`` (``ai.run``) is a workflow step; ``util``
spans (``generate``) and prompt templates are plumbing. Messages use Genkit's parts (``text``,
``toolRequest``/``toolResponse`` with ``ref`` as the call id; ``_messages``). The session id is
``genkit:metadata:agent:sessionId``; ``genkit:state = error`` marks a failed span. The content is
read as the generic shape adapter reads it (``_adapt_shape.fill``).
"""

from __future__ import annotations

from ._adapt_shape import fill, kind_of
from ._span import Span
from ._steps import Lazy, Step
from ._values import parse_json


def claims(span: Span) -> bool:
    """A span with ``genkit:type``."""
    return "genkit:type" in span.attributes


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from Genkit's attributes."""
    attrs = span.attributes
    raw_in = attrs.get("genkit:input")
    if raw_in is not None and raw_in != "":
        step.input = Lazy(parse_json, raw_in)
    raw_out = attrs.get("genkit:output")
    if raw_out is not None and raw_out != "":
        step.output = Lazy(parse_json, raw_out)
    if attrs.get("genkit:state") == "error":
        step.status = "error"
        step.error = step.error or str(attrs.get("genkit:error") or "error")
    kind = kind_of(attrs)
    if kind is None:
        step.kind = "generic"
        return
    step.kind = kind
    fill(step, span, kind, model=attrs.get("genkit:name") if kind == "model_generation" else None,
         tool=attrs.get("genkit:name") if kind == "tool_call" else None)


__all__ = ["adapt", "claims"]
