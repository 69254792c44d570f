"""``create_answer_similarity_scorer``: how close is the answer to the reference answer?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import Ask, Judged, LLMScorerSpec, Loose, build_llm_scorer, merge_options
from ._llm import ModelLike, as_json, numbered, verdict_word

ANSWER_SIMILARITY_INSTRUCTIONS = """\
You compare an AI assistant's answer with a reference answer, idea by idea. You look at meaning, \
not wording: a paraphrase of a reference idea matches it; a number or name that differs does not. \
Follow the answer format each task asks for exactly."""

UNITS_PROMPT = """\
Split each of the two texts below into units: short self-contained pieces of information (a \
fact, a step, a figure, a recommendation), one idea each. Keep each unit close to the text's \
wording. Leave out greetings and filler. A text with no information gives an empty list.

Return a JSON object: {{"output_units": ["<unit of the answer>", ...], \
"ground_truth_units": ["<unit of the reference>", ...]}}

Answer:
\"\"\"
{output}
\"\"\"

Reference answer:
\"\"\"
{ground_truth}
\"\"\""""

MATCH_PROMPT = """\
Match every unit of the reference answer with the answer's units.

For each reference unit give one match:
- "exact": an answer unit says the same thing in (nearly) the same words;
- "semantic": an answer unit says the same thing in other words;
- "partial": an answer unit covers part of it, or says it less precisely;
- "missing": no answer unit covers it (output_unit is null).
Then list the answer units that add information the reference does not have (extra_in_output), \
and the answer units that contradict a reference unit (contradictions).

Return a JSON object: {{"matches": [{{"ground_truth_unit": "<reference unit>", "output_unit": \
"<answer unit>" | null, "match_type": "exact" | "semantic" | "partial" | "missing", \
"explanation": "<one sentence>"}}, ...], "extra_in_output": ["<answer unit>", ...], \
"contradictions": ["<answer unit>", ...]}}

Reference units:
{ground_truth_units}

Answer units:
{output_units}"""

REASON_PROMPT = """\
Explain an answer similarity score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}: reference ideas the answer states exactly or \
in other words count fully, partial ones half; missing ideas, contradictions and (a little) \
extra information lower it. Say which reference ideas the answer covers and name what it misses \
or contradicts. Begin with "The score is {score} because".

Reference answer:
{ground_truth}

Answer:
{output}

Matches:
{matches}

Contradictions:
{contradictions}

Extra information:
{extra}"""

NO_GROUND_TRUTH = "Answer Similarity Scorer requires ground truth to be provided"
DEFAULTS: dict[str, Any] = {
    "require_ground_truth": True,
    "semantic_threshold": 0.8,
    "exact_match_bonus": 0.2,
    "missing_penalty": 0.15,
    "contradiction_penalty": 0.3,
    "extra_info_penalty": 0.05,
}
MAX_EXTRA_PENALTY = 0.2


class Units(Loose):
    """The preprocess step's reply."""

    output_units: list[str]
    ground_truth_units: list[str]


class UnitMatch(Loose):
    """How one reference unit is matched in the answer."""

    ground_truth_unit: str | None = None
    output_unit: str | None = None
    match_type: str = Field(description="exact, semantic, partial or missing")
    explanation: str | None = None


class Matches(Loose):
    """The analyze step's reply."""

    matches: list[UnitMatch]
    extra_in_output: list[str] = Field(default_factory=list)
    contradictions: list[str] = Field(default_factory=list)


def answer_similarity_score(analysis: Matches, options: Mapping[str, Any], *,
                            has_ground_truth: bool = True) -> float:
    """The similarity in [0, 1] (before ``scale``).

    Each reference unit earns: exact 1 + bonus, semantic ``semantic_threshold``, partial half
    of it, missing −``missing_penalty`` (another word 0); the sum is divided by n × (1 + bonus).
    Then each contradiction subtracts ``contradiction_penalty`` and the extra information
    ``extra_info_penalty`` each, at most 0.2 in all; the result is clamped to [0, 1]. No ground
    truth or no matches → 0.
    """
    if not has_ground_truth or not analysis.matches:
        return 0.0
    bonus = float(options["exact_match_bonus"])
    semantic = float(options["semantic_threshold"])
    earned = {"exact": 1.0 + bonus, "semantic": semantic, "partial": 0.5 * semantic,
              "missing": -float(options["missing_penalty"])}
    total = sum(earned.get(verdict_word(m.match_type), 0.0) for m in analysis.matches)
    value = total / (len(analysis.matches) * (1.0 + bonus))
    value -= len(analysis.contradictions) * float(options["contradiction_penalty"])
    value -= min(len(analysis.extra_in_output) * float(options["extra_info_penalty"]),
                 MAX_EXTRA_PENALTY)
    return min(1.0, max(0.0, value))


def _ground_truth(j: Judged) -> str:
    text = j.ground_truth_text
    if not text and j.options["require_ground_truth"]:
        raise ValueError(NO_GROUND_TRUTH)
    return text


def _units_prompt(j: Judged) -> str:
    return UNITS_PROMPT.format(output=j.output_text,
                               ground_truth=_ground_truth(j) or "(no reference answer)")


def _match_prompt(j: Judged) -> str:
    return MATCH_PROMPT.format(
        ground_truth_units=numbered(j.preprocess.ground_truth_units, "(no units)"),
        output_units=numbered(j.preprocess.output_units, "(no units)"))


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(
        score=j.score, scale=j.scale, ground_truth=j.ground_truth_text,
        output=j.output_text, matches=as_json(j.analyze.matches),
        contradictions=numbered(j.analyze.contradictions, "(none)"),
        extra=numbered(j.analyze.extra_in_output, "(none)"))


ANSWER_SIMILARITY = LLMScorerSpec(
    id="answer-similarity-scorer",
    name="Answer Similarity Scorer",
    description="Evaluates how similar the agent's answer is to the reference answer",
    instructions=ANSWER_SIMILARITY_INSTRUCTIONS,
    preprocess=Ask("Split the answer and the reference into units", _units_prompt, Units),
    analyze=Ask("Match the reference units in the answer", _match_prompt, Matches),
    score=lambda j: answer_similarity_score(
        j.analyze, j.options, has_ground_truth=bool(j.ground_truth_text)),
    reason=Ask("Explain the score", _reason_prompt),
    option_names=tuple(DEFAULTS),
)


def create_answer_similarity_scorer(
    model: ModelLike,
    *,
    scale: float = 1,
    require_ground_truth: bool = True,
    semantic_threshold: float = 0.8,
    exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15,
    contradiction_penalty: float = 0.3,
    extra_info_penalty: float = 0.05,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged similarity of the agent's answer to the run's ``ground_truth``.

    Steps: preprocess splits the answer and the reference into units → ``{"output_units",
    "ground_truth_units"}``; analyze matches each reference unit → ``{"matches":
    [{"ground_truth_unit", "output_unit", "match_type": "exact" | "semantic" | "partial" |
    "missing", "explanation"}], "extra_in_output", "contradictions"}``; the score is
    ``answer_similarity_score`` × ``scale``; generate_reason explains it.

    The reference is the run's ``ground_truth`` (not a string: sent as JSON). Without one, the
    run fails with ``Answer Similarity Scorer requires ground truth to be provided``
    (``ScorerRunError``) unless ``require_ground_truth=False``, which scores it 0.

    Unlike Mastra, whose default contradiction penalty is 1.0 (its own comment says 0.3, and
    1.0 zeroes any answer with one contradiction), ``contradiction_penalty`` defaults to 0.3.
    ``options`` accepts Mastra's names (``requireGroundTruth``, ``semanticThreshold``, ...),
    merged with the defaults.
    """
    opts = merge_options(ANSWER_SIMILARITY, {
        "scale": scale, "require_ground_truth": require_ground_truth,
        "semantic_threshold": semantic_threshold, "exact_match_bonus": exact_match_bonus,
        "missing_penalty": missing_penalty, "contradiction_penalty": contradiction_penalty,
        "extra_info_penalty": extra_info_penalty}, options)
    for key in DEFAULTS:
        value = opts[key]
        if key == "require_ground_truth":
            if not isinstance(value, bool):
                raise TypeError(f"require_ground_truth must be True or False, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{key} must be a number of at least 0, got {value!r}")
    return build_llm_scorer(ANSWER_SIMILARITY, model, opts)
