"""``create_context_precision_scorer``: are the useful context pieces ranked first?"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    ContextRule,
    Judged,
    LLMScorerSpec,
    Loose,
    build_llm_scorer,
    merge_options,
)
from ._llm import ModelLike, as_json, indexed, verdict_word

CONTEXT_PRECISION_INSTRUCTIONS = """\
You assess retrieved context for a question: for each piece, whether it was useful for \
arriving at the answer. Usefulness is about content, not position. \
Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Decide for every context piece below whether it is useful for answering the question the way \
the answer (and the reference answer, when there is one) does.

- "yes": the piece holds information that the answer relies on or that the question needs;
- "no": the piece does not help to answer the question.

Give one verdict per piece, for every piece, with its index and a one-sentence reason.

Return a JSON object: {{"verdicts": [{{"context_index": <index>, "verdict": "yes" | "no", \
"reason": "<why>"}}, ...]}}

Question:
{input}

Answer:
{output}

Reference answer:
{ground_truth}

Context pieces (index in brackets, in retrieval order):
{context}"""

REASON_PROMPT = """\
Explain a context precision score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the mean average precision of the context, \
high when the useful pieces come first. Say which pieces were useful and whether they were \
ranked ahead of the others. Begin with "The score is {score} because".

Question:
{input}

Verdicts:
{verdicts}"""

NO_CONTEXT = "No context available for evaluation"


class PieceVerdict(Loose):
    """One context piece's usefulness."""

    context_index: int = 0
    verdict: str = Field(description="yes (useful) or no")
    reason: str | None = None


class PieceVerdicts(Loose):
    """The analyze step's reply."""

    verdicts: list[PieceVerdict]


def context_precision_score(verdicts: PieceVerdicts) -> float:
    """Mean average precision of the verdicts sorted by ``context_index``.

    For each useful (``yes``) piece at position i, the share of useful pieces among the first
    i + 1; their mean. No useful piece → 0.
    """
    ordered = sorted(verdicts.verdicts, key=lambda v: v.context_index)
    useful = 0
    precisions = []
    for position, item in enumerate(ordered):
        if verdict_word(item.verdict) == "yes":
            useful += 1
            precisions.append(useful / (position + 1))
    return sum(precisions) / len(precisions) if precisions else 0.0


def _analyze_prompt(j: Judged) -> str:
    if not j.context:
        raise ValueError(NO_CONTEXT)
    return ANALYZE_PROMPT.format(
        input=j.input_text, output=j.output_text, ground_truth=j.ground_truth_text or "(none)",
        context=indexed(j.context, "(no context)"))


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, scale=j.scale, input=j.input_text,
                                verdicts=as_json(j.analyze.verdicts))


CONTEXT_PRECISION = LLMScorerSpec(
    id="context-precision-scorer",
    name="Context Precision Scorer",
    description="Evaluates whether the useful context pieces are ranked ahead of the others",
    instructions=CONTEXT_PRECISION_INSTRUCTIONS,
    analyze=Ask("Judge each context piece's usefulness", _analyze_prompt, PieceVerdicts,
                uses_context=True),
    score=lambda j: context_precision_score(j.analyze),
    reason=Ask("Explain the score", _reason_prompt),
    context=ContextRule(required="Context Precision"),
)


def create_context_precision_scorer(
    model: ModelLike,
    *,
    context: Sequence[str] | None = None,
    context_extractor: Callable[[Any, Any], Any] | None = None,
    scale: float = 1,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged mean average precision of the agent's context (ranking quality).

    Steps: analyze judges each piece's usefulness for the answer (and the run's
    ``ground_truth`` when given) → ``{"verdicts": [{"context_index", "verdict": "yes" | "no",
    "reason"}]}``; the score is ``context_precision_score`` × ``scale``; generate_reason
    explains it.

    The context is ``context`` or ``context_extractor(input, output)``; one of them is
    required (``Either context or contextExtractor is required for Context Precision
    scoring``; an empty list: ``Context array cannot be empty if provided``). A run whose
    resolved context is empty fails with ``No context available for evaluation``.
    """
    opts = merge_options(CONTEXT_PRECISION, {"scale": scale, "context": context,
                                             "context_extractor": context_extractor}, options)
    return build_llm_scorer(CONTEXT_PRECISION, model, opts)
