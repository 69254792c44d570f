"""Step definitions: function steps, prompt steps, the results steps see, and ``not_scorable``.

A step's callable is inspected once, when the step is added: whether it is async, and how many
positional parameters it takes (``lambda run: ...`` is fine for a step that ignores results).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._errors import ScorerDefinitionError
from ._structured import OutputSchema, SchemaLike, as_output_schema

if TYPE_CHECKING:
    from ._judge import Judge

StepName = Literal["preprocess", "analyze", "generate_score", "generate_reason"]
STEP_ORDER: tuple[StepName, ...] = ("preprocess", "analyze", "generate_score", "generate_reason")

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}},
    "required": ["score"],
}


class NotScorableSignal(Exception):  # noqa: N818 - a signal, returned (or raised) by a step
    """Returned (or raised) by a step to end the run without a score; see ``not_scorable``."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "not scorable")
        self.reason = reason


def not_scorable(reason: str | None = None) -> NotScorableSignal:
    """Return this from a step to stop the run: no later step or judge call runs, no score.

    The result gets ``score=None`` and ``not_scorable=NotScorable(step, reason)``.
    """
    return NotScorableSignal(reason)


@dataclass(frozen=True, slots=True)
class StepResults:
    """What a step sees of the steps before it."""

    preprocess_step_result: Any = None
    """The preprocess step's output (None when there is no preprocess step)."""
    analyze_step_result: Any = None
    """The analyze step's output (None when there is no analyze step)."""
    score: float | None = None
    """The score (set for generate_reason only)."""

    def __getitem__(self, key: str) -> Any:
        """Dict-style access, snake_case or camelCase (``results["analyzeStepResult"]``)."""
        name = _CAMEL.get(key, key)
        if name not in _RESULT_FIELDS:
            raise KeyError(key)
        return getattr(self, name)

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get``."""
        try:
            return self[key]
        except KeyError:
            return default


_RESULT_FIELDS = ("preprocess_step_result", "analyze_step_result", "score")
_CAMEL = {
    "preprocessStepResult": "preprocess_step_result",
    "analyzeStepResult": "analyze_step_result",
}


def is_async_callable(obj: Any) -> bool:
    """True for ``async def`` functions, partials of them and objects with an async ``__call__``."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return inspect.iscoroutinefunction(obj) or (
        callable(obj) and inspect.iscoroutinefunction(getattr(obj, "__call__", None))  # noqa: B004
    )


def _positional_arity(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments ``fn`` takes; None when it takes any number."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    count = 0
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return None
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


@dataclass(frozen=True, slots=True)
class StepCallable:
    """A user callable with its async-ness and arity found once."""

    fn: Callable[..., Any]
    is_async: bool
    arity: int | None

    @classmethod
    def of(cls, fn: Any, *, what: str) -> StepCallable:
        """Inspect ``fn`` (``what`` names it in errors)."""
        if not callable(fn):
            raise ScorerDefinitionError(f"{what} must be a function, got {type(fn).__name__}")
        return cls(fn, is_async_callable(fn), _positional_arity(fn))

    def invoke(self, args: tuple[Any, ...]) -> Any:
        """Call with as many of ``args`` as the function accepts; may return an awaitable."""
        arity = self.arity
        if arity is None or arity >= len(args):
            return self.fn(*args)
        return self.fn(*args[:arity])

    async def call(self, *args: Any) -> Any:
        """Call with as many of ``args`` as the function accepts; await when needed."""
        value = self.invoke(args)
        if self.is_async or hasattr(value, "__await__"):
            value = await value
        return value


@dataclass(frozen=True)
class PromptStep:
    """A step answered by the LLM judge.

    ``create_prompt(run, results)`` (``(run, results, score)`` for generate_reason) returns the
    prompt text. preprocess and analyze need ``output_schema`` (a pydantic model or a JSON
    Schema dict); generate_score asks for ``{"score": number}`` unless given one and turns the
    judge's output into the score with ``calculate_score(run, results, output)``; generate_reason
    returns the judge's text. ``judge`` overrides the scorer's judge field by field.

    ``score_range=(low, high)`` is a generate_score step's declared scale: a score outside it
    (or not finite) fails the step with ``ScoreOutOfRange``, the value in its message. Without
    it, the output's ``score`` must lie in ``DEFAULT_SCORE_RANGE`` (0 to 1) and what
    ``calculate_score`` returns is only checked to be finite.

    ``logprobs=N`` asks the provider for each reply token's log-probability and its ``N`` most
    likely alternatives (OpenAI's ``top_logprobs``, 0-20; left out for models litellm says do
    not take it). ``parse_output(output, logprobs)`` turns the judge's validated output into the
    step result; ``logprobs`` is a list of ``{"token", "logprob", "top_logprobs": [{"token",
    "logprob"}, ...]}`` for the reply, or None when none came back. ``calculate_score`` gets
    them as a fourth argument when it takes one.

    ``navigation(run, results)`` (sync or async) returns a ``Navigation`` (a shorter prompt,
    tools to read the rest, caps): with ``navigate="auto"`` it is used only when the prompt
    would not fit the judge's context, with ``"always"`` for every run (see ``_navigate``).
    """

    description: str
    create_prompt: Callable[..., str | Awaitable[str]]
    output_schema: SchemaLike | None = None
    judge: Judge | None = None
    calculate_score: Callable[..., Any] | None = None
    logprobs: int | None = None
    parse_output: Callable[..., Any] | None = None
    navigation: Callable[..., Any] | None = None
    navigate: Literal["auto", "always"] = "auto"
    score_range: tuple[float, float] | None = None


DEFAULT_SCORE_RANGE = (0.0, 1.0)
"""The scale of a prompt generate_score step whose score is the judge's ``score`` (no
``calculate_score``) and that declares no ``score_range``."""
UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True, slots=True)
class StepSpec:
    """A step as the pipeline runs it (built once when the step is added)."""

    name: StepName
    kind: Literal["function", "prompt"]
    description: str = ""
    fn: StepCallable | None = None
    create_prompt: StepCallable | None = None
    schema: OutputSchema | None = None
    judge: Judge | None = None
    calculate_score: StepCallable | None = None
    top_logprobs: int | None = None
    parse_output: StepCallable | None = None
    navigation: StepCallable | None = None
    navigate: Literal["auto", "always"] = "auto"
    score_range: tuple[float, float] = UNBOUNDED
    """A prompt generate_score step's score must lie in this range (and be finite)."""


_DICT_KEYS = {
    "description": "description",
    "create_prompt": "create_prompt",
    "createPrompt": "create_prompt",
    "output_schema": "output_schema",
    "outputSchema": "output_schema",
    "judge": "judge",
    "calculate_score": "calculate_score",
    "calculateScore": "calculate_score",
    "logprobs": "logprobs",
    "parse_output": "parse_output",
    "parseOutput": "parse_output",
    "navigation": "navigation",
    "navigate": "navigate",
    "score_range": "score_range",
    "scoreRange": "score_range",
}


def _prompt_step_from_mapping(step: Mapping[str, Any], name: str, scorer_id: str) -> PromptStep:
    from ._judge import as_judge

    values: dict[str, Any] = {}
    for key, value in step.items():
        field = _DICT_KEYS.get(key)
        if field is None:
            raise ScorerDefinitionError(
                f"scorer {scorer_id!r}, step {name!r}: unknown prompt step key {key!r}; "
                f"use {sorted(set(_DICT_KEYS.values()))}"
            )
        values[field] = value
    if "create_prompt" not in values:
        raise ScorerDefinitionError(
            f"scorer {scorer_id!r}, step {name!r}: a prompt step needs 'create_prompt'"
        )
    values["judge"] = as_judge(values.get("judge"))
    values.setdefault("description", "")
    return PromptStep(**values)


def _score_range(step: PromptStep, name: str, where: str) -> tuple[float, float]:
    """The declared scale of a prompt step's score (see ``PromptStep``)."""
    given = step.score_range
    if given is None:
        return UNBOUNDED if step.calculate_score is not None else DEFAULT_SCORE_RANGE
    if name != "generate_score":
        raise ScorerDefinitionError(f"{where}: score_range only applies to generate_score")
    try:
        low, high = (float(v) for v in given)
    except (TypeError, ValueError):
        raise ScorerDefinitionError(
            f"{where}: score_range is (lowest, highest), e.g. (0, 1); got {given!r}") from None
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ScorerDefinitionError(
            f"{where}: score_range needs lowest <= highest, got {given!r}")
    return (low, high)


def build_step(step: Any, name: StepName, scorer_id: str) -> StepSpec:
    """Turn a user's step (function, ``PromptStep`` or dict) into a ``StepSpec``."""
    if isinstance(step, Mapping):
        step = _prompt_step_from_mapping(step, name, scorer_id)
    if isinstance(step, PromptStep):
        where = f"scorer {scorer_id!r}, step {name!r}"
        schema_like = step.output_schema
        if schema_like is None:
            if name in ("preprocess", "analyze"):
                raise ScorerDefinitionError(
                    f"{where}: a prompt {name} step needs output_schema (a pydantic model or a "
                    "JSON Schema dict)"
                )
            if name == "generate_score":
                schema_like = SCORE_SCHEMA
        schema = as_output_schema(schema_like, name=f"{name}_output") if schema_like else None
        if step.calculate_score is not None and name != "generate_score":
            raise ScorerDefinitionError(f"{where}: calculate_score only applies to generate_score")
        logprobs = step.logprobs
        if logprobs is not None and (isinstance(logprobs, bool) or not isinstance(logprobs, int)
                                     or not 0 <= logprobs <= 20):
            raise ScorerDefinitionError(
                f"{where}: logprobs is how many alternatives to return per token, 0 to 20; "
                f"got {logprobs!r}")
        if step.navigate not in ("auto", "always"):
            raise ScorerDefinitionError(
                f"{where}: navigate must be 'auto' or 'always', got {step.navigate!r}")
        return StepSpec(
            name=name,
            kind="prompt",
            score_range=_score_range(step, name, where),
            description=step.description,
            create_prompt=StepCallable.of(step.create_prompt, what=f"{where}: create_prompt"),
            schema=schema,
            judge=step.judge,
            calculate_score=(
                StepCallable.of(step.calculate_score, what=f"{where}: calculate_score")
                if step.calculate_score is not None
                else None
            ),
            top_logprobs=logprobs,
            parse_output=(
                StepCallable.of(step.parse_output, what=f"{where}: parse_output")
                if step.parse_output is not None
                else None
            ),
            navigation=(
                StepCallable.of(step.navigation, what=f"{where}: navigation")
                if step.navigation is not None
                else None
            ),
            navigate=step.navigate,
        )
    return StepSpec(
        name=name,
        kind="function",
        fn=StepCallable.of(step, what=f"scorer {scorer_id!r}, step {name!r}"),
    )
