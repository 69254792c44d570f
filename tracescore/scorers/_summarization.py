"""``create_summarization_scorer``: is the summary faithful to its source, and complete?"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from ._llm import ModelLike, numbered

SUMMARIZATION_INSTRUCTIONS = """\
You evaluate summaries. A good summary states only what its source says, and keeps the \
information a reader of the source would most want. You check both, strictly: a claim the \
source does not make is unsupported, however plausible. \
Follow the answer format each task asks for exactly."""

SOURCE_PROMPT = """\
Do two things with the source text and the summary below.

1. alignment: split the summary into claims (one fact each) and decide for each whether the \
source supports it (supported true) or not (false: contradicted or not in the source), with a \
one-sentence reason.
2. questions: write up to {max_questions} short questions that the source answers and a good \
summary of it should answer too, most important first. Each must be answerable from the \
source alone, with a short factual answer.

Return a JSON object: {{"alignment": [{{"claim": "<claim>", "supported": true | false, \
"reason": "<why>"}}, ...], "questions": ["<question>", ...]}}

Source text:
\"\"\"
{source}
\"\"\"

Summary:
\"\"\"
{summary}
\"\"\""""

COVERAGE_PROMPT = """\
Answer each question below using only the summary: decide whether the summary contains the \
answer (answered true) or not (false), with a one-sentence reason. Do not use any other \
knowledge; a question the summary does not answer is not answered.

Return a JSON object: {{"coverage": [{{"question": "<question>", "answered": true | false, \
"reason": "<why>"}}, ...]}}

Summary:
\"\"\"
{summary}
\"\"\"

Questions:
{questions}"""

REASON_PROMPT = """\
Explain a summarization score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: the lower of alignment ({alignment}, the \
share of the summary's claims the source supports) and coverage ({coverage}, the share of the \
source's key questions the summary answers). Say which of the two set the score and name the \
unsupported claims or unanswered questions. Begin with "The score is {score} because".

Summary:
{summary}

Unsupported claims:
{unsupported}

Unanswered questions:
{unanswered}"""

MAX_QUESTIONS = 10


class ClaimSupport(Loose):
    """One summary claim and whether the source supports it."""

    claim: str | None = None
    supported: bool
    reason: str | None = None


class SourceJudgement(Loose):
    """The preprocess step's reply."""

    alignment: list[ClaimSupport]
    questions: list[str] = Field(default_factory=list)


class QuestionCoverage(Loose):
    """One source question and whether the summary answers it."""

    question: str | None = None
    answered: bool
    reason: str | None = None


class Coverage(Loose):
    """The analyze step's reply."""

    coverage: list[QuestionCoverage]


def summary_axes(source: SourceJudgement, coverage: Coverage,
                 max_questions: int = MAX_QUESTIONS) -> tuple[float, float, bool]:
    """(alignment, coverage, scorable).

    alignment = supported claims / claims; coverage = answered among the first Q coverage
    verdicts / Q, where Q = min(questions, ``max_questions``) (verdicts beyond Q are dropped,
    missing ones count as unanswered). Not scorable when there are no claims or Q = 0.
    """
    total = min(len(source.questions), max_questions)
    claims = source.alignment
    aligned = sum(1 for c in claims if c.supported) / len(claims) if claims else 0.0
    answered = sum(1 for c in coverage.coverage[:total] if c.answered)
    covered = min(1.0, answered / total) if total else 0.0
    return aligned, covered, bool(claims) and total > 0


def summarization_score(source: SourceJudgement, coverage: Coverage,
                        max_questions: int = MAX_QUESTIONS) -> float:
    """min(alignment, coverage) (before ``scale``); 0 when not scorable (``summary_axes``)."""
    aligned, covered, scorable = summary_axes(source, coverage, max_questions)
    return min(aligned, covered) if scorable else 0.0


def _source(j: Judged) -> str:
    return "\n\n".join(j.context)


def _source_prompt(j: Judged) -> str:
    return SOURCE_PROMPT.format(max_questions=j.options["max_questions"],
                                source=_source(j) or "(no source text)", summary=j.output_text)


def _coverage_prompt(j: Judged) -> str:
    questions = j.preprocess.questions[:j.options["max_questions"]]
    return COVERAGE_PROMPT.format(summary=j.output_text,
                                  questions=numbered(questions, "(no questions)"))


def _reason_prompt(j: Judged) -> str:
    limit = j.options["max_questions"]
    aligned, covered, _ = summary_axes(j.preprocess, j.analyze, limit)
    return REASON_PROMPT.format(
        score=j.score, scale=j.scale, alignment=f"{aligned:.2f}", coverage=f"{covered:.2f}",
        summary=j.output_text,
        unsupported=numbered([c.claim or "" for c in j.preprocess.alignment
                              if not c.supported], "(none)"),
        unanswered=numbered([c.question or "" for c in j.analyze.coverage[:limit]
                             if not c.answered], "(none)"))


SUMMARIZATION = LLMScorerSpec(
    id="summarization-scorer",
    name="Summarization Scorer",
    description="Evaluates whether a summary stays faithful to its source and keeps the "
                "information the source states",
    instructions=SUMMARIZATION_INSTRUCTIONS,
    preprocess=Ask("Judge the summary's claims against the source and draw coverage questions",
                   _source_prompt, SourceJudgement, uses_context=True),
    analyze=Ask("Answer the coverage questions from the summary alone", _coverage_prompt,
                Coverage),
    score=lambda j: summarization_score(j.preprocess, j.analyze, j.options["max_questions"]),
    reason=Ask("Explain the score", _reason_prompt),
    context=ContextRule(key="source", default="input"),
    option_names=("max_questions",),
)


def create_summarization_scorer(
    model: ModelLike,
    *,
    scale: float = 1,
    source: str | None = None,
    source_extractor: Callable[[Any, Any], Any] | None = None,
    max_questions: int = MAX_QUESTIONS,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged summary score: the lower of alignment and coverage.

    The summary is the last assistant message with text. The source is ``source``, or
    ``source_extractor(input, output)`` (used when the run has both), else the run's first
    user message. Steps: preprocess judges each summary claim against the source and draws up
    to ``max_questions`` questions from it → ``{"alignment": [{"claim", "supported",
    "reason"}], "questions"}``; analyze answers the questions from the summary alone (the
    judge never sees the source there) → ``{"coverage": [{"question", "answered",
    "reason"}]}``; the score is ``summarization_score`` × ``scale`` (0 when there are no claims
    or no questions); generate_reason says which axis set it.

    ``max_questions`` below 1 raises ``maxQuestions must be at least 1 for Summarization
    scoring``. ``options`` accepts Mastra's names (``sourceExtractor``, ``maxQuestions``).
    """
    opts = merge_options(SUMMARIZATION, {"scale": scale, "source": source,
                                         "source_extractor": source_extractor,
                                         "max_questions": max_questions}, options)
    limit = opts["max_questions"]
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError("maxQuestions must be at least 1 for Summarization scoring")
    return build_llm_scorer(SUMMARIZATION, model, opts)
