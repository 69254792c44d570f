"""checks.*: every quick check on Mastra-shaped runs, typed messages and loose shapes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mastra_shapes import agent_input, message, tool_invocation

from tracescore.model import Message, ToolInvocation
from tracescore.scorers import checks
from tracescore.scorers.checks import dice_similarity, includes


def run(scorer: Any, *outputs: dict[str, Any], user: str = "Question?") -> Any:
    return scorer.run_sync({"input": agent_input(user), "output": list(outputs)})


def calls(*names: str, **kw: Any) -> dict[str, Any]:
    return message("Working...", tool_invocations=[
        tool_invocation(n, tool_call_id=f"c{i}", result={}, **kw) for i, n in enumerate(names)])


class TestText:
    def test_includes_is_case_insensitive_by_default(self) -> None:
        assert run(checks.includes("sunny"), message("It is Sunny and warm today.")).score == 1
        assert run(checks.includes("rainy"), message("It is sunny and warm.")).score == 0
        assert run(checks.includes("Sunny", ignore_case=False),
                   message("It is sunny and warm.")).score == 0

    def test_includes_records_what_it_saw(self) -> None:
        result = run(checks.includes("Sunny"), message("It is SUNNY"))
        assert result.preprocess_step_result["found"] is True
        assert result.preprocess_step_result["text"] == "It is SUNNY"
        assert result.scorer_id == "check-includes"

    def test_named_export_is_the_namespace_function(self) -> None:
        assert includes is checks.includes

    def test_excludes(self) -> None:
        assert run(checks.excludes("error"), message("Hi there! How can I help?")).score == 1
        assert run(checks.excludes("error"),
                   message("An ERROR occurred while processing.")).score == 0

    def test_equals(self) -> None:
        assert run(checks.equals("Hello, world!"), message("hello, world!")).score == 1
        assert run(checks.equals("Hello, world!"), message("Hello, world! How are you?")).score == 0
        assert run(checks.equals("Hello", ignore_case=False), message("hello")).score == 0

    def test_equals_joins_messages_without_separator(self) -> None:
        assert run(checks.equals("Hello world"), message("Hello "), message("world")).score == 1

    def test_includes_joins_messages_with_a_space(self) -> None:
        assert run(checks.includes("hello world"), message("hello"), message("world")).score == 1

    def test_only_assistant_text_counts(self) -> None:
        output = [message("secret", "user"), message("public answer")]
        assert run(checks.excludes("secret"), *output).score == 1

    def test_matches(self) -> None:
        assert run(checks.matches(r"\d+°[FC]"), message("It is 72°F today.")).score == 1
        assert run(checks.matches(r"\d+°[FC]"), message("It is warm outside.")).score == 0
        assert run(checks.matches("hello", exact=True), message("say hello world")).score == 0
        assert run(checks.matches("say hello.*", exact=True), message("say hello world")).score == 1

    def test_matches_keeps_compiled_flags(self) -> None:
        assert run(checks.matches(re.compile("SUNNY", re.IGNORECASE)), message("sunny")).score == 1
        assert run(checks.matches("SUNNY"), message("sunny")).score == 0

    def test_similarity_raw_and_threshold(self) -> None:
        close = run(checks.similarity("Sunny, 72°F"), message("Sunny, 73°F"))
        assert 0.5 < close.score < 1
        assert run(checks.similarity("hello world"), message("hello world")).score == 1
        assert run(checks.similarity("abcdefgh"), message("xyz12345")).score < 0.3
        text = "It is sunny and 72°F in Brooklyn today."
        assert run(checks.similarity("Sunny and 72°F in Brooklyn", threshold=0.5),
                   message(text)).score == 1
        assert run(checks.similarity("Sunny and 72°F in Brooklyn", threshold=0.99),
                   message(text)).score == 0

    def test_dice_values(self) -> None:
        assert dice_similarity("night", "nacht") == 0.25
        assert dice_similarity("", "") == 1
        assert dice_similarity("a", "ab") == 0
        assert dice_similarity("hello world", "helloworld") == 1

    def test_similarity_score_is_rounded(self) -> None:
        result = run(checks.similarity("abcdef"), message("abcxyz"))
        assert result.score == 0.4
        assert result.preprocess_step_result["score"] == pytest.approx(0.4)


class TestTools:
    def test_called_tool(self) -> None:
        assert run(checks.called_tool("get_weather"), calls("get_weather")).score == 1
        assert run(checks.called_tool("get_weather"), calls("search")).score == 0

    def test_called_tool_times(self) -> None:
        assert run(checks.called_tool("search", times=2), calls("search", "search")).score == 1
        result = run(checks.called_tool("search", times=3), calls("search", "search"))
        assert result.score == 0
        assert result.preprocess_step_result["actual_count"] == 2

    def test_failed_call_still_counts_as_called(self) -> None:
        out = message("x", tool_invocations=[tool_invocation("search", state="output-error")])
        assert run(checks.called_tool("search"), out).score == 1

    def test_did_not_call(self) -> None:
        assert run(checks.did_not_call("delete_user"), message("Hi there!")).score == 1
        assert run(checks.did_not_call("delete_user"), calls("delete_user")).score == 0

    def test_tool_order_is_a_subsequence(self) -> None:
        order = checks.tool_order(["search", "summarize"])
        assert run(order, calls("search", "summarize")).score == 1
        assert run(order, calls("search", "validate", "summarize")).score == 1
        assert run(order, calls("summarize", "search")).score == 0
        assert run(order, calls("search")).score == 0
        assert run(order, calls("summarize", "search", "summarize")).score == 1

    def test_tool_order_refuses_a_bare_string(self) -> None:
        with pytest.raises(TypeError):
            checks.tool_order("search")  # type: ignore[arg-type]

    def test_max_tool_calls(self) -> None:
        assert run(checks.max_tool_calls(3), calls("a", "b")).score == 1
        assert run(checks.max_tool_calls(1), calls("a", "b")).score == 0
        assert run(checks.max_tool_calls(0), message("none")).score == 1

    def test_used_no_tools(self) -> None:
        assert run(checks.used_no_tools(), message("Hi! How can I help?")).score == 1
        assert run(checks.used_no_tools(), calls("check")).score == 0

    def test_no_tool_errors(self) -> None:
        ok = message("Done!", tool_invocations=[tool_invocation("search", result={"data": "x"})])
        assert run(checks.no_tool_errors(), ok).score == 1
        assert run(checks.no_tool_errors(), message("Hi!")).score == 1

    @pytest.mark.parametrize("invocation", [
        tool_invocation("search", result={"error": "Network timeout"}),
        tool_invocation("search", result=None, state="call"),
        tool_invocation("search", result=None, state="output-error", errorText="boom"),
        tool_invocation("search", result={"ok": False}, isError=True),
    ])
    def test_no_tool_errors_catches_every_failure_shape(self, invocation: dict[str, Any]) -> None:
        result = run(checks.no_tool_errors(), message("x", tool_invocations=[invocation]))
        assert result.score == 0
        assert result.preprocess_step_result["error_count"] == 1

    def test_failed_call_only_in_parts_is_found(self) -> None:
        msg = Message(role="assistant", content="x",
                      tool_invocations=[ToolInvocation(tool_call_id="a", tool_name="ok",
                                                       state="result", result=1)],
                      parts=[{"type": "tool-invocation", "tool_invocation": {
                          "tool_call_id": "b", "tool_name": "bad", "state": "output-error"}}])
        result = checks.no_tool_errors().run_sync(input="q", output=[msg])
        assert result.score == 0
        assert result.preprocess_step_result["total_calls"] == 2

    def test_tool_checks_read_a_trajectory(self) -> None:
        trajectory = {"steps": [{"step_type": "tool_call", "name": "search", "success": True},
                                {"step_type": "model_generation", "name": "gpt"},
                                {"step_type": "tool_call", "name": "fetch", "success": False}]}
        assert checks.tool_order(["search", "fetch"]).run_sync(input="q", output=trajectory
                                                               ).score == 1
        assert checks.max_tool_calls(1).run_sync(input="q", output=trajectory).score == 0
        assert checks.no_tool_errors().run_sync(input="q", output=trajectory).score == 0


class TestShapesAndIdentity:
    def test_loose_shapes(self) -> None:
        scorer = checks.includes("paris")
        assert scorer.run_sync(input="Capital?", output="It is Paris.").score == 1
        assert scorer.run_sync(input=[{"role": "user", "content": "Capital?"}],
                               output={"text": "Paris"}).score == 1
        assert scorer.run_sync(input="q", output=[{"role": "assistant",
                                                   "content": "Paris"}]).score == 1

    def test_default_ids_and_overrides(self) -> None:
        ids = [checks.includes("a").id, checks.excludes("a").id, checks.equals("a").id,
               checks.matches("a").id, checks.similarity("a").id, checks.called_tool("a").id,
               checks.did_not_call("a").id, checks.tool_order(["a"]).id,
               checks.max_tool_calls(1).id, checks.used_no_tools().id,
               checks.no_tool_errors().id]
        assert ids == ["check-includes", "check-excludes", "check-equals", "check-matches",
                       "check-similarity", "check-called-tool", "check-did-not-call",
                       "check-tool-order", "check-max-tool-calls", "check-used-no-tools",
                       "check-no-tool-errors"]
        custom = checks.includes("a", id="has-a", name="Has A")
        assert (custom.id, custom.name, custom.type) == ("has-a", "Has A", "agent")

    @pytest.mark.parametrize("make", [lambda: checks.called_tool("a", times=0),
                                      lambda: checks.max_tool_calls(-1),
                                      lambda: checks.similarity("a", threshold=2)])
    def test_bad_arguments(self, make: Any) -> None:
        with pytest.raises(ValueError):
            make()
