"""extract_tool_calls / extract_tool_results / extract_trajectory / extract_workflow_trajectory."""

from __future__ import annotations

from datetime import UTC, datetime

from mastra_shapes import message, tool_invocation

from tracescore.model import Message, ToolCallStep, ToolInvocation, Trajectory
from tracescore.scorers import (
    extract_tool_calls,
    extract_tool_results,
    extract_trajectory,
    extract_workflow_trajectory,
)


def _weather() -> list[dict[str, object]]:
    return [message("Let me check the weather.", tool_invocations=[
        tool_invocation("weatherTool", tool_call_id="call-1", args={"location": "London"},
                        result={"temperature": 20, "condition": "sunny"})])]


class TestToolResults:
    def test_one_result(self) -> None:
        results = extract_tool_results(_weather())
        assert results == [{"tool_name": "weatherTool", "tool_call_id": "call-1",
                            "args": {"location": "London"},
                            "result": {"temperature": 20, "condition": "sunny"}}]
        assert results[0].tool_name == "weatherTool"

    def test_no_invocations(self) -> None:
        assert extract_tool_results([message("Hello, how can I help?")]) == []

    def test_several_messages_in_order(self) -> None:
        output = [
            message("Checking weather...", tool_invocations=[tool_invocation(
                "weatherTool", tool_call_id="call-1", result={"temperature": 20})]),
            message("Now stocks...", tool_invocations=[tool_invocation(
                "stockTool", tool_call_id="call-2", result={"price": 150.5})]),
        ]
        assert [r.tool_name for r in extract_tool_results(output)] == ["weatherTool", "stockTool"]

    def test_only_finished_calls_with_a_result(self) -> None:
        output = [message("Processing...", tool_invocations=[
            tool_invocation("pendingTool", tool_call_id="c1", result={}, state="call"),
            tool_invocation("noResultTool", tool_call_id="c2", result=None),
            tool_invocation("failedTool", tool_call_id="c3", result="boom", state="output-error"),
            tool_invocation("completedTool", tool_call_id="c4", result={"data": "success"}),
        ])]
        assert [r.tool_name for r in extract_tool_results(output)] == ["completedTool"]

    def test_from_parts_and_typed_messages(self) -> None:
        typed = Message(role="assistant", parts=[
            {"type": "text", "text": "ok"},
            {"type": "tool-invocation", "toolInvocation": {
                "toolName": "search", "state": "result", "result": {"hits": 2}}}])
        results = extract_tool_results([typed])
        assert results == [{"tool_name": "search", "tool_call_id": "", "args": {},
                            "result": {"hits": 2}}]


class TestToolCalls:
    def test_names_and_infos(self) -> None:
        output = [message("x", tool_invocations=[
            tool_invocation("search", tool_call_id="a"),
            tool_invocation("summarize", tool_call_id=None, state="call"),  # type: ignore[arg-type]
            tool_invocation("broken", tool_call_id="c", state="output-error"),
            tool_invocation("streaming", tool_call_id="d", state="partial-call"),
        ])]
        calls = extract_tool_calls(output)
        assert calls.tools == ["search", "summarize", "broken"]
        assert calls.tool_call_infos[1] == {"tool_name": "summarize", "tool_call_id": "0-1",
                                           "message_index": 0, "invocation_index": 1}

    def test_loose_output_without_tools(self) -> None:
        assert extract_tool_calls("just text").tools == []
        assert extract_tool_calls({"text": "hi"}).tools == []


class TestTrajectory:
    def test_finished_calls_with_args_and_results(self) -> None:
        output = [message("Working on it.", tool_invocations=[
            tool_invocation("search", tool_call_id="call-1", args={"query": "hello"},
                            result={"results": []}),
            tool_invocation("summarize", tool_call_id="call-2", args={"text": "content"},
                            result={"summary": "short"}),
        ])]
        trajectory = extract_trajectory(output)
        assert [s.name for s in trajectory.steps] == ["search", "summarize"]
        first = trajectory.steps[0]
        assert isinstance(first, ToolCallStep)
        assert first.step_type == "tool_call"
        assert first.tool_args == {"query": "hello"}
        assert first.tool_result == {"results": []}
        assert first.success is True
        assert first.tool_call_id == "call-1"

    def test_unfinished_call_has_no_result_and_did_not_succeed(self) -> None:
        output = [message("Calling tool.", tool_invocations=[
            tool_invocation("search", args={"query": "hello"}, result={}, state="call")])]
        step = extract_trajectory(output).steps[0]
        assert step.tool_result is None and step.success is False

    def test_partial_calls_are_skipped(self) -> None:
        output = [message("Partial.", tool_invocations=[
            tool_invocation("search", state="partial-call")])]
        assert extract_trajectory(output).steps == []

    def test_failed_calls_are_steps_that_did_not_succeed(self) -> None:
        output = [message("x", tool_invocations=[
            tool_invocation("search", result="timeout", state="output-error"),
            tool_invocation("search", result={"error": "flagged"}, is_error=True),
            tool_invocation("search", result={"ok": True})])]
        assert [s.success for s in extract_trajectory(output).steps] == [False, False, True]

    def test_skips_messages_without_calls_and_keeps_order(self) -> None:
        output = [
            message("User question.", "user", id="msg-0"),
            message("Let me search.", tool_invocations=[tool_invocation("search")]),
            message("Second.", tool_invocations=[tool_invocation("format")]),
            message("Here is the answer."),
        ]
        trajectory = extract_trajectory(output)
        assert [s.name for s in trajectory.steps] == ["search", "format"]
        assert trajectory.raw_output is not None and len(trajectory.raw_output) == 4

    def test_typed_messages_are_kept_as_raw_output(self) -> None:
        out = [Message(role="assistant", content="done", tool_invocations=[
            ToolInvocation(tool_name="t", state="result", result=1)])]
        trajectory = extract_trajectory(out)
        assert trajectory.raw_output == out
        assert isinstance(trajectory, Trajectory)


class TestWorkflowTrajectory:
    def test_execution_path_order_timing_and_output(self) -> None:
        results = {
            "fetch": {"status": "success", "output": {"rows": 3}, "startedAt": 1000,
                      "endedAt": 1500},
            "transform": {"status": "success", "output": 42, "started_at": 1500,
                          "ended_at": 2200, "metadata": {"k": "v"}},
            "skipped": {"status": "skipped"},
        }
        trajectory = extract_workflow_trajectory(results, ["transform", "fetch", "missing"])
        assert [s.name for s in trajectory.steps] == ["transform", "fetch"]
        first = trajectory.steps[0]
        assert first.step_type == "workflow_step"
        assert first.step_id == "transform"
        assert first.status == "success"
        assert first.output == 42
        assert first.duration_ms == 700
        assert first.metadata == {"k": "v"}
        assert trajectory.total_duration_ms == 1200
        assert trajectory.raw_workflow_result is not None
        assert trajectory.raw_workflow_result.step_execution_path == ["transform", "fetch",
                                                                      "missing"]

    def test_mapping_order_and_datetimes(self) -> None:
        t0 = datetime(2025, 1, 1, tzinfo=UTC)
        t1 = datetime(2025, 1, 1, 0, 0, 2, tzinfo=UTC)
        trajectory = extract_workflow_trajectory({"a": {"status": "success", "startedAt": t0,
                                                        "endedAt": t1}, "b": {"status": "failed"}})
        assert [s.name for s in trajectory.steps] == ["a", "b"]
        assert trajectory.steps[0].duration_ms == 2000
        assert trajectory.steps[1].duration_ms is None
        assert trajectory.total_duration_ms == 2000
