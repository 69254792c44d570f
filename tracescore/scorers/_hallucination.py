"""``create_hallucination_scorer``: how much of the answer does the context contradict or not
support?"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from tracescore.model import get_assistant_message, get_user_message
from tracescore.scoring import PromptStep, Scorer

from ._faithfulness import EXTRACT_CLAIMS_PROMPT
from ._llm import (
    CLAIMS_SCHEMA,
    ModelLike,
    as_context,
    as_json,
    call_get_context,
    check_scale,
    judged_scorer,
    numbered,
    read_options,
    resolve_judge,
    shown_scale,
    step_items,
    verdicts_schema,
    weighted_share,
)
from ._results import round_score

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

Context:
{context}

Claims:
{claims}"""

REASON_PROMPT = """\
Explain a hallucination score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the share of the answer's claims that the \
context contradicts or does not support (0 means none). Name each contradicted or unsupported \
claim and what the context says instead; if there are none, say that every claim is supported. \
Begin with "The score is {score} because".

User question:
{input}

Answer:
{output}

Context:
{context}

Verdicts:
{verdicts}"""

VERDICTS_SCHEMA = verdicts_schema("verdicts", subject="statement", verdict="verdict",
                                  words="yes (hallucinated) or no")


def create_hallucination_scorer(
    model: ModelLike,
    scale: float = 1,
    context: Sequence[str] | str | None = None,
    get_context: GetContext | None = None,
    *,
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
    (score None) and again with ``"generate_reason"``, and takes priority over ``context``.
    ``options`` accepts Mastra's names (``scale``, ``context``, ``getContext``).
    """
    opts = read_options(options, ("scale", "context", "get_context", "getContext"),
                        "create_hallucination_scorer")
    scale = check_scale(opts.get("scale", scale))
    static = as_context(opts.get("context", context))
    hook = opts.get("get_context") or opts.get("getContext") or get_context
    if hook is not None and not callable(hook):
        raise TypeError("get_context must be a function (run, results, score, step) -> list[str]")
    judge = resolve_judge(model, HALLUCINATION_INSTRUCTIONS)

    async def context_of(run: Any, results: Any, score: float | None, step: str) -> list[str]:
        if hook is not None:
            return await call_get_context(hook, run, results, score, step)
        return static

    def extract_prompt(run: Any) -> str:
        return EXTRACT_CLAIMS_PROMPT.format(output=get_assistant_message(run.output))

    async def analyze_prompt(run: Any, results: Any) -> str:
        claims = step_items(results.preprocess_step_result, "claims")
        ctx = await context_of(run, results, None, "analyze")
        return ANALYZE_PROMPT.format(context=numbered(ctx, "(no context)"),
                                     claims=numbered(claims, "(no claims)"))

    def generate_score(run: Any, results: Any) -> float:
        if not get_assistant_message(run.output).strip() or not step_items(
                results.preprocess_step_result, "claims"):
            return 0.0
        verdicts = step_items(results.analyze_step_result, "verdicts")
        return round_score(weighted_share(verdicts, "verdict", {"yes": 1.0}) * scale)

    async def reason_prompt(run: Any, results: Any, score: float) -> str:
        ctx = await context_of(run, results, score, "generate_reason")
        return REASON_PROMPT.format(
            score=score, scale=shown_scale(scale), input=get_user_message(run.input),
            output=get_assistant_message(run.output), context=numbered(ctx, "(no context)"),
            verdicts=as_json(step_items(results.analyze_step_result, "verdicts")))

    return judged_scorer(
        "hallucination-scorer",
        "Evaluates how much of the agent's answer its context contradicts or does not support",
        name="Hallucination Scorer", judge=judge,
        preprocess=PromptStep("Extract every claim from the answer", extract_prompt,
                              output_schema=CLAIMS_SCHEMA),
        analyze=PromptStep("Judge each claim for hallucination", analyze_prompt,
                           output_schema=VERDICTS_SCHEMA),
        generate_score=generate_score, reason_prompt=reason_prompt)
