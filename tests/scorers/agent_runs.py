"""Agent runs from the captured fixtures for the behaviour judges' tests (goal completion, plan
adherence, tool arguments, the trace judge): scorer runs carrying their trace document as the
live scorer passes it, the largest capture, a capture with a stated plan edited in, and a
400-span trace made by repeating a captured agent loop."""

from __future__ import annotations

import copy
import math
import secrets
from typing import Any

from traces.helpers import INDEX, fixture_logs, fixture_rows

from tracescore.model import ScorerRun
from tracescore.testing import Reply
from tracescore.traces import Trace, lazy_trace_document, trace_to_scorer_run

TOOLS_FOLDER = "py-openinference-openai"
"""A capture whose model calls record the tools offered (``llm.tools.<i>.tool.json_schema``) and
whose turns share a session id."""
LARGEST = ("py-langgraph-openllmetry", "workflow")
"""The largest captured trace (29 spans, ~270 KB as a trace document)."""
PLAN = ("Plan: first I look up the current weather in Paris with get_weather, then I convert "
        "the temperature to Fahrenheit with convert_temperature.")


def trace_id(folder: str, scenario: str) -> str:
    """The captured trace id of a fixture's scenario."""
    return next(t["traceId"] for t in INDEX[folder]["traces"] if t["scenario"] == scenario)


def rows_of(folder: str, scenario: str) -> list[dict[str, Any]]:
    """Fresh copies of the span rows of one captured trace."""
    wanted = trace_id(folder, scenario)
    return [copy.deepcopy(r) for r in fixture_rows(folder) if r["trace_id"] == wanted]


def trace_of(rows: list[dict[str, Any]], logs: Any = ()) -> Trace:
    """The trace of span rows (one trace id), with the log records joined to its spans."""
    return Trace.from_rows(rows, logs=logs, trace_id=rows[0]["trace_id"])


def traced_run(rows: list[dict[str, Any]], scorer_type: str | None = "agent",
               *, document: bool = True, logs: Any = ()) -> ScorerRun:
    """The run a scorer of ``scorer_type`` sees for the trace's default target, with its trace
    document in ``request_context`` (lazily, as the live scorer passes it)."""
    trace = trace_of(rows, logs)
    run = trace_to_scorer_run(trace, scorer_type=scorer_type)
    if not document:
        return run
    context = {**(run.request_context or {}), "trace_document": lazy_trace_document(trace)}
    return run.model_copy(update={"request_context": context})


def fixture_run(folder: str, scenario: str, scorer_type: str | None = "agent") -> ScorerRun:
    """``traced_run`` of a captured trace (with its log records: Semantic Kernel and OpenLIT send
    message content as logs)."""
    wanted = trace_id(folder, scenario)
    logs = [log for log in fixture_logs(folder) if log.get("trace_id") == wanted]
    return traced_run(rows_of(folder, scenario), scorer_type, logs=logs)


def first_model_call(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The earliest OpenInference LLM span of the rows."""
    return min((r for r in rows if "llm.output_messages.0.message.role" in r["attributes"]),
               key=lambda r: r["start_time_ns"])


def with_plan(rows: list[dict[str, Any]], plan: str = PLAN) -> list[dict[str, Any]]:
    """The rows with the first model call's reply saying ``plan`` before its tool call."""
    first_model_call(rows)["attributes"]["llm.output_messages.0.message.content"] = plan
    return rows


def repeated_rows(loops: int = 80, *, fail_at: int | None = 57) -> list[dict[str, Any]]:
    """A ~400-span agent trace from the captured turn-1 loop of ``TOOLS_FOLDER``: the agent
    span with its three model calls and two tool calls repeated ``loops`` times, one after the
    other, under new span ids (5 × 80 + 1 = 401 spans). The ``fail_at``-th loop's weather call
    fails with an error status."""
    rows = rows_of(TOOLS_FOLDER, "turn1")
    [root] = [r for r in rows if r["parent_span_id"] is None]
    body = sorted((r for r in rows if r is not root), key=lambda r: r["start_time_ns"])
    new_trace = secrets.token_hex(16)
    span = root["end_time_ns"] - root["start_time_ns"]
    out = [{**root, "trace_id": new_trace,
            "end_time_ns": root["start_time_ns"] + span * loops + 1}]
    for loop in range(loops):
        for row in body:
            copy_row = copy.deepcopy(row)
            copy_row.update(trace_id=new_trace, span_id=secrets.token_hex(8),
                            start_time_ns=row["start_time_ns"] + span * loop,
                            end_time_ns=row["end_time_ns"] + span * loop)
            if loop == fail_at and row["name"] == "get_weather":
                copy_row.update(status_code="ERROR",
                                status_message="upstream timeout after 30 s")
            out.append(copy_row)
    return out


def sized_reply(**reply: Any) -> Any:
    """A scripted reply whose usage counts the request's characters as tokens (÷ 4), so the
    token cap sees figures of the right size."""

    def respond(body: dict[str, Any]) -> Reply:
        chars = sum(len(str(m.get("content") or "")) for m in body["messages"])
        chars += len(str(body.get("tools") or ""))
        return Reply(prompt_tokens=math.ceil(chars / 4), completion_tokens=30, **reply)

    return respond


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted tool call."""
    return {"name": name, "arguments": arguments}
