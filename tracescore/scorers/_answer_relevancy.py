"""``create_answer_relevancy_scorer``: does the answer address what the user asked?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore.model import get_assistant_message, get_user_message
from tracescore.scoring import PromptStep, Scorer

from ._llm import (
    STATEMENTS_SCHEMA,
    ModelLike,
    as_json,
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

ANSWER_RELEVANCY_INSTRUCTIONS = """\
You judge whether an AI assistant's answer addresses what the user asked. Relevance is about \
addressing the question, not about being correct: an on-topic answer with a wrong fact is still \
relevant. Answers can be partly relevant; error messages and empty replies are not relevant.
Follow the answer format each task asks for exactly."""

EXTRACT_PROMPT = """\
Break the answer below into statements: short, self-contained sentences with one idea each, \
keeping the answer's wording where you can. Include everything the answer says, asides and \
offers of help too. If the answer is empty, return an empty list.

Return a JSON object: {{"statements": ["<statement>", ...]}}

Answer:
\"\"\"
{output}
\"\"\""""

ANALYZE_PROMPT = """\
Decide for each statement whether it helps answer the user's question.

- "yes": it answers the question, or gives information the question asks for.
- "unsure": it is about the question's subject and partly useful, but does not answer it (for \
example it describes the kind of information asked for, or gives loosely related background).
- "no": it is off topic, an error message, a refusal with no substance, or filler.

Give exactly one result per statement, in the order of the statements, each with a \
one-sentence reason.

Return a JSON object: {{"results": [{{"statement": "<statement>", "result": "yes" | "no" | \
"unsure", "reason": "<why>"}}, ...]}}

User question:
{input}

Statements:
{statements}"""

REASON_PROMPT = """\
Explain an answer relevancy score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: relevant statements count fully, partly \
relevant ones count {weight}, irrelevant ones not at all. Say what in the answer addresses the \
question and name the statements that do not. Begin with "The score is {score} because".

User question:
{input}

Answer:
{output}

Results:
{results}"""

RESULTS_SCHEMA = verdicts_schema("results", subject="statement", verdict="result",
                                 words="yes, no or unsure")


def create_answer_relevancy_scorer(
    model: ModelLike,
    uncertainty_weight: float = 0.3,
    scale: float = 1,
    *,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged score of how relevant the agent's answer is to the user's question.

    Steps: preprocess splits the assistant's answer into statements → ``{"statements": [...]}``;
    analyze judges each against the user's question → ``{"results": [{"statement", "result":
    "yes" | "no" | "unsure", "reason"}]}``; the score is (yes + ``uncertainty_weight`` × unsure)
    / results × ``scale`` (no statements → 0; another word counts in the total as irrelevant);
    generate_reason explains it.

    ``model``: a litellm model string or a ``Judge``. ``options`` accepts Mastra's names
    (``uncertaintyWeight``, ``scale``).
    """
    opts = read_options(options, ("scale", "uncertainty_weight", "uncertaintyWeight"),
                        "create_answer_relevancy_scorer")
    scale = check_scale(opts.get("scale", scale))
    weight = opts.get("uncertaintyWeight", opts.get("uncertainty_weight", uncertainty_weight))
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise ValueError(f"uncertainty_weight must be between 0 and 1, got {weight!r}")
    weight = float(weight)
    judge = resolve_judge(model, ANSWER_RELEVANCY_INSTRUCTIONS)

    def extract_prompt(run: Any) -> str:
        return EXTRACT_PROMPT.format(output=get_assistant_message(run.output))

    def analyze_prompt(run: Any, results: Any) -> str:
        statements = step_items(results.preprocess_step_result, "statements")
        return ANALYZE_PROMPT.format(input=get_user_message(run.input),
                                     statements=numbered(statements, "(no statements)"))

    def generate_score(run: Any, results: Any) -> float:
        if not step_items(results.preprocess_step_result, "statements"):
            return 0.0
        judged = step_items(results.analyze_step_result, "results")
        return round_score(weighted_share(judged, "result", {"yes": 1.0, "unsure": weight})
                           * scale)

    def reason_prompt(run: Any, results: Any, score: float) -> str:
        return REASON_PROMPT.format(
            score=score, scale=shown_scale(scale), weight=f"{weight:g}",
            input=get_user_message(run.input), output=get_assistant_message(run.output),
            results=as_json(step_items(results.analyze_step_result, "results")))

    return judged_scorer(
        "answer-relevancy-scorer",
        "Evaluates how relevant the agent's answer is to the user's question",
        name="Answer Relevancy Scorer", judge=judge,
        preprocess=PromptStep("Split the answer into statements", extract_prompt,
                              output_schema=STATEMENTS_SCHEMA),
        analyze=PromptStep("Judge each statement's relevance to the question", analyze_prompt,
                           output_schema=RESULTS_SCHEMA),
        generate_score=generate_score, reason_prompt=reason_prompt)
