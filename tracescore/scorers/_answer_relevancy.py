"""``create_answer_relevancy_scorer``: does the answer address what the user asked?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import Ask, Judged, LLMScorerSpec, Loose, build_llm_scorer, merge_options, share
from ._llm import ModelLike, as_json, numbered
from ._schemas import Statements

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


class StatementResult(Loose):
    """One statement's relevance to the question."""

    statement: str | None = None
    result: str = Field(description="yes, no or unsure")
    reason: str | None = None


class StatementResults(Loose):
    """The analyze step's reply."""

    results: list[StatementResult]


def answer_relevancy_score(statements: Statements, results: StatementResults,
                           uncertainty_weight: float) -> float:
    """(yes + ``uncertainty_weight`` × unsure) / results; no statements → 0 (another word
    counts in the total as irrelevant)."""
    if not statements.statements:
        return 0.0
    return share(results.results, "result", {"yes": 1.0, "unsure": uncertainty_weight})


def _extract_prompt(j: Judged) -> str:
    return EXTRACT_PROMPT.format(output=j.output_text)


def _analyze_prompt(j: Judged) -> str:
    return ANALYZE_PROMPT.format(input=j.input_text,
                                 statements=numbered(j.preprocess.statements, "(no statements)"))


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(
        score=j.score, scale=j.scale, weight=f"{j.options['uncertainty_weight']:g}",
        input=j.input_text, output=j.output_text, results=as_json(j.analyze.results))


ANSWER_RELEVANCY = LLMScorerSpec(
    id="answer-relevancy-scorer",
    name="Answer Relevancy Scorer",
    description="Evaluates how relevant the agent's answer is to the user's question",
    instructions=ANSWER_RELEVANCY_INSTRUCTIONS,
    preprocess=Ask("Split the answer into statements", _extract_prompt, Statements),
    analyze=Ask("Judge each statement's relevance to the question", _analyze_prompt,
                StatementResults),
    score=lambda j: answer_relevancy_score(j.preprocess, j.analyze,
                                           j.options["uncertainty_weight"]),
    reason=Ask("Explain the score", _reason_prompt),
    option_names=("uncertainty_weight",),
)


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
    opts = merge_options(ANSWER_RELEVANCY, {"scale": scale,
                                            "uncertainty_weight": uncertainty_weight}, options)
    weight = opts["uncertainty_weight"]
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise ValueError(f"uncertainty_weight must be between 0 and 1, got {weight!r}")
    opts["uncertainty_weight"] = float(weight)
    return build_llm_scorer(ANSWER_RELEVANCY, model, opts)
