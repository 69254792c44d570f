"""``create_context_recall_scorer``: how much of the reference answer does the context hold?"""

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
from ._llm import ModelLike, as_json, numbered, verdict_word
from ._schemas import Claims

CONTEXT_RECALL_INSTRUCTIONS = """\
You check whether retrieved context covers a reference answer: for each statement of the \
reference, whether the context contains the information to support it. Use only the context \
in the task, never your own knowledge. Follow the answer format each task asks for exactly."""

CLAIMS_PROMPT = """\
Break the reference answer below into claims: self-contained statements with one fact each, \
pronouns replaced by what they refer to. An empty reference gives an empty list.

Return a JSON object: {{"claims": ["<claim>", ...]}}

Reference answer:
\"\"\"
{ground_truth}
\"\"\""""

ATTRIBUTION_PROMPT = """\
Decide for each claim whether the context supports it.

- "yes": a context piece states the claim or it follows directly from the context;
- "no": the context does not contain it (or contradicts it).

Give exactly one verdict per claim, in the order of the claims, with a one-sentence reason \
naming the piece it rests on.

Return a JSON object: {{"verdicts": [{{"claim": "<claim>", "verdict": "yes" | "no", \
"reason": "<why>"}}, ...]}}

Context:
{context}

Claims:
{claims}"""

REASON_PROMPT = """\
Explain a context recall score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the share of the reference answer's claims \
that the context supports. Name the claims the context does not cover. Begin with "The score \
is {score} because".

Reference answer:
{ground_truth}

Verdicts:
{verdicts}"""


class Attribution(Loose):
    """One reference claim's support in the context."""

    claim: str | None = None
    verdict: str = Field(description="yes (supported by the context) or no")
    reason: str | None = None


class Attributions(Loose):
    """The analyze step's reply."""

    verdicts: list[Attribution]


def context_recall_score(claims: Claims, verdicts: Attributions, *,
                         has_ground_truth: bool = True) -> float:
    """Supported claims / claims, at most 1; no ground truth or no claims → 0."""
    if not has_ground_truth or not claims.claims:
        return 0.0
    supported = sum(1 for v in verdicts.verdicts if verdict_word(v.verdict) == "yes")
    return min(1.0, supported / len(claims.claims))


def _claims_prompt(j: Judged) -> str:
    return CLAIMS_PROMPT.format(ground_truth=j.ground_truth_text)


def _attribution_prompt(j: Judged) -> str:
    return ATTRIBUTION_PROMPT.format(context=numbered(j.context, "(no context)"),
                                     claims=numbered(j.preprocess.claims, "(no claims)"))


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, scale=j.scale,
                                ground_truth=j.ground_truth_text,
                                verdicts=as_json(j.analyze.verdicts))


CONTEXT_RECALL = LLMScorerSpec(
    id="context-recall-scorer",
    name="Context Recall Scorer",
    description="Evaluates how much of the reference answer the agent's context supports",
    instructions=CONTEXT_RECALL_INSTRUCTIONS,
    preprocess=Ask("Extract the claims of the reference answer", _claims_prompt, Claims),
    analyze=Ask("Judge each claim against the context", _attribution_prompt, Attributions,
                uses_context=True),
    score=lambda j: context_recall_score(
        j.preprocess, j.analyze, has_ground_truth=bool(j.ground_truth_text)),
    reason=Ask("Explain the score", _reason_prompt),
    context=ContextRule(required="Context Recall"),
)


def create_context_recall_scorer(
    model: ModelLike,
    *,
    context: Sequence[str] | None = None,
    context_extractor: Callable[[Any, Any], Any] | None = None,
    scale: float = 1,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged share of the reference answer's claims that the context supports.

    Steps: preprocess splits the run's ``ground_truth`` into claims → ``{"claims": [...]}``;
    analyze attributes each to the context → ``{"verdicts": [{"claim", "verdict": "yes" |
    "no", "reason"}]}``; the score is ``context_recall_score`` × ``scale`` (no ground truth or
    no claims → 0); generate_reason names the uncovered claims.

    The context is ``context`` or ``context_extractor(input, output)``; one is required
    (``Either context or contextExtractor is required for Context Recall scoring``; an empty
    list: ``Context array cannot be empty if provided``).
    """
    opts = merge_options(CONTEXT_RECALL, {"scale": scale, "context": context,
                                          "context_extractor": context_extractor}, options)
    return build_llm_scorer(CONTEXT_RECALL, model, opts)
