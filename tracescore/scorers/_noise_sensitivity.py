"""``create_noise_sensitivity_scorer_llm``: does noise in the query change the answer?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    Judged,
    LLMScorerSpec,
    Loose,
    build_llm_scorer,
    merge_numbers,
    merge_options,
    snake,
)
from ._llm import ModelLike, as_json, numbered, verdict_word

NOISE_SENSITIVITY_INSTRUCTIONS = """\
You test how robust an AI agent is to noise: irrelevant, distracting or misleading material \
added to a question. You compare the answer the agent gave to the clean question with the \
answer it gave to the noisy one, and judge how far the noise changed what matters: accuracy, \
relevance, completeness and focus. Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Compare the two answers below and judge how much the noise in the second question changed the \
agent's answer.

For each dimension (accuracy, relevance, completeness, consistency, focus) give impact_level:
- "none": no change that matters;
- "minimal": small changes in wording or emphasis;
- "moderate": some content changed or was lost, the answer still serves the question;
- "significant": the noise took over part of the answer or introduced errors;
- "severe": the answer follows the noise instead of the question.
Describe the specific changes and how the noise caused them. List major_issues: serious \
problems the noise caused (wrong facts taken from the noise, the question left unanswered); an \
empty list when there are none. Give robustness_score between 0 (the noise ruined the answer) \
and 1 (the answer is as good as the baseline).

Return a JSON object: {{"dimensions": [{{"dimension": "<name>", "impact_level": "none" | \
"minimal" | "moderate" | "significant" | "severe", "specific_changes": "<what changed>", \
"noise_influence": "<how the noise caused it>"}}, ...], "overall_assessment": "<one or two \
sentences>", "major_issues": ["<issue>", ...], "robustness_score": <number from 0 to 1>}}

Original question:
{query}

Baseline answer (to the original question):
{baseline}

Noisy question{noise_type}:
{noisy_query}

Answer to the noisy question:
{response}"""

REASON_PROMPT = """\
Explain a noise sensitivity score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to 1: 1 means the noise did not change the answer in \
any way that matters. Say which dimensions the noise affected and name the major issues. Begin \
with "The score is {score} because".

Original question:
{query}

Dimensions:
{dimensions}

Major issues:
{issues}

Overall assessment:
{assessment}"""

NEEDS_BOTH = "Both baselineResponse and noisyQuery are required for Noise Sensitivity scoring"
NO_QUERY_OR_RESPONSE = "Both original query and noisy response are required for evaluation"
DEFAULT_IMPACT_WEIGHTS: dict[str, float] = {"none": 1.0, "minimal": 0.85, "moderate": 0.6,
                                            "significant": 0.3, "severe": 0.1}
DEFAULT_PENALTIES: dict[str, float] = {"major_issue_per_item": 0.1,
                                       "max_major_issue_penalty": 0.3}
DEFAULT_SCORING: dict[str, Any] = {
    "impact_weights": DEFAULT_IMPACT_WEIGHTS,
    "penalties": DEFAULT_PENALTIES,
    "discrepancy_threshold": 0.2,
}


class Dimension(Loose):
    """One quality dimension's change under noise."""

    dimension: str | None = None
    impact_level: str = Field(description="none, minimal, moderate, significant or severe")
    specific_changes: str | None = None
    noise_influence: str | None = None


class NoiseAnalysis(Loose):
    """The analyze step's reply."""

    dimensions: list[Dimension] = Field(default_factory=list)
    overall_assessment: str | None = None
    major_issues: list[str] = Field(default_factory=list)
    robustness_score: float = Field(description="0 (ruined) to 1 (unaffected)")


def noise_sensitivity_score(analysis: NoiseAnalysis,
                            scoring: Mapping[str, Any] = DEFAULT_SCORING) -> float:
    """The robustness in [0, 1].

    The judge's ``robustness_score``, clamped to [0, 1]; when there are dimensions and it
    differs from their mean impact weight by more than ``discrepancy_threshold``, the lower of
    the two; minus ``major_issue_per_item`` per major issue (at most
    ``max_major_issue_penalty``); at least 0. An impact word not in the weights counts 0.
    """
    weights = scoring["impact_weights"]
    penalties = scoring["penalties"]
    value = min(1.0, max(0.0, float(analysis.robustness_score)))
    if analysis.dimensions:
        calculated = sum(weights.get(verdict_word(d.impact_level), 0.0)
                         for d in analysis.dimensions) / len(analysis.dimensions)
        if abs(value - calculated) > scoring["discrepancy_threshold"]:
            value = min(value, calculated)
    penalty = min(len(analysis.major_issues) * penalties["major_issue_per_item"],
                  penalties["max_major_issue_penalty"])
    return max(0.0, value - float(penalty))


def resolve_scoring(scoring: Mapping[str, Any] | None) -> dict[str, Any]:
    """The defaults with the user's ``scoring`` merged in (either spelling of the keys)."""
    given = {snake(k): v for k, v in (scoring or {}).items()}
    unknown = sorted(set(given) - set(DEFAULT_SCORING))
    if unknown:
        raise TypeError(f"scoring: unknown key(s) {', '.join(unknown)}; use "
                        "impact_weights, penalties, discrepancy_threshold")
    threshold = merge_numbers("scoring", {"discrepancy_threshold": 0.2},
                              {"discrepancy_threshold": given.get("discrepancy_threshold", 0.2)})
    return {
        "impact_weights": merge_numbers("scoring.impact_weights", DEFAULT_IMPACT_WEIGHTS,
                                        given.get("impact_weights")),
        "penalties": merge_numbers("scoring.penalties", DEFAULT_PENALTIES,
                                   given.get("penalties")),
        "discrepancy_threshold": threshold["discrepancy_threshold"],
    }


def _analyze_prompt(j: Judged) -> str:
    query, response = j.input_text, j.output_text
    if not query.strip() or not response.strip():
        raise ValueError(NO_QUERY_OR_RESPONSE)
    noise_type = j.options.get("noise_type")
    return ANALYZE_PROMPT.format(
        query=query, baseline=j.options["baseline_response"],
        noisy_query=j.options["noisy_query"], response=response,
        noise_type=f" (noise: {noise_type})" if noise_type else "")


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, query=j.input_text,
                                dimensions=as_json(j.analyze.dimensions),
                                issues=numbered(j.analyze.major_issues, "(none)"),
                                assessment=j.analyze.overall_assessment or "(none)")


NOISE_SENSITIVITY = LLMScorerSpec(
    id="noise-sensitivity-scorer",
    name="Noise Sensitivity (LLM)",
    description="Evaluates how robust the agent is to irrelevant, distracting or misleading "
                "information in the question",
    instructions=NOISE_SENSITIVITY_INSTRUCTIONS,
    analyze=Ask("Compare the baseline and the noisy answer", _analyze_prompt, NoiseAnalysis),
    score=lambda j: noise_sensitivity_score(j.analyze, j.options["scoring"]),
    reason=Ask("Explain the score", _reason_prompt),
    scaled=False,
    option_names=("baseline_response", "noisy_query", "noise_type", "scoring"),
    factory="create_noise_sensitivity_scorer_llm",
)


def create_noise_sensitivity_scorer_llm(
    model: ModelLike,
    *,
    baseline_response: str | None = None,
    noisy_query: str | None = None,
    noise_type: str | None = None,
    scoring: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged robustness of the agent's answer to noise added to the question.

    The run's input is the original question and its output the answer to the noisy question;
    ``baseline_response`` is the answer to the original question and ``noisy_query`` the
    question with noise (``noise_type`` names the kind, e.g. ``"misinformation"``). Steps:
    analyze compares the two answers → ``{"dimensions": [{"dimension", "impact_level",
    "specific_changes", "noise_influence"}], "overall_assessment", "major_issues",
    "robustness_score"}``; the score is ``noise_sensitivity_score`` (not scaled);
    generate_reason explains it.

    ``scoring`` overrides ``impact_weights`` (none 1, minimal .85, moderate .6, significant .3,
    severe .1), ``penalties`` (``major_issue_per_item`` .1, ``max_major_issue_penalty`` .3) and
    ``discrepancy_threshold`` (.2). Without both ``baseline_response`` and ``noisy_query``:
    ``Both baselineResponse and noisyQuery are required for Noise Sensitivity scoring``; a run
    without a question or an answer fails with ``Both original query and noisy response are
    required for evaluation``. ``options`` accepts Mastra's names.
    """
    opts = merge_options(NOISE_SENSITIVITY, {
        "baseline_response": baseline_response, "noisy_query": noisy_query,
        "noise_type": noise_type, "scoring": scoring}, options)
    if not opts["baseline_response"] or not opts["noisy_query"]:
        raise ValueError(NEEDS_BOTH)
    opts["scoring"] = resolve_scoring(opts["scoring"])
    return build_llm_scorer(NOISE_SENSITIVITY, model, opts)
