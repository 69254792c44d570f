"""``create_prompt_alignment_scorer_llm``: does the answer do what the prompt asked?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from tracescore.model import get_system_messages
from tracescore.scoring import Scorer

from ._builder import Ask, Judged, LLMScorerSpec, Loose, build_llm_scorer, merge_options, snake
from ._llm import ModelLike, as_json

PROMPT_ALIGNMENT_INSTRUCTIONS = """\
You judge how well an AI agent's answer follows the prompt it was given: the user's request, \
the system instructions, or both. You look at four things: whether the answer serves the main \
intent, whether it meets each explicit requirement, whether it is complete, and whether its \
format and tone fit what was asked. Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Judge how well the agent's answer aligns with {target}.

1. intent_alignment: the primary intent of the prompt, whether the answer addresses it, and a \
score from 0 to 1.
2. requirements_fulfillment: every explicit requirement of the prompt (content, length, format, \
constraints, things to avoid), whether each is fulfilled, and an overall_score from 0 to 1.
3. completeness: a score from 0 to 1 and the elements the answer leaves out.
4. response_appropriateness: a score from 0 to 1, whether the format fits (format_alignment) and \
whether the tone fits (tone_alignment).
Finish with an overall_assessment of one or two sentences.

Return a JSON object: {{"intent_alignment": {{"score": <0-1>, "primary_intent": "<intent>", \
"is_addressed": true | false, "reasoning": "<why>"}}, "requirements_fulfillment": \
{{"requirements": [{{"requirement": "<requirement>", "is_fulfilled": true | false, "reasoning": \
"<why>"}}, ...], "overall_score": <0-1>}}, "completeness": {{"score": <0-1>, \
"missing_elements": ["<element>", ...], "reasoning": "<why>"}}, "response_appropriateness": \
{{"score": <0-1>, "format_alignment": true | false, "tone_alignment": true | false, "reasoning": \
"<why>"}}, "overall_assessment": "<summary>"}}
{prompts}
Agent's answer:
{output}"""

REASON_PROMPT = """\
Explain a prompt alignment score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to {scale}, weighing intent, requirements, completeness \
and format/tone ({mode} mode). Say what the answer did as asked and name the requirements or \
elements it missed. Begin with "The score is {score} because".

Analysis:
{analysis}"""

Mode = Literal["user", "system", "both"]
TARGETS: dict[str, str] = {
    "user": "the user's prompt",
    "system": "the system instructions",
    "both": "the user's prompt and the system instructions",
}
USER_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
SYSTEM_WEIGHTS = (0.35, 0.35, 0.15, 0.15)
BOTH_SHARES = (0.7, 0.3)
DEFAULT_HISTORY = 10
ERRORS: dict[str, str] = {
    "user": "User prompt is required for user prompt alignment scoring",
    "system": "System prompt is required for system prompt alignment scoring",
    "both": "A user or system prompt is required for combined alignment scoring",
}
NO_RESPONSE = "Agent response is required for prompt alignment scoring"

Score01 = Field(ge=0, le=1)


class IntentAlignment(BaseModel):
    """Whether the answer serves the prompt's main intent."""

    score: float = Score01
    primary_intent: str | None = None
    is_addressed: bool | None = None
    reasoning: str | None = None


class Requirement(BaseModel):
    """One explicit requirement of the prompt."""

    requirement: str | None = None
    is_fulfilled: bool | None = None
    reasoning: str | None = None


class RequirementsFulfillment(BaseModel):
    """The prompt's requirements and how many the answer meets."""

    requirements: list[Requirement] = Field(default_factory=list)
    overall_score: float = Score01


class Completeness(BaseModel):
    """What the answer leaves out."""

    score: float = Score01
    missing_elements: list[str] = Field(default_factory=list)
    reasoning: str | None = None


class Appropriateness(BaseModel):
    """Whether format and tone fit the prompt."""

    score: float = Score01
    format_alignment: bool | None = None
    tone_alignment: bool | None = None
    reasoning: str | None = None


class AlignmentAnalysis(Loose):
    """The analyze step's reply."""

    intent_alignment: IntentAlignment
    requirements_fulfillment: RequirementsFulfillment
    completeness: Completeness
    response_appropriateness: Appropriateness
    overall_assessment: str | None = None


def mode_weights(mode: str) -> tuple[float, float, float, float]:
    """Weights of (intent, requirements, completeness, appropriateness) for a mode.

    ``both`` blends the user weights (70 %) with the system weights (30 %): Mastra's "both"
    computes 0.7 × user + 0.3 × user, which leaves its system weights unused.
    """
    if mode == "user":
        return USER_WEIGHTS
    if mode == "system":
        return SYSTEM_WEIGHTS
    user, system = BOTH_SHARES
    a, b, c, d = (user * u + system * s for u, s in zip(USER_WEIGHTS, SYSTEM_WEIGHTS,
                                                         strict=True))
    return a, b, c, d


def prompt_alignment_score(analysis: AlignmentAnalysis | None, mode: str = "both") -> float:
    """The weighted alignment in [0, 1] (before ``scale``); no analysis → 0."""
    if analysis is None:
        return 0.0
    parts = (analysis.intent_alignment.score, analysis.requirements_fulfillment.overall_score,
             analysis.completeness.score, analysis.response_appropriateness.score)
    return sum(w * p for w, p in zip(mode_weights(mode), parts, strict=True))


def conversation_history(j: Judged) -> str:
    """The last remembered messages as ``role: text`` lines ("" when history is off)."""
    limit = j.options["history_messages"]
    if not limit:
        return ""
    lines = [f"{m.role}: {m.content.strip()}"
             for m in j.agent_input.remembered_messages[-limit:] if m.content.strip()]
    return "\n".join(lines)


def _analyze_prompt(j: Judged) -> str:
    mode = j.options["evaluation_mode"]
    user = j.input_text.strip()
    system = "\n".join(t for t in get_system_messages(j.run.input) if t.strip())
    if (mode == "user" and not user) or (mode == "system" and not system) or (
            mode == "both" and not user and not system):
        raise ValueError(ERRORS[mode])
    if not j.output_text.strip():
        raise ValueError(NO_RESPONSE)
    sections = []
    history = conversation_history(j)
    if history:
        sections.append(f"Earlier conversation:\n{history}")
    if mode in ("user", "both"):
        sections.append(f"User prompt:\n{user or '(none)'}")
    if mode in ("system", "both"):
        sections.append(f"System instructions:\n{system or '(none)'}")
    prompts = "".join(f"\n{section}\n" for section in sections)
    return ANALYZE_PROMPT.format(target=TARGETS[mode], prompts=prompts, output=j.output_text)


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, scale=j.scale, mode=j.options["evaluation_mode"],
                                analysis=as_json(j.analyze))


PROMPT_ALIGNMENT = LLMScorerSpec(
    id="prompt-alignment-scorer",
    name="Prompt Alignment (LLM)",
    description="Evaluates how well the agent's answer aligns with the intent and requirements "
                "of its prompt",
    instructions=PROMPT_ALIGNMENT_INSTRUCTIONS,
    analyze=Ask("Analyse the answer's alignment with the prompt", _analyze_prompt,
                AlignmentAnalysis),
    score=lambda j: prompt_alignment_score(j.analyze, j.options["evaluation_mode"]),
    reason=Ask("Explain the score", _reason_prompt),
    type=None,
    option_names=("evaluation_mode", "include_conversation_history"),
    factory="create_prompt_alignment_scorer_llm",
)


def history_limit(value: Any) -> int:
    """``include_conversation_history`` as a message count: False → 0, True → 10, a mapping
    ``{"max_messages": n}`` → n (at least 1)."""
    if value is None or value is False:
        return 0
    if value is True:
        return DEFAULT_HISTORY
    if isinstance(value, Mapping):
        keys = {snake(k): v for k, v in value.items()}
        if set(keys) - {"max_messages"}:
            raise TypeError("include_conversation_history takes True/False or "
                            "{'max_messages': n}")
        limit = keys.get("max_messages", DEFAULT_HISTORY)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"include_conversation_history.max_messages must be a whole "
                             f"number of at least 1, got {limit!r}")
        return int(limit)
    raise TypeError("include_conversation_history takes True/False or {'max_messages': n}, "
                    f"got {value!r}")


def create_prompt_alignment_scorer_llm(
    model: ModelLike,
    *,
    scale: float = 1,
    evaluation_mode: Mode = "both",
    include_conversation_history: bool | Mapping[str, int] = False,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged alignment of the agent's answer with its prompt.

    Steps: analyze judges intent, requirements, completeness and format/tone → ``{
    "intent_alignment", "requirements_fulfillment", "completeness", "response_appropriateness",
    "overall_assessment"}``; the score is ``prompt_alignment_score`` × ``scale``;
    generate_reason explains it.

    ``evaluation_mode``: ``"user"`` (the first user message; weights .4 intent, .3
    requirements, .2 completeness, .1 appropriateness), ``"system"`` (the system messages;
    .35/.35/.15/.15) or ``"both"`` (default; 70 % the user weights + 30 % the system ones, where
    Mastra uses the user weights twice). ``include_conversation_history``: True adds the last
    10 remembered messages as ``role: text`` lines, ``{"max_messages": n}`` the last n. A run
    without the prompt its mode needs, or without an answer, fails with a sentence saying so.
    """
    opts = merge_options(PROMPT_ALIGNMENT, {
        "scale": scale, "evaluation_mode": evaluation_mode,
        "include_conversation_history": include_conversation_history}, options)
    if opts["evaluation_mode"] not in TARGETS:
        raise ValueError(f"evaluation_mode must be 'user', 'system' or 'both', got "
                         f"{opts['evaluation_mode']!r}")
    opts["history_messages"] = history_limit(opts["include_conversation_history"])
    return build_llm_scorer(PROMPT_ALIGNMENT, model, opts)
