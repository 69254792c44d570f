"""``create_faithfulness_scorer``: how much of the answer does the context support?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracescore.model import get_assistant_message, get_user_message
from tracescore.scoring import PromptStep, Scorer

from ._llm import (
    CLAIMS_SCHEMA,
    ModelLike,
    as_context,
    as_json,
    check_scale,
    judged_scorer,
    numbered,
    read_options,
    resolve_judge,
    shown_scale,
    step_items,
    tool_context,
    verdicts_schema,
    weighted_share,
)
from ._results import round_score

FAITHFULNESS_INSTRUCTIONS = """\
You are a careful fact checker. You compare what an AI assistant said with the context it was \
given, claim by claim, and decide whether the context backs each claim up.
Judge only against the context in the task: your own knowledge never counts as support or as a \
contradiction. Follow the answer format each task asks for exactly."""

EXTRACT_CLAIMS_PROMPT = """\
Break the text below into claims.

A claim is one self-contained statement that can be checked against a source.
- Split a sentence that says several things into one claim per fact.
- Keep hedged or speculative statements ("may", "might", "probably", "will likely") as claims, \
with their hedging words.
- Make each claim stand on its own: replace pronouns with what they refer to.
- Leave out greetings, questions, offers of help and remarks about the conversation itself.
- If the text is empty or makes no claims, return an empty list.

Return a JSON object: {{"claims": ["<claim>", ...]}}

Text:
\"\"\"
{output}
\"\"\""""

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

Context:
{context}

Claims:
{claims}"""

REASON_PROMPT = """\
Explain a faithfulness score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the share of the answer's claims that the \
context supports. Say briefly which claims the context supports, and name each claim it \
contradicts or cannot confirm. Begin with "The score is {score} because".

User question:
{input}

Answer:
{output}

Context:
{context}

Verdicts:
{verdicts}"""

VERDICTS_SCHEMA = verdicts_schema("verdicts", subject="claim", verdict="verdict",
                                  words="yes, no or unsure")


def create_faithfulness_scorer(
    model: ModelLike,
    scale: float = 1,
    context: Sequence[str] | str | None = None,
    *,
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
    ``context``: the facts to check against; without it, the results of the tool calls in the
    agent's output (``extract_tool_results``) are the context. ``options`` accepts Mastra's
    option names (``scale``, ``context``).
    """
    opts = read_options(options, ("scale", "context"), "create_faithfulness_scorer")
    scale = check_scale(opts.get("scale", scale))
    static = as_context(opts["context"]) if opts.get("context") is not None else (
        as_context(context) if context is not None else None)
    judge = resolve_judge(model, FAITHFULNESS_INSTRUCTIONS)

    def context_of(run: Any) -> list[str]:
        return static if static is not None else tool_context(run.output)

    def extract_prompt(run: Any) -> str:
        return EXTRACT_CLAIMS_PROMPT.format(output=get_assistant_message(run.output))

    def analyze_prompt(run: Any, results: Any) -> str:
        claims = step_items(results.preprocess_step_result, "claims")
        return ANALYZE_PROMPT.format(context=numbered(context_of(run), "(no context)"),
                                     claims=numbered(claims, "(no claims)"))

    def generate_score(run: Any, results: Any) -> float:
        if not step_items(results.preprocess_step_result, "claims"):
            return 0.0
        verdicts = step_items(results.analyze_step_result, "verdicts")
        return round_score(weighted_share(verdicts, "verdict", {"yes": 1.0}) * scale)

    def reason_prompt(run: Any, results: Any, score: float) -> str:
        return REASON_PROMPT.format(
            score=score, scale=shown_scale(scale), input=get_user_message(run.input),
            output=get_assistant_message(run.output),
            context=numbered(context_of(run), "(no context)"),
            verdicts=as_json(step_items(results.analyze_step_result, "verdicts")))

    return judged_scorer(
        "faithfulness-scorer",
        "Evaluates how faithful the agent's answer is to the given context",
        name="Faithfulness Scorer", judge=judge,
        preprocess=PromptStep("Extract every claim from the answer", extract_prompt,
                              output_schema=CLAIMS_SCHEMA),
        analyze=PromptStep("Judge each claim against the context", analyze_prompt,
                           output_schema=VERDICTS_SCHEMA),
        generate_score=generate_score, reason_prompt=reason_prompt)
