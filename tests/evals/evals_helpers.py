"""Shared targets and scorers for the run_evals tests: real agents with memory, a real
workflow with named steps, and code scorers built with create_scorer."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tracescore.evals import AgentResponse, WorkflowRunResult
from tracescore.model import Message, get_assistant_message, get_user_message, to_messages
from tracescore.scoring import create_scorer, not_scorable


def fixed(scorer_id: str, score: float) -> Any:
    """A scorer that always returns ``score``."""
    return create_scorer(scorer_id, f"always {score}").generate_score(
        lambda run, results: score
    )


def contains(scorer_id: str, text: str) -> Any:
    """1.0 when the last assistant text contains ``text``, else 0.0."""
    return create_scorer(scorer_id, f"output contains {text!r}").generate_score(
        lambda run, results: 1.0 if text in get_assistant_message(run.output) else 0.0
    )


def matches_ground_truth(scorer_id: str = "exact") -> Any:
    """1.0 when the last assistant text equals the item's ground truth."""
    return create_scorer(scorer_id, "equals ground truth").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) == run.ground_truth else 0.0
    )


def scorable_when(scorer_id: str, predicate: Any, score: float = 1.0) -> Any:
    """Scores ``score`` when ``predicate(run)``, else ends the run as not scorable."""

    def preprocess(run: Any, results: Any) -> Any:
        return None if predicate(run) else not_scorable("predicate false")

    return (
        create_scorer(scorer_id, "sometimes not scorable")
        .preprocess(preprocess)
        .generate_score(lambda run, results: score)
    )


class MemoryAgent:
    """A sync agent with real memory: a dict of threads holding every message it saw.

    It learns ``my name is X`` and answers ``what is my name?`` from the thread's history.
    """

    id = "memory-agent"

    def __init__(self) -> None:
        self.threads: dict[str, list[Message]] = {}
        self.calls: list[dict[str, Any]] = []

    def _answer(self, text: str, history: list[Message]) -> str:
        learned = re.search(r"my name is (\w+)", text, re.I)
        if learned:
            return f"Nice to meet you, {learned.group(1)}."
        if "what is my name" in text.lower():
            for message in reversed(history):
                found = re.search(r"my name is (\w+)", message.content, re.I)
                if message.role == "user" and found:
                    return f"Your name is {found.group(1)}."
            return "I do not know your name."
        return f"You said: {text}"

    def generate(
        self,
        input: Any,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        request_context: dict[str, Any] | None = None,
        **options: Any,
    ) -> AgentResponse:
        self.calls.append({"input": input, "thread_id": thread_id, "resource_id": resource_id,
                           "request_context": request_context, "options": options})
        history = self.threads.setdefault(thread_id, []) if thread_id else []
        text = get_user_message(input)
        reply = Message(role="assistant", content=self._answer(text, history))
        history.extend([*to_messages(input), reply])
        return AgentResponse(messages=[reply])


class AsyncMemoryAgent(MemoryAgent):
    """The same agent with an async ``generate``."""

    id = "async-memory-agent"

    async def generate(  # type: ignore[override]
        self,
        input: Any,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        request_context: dict[str, Any] | None = None,
        **options: Any,
    ) -> AgentResponse:
        await asyncio.sleep(0)
        return MemoryAgent.generate(self, input, thread_id=thread_id, resource_id=resource_id,
                                    request_context=request_context, **options)


def weather_tool_message(city: str, *, ok: bool = True) -> list[dict[str, Any]]:
    """Messages of an agent turn that called get_weather(city) and then answered."""
    call = {
        "tool_call_id": f"call-{city}",
        "tool_name": "get_weather",
        "args": {"city": city},
        "result": {"temp_f": 72} if ok else {"error": "down"},
        "state": "result" if ok else "output-error",
    }
    return [
        {"role": "assistant", "content": "", "tool_invocations": [call]},
        {"role": "assistant", "content": f"It is 72F in {city}." if ok else "Weather is down."},
    ]


class OrderWorkflow:
    """A workflow with named steps: validate → price → format (price fails for qty <= 0)."""

    id = "order-workflow"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, input: Any, **options: Any) -> WorkflowRunResult:
        self.calls.append({"input": input, "options": options})
        steps: dict[str, Any] = {}
        path: list[str] = []
        steps["validate"] = {"status": "success", "payload": input,
                             "output": {"item": input["item"], "qty": input["qty"]}}
        path.append("validate")
        if input["qty"] <= 0:
            steps["price"] = {"status": "failed", "payload": steps["validate"]["output"],
                              "error": "quantity must be positive"}
            path.append("price")
            return WorkflowRunResult(status="failed", step_results=steps,
                                     step_execution_path=path, error="quantity must be positive")
        total = input["qty"] * options.get("unit_price", 2)
        steps["price"] = {"status": "success", "payload": steps["validate"]["output"],
                          "output": {"total": total}}
        path.append("price")
        summary = f"{input['qty']} x {input['item']} = {total}"
        steps["format"] = {"status": "success", "payload": steps["price"]["output"],
                           "output": {"summary": summary}}
        path.append("format")
        return WorkflowRunResult(status="success", result={"summary": summary, "total": total},
                                 step_results=steps, step_execution_path=path)


def traced_weather_reply(tracer: Any, input: Any) -> AgentResponse:
    """Trace a weather agent run with ``tracer`` (an OTel SDK tracer; GenAI conventions: an
    ``invoke_agent`` root with one ``execute_tool get_weather`` child) and return its reply,
    whose messages carry no tool call, with the root's trace and span ids."""
    import json

    city = get_user_message(input)
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
    ) as root:
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={"gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "get_weather",
                        "gen_ai.tool.call.arguments": json.dumps({"city": city})},
        ):
            pass
        context = root.get_span_context()
    return AgentResponse([Message(role="assistant", content=f"Sunny in {city}.")],
                         trace_id=format(context.trace_id, "032x"),
                         span_id=format(context.span_id, "016x"))
