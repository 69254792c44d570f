"""``create_hallucination_scorer``: how much of the answer does the context contradict or not
support?"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    ContextRule,
    LLMScorerSpec,
    Loose,
    build_llm_scorer,
    merge_options,
    share,
)
from ._claims import (
    CLAIMS_MATERIAL,
    REASON_MATERIAL,
    claims_prompt,
    claims_reason_prompt,
    extract_claims_prompt,
)
from ._llm import ModelLike
from ._schemas import Claims

GetContext = Callable[[Any, Any, "float | None", str],
                      "Sequence[str] | str | None | Awaitable[Sequence[str] | str | None]"]

HALLUCINATION_INSTRUCTIONS = """\
You detect hallucinations: statements in an AI assistant's answer that the context it was given \
contradicts or does not support.
Judge only against the context in the task: your own knowledge never makes a statement true or \
false. Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Decide for each claim whether it is a hallucination with respect to the context.

- "yes" (hallucination): the context contradicts the claim, or the claim states something the \
context does not contain. This includes subjective or promotional statements the context does \
not back, and speculation about facts the context does not mention.
- "no" (not a hallucination): the context supports the claim. Hedged or speculative wording \
about a fact the context does contain is not a hallucination, nor is a reasonable approximation \
of a number the context gives; a number far from the context's value is.

With no context at all, every factual claim is a hallucination.
Give exactly one verdict per claim, in the order of the claims: repeat the claim as "statement" \
and add a one-sentence reason.

Return a JSON object: {{"verdicts": [{{"statement": "<claim>", "verdict": "yes" | "no", \
"reason": "<why>"}}, ...]}}

""" + CLAIMS_MATERIAL

REASON_PROMPT = """\
Explain a hallucination score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the share of the answer's claims that the \
context contradicts or does not support (0 means none). Name each contradicted or unsupported \
claim and what the context says instead; if there are none, say that every claim is supported. \
Begin with "The score is {score} because".

""" + REASON_MATERIAL


class StatementVerdict(Loose):
    """One claim's hallucination verdict."""

    statement: str | None = None
    verdict: str = Field(description="yes (hallucinated) or no")
    reason: str | None = None


class StatementVerdicts(Loose):
    """The analyze step's reply."""

    verdicts: list[StatementVerdict]


def hallucination_score(answer: str, claims: Claims, verdicts: StatementVerdicts) -> float:
    """Hallucinated verdicts / verdicts; an empty answer or no claims → 0 (an unknown word
    counts in the total, not as hallucinated)."""
    if not answer.strip() or not claims.claims:
        return 0.0
    return share(verdicts.verdicts, "verdict")


HALLUCINATION = LLMScorerSpec(
    id="hallucination-scorer",
    name="Hallucination Scorer",
    description="Evaluates how much of the agent's answer its context contradicts or does not "
                "support",
    instructions=HALLUCINATION_INSTRUCTIONS,
    preprocess=Ask("Extract every claim from the answer", extract_claims_prompt, Claims),
    analyze=Ask("Judge each claim for hallucination", claims_prompt(ANALYZE_PROMPT),
                StatementVerdicts,
                uses_context=True),
    score=lambda j: hallucination_score(j.output_text, j.preprocess, j.analyze),
    reason=Ask("Explain the score", claims_reason_prompt(REASON_PROMPT), uses_context=True),
    context=ContextRule(default="none", hook=True),
)


def create_hallucination_scorer(
    model: ModelLike,
    scale: float = 1,
    context: Sequence[str] | str | None = None,
    get_context: GetContext | None = None,
    *,
    context_extractor: Callable[[Any, Any], Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged share of the agent's claims that its context contradicts or lacks.

    Steps: preprocess extracts the claims of the assistant's answer → ``{"claims": [...]}``;
    analyze judges each → ``{"verdicts": [{"statement", "verdict": "yes" | "no", "reason"}]}``
    where ``yes`` means hallucinated (contradicted by, or missing from, the context; speculation
    about facts in the context is allowed, about facts not in it is not); the score is
    hallucinated / verdicts × ``scale`` (an empty answer or no claims → 0; a verdict word other
    than yes/no counts in the total, not as hallucinated); generate_reason names the claims.

    ``model``: a litellm model string or a ``Judge``. ``context``: the facts to check against
    (none means every factual claim is unsupported). ``get_context(run, results, score, step)``,
    sync or async, supplies the context at run time: it is called with step ``"analyze"``
    (score None) and again with ``"generate_reason"``, and takes priority over ``context`` and
    ``context_extractor(input, output)``. ``options`` accepts Mastra's names (``scale``,
    ``context``, ``getContext``, ``contextExtractor``).
    """
    opts = merge_options(HALLUCINATION, {"scale": scale, "context": context,
                                         "get_context": get_context,
                                         "context_extractor": context_extractor}, options)
    return build_llm_scorer(HALLUCINATION, model, opts)
