"""Convention adapters behind one Protocol, and the order of precedence between them.

Each adapter is a pure module (span in, fields of a ``Step`` out). For every span, the generic
adapter fills a base step (name, times, status, error, common input/output keys); then every
convention that recognises the span fills in what it knows, the lower precedence first, so a
higher one overrides it and a lower one fills the gaps the higher one leaves:

0. Genkit (``genkit:type``, ``genkit:metadata:subtype``, ``genkit:input``/``output``)
1. Mastra (``mastra.span.type``; ``mastra.<type>.input``/``.output``, with its ``gen_ai.*``)
2. OpenInference (``openinference.span.kind``, ``llm.*``, ``input.value``/``output.value``)
3. Vercel AI SDK (``ai.operationId`` / ``ai.*`` spans)
4. OTel GenAI (``gen_ai.*`` attributes, and the older event form: span events and OTLP log
   records joined by span id)
5. generic (span name, status, plain ``input``/``output`` attributes), then, for a span no
   convention and no name rule claimed, the generic shape adapter (``_adapt_shape``: kind
   words, message lists, token counts, model and tool names under any prefix); the shape
   adapter also reads a span a convention claimed but left without a kind or a hint (a span
   claimed on a tag alone, as ``gen_ai.system`` on every span of an integration)

The step's ``convention`` names the highest adapter that recognised the span.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import (
    _adapt_aisdk,
    _adapt_genai,
    _adapt_generic,
    _adapt_genkit,
    _adapt_mastra,
    _adapt_openinference,
    _adapt_shape,
)
from ._span import Span
from ._steps import Convention, Step


class Adapter(Protocol):
    """One convention: does it recognise a span, and what does the span say in its terms."""

    name: Convention

    def claims(self, span: Span) -> bool:
        """True when the span carries this convention's attributes."""
        ...

    def adapt(self, span: Span, step: Step) -> None:
        """Fill ``step`` with what the span says (set only fields the span actually carries)."""
        ...


class _ModuleAdapter:
    __slots__ = ("adapt", "claims", "name")

    def __init__(self, name: Convention, module: Any) -> None:
        self.name = name
        self.claims = module.claims
        self.adapt = module.adapt


ADAPTERS: tuple[Adapter, ...] = (
    _ModuleAdapter("genkit", _adapt_genkit),
    _ModuleAdapter("mastra", _adapt_mastra),
    _ModuleAdapter("openinference", _adapt_openinference),
    _ModuleAdapter("aisdk", _adapt_aisdk),
    _ModuleAdapter("genai", _adapt_genai),
)
"""The convention adapters, highest precedence first (the generic adapter always runs first)."""


_LOWEST_FIRST = tuple(reversed(ADAPTERS))

_MASTRA_PLUMBING = frozenset({"model_chunk", "memory_operation", "processor_run", "llm_chunk"})


def adapt_span(span: Span) -> Step:
    """The normalized step of one span: generic base, then each recognising convention, lowest
    precedence first."""
    step = _adapt_generic.base_step(span)
    attrs = span.attributes
    if attrs.get("mastra.span.type") in _MASTRA_PLUMBING:
        # Chunks, memory and processors say nothing in GenAI terms a consumer reads.
        _adapt_mastra.adapt(span, step)
        step.convention = "mastra"
        return step
    top: Adapter | None = None
    for adapter in _LOWEST_FIRST:
        if adapter.claims(span):
            adapter.adapt(span, step)
            top = adapter
    if top is not None:
        step.convention = top.name
        if step.kind == "generic" and step.hint is None:
            # Claimed on a tag alone (``gen_ai.system`` on every span an integration writes)
            # and told nothing: what its keys and values are shaped like still counts.
            _adapt_shape.adapt(span, step)
        return step
    _adapt_generic.adapt(span, step)
    if step.kind == "generic" and step.hint is None:
        # No convention and no name rule: read the span by the shape of its keys and values.
        _adapt_shape.adapt(span, step)
        if step.hint == "shape" or step.kind != "generic":
            step.convention = "shape"
    elif step.kind == "generic" and step.hint == "chain":
        # A task a convention left untyped still executes a tool when it names one
        # (``tool.name`` beside ``traceloop.span.kind = task``).
        _adapt_shape.tool_task(span, step)
    return step


__all__ = ["ADAPTERS", "Adapter", "adapt_span"]
