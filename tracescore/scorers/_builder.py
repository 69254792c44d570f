"""The declarative builder every prebuilt LLM scorer is made with.

A scorer module is mostly data: an ``LLMScorerSpec`` with its id, name, description, the judge's
instructions, its steps (``Ask``: a prompt function and the pydantic schema of the judge's reply;
``Compute``: a plain function) and a pure ``score`` function of the validated step outputs.
``build_llm_scorer`` turns a spec and the factory's options into a ``Scorer``, writing once what
every LLM scorer shares:

- options: keyword arguments merged with an ``options=`` mapping in Mastra's spelling
  (``contextExtractor`` → ``context_extractor``), unknown keys refused;
- the judge: a litellm model string or a ``Judge`` (``resolve_judge``), the spec's
  instructions as its system message;
- the loose input/output shapes (``Judged.input_text``, ``Judged.output_text``, ...);
- context: ``context=``, ``context_extractor(input, output)`` / ``get_context(run, results,
  score, step)``, else the spec's default (the agent's tool results, the input, or none);
- the score: ``score(judged)`` gives the raw value; the builder multiplies it by ``scale``
  (unless the spec is unscaled or the value is ``Unscaled``) and rounds to two decimals half up;
- the reason step's judge, which unwraps a JSON ``{"reason": ...}`` reply into its text;
- navigation (``navigate=True``): the analyze step's judge may read the run through tools
  (``outline``, ``read_step``, ``read_span``, ``search_trace``) within caps, when the whole
  prompt would not fit its context (``"always"``: on every run); the prompt function sees
  ``judged.navigating`` and shows ``navigation_evidence(judged)`` instead of the whole run.

Step outputs reach prompt and score functions as instances of their pydantic schema
(``judged.analyze.verdicts[0].verdict``), so a score function is unit-testable on hand-written
models; ``ScorerRunResult`` keeps them as plain JSON data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tracescore.model import (
    AgentInput,
    ScorerRun,
    get_assistant_message,
    get_user_message,
    to_agent_input,
)
from tracescore.scoring import (
    NotScorableSignal,
    PromptStep,
    Scorer,
    StepResults,
    create_scorer,
)

from ._llm import (
    ModelLike,
    as_context,
    call_get_context,
    check_scale,
    reason_judge,
    resolve_judge,
    shown_scale,
    tool_context,
    verdict_word,
)
from ._navigating import navigation_caps, navigation_of
from ._results import round_score
from ._trace_view import TraceView, view_of

StepOutput = type[BaseModel]


class Loose(BaseModel):
    """Base of the judge-reply schemas: extra keys the judge adds are kept, not refused."""

    model_config = ConfigDict(extra="allow")


class Unscaled(float):
    """A score function's value that ``scale`` must not multiply (it is rounded only)."""


@dataclass(frozen=True, slots=True)
class Judged:
    """What a prompt, compute or score function sees of one run."""

    run: ScorerRun
    """The run being scored (``input``, ``output``, ``ground_truth``, ...)."""
    results: StepResults
    """The pipeline's step results (plain JSON data), as user hooks receive them."""
    preprocess: Any
    """The preprocess output: an instance of its schema (plain data for a ``Compute`` step)."""
    analyze: Any
    """The analyze output, like ``preprocess``."""
    options: Mapping[str, Any]
    """The factory's resolved options (snake_case keys), ``scale`` included."""
    context: list[str] = field(default_factory=list)
    """The resolved context pieces (for steps that ask for them)."""
    score: float | None = None
    """The score (set for the reason step)."""
    navigating: bool = False
    """True when the prompt is for the navigating judge: show an outline, not the whole run."""
    view: TraceView | None = None
    """The run's view (set when navigating; see ``trace_view``)."""

    def trace_view(self) -> TraceView:
        """The run as numbered steps (from its trace document when it has one)."""
        return self.view if self.view is not None else view_of(self.run)

    @property
    def input_text(self) -> str:
        """The text of the first user message of the input, whatever its shape."""
        return get_user_message(self.run.input)

    @property
    def output_text(self) -> str:
        """The text of the last assistant message with text, whatever the output's shape."""
        return get_assistant_message(self.run.output)

    @property
    def ground_truth_text(self) -> str:
        """The run's ground truth as text: a string as is, anything else as JSON ("" for None)."""
        value = self.run.ground_truth
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False, default=str)

    @property
    def agent_input(self) -> AgentInput:
        """The input as an ``AgentInput`` (loose shapes coerced)."""
        return to_agent_input(self.run.input)

    @property
    def scale(self) -> str:
        """The scale as prompts show it: 1.0 → ``1``, 2.5 → ``2.5``."""
        return shown_scale(float(self.options.get("scale", 1)))


@dataclass(frozen=True, slots=True)
class Ask:
    """A step the judge answers: ``prompt(judged)`` builds the prompt, the reply must match
    ``schema`` (None only for the reason step, whose reply is plain text)."""

    description: str
    prompt: Callable[[Judged], str | None]
    """The prompt; None when there is nothing to ask (the step's result is None, no judge
    call)."""
    schema: StepOutput | None = None
    uses_context: bool = False
    """Resolve the context (``judged.context``) before the prompt is built."""


@dataclass(frozen=True, slots=True)
class Compute:
    """A step computed in code: ``fn(judged)`` returns JSON data (or a ``not_scorable``)."""

    fn: Callable[[Judged], Any]
    uses_context: bool = False


@dataclass(frozen=True, slots=True)
class ContextRule:
    """Where a scorer's context comes from when the user gives none, and its option names.

    ``key`` names the options (``context``, ``context_extractor``; ``source``,
    ``source_extractor`` for summarization). ``required`` is the sentence's subject when the
    scorer cannot run without one: ``Either context or contextExtractor is required for
    <required> scoring``. ``hook`` allows ``get_context(run, results, score, step)``.
    """

    key: str = "context"
    default: Literal["tool_results", "input", "none"] = "tool_results"
    required: str | None = None
    hook: bool = False


Step = Ask | Compute


@dataclass(frozen=True, slots=True)
class LLMScorerSpec:
    """One prebuilt LLM scorer as data."""

    id: str
    name: str
    description: str
    instructions: str
    score: Callable[[Judged], float | NotScorableSignal]
    """The raw score of the validated step outputs (the builder scales and rounds it), or a
    ``not_scorable(reason)`` when the outputs leave nothing to score."""
    preprocess: Step | None = None
    analyze: Step | None = None
    reason: Step | None = None
    type: Literal["agent", "trajectory"] | None = "agent"
    scaled: bool = True
    """False: the scorer has no ``scale`` option; scores are only rounded."""
    context: ContextRule | None = None
    option_names: tuple[str, ...] = ()
    """The factory's options (snake_case) besides ``scale`` and the context ones."""
    score_context: bool = False
    """Resolve the context for the score function too (``judged.context``)."""
    factory: str = ""
    """The Python factory's name, for error messages (default ``create_<id stem>_scorer``)."""
    navigate: bool | Literal["always"] = False
    """True: when the analyze prompt would not fit the judge's context, the judge navigates
    the run instead (an outline and tools, within the caps: options ``max_tool_calls``,
    ``max_tokens``, ``max_cost_usd``, defaults ``NAVIGATION_CAPS``); ``"always"``: on every
    run. False: a prompt too long for the context ends the run not scorable."""


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    """Mastra's option spelling in Python's: ``contextExtractor`` → ``context_extractor``."""
    return _CAMEL.sub("_", name).lower()


def _allowed(spec: LLMScorerSpec) -> tuple[str, ...]:
    names = list(spec.option_names)
    if spec.scaled:
        names.append("scale")
    if spec.navigate:
        names += [n for n in ("max_tool_calls", "max_tokens", "max_cost_usd") if n not in names]
    rule = spec.context
    if rule is not None:
        names += [rule.key, f"{rule.key}_extractor"]
        if rule.hook:
            names.append(f"get_{rule.key}")
    return tuple(names)


def factory_name(spec: LLMScorerSpec) -> str:
    """The Python factory of a spec, for error messages: ``create_<name>_scorer``."""
    if spec.factory:
        return spec.factory
    stem = spec.id.removesuffix("-scorer").replace("-", "_")
    return f"create_{stem}_scorer"


def merge_numbers(where: str, defaults: Mapping[str, float],
                  given: Mapping[str, Any] | None) -> dict[str, float]:
    """``defaults`` with the numbers of ``given`` (either spelling of the keys) merged in.

    Unknown keys raise ``TypeError`` and values that are not numbers of at least 0
    ``ValueError``, each naming ``where.<key>``.
    """
    merged = {key: float(value) for key, value in defaults.items()}
    for key, number in (given or {}).items():
        name = snake(key)
        if name not in merged:
            raise TypeError(f"{where}: unknown key {key!r}; use {', '.join(merged)}")
        if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
            raise ValueError(f"{where}.{key} must be a number of at least 0, got {number!r}")
        merged[name] = float(number)
    return merged


def merge_options(spec: LLMScorerSpec, given: Mapping[str, Any],
                  options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The factory's keyword values overridden by an ``options`` mapping (either spelling).

    Unknown keys raise ``TypeError`` naming them and the known ones (a typo fails loudly).
    """
    allowed = _allowed(spec)
    merged = dict(given)
    unknown = []
    for key, value in (options or {}).items():
        name = snake(key)
        if name not in allowed:
            unknown.append(key)
        else:
            merged[name] = value
    if unknown:
        raise TypeError(f"{factory_name(spec)}: unknown option(s) {', '.join(sorted(unknown))}; "
                        f"use {', '.join(allowed)}")
    return merged


@dataclass(frozen=True, slots=True)
class _ContextSource:
    rule: ContextRule
    static: list[str] | None
    extractor: Callable[..., Any] | None
    hook: Callable[..., Any] | None

    async def resolve(self, run: ScorerRun, results: StepResults, score: float | None,
                      step: str) -> list[str]:
        if self.hook is not None:
            return await call_get_context(self.hook, run, results, score, step)
        if self.extractor is not None and run.input is not None and run.output is not None:
            value = self.extractor(run.input, run.output)
            if hasattr(value, "__await__"):
                value = await value
            return as_context(value)
        if self.static is not None:
            return self.static
        if self.rule.default == "tool_results":
            return tool_context(run.output)
        if self.rule.default == "input":
            text = get_user_message(run.input)
            return [text] if text else []
        return []


def _context_source(spec: LLMScorerSpec, opts: Mapping[str, Any]) -> _ContextSource | None:
    rule = spec.context
    if rule is None:
        return None
    key = rule.key
    raw = opts.get(key)
    extractor = opts.get(f"{key}_extractor")
    hook = opts.get(f"get_{key}") if rule.hook else None
    for name, fn in ((f"{key}_extractor", extractor), (f"get_{key}", hook)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{factory_name(spec)}: {name} must be a function")
    label = "contextExtractor" if key == "context" else f"{key}Extractor"
    if rule.required and raw is None and extractor is None and hook is None:
        raise ValueError(f"Either {key} or {label} is required for {rule.required} scoring")
    static = as_context(raw) if raw is not None else None
    if rule.required and static is not None and not static and extractor is None:
        raise ValueError(f"{key.capitalize()} array cannot be empty if provided")
    return _ContextSource(rule, static, extractor, hook)


def _parse(step: Step | None, value: Any) -> Any:
    if isinstance(step, Ask) and step.schema is not None and isinstance(value, Mapping):
        return step.schema.model_validate(value)
    return value


class _Build:
    """A spec bound to its options: makes the pipeline's step callables."""

    def __init__(self, spec: LLMScorerSpec, opts: dict[str, Any],
                 context: _ContextSource | None) -> None:
        self.spec = spec
        self.opts = opts
        self.context = context
        self.scale = float(opts.get("scale", 1)) if spec.scaled else 1.0
        self.caps = navigation_caps(opts) if spec.navigate else None

    async def judged(self, run: ScorerRun, results: StepResults, step: str,
                     uses_context: bool, score: float | None = None,
                     view: TraceView | None = None) -> Judged:
        ctx: list[str] = []
        if uses_context and self.context is not None:
            ctx = await self.context.resolve(run, results, score, step)
        return Judged(run=run, results=results,
                      preprocess=_parse(self.spec.preprocess, results.preprocess_step_result),
                      analyze=_parse(self.spec.analyze, results.analyze_step_result),
                      options=self.opts, context=ctx, score=score,
                      navigating=view is not None, view=view)

    def step(self, step: Step, name: str) -> Any:
        uses_context = step.uses_context
        if isinstance(step, Compute):
            fn = step.fn

            async def compute(run: ScorerRun, results: StepResults,
                              score: float | None = None) -> Any:
                return fn(await self.judged(run, results, name, uses_context, score))
            return compute
        prompt = step.prompt

        async def create_prompt(run: ScorerRun, results: StepResults,
                                score: float | None = None) -> str | None:
            return prompt(await self.judged(run, results, name, uses_context, score))
        return create_prompt

    async def generate_score(self, run: ScorerRun, results: StepResults
                             ) -> float | NotScorableSignal:
        raw = self.spec.score(await self.judged(run, results, "generate_score",
                                                self.spec.score_context))
        if isinstance(raw, NotScorableSignal):
            return raw  # the pipeline ends the run not scorable
        if isinstance(raw, Unscaled):
            return round_score(float(raw))
        return round_score(float(raw) * self.scale)


def build_llm_scorer(spec: LLMScorerSpec, model: ModelLike,
                     opts: dict[str, Any]) -> Scorer[Any, Any]:
    """The ``Scorer`` of ``spec`` judged by ``model`` with the factory's merged ``opts``.

    Checks ``scale`` (a positive number) and the context options; raises ``ValueError`` /
    ``TypeError`` with a sentence when they cannot build a scorer.
    """
    opts = dict(opts)
    if spec.scaled:
        opts["scale"] = check_scale(opts.get("scale", 1))
    context = _context_source(spec, opts)
    judge = resolve_judge(model, spec.instructions)
    build = _Build(spec, opts, context)
    scorer = create_scorer(spec.id, spec.description, name=spec.name, judge=judge,
                           type=spec.type)
    for name, step in (("preprocess", spec.preprocess), ("analyze", spec.analyze)):
        if step is None:
            continue
        fn = build.step(step, name)
        if isinstance(step, Compute):
            made: Any = fn
        elif spec.navigate and name == "analyze":
            made = PromptStep(step.description, fn, output_schema=step.schema,
                              navigation=navigation_of(build, step, name),
                              navigate="always" if spec.navigate == "always" else "auto")
        else:
            made = PromptStep(step.description, fn, output_schema=step.schema)
        scorer = (scorer.preprocess if name == "preprocess" else scorer.analyze)(made)
    scorer = scorer.generate_score(build.generate_score)
    reason = spec.reason
    if isinstance(reason, Compute):
        scorer = scorer.generate_reason(build.step(reason, "generate_reason"))
    elif isinstance(reason, Ask):
        scorer = scorer.generate_reason(PromptStep(
            reason.description, build.step(reason, "generate_reason"),
            judge=reason_judge(judge)))
    return scorer


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def count_words(items: Sequence[Any], attr: str, words: Mapping[str, float]) -> float:
    """Sum of ``words[verdict_word(item.<attr>)]`` over the items (models or dicts; unknown
    words count 0)."""
    return sum(words.get(verdict_word(_field(item, attr)), 0.0) for item in items)


def share(items: Sequence[Any], attr: str, words: Mapping[str, float] | None = None) -> float:
    """``count_words`` over the number of items (0 for none); by default the share of ``yes``.

    Verdicts are trimmed and lower-cased; a word not in ``words`` counts in the total only.
    """
    if not items:
        return 0.0
    return count_words(items, attr, words or {"yes": 1.0}) / len(items)
