"""``create_faithfulness_scorer``: how much of the answer does the context support?"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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

FAITHFULNESS_INSTRUCTIONS = """\
You are a careful fact checker. You compare what an AI assistant said with the context it was \
given, claim by claim, and decide whether the context backs each claim up.
Judge only against the context in the task: your own knowledge never counts as support or as a \
contradiction. Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Decide for each claim whether the context supports it.

- "yes": the context states the claim, or the claim follows directly from it.
- "no": something in the context contradicts the claim.
- "unsure": the context neither confirms nor contradicts the claim. A speculative claim \
("might", "may", "possibly") that the context does not state is "unsure".

Use only the context. With no context at all, every claim is "unsure".
Give exactly one verdict per claim, in the order of the claims, each with a one-sentence reason \
that points at the part of the context it rests on.

Return a JSON object: {{"verdicts": [{{"claim": "<claim>", "verdict": "yes" | "no" | "unsure", \
"reason": "<why>"}}, ...]}}

""" + CLAIMS_MATERIAL

REASON_PROMPT = """\
Explain a faithfulness score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the share of the answer's claims that the \
context supports. Say briefly which claims the context supports, and name each claim it \
contradicts or cannot confirm. Begin with "The score is {score} because".

""" + REASON_MATERIAL


class ClaimVerdict(Loose):
    """One claim's verdict against the context."""

    claim: str | None = None
    verdict: str = Field(description="yes, no or unsure")
    reason: str | None = None


class ClaimVerdicts(Loose):
    """The analyze step's reply."""

    verdicts: list[ClaimVerdict]


def faithfulness_score(claims: Claims, verdicts: ClaimVerdicts) -> float:
    """Supported verdicts / verdicts (no claims → 0; an unknown word counts in the total)."""
    if not claims.claims:
        return 0.0
    return share(verdicts.verdicts, "verdict")


FAITHFULNESS = LLMScorerSpec(
    id="faithfulness-scorer",
    name="Faithfulness Scorer",
    description="Evaluates how faithful the agent's answer is to the given context",
    instructions=FAITHFULNESS_INSTRUCTIONS,
    preprocess=Ask("Extract every claim from the answer", extract_claims_prompt, Claims),
    analyze=Ask("Judge each claim against the context", claims_prompt(ANALYZE_PROMPT),
                ClaimVerdicts,
                uses_context=True),
    score=lambda j: faithfulness_score(j.preprocess, j.analyze),
    reason=Ask("Explain the score", claims_reason_prompt(REASON_PROMPT), uses_context=True),
    context=ContextRule(default="tool_results"),
)


def create_faithfulness_scorer(
    model: ModelLike,
    scale: float = 1,
    context: Sequence[str] | str | None = None,
    *,
    context_extractor: Callable[[Any, Any], Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged score of how faithful the agent's answer is to its context.

    Steps: preprocess extracts every claim of the assistant's answer (factual and speculative)
    → ``{"claims": [...]}``; analyze judges each claim against the context → ``{"verdicts":
    [{"claim", "verdict": "yes" | "no" | "unsure", "reason"}]}``; the score is supported /
    verdicts × ``scale`` (no claims → 0; a verdict word other than yes/no/unsure counts in the
    total, not as supported; case and surrounding spaces are ignored); generate_reason explains
    it with the concrete claims.

    ``model``: a litellm model string or a ``Judge`` (for ``api_base``, ``api_key``, settings).
    ``context``: the facts to check against; ``context_extractor(input, output)`` computes them
    per run instead; without either, the results of the tool calls in the agent's output
    (``extract_tool_results``) are the context. ``options`` accepts Mastra's option names
    (``scale``, ``context``, ``contextExtractor``).
    """
    opts = merge_options(FAITHFULNESS, {"scale": scale, "context": context,
                                        "context_extractor": context_extractor}, options)
    return build_llm_scorer(FAITHFULNESS, model, opts)
