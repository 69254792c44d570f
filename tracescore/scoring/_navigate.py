"""The navigating judge: a prompt step answered through tool calls, within per-run caps.

A ``PromptStep`` with ``navigation=`` gives the judge a short prompt (an outline, say) and
tools to read the rest; the judge calls them through the OpenAI tool-calling protocol (via
litellm) until it answers with the step's schema. Every request is its own ``JudgeExecution``:
its ``prompt`` is what the request added (the first prompt, then the tool results it read, each
with the budget left), its ``output`` the tool calls it asked for (with the budget) or the
answer, its usage and cost those of that request. Before each request the loop checks that it
fits the judge's context and the caps (``NavigationCaps``: tool calls, tokens, cost); a run
that would go over any of them ends ``not_scorable`` with the reason and what was read, never
with a score.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tracescore.model import JudgeCost, JudgeError, JudgeExecution, JudgeUsage

from ._context import context_window, count_tokens, reply_reserve
from ._errors import JudgeOutputError, _error_code
from ._judge import Judge
from ._judge_call import (
    JudgeCallFailed,
    _cost_of,
    _field,
    _provider_of,
    _StepCall,
    load_litellm,
    normalise_usage,
)
from ._retry import decide_retry
from ._steps import NotScorableSignal, StepCallable
from ._structured import (
    OutputSchema,
    SchemaMismatch,
    correction_message,
    parse_json_reply,
    schema_instruction,
)

logger = logging.getLogger(__name__)

NavigateMode = Literal["auto", "always"]


@dataclass(frozen=True, slots=True)
class JudgeTool:
    """A tool the navigating judge may call: ``run(arguments)`` returns the text it reads."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """The JSON Schema of the arguments (an object schema)."""
    run: Callable[[dict[str, Any]], str]

    def spec(self) -> dict[str, Any]:
        """The tool as the OpenAI ``tools`` list takes it."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": dict(self.parameters)}}


@dataclass(frozen=True, slots=True)
class NavigationCaps:
    """What one navigating run may spend: tool calls, tokens (input and output, summed over
    its requests) and, when set, cost in USD (litellm's price map)."""

    max_tool_calls: int = 20
    max_tokens: int = 50_000
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_tool_calls", "max_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        cost = self.max_cost_usd
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)
                                 or not cost > 0):
            raise ValueError(f"max_cost_usd must be a positive number or None, got {cost!r}")

    def as_dict(self) -> dict[str, Any]:
        """The caps as JSON data."""
        return {"max_tool_calls": self.max_tool_calls, "max_tokens": self.max_tokens,
                "max_cost_usd": self.max_cost_usd}


@dataclass(frozen=True, slots=True)
class Navigation:
    """How a prompt step navigates: its prompt, the judge's tools and the caps."""

    prompt: str
    tools: Sequence[JudgeTool]
    caps: NavigationCaps = field(default_factory=NavigationCaps)


class _Budget:
    """What the run has spent so far and what it has read."""

    def __init__(self, caps: NavigationCaps) -> None:
        self.caps = caps
        self.tool_calls = 0
        self.tokens = 0
        self.cost: float | None = None
        self.read: list[str] = []

    def left(self) -> str:
        tokens = max(0, self.caps.max_tokens - self.tokens)
        text = (f"[budget left: {self.caps.max_tool_calls - self.tool_calls} tool calls, "
                f"{tokens:,} tokens")
        if self.caps.max_cost_usd is not None:
            text += f", ${max(0.0, self.caps.max_cost_usd - (self.cost or 0.0)):.4f}"
        return text + "]"

    def state(self) -> dict[str, Any]:
        return {"tool_calls": self.tool_calls, "tokens": self.tokens, "cost_usd": self.cost,
                **self.caps.as_dict()}

    def stop(self, why: str) -> NotScorableSignal:
        read = ", ".join(self.read) or "nothing"
        return NotScorableSignal(
            f"the navigating judge stopped before answering: {why}. It used "
            f"{self.tool_calls} of {self.caps.max_tool_calls} tool calls and {self.tokens:,} of "
            f"{self.caps.max_tokens:,} tokens; it read: {read}")


def _price(litellm: Any, model: str | None, prompt_tokens: int) -> float | None:
    try:
        cost, _ = litellm.cost_per_token(model=model or "", prompt_tokens=prompt_tokens,
                                         completion_tokens=0)
    except Exception:  # noqa: BLE001 - not in litellm's price map
        return None
    return float(cost)


def opening(prompt: str, schema: OutputSchema | None, caps: NavigationCaps) -> str:
    """The first user message: the step's prompt, the caps and the answer format."""
    cost = (f" and at most ${caps.max_cost_usd:g}" if caps.max_cost_usd is not None else "")
    text = (f"{prompt}\n\nYou may call the tools at most {caps.max_tool_calls} times and use at "
            f"most {caps.max_tokens:,} tokens in all{cost}. Read only what you need. When you "
            "know enough, answer without calling a tool.")
    if schema is not None:
        text += "\n\n" + schema_instruction(schema)
    return text


class _Loop:
    """One navigating step: the messages so far and the budget."""

    def __init__(self, judge: Judge, navigation: Navigation, schema: OutputSchema | None
                 ) -> None:
        self.judge = judge
        self.tools = {tool.name: tool for tool in navigation.tools}
        self.specs = [tool.spec() for tool in navigation.tools]
        self.budget = _Budget(navigation.caps)
        self.litellm = load_litellm()
        self.call = _StepCall(judge, step="navigate")
        first = opening(navigation.prompt, schema, navigation.caps)
        self.messages: list[dict[str, Any]] = (
            [{"role": "system", "content": judge.instructions}] if judge.instructions else [])
        self.messages.append({"role": "user", "content": first})
        self.sent = first
        self.estimate = 0

    async def check(self) -> NotScorableSignal | None:
        """Whether the next request would overflow the context or a cap."""
        budget, caps = self.budget, self.budget.caps
        tokens = await count_tokens(self.judge.model, self.messages, self.specs)
        self.estimate = tokens
        window = context_window(self.judge.model)
        reserve = reply_reserve(self.judge)
        if window is not None and tokens + reserve > window:
            return budget.stop(
                f"its next request needs {tokens:,} tokens (and {reserve:,} kept for the "
                f"reply), over the {window:,} input tokens the judge model {self.judge.model} "
                "takes")
        if budget.tokens + tokens > caps.max_tokens:
            return budget.stop(
                f"its next request needs about {tokens:,} tokens, which would take it over "
                f"max_tokens = {caps.max_tokens:,}")
        if caps.max_cost_usd is not None:
            price = _price(self.litellm, self.judge.model, tokens)
            if price is None:
                return budget.stop(
                    f"max_cost_usd is set but litellm's price map has no price for "
                    f"{self.judge.model}")
            if (budget.cost or 0.0) + price > caps.max_cost_usd:
                return budget.stop(
                    f"its next request would cost about ${price:.4f}, which would take it over "
                    f"max_cost_usd = ${caps.max_cost_usd:g} (spent ${budget.cost or 0.0:.4f})")
        return None

    def _kwargs(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """A plain prompt step's request arguments (``_StepCall``'s), with the tools."""
        kwargs = self.call._kwargs(messages, None)
        kwargs["tools"] = self.specs
        return kwargs

    async def request(self) -> tuple[Any, JudgeExecution]:
        """Send the messages (retrying as the error processors say); the reply's message and
        this request's execution. A failure raises ``JudgeCallFailed``."""
        judge = self.judge
        messages = list(self.messages)
        for processor in judge.input_processors:
            changed = await StepCallable.of(processor, what="input processor").call(messages)
            if changed is not None:
                messages = list(changed)
        started = time.perf_counter()
        attempts = retries = 0
        while True:
            attempts += 1
            try:
                response = await self.litellm.acompletion(**self._kwargs(messages))
                break
            except Exception as exc:
                wait_s = None
                if judge.error_processors and retries < judge.processor_retry_limit:
                    wait_s = await decide_retry(judge.error_processors, exc, retries)
                if wait_s is None:
                    raise JudgeCallFailed(self._execution(
                        "failed", started, attempts, 0, error=exc), exc) from exc
                retries += 1
                await asyncio.sleep(wait_s)
        usage = normalise_usage(_field(response, "usage"))
        cost = _cost_of(self.litellm, response)
        choices = _field(response, "choices")
        choice = choices[0] if choices else None
        message = _field(choice, "message")
        # A provider that reports no usage is charged the request's counted prompt.
        self.budget.tokens += usage.total_tokens or self.estimate
        if cost is not None:
            self.budget.cost = (self.budget.cost or 0.0) + cost
        content = _field(message, "content")
        execution = self._execution("success", started, attempts, 1, usage=usage, cost=cost,
                                    raw=content if isinstance(content, str) else None,
                                    finish=_field(choice, "finish_reason"))
        return message, execution

    def _execution(self, status: Literal["success", "failed"], started: float, attempts: int,
                   calls: int, *, usage: JudgeUsage | None = None, cost: float | None = None,
                   raw: str | None = None, finish: str | None = None,
                   error: BaseException | None = None) -> JudgeExecution:
        model_id, provider = _provider_of(self.judge.model or "", self.judge.api_base)
        return JudgeExecution(
            status=status, prompt=self.sent, judge_model_id=model_id, judge_provider=provider,
            attempt_count=attempts, model_call_count=calls,
            duration_ms=(time.perf_counter() - started) * 1000.0, raw_output=raw,
            usage=usage or JudgeUsage(),
            cost=JudgeCost(amount=cost) if cost is not None else None, finish_reason=finish,
            error=None if error is None else JudgeError(
                name=type(error).__name__, message=str(error)[:2000], code=_error_code(error)))

    def call_tools(self, calls: list[Any]) -> str:
        """Run the asked-for tools, append their results; the text they added."""
        parts = []
        for i, call in enumerate(calls):
            function = _field(call, "function")
            name = str(_field(function, "name") or "")
            raw = _field(function, "arguments") or "{}"
            tool = self.tools.get(name)
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
                if not isinstance(arguments, dict):
                    raise ValueError("the arguments are not a JSON object")
            except ValueError as exc:
                arguments, text = {}, f"error: {exc}; send the arguments as a JSON object"
            else:
                if tool is None:
                    text = (f"error: there is no tool {name!r}; use "
                            f"{', '.join(sorted(self.tools))}")
                else:
                    try:
                        text = tool.run(arguments)
                    except (TypeError, ValueError, KeyError) as exc:
                        text = f"error: {exc}"
            shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
            self.budget.read.append(f"{name}({shown})")
            self.budget.tool_calls += 1
            if i == len(calls) - 1:
                text = f"{text}\n\n{self.budget.left()}"
            self.messages.append({"role": "tool", "tool_call_id": _field(call, "id"),
                                  "content": text})
            parts.append(f"→ {name} {shown}\n{text}")
        return "\n\n".join(parts)


def _plain_call(call: Any) -> dict[str, Any]:
    function = _field(call, "function")
    return {"id": _field(call, "id"), "type": "function", "function": {
        "name": _field(function, "name"), "arguments": _field(function, "arguments")}}


async def navigate_judge(
    judge: Judge,
    navigation: Navigation,
    *,
    schema: OutputSchema | None,
    record: Callable[[JudgeExecution], None],
) -> Any:
    """Run the navigating judge to its answer: the validated output (text without a schema),
    or a ``NotScorableSignal`` when the context or a cap would be overflowed. ``record`` gets
    each request's execution as it ends; a failed request raises ``JudgeCallFailed``."""
    if "litellm" not in sys.modules:
        await asyncio.to_thread(load_litellm)
    loop = _Loop(judge, navigation, schema)
    corrected = False
    while True:
        stop = await loop.check()
        if stop is not None:
            return stop
        message, execution = await loop.request()
        calls = list(_field(message, "tool_calls") or ())
        if calls:
            budget = loop.budget
            execution.output = {"tool_calls": [
                {"name": _field(_field(c, "function"), "name"),
                 "arguments": _field(_field(c, "function"), "arguments")} for c in calls],
                "budget": budget.state()}
            record(execution)
            if budget.tool_calls + len(calls) > budget.caps.max_tool_calls:
                return budget.stop(
                    f"it asked for {len(calls)} more tool call(s) with {budget.tool_calls} "
                    f"made, over max_tool_calls = {budget.caps.max_tool_calls}")
            loop.messages.append({"role": "assistant", "content": _field(message, "content"),
                                  "tool_calls": [_plain_call(c) for c in calls]})
            loop.sent = loop.call_tools(calls)
            continue
        text = _field(message, "content")
        text = text if isinstance(text, str) else ""
        for processor in judge.output_processors:
            text = await StepCallable.of(processor, what="output processor").call(text)
        if schema is None:
            execution.output = text.strip()
            record(execution)
            return text.strip()
        try:
            output = schema.validate(parse_json_reply(text))
        except SchemaMismatch as problem:
            execution.output = {"invalid": str(problem), "budget": loop.budget.state()}
            record(execution)
            if corrected:
                raise JudgeOutputError(
                    f"the navigating judge's answer does not match the {schema.name} schema: "
                    f"{problem}", raw_output=text[:2000]) from None
            corrected = True
            loop.messages.append({"role": "assistant", "content": text})
            loop.sent = correction_message(str(problem))
            loop.messages.append({"role": "user", "content": loop.sent})
            continue
        execution.output = output
        record(execution)
        return output


__all__ = [
    "JudgeTool",
    "NavigateMode",
    "Navigation",
    "NavigationCaps",
    "navigate_judge",
    "opening",
]
