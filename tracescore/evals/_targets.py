"""Targets: calling an agent (object or function) or a workflow, sync or async, and
normalising what it returns into ``AgentResponse`` / ``WorkflowRunResult``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from tracescore.model import Message, to_messages

from ._errors import EvalValidationError
from ._models import AgentResponse, WorkflowRunResult
from ._plan import TargetKind

# Keys of target_options that run_evals passes as generate()'s own keywords.
AGENT_CONTROL_KEYS = ("thread_id", "resource_id", "request_context")


def classify_target(target: Any) -> TargetKind:
    """``agent`` for objects with ``generate`` and plain functions; ``workflow`` for ``run``."""
    if callable(getattr(target, "generate", None)):
        return "agent"
    if callable(getattr(target, "run", None)) and not inspect.isroutine(target):
        return "workflow"
    if callable(target):
        return "agent"
    raise EvalValidationError(
        f"target must be an agent (an object with generate(input, ...)), a workflow (an object "
        f"with run(input, ...)) or a function of the input; got {type(target).__name__}"
    )


def target_name(target: Any) -> str | None:
    """A readable name for the target (its id, name or function name)."""
    for attr in ("id", "name", "__name__"):
        value = getattr(target, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(target).__name__


class _Call:
    """A callable plus what it accepts, found once: async or not, which keywords."""

    def __init__(self, fn: Callable[..., Any], *, threaded: bool) -> None:
        self.fn = fn
        # A callable object may define ``async def __call__``.
        call_method = type(fn).__dict__.get("__call__")
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call_method)
        self.threaded = threaded and not self.is_async
        self.accepts_all = True
        self.accepted: set[str] = set()
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return
        self.accepts_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        self.accepted = {
            p.name
            for p in params
            if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        }

    async def __call__(self, first: Any, kwargs: dict[str, Any]) -> Any:
        if not self.accepts_all:
            kwargs = {k: v for k, v in kwargs.items() if k in self.accepted}
        if self.threaded:
            value = await asyncio.to_thread(self.fn, first, **kwargs)
        else:
            value = self.fn(first, **kwargs)
        if inspect.isawaitable(value):
            value = await value
        return value


class AgentTarget:
    """Calls ``generate(input, *, thread_id, resource_id, request_context, **options)``."""

    def __init__(self, target: Any, *, threaded: bool) -> None:
        fn = getattr(target, "generate", None)
        self._call = _Call(fn if callable(fn) else target, threaded=threaded)

    async def generate(
        self,
        input: Any,
        *,
        thread_id: str | None,
        resource_id: str | None,
        request_context: dict[str, Any] | None,
        options: Mapping[str, Any],
    ) -> AgentResponse:
        """Call the agent once and normalise its answer."""
        kwargs = {k: v for k, v in options.items() if k not in AGENT_CONTROL_KEYS}
        for key, value in (
            ("thread_id", thread_id),
            ("resource_id", resource_id),
            ("request_context", request_context),
        ):
            if value is not None:
                kwargs[key] = value
        return to_agent_response(await self._call(input, kwargs))


class WorkflowTarget:
    """Calls ``run(input, **options)``."""

    def __init__(self, target: Any, *, threaded: bool) -> None:
        self._call = _Call(target.run, threaded=threaded)

    async def run(self, input: Any, *, options: Mapping[str, Any]) -> WorkflowRunResult:
        """Run the workflow once and normalise its result."""
        return to_workflow_result(await self._call(input, dict(options)))


def _ids(value: Any) -> dict[str, Any]:
    out = {}
    for name, alias in (("trace_id", "traceId"), ("span_id", "spanId")):
        if isinstance(value, Mapping):
            found = value.get(name, value.get(alias))
        else:
            found = getattr(value, name, None)
        if isinstance(found, str):
            out[name] = found
    return out


def to_agent_response(value: Any) -> AgentResponse:
    """An ``AgentResponse`` from what an agent returned: itself, messages, a string, a dict."""
    if isinstance(value, AgentResponse):
        return value
    if value is None:
        return AgentResponse()
    if isinstance(value, str):
        return AgentResponse(messages=[Message(role="assistant", content=value)])
    if isinstance(value, Message):
        return AgentResponse(messages=[value])
    if isinstance(value, Mapping):
        if "messages" in value:
            return AgentResponse.model_validate(dict(value))
        if "role" in value or "text" in value or "content" in value or "parts" in value:
            text_only = {k: v for k, v in value.items() if k not in ("trace_id", "traceId",
                                                                     "span_id", "spanId")}
            return AgentResponse(
                messages=to_messages(text_only, default_role="assistant"), **_ids(value)
            )
    elif isinstance(value, (list, tuple)):
        return AgentResponse(messages=to_messages(list(value), default_role="assistant"))
    else:
        messages = getattr(value, "messages", None)
        if isinstance(messages, (list, tuple)):
            return AgentResponse(
                messages=to_messages(list(messages), default_role="assistant"), **_ids(value)
            )
        text = getattr(value, "text", None)
        if isinstance(text, str):
            return AgentResponse(
                messages=[Message(role="assistant", content=text)], **_ids(value)
            )
    raise TypeError(
        f"the agent returned {type(value).__name__}; return an AgentResponse(messages=...), a "
        "list of messages or a string"
    )


def to_workflow_result(value: Any) -> WorkflowRunResult:
    """A ``WorkflowRunResult`` from what a workflow returned (itself or a dict of its fields)."""
    if isinstance(value, WorkflowRunResult):
        return value
    if isinstance(value, Mapping):
        return WorkflowRunResult.model_validate(dict(value))
    if hasattr(value, "status") and (hasattr(value, "result") or hasattr(value, "steps")):
        fields = (
            "status", "result", "step_results", "steps", "step_execution_path",
            "trace_id", "span_id", "error",
        )
        data = {f: getattr(value, f) for f in fields if getattr(value, f, None) is not None}
        return WorkflowRunResult.model_validate(data)
    raise TypeError(
        f"the workflow returned {type(value).__name__}; return a WorkflowRunResult(status=..., "
        "result=..., step_results=...) or a dict with those keys"
    )
