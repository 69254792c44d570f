"""``create_context_relevance_scorer_llm``: was the context relevant, and was it used?"""

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
    merge_numbers,
    merge_options,
)
from ._llm import ModelLike, as_json, indexed, numbered, verdict_word

CONTEXT_RELEVANCE_INSTRUCTIONS = """\
You assess the context an AI agent was given (retrieved documents, tool results, notes) \
against the question it answered: how relevant each piece is to the question, whether the \
answer made use of it, and what the context lacked that the question needed. \
Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Rate every context piece below, in order, for the user's question.

relevance_level:
- "high": it directly answers the question or holds facts the answer needs;
- "medium": it is useful background for the question;
- "low": it touches the subject but does not help answer the question;
- "none": it is unrelated.
was_used: true when the agent's answer draws on the piece.
Then list, as missing_context, information the question needed that no piece holds (an empty \
list when nothing is missing), and sum up in overall_assessment.

Return a JSON object: {{"evaluations": [{{"context_index": <index>, "context_piece": "<short \
quote>", "relevance_level": "high" | "medium" | "low" | "none", "was_used": true | false, \
"reasoning": "<one sentence>"}}, ...], "missing_context": ["<what is missing>", ...], \
"overall_assessment": "<one or two sentences>"}}

User question:
{input}

Agent's answer:
{output}

Context pieces (index in brackets):
{context}"""

REASON_PROMPT = """\
Explain a context relevance score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the mean relevance of the context pieces \
(high 1, medium 0.7, low 0.3, none 0), lowered for highly relevant pieces the answer ignored \
and for information the context lacked. Say which pieces mattered and what was missing or \
unused. Begin with "The score is {score} because".

User question:
{input}

Evaluations:
{evaluations}

Missing context:
{missing}"""

RELEVANCE_WEIGHTS: dict[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}
DEFAULT_PENALTIES: dict[str, float] = {
    "unused_high_relevance_context": 0.1,
    "missing_context_per_item": 0.15,
    "max_missing_context_penalty": 0.5,
}


class ContextEvaluation(Loose):
    """One context piece's rating."""

    context_index: int | None = None
    context_piece: str | None = None
    relevance_level: str = Field(description="high, medium, low or none")
    was_used: bool = False
    reasoning: str | None = None


class ContextEvaluations(Loose):
    """The analyze step's reply."""

    evaluations: list[ContextEvaluation]
    missing_context: list[str] = Field(default_factory=list)
    overall_assessment: str | None = None


def context_relevance_score(analysis: ContextEvaluations, *, has_context: bool = True,
                            penalties: Mapping[str, float] = DEFAULT_PENALTIES) -> float:
    """The relevance in [0, 1] (before ``scale``).

    No context → 1. No evaluations → 0 when context is missing, else 1. Otherwise the mean
    weight of the relevance levels (high 1, medium .7, low .3, none or another word 0), minus
    ``unused_high_relevance_context`` per high piece not used and ``missing_context_per_item``
    per missing item (at most ``max_missing_context_penalty``), at least 0.
    """
    if not has_context:
        return 1.0
    evaluations = analysis.evaluations
    if not evaluations:
        return 0.0 if analysis.missing_context else 1.0
    base = sum(RELEVANCE_WEIGHTS.get(verdict_word(e.relevance_level), 0.0)
               for e in evaluations) / len(evaluations)
    unused = sum(1 for e in evaluations
                 if verdict_word(e.relevance_level) == "high" and not e.was_used)
    base -= unused * penalties["unused_high_relevance_context"]
    base -= min(len(analysis.missing_context) * penalties["missing_context_per_item"],
                penalties["max_missing_context_penalty"])
    return max(0.0, base)


def _analyze_prompt(j: Judged) -> str:
    return ANALYZE_PROMPT.format(input=j.input_text, output=j.output_text,
                                 context=indexed(j.context, "(no context)"))


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, scale=j.scale, input=j.input_text,
                                evaluations=as_json(j.analyze.evaluations),
                                missing=numbered(j.analyze.missing_context, "(none)"))


CONTEXT_RELEVANCE = LLMScorerSpec(
    id="context-relevance-scorer",
    name="Context Relevance (LLM)",
    description="Evaluates how relevant the agent's context is to the question and how well "
                "the answer used it",
    instructions=CONTEXT_RELEVANCE_INSTRUCTIONS,
    analyze=Ask("Rate each context piece's relevance and use", _analyze_prompt,
                ContextEvaluations, uses_context=True),
    score=lambda j: context_relevance_score(j.analyze, has_context=bool(j.context),
                                            penalties=j.options["penalties"]),
    reason=Ask("Explain the score", _reason_prompt),
    context=ContextRule(required="Context Relevance"),
    score_context=True,
    option_names=("penalties",),
    factory="create_context_relevance_scorer_llm",
)


def create_context_relevance_scorer_llm(
    model: ModelLike,
    *,
    context: Sequence[str] | None = None,
    context_extractor: Callable[[Any, Any], Any] | None = None,
    scale: float = 1,
    penalties: Mapping[str, float] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged relevance of the agent's context to the question, and its use.

    Steps: analyze rates each context piece → ``{"evaluations": [{"context_index",
    "context_piece", "relevance_level": "high" | "medium" | "low" | "none", "was_used",
    "reasoning"}], "missing_context", "overall_assessment"}``; the score is
    ``context_relevance_score`` × ``scale``; generate_reason explains it.

    The context is ``context`` (a list of strings) or ``context_extractor(input, output)``
    (sync or async, used when the run has both); one of them is required: ``Either context or
    contextExtractor is required for Context Relevance scoring``; an empty ``context`` list
    raises ``Context array cannot be empty if provided``. ``penalties`` overrides
    ``unused_high_relevance_context`` (0.1), ``missing_context_per_item`` (0.15) and
    ``max_missing_context_penalty`` (0.5). ``options`` accepts Mastra's names.
    """
    opts = merge_options(CONTEXT_RELEVANCE, {
        "scale": scale, "context": context, "context_extractor": context_extractor,
        "penalties": penalties}, options)
    opts["penalties"] = merge_numbers("penalties", DEFAULT_PENALTIES, opts["penalties"])
    return build_llm_scorer(CONTEXT_RELEVANCE, model, opts)
