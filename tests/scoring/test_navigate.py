"""The navigating judge (``PromptStep(navigation=...)``) and the context check of every prompt
step, against the scripted judge over real HTTP: tools called in a set order, each cap hit,
the context overflowed, the answer validated, every request recorded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from tracescore.scoring import (
    Judge,
    JudgeTool,
    Navigation,
    NavigationCaps,
    PromptStep,
    ScorerRunError,
    create_scorer,
    observe_judge_executions,
)
from tracescore.testing import Reply, ScriptedLLMServer, error

GPT4 = "openai/gpt-4"  # litellm's map: 8,192 input tokens, priced, so every check applies


class Verdict(BaseModel):
    satisfied: bool
    reasoning: str = ""


def tools(calls: list[tuple[str, dict[str, Any]]], *, big: int = 0) -> tuple[JudgeTool, ...]:
    """Two tools that record their calls; ``page`` returns ``big`` characters when asked."""

    def lookup(args: dict[str, Any]) -> str:
        calls.append(("lookup", args))
        return f"found {args.get('key')}"

    def page(args: dict[str, Any]) -> str:
        calls.append(("page", args))
        return "x " * (big // 2) if big else "a short page"

    schema = {"type": "object", "properties": {"key": {"type": "string"}}}
    return (JudgeTool("lookup", "Look a key up.", schema, lookup),
            JudgeTool("page", "Read a page.", schema, page))


def scorer(server: ScriptedLLMServer, calls: list[tuple[str, dict[str, Any]]], *,
           model: str = GPT4, caps: NavigationCaps | None = None, navigate: str = "always",
           prompt: str = "Is the run fine?", big: int = 0, with_navigation: bool = True) -> Any:
    def navigation(run: Any, results: Any) -> Navigation:
        return Navigation(prompt="Outline: s1 lookup, s2 page. Is the run fine?",
                          tools=tools(calls, big=big), caps=caps or NavigationCaps())

    step = PromptStep("Judge the run", lambda run, results: prompt, output_schema=Verdict,
                      navigation=navigation if with_navigation else None,
                      navigate=navigate)  # type: ignore[arg-type]
    judge = Judge(model=model, instructions="You judge runs.", api_base=server.url)
    return (create_scorer("navigated", "test", judge=judge).analyze(step)
            .generate_score(lambda run, results: 1.0 if results.analyze_step_result["satisfied"]
                            else 0.0))


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


ANSWER = {"satisfied": True, "reasoning": "the lookup found it"}


def test_tools_are_called_in_the_order_asked_then_the_judge_answers(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(tool_calls=[call("lookup", key="a")], prompt_tokens=120),
                      Reply(tool_calls=[call("page", key="b"), call("lookup", key="c")],
                            prompt_tokens=200),
                      Reply(content=ANSWER, prompt_tokens=260))
    calls: list[tuple[str, dict[str, Any]]] = []
    seen: list[str] = []
    with observe_judge_executions(lambda step, execution: seen.append(step)):
        result = scorer(llm_server, calls).run_sync(input="q", output="a")
    assert result.score == 1.0 and result.not_scorable is None
    assert calls == [("lookup", {"key": "a"}), ("page", {"key": "b"}), ("lookup", {"key": "c"})]
    executions = result.judge["analyze"].executions
    assert len(executions) == 3 and seen == ["analyze"] * 3
    first, second, last = executions
    assert "You may call the tools at most 20 times" in (first.prompt or "")
    assert first.output["tool_calls"] == [{"name": "lookup", "arguments": '{"key": "a"}'}]
    assert first.output["budget"]["max_tokens"] == 50_000
    assert first.usage is not None and first.usage.input_tokens == 120
    assert first.cost is not None and first.cost.amount > 0  # priced by litellm's map
    assert (second.prompt or "").startswith('→ lookup {"key": "a"}\nfound a')
    assert "[budget left: 19 tool calls" in (second.prompt or "")
    assert '→ page {"key": "b"}' in (last.prompt or "") and "found c" in (last.prompt or "")
    assert last.output == ANSWER
    assert result.analyze_prompt == first.prompt
    # the conversation sent: tools offered, each result answered under its call id
    body = llm_server.requests[2]
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup", "page"]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]
    asked = [c["id"] for c in body["messages"][4]["tool_calls"]]
    assert [m["tool_call_id"] for m in body["messages"][5:]] == asked


def test_tool_call_cap_ends_the_run_not_scorable(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(*[Reply(tool_calls=[call("lookup", key=k)]) for k in "abc"])
    calls: list[tuple[str, dict[str, Any]]] = []
    result = scorer(llm_server, calls, caps=NavigationCaps(max_tool_calls=2)).run_sync(
        input="q", output="a")
    assert result.score is None and result.not_scorable is not None
    reason = result.not_scorable.reason or ""
    assert "over max_tool_calls = 2" in reason
    assert 'it read: lookup({"key": "a"}), lookup({"key": "b"})' in reason
    assert len(calls) == 2 and len(llm_server.requests) == 3
    assert len(result.judge["analyze"].executions) == 3  # the third request was paid for


def test_token_cap_stops_before_the_request_that_would_cross_it(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(tool_calls=[call("page", key="a")], prompt_tokens=300,
                            completion_tokens=20))
    calls: list[tuple[str, dict[str, Any]]] = []
    caps = NavigationCaps(max_tokens=700)
    result = scorer(llm_server, calls, caps=caps, big=2_000).run_sync(input="q", output="a")
    assert result.not_scorable is not None
    reason = result.not_scorable.reason or ""
    assert "over max_tokens = 700" in reason and "320 of 700 tokens" in reason
    assert len(llm_server.requests) == 1  # the second request was never sent


def test_cost_cap_and_a_model_without_a_price(llm_server: ScriptedLLMServer) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    tight = scorer(llm_server, calls, caps=NavigationCaps(max_cost_usd=0.0001))
    result = tight.run_sync(input="q", output="a")
    assert result.not_scorable is not None
    assert "over max_cost_usd = $0.0001" in (result.not_scorable.reason or "")
    assert llm_server.requests == [] and result.judge["analyze"].executions == []
    unpriced = scorer(llm_server, calls, model="openai/scripted-judge",
                      caps=NavigationCaps(max_cost_usd=1.0))
    result = unpriced.run_sync(input="q", output="a")
    assert "has no price for openai/scripted-judge" in (result.not_scorable.reason or "")


def test_a_read_that_would_overflow_the_context_is_not_scorable(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(tool_calls=[call("page", key="all")]))
    calls: list[tuple[str, dict[str, Any]]] = []
    result = scorer(llm_server, calls, big=40_000).run_sync(input="q", output="a")
    reason = result.not_scorable.reason if result.not_scorable else ""
    assert "over the 8,192 input tokens the judge model openai/gpt-4 takes" in (reason or "")
    assert result.score is None and len(llm_server.requests) == 1


def test_an_invalid_answer_gets_one_correction(llm_server: ScriptedLLMServer) -> None:
    llm_server.script("I think it is fine.", Reply(content=ANSWER))
    result = scorer(llm_server, []).run_sync(input="q", output="a")
    assert result.score == 1.0
    first, second = result.judge["analyze"].executions
    assert "invalid" in first.output and "could not be used" in (second.prompt or "")
    llm_server.script("no", "still no")
    with pytest.raises(ScorerRunError) as info:
        scorer(llm_server, []).run_sync(input="q", output="a")
    assert type(info.value.cause).__name__ == "JudgeOutputError"


def test_unknown_tools_and_bad_arguments_are_answered_not_fatal(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(tool_calls=[{"name": "nope", "arguments": {}},
                                        {"name": "lookup", "arguments": "not json"}]),
                      Reply(content=ANSWER))
    calls: list[tuple[str, dict[str, Any]]] = []
    result = scorer(llm_server, calls).run_sync(input="q", output="a")
    assert result.score == 1.0 and calls == []
    tool_messages = [m["content"] for m in llm_server.requests[1]["messages"]
                     if m["role"] == "tool"]
    assert tool_messages[0].startswith("error: there is no tool 'nope'; use lookup, page")
    assert tool_messages[1].startswith("error: ")


def test_a_failed_request_is_recorded_and_fails_the_step(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(tool_calls=[call("lookup", key="a")]), error(400, "bad request"))
    with pytest.raises(ScorerRunError) as info:
        scorer(llm_server, []).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    statuses = [e.status for e in info.value.result.judge["analyze"].executions]
    assert statuses == ["success", "failed"]


def test_auto_navigates_only_a_prompt_too_long_for_the_context(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content=ANSWER), Reply(content=ANSWER))
    short = scorer(llm_server, [], navigate="auto").run_sync(input="q", output="a")
    assert short.score == 1.0 and "tools" not in llm_server.requests[0]
    long_prompt = "word " * 12_000  # about 12,000 tokens: over gpt-4's 8,192
    long = scorer(llm_server, [], navigate="auto", prompt=long_prompt).run_sync(
        input="q", output="a")
    assert long.score == 1.0 and "tools" in llm_server.requests[1]
    assert long.analyze_prompt is not None and "Outline: s1 lookup" in long.analyze_prompt


def test_every_prompt_step_that_would_overflow_is_not_scorable_never_zero(
        llm_server: ScriptedLLMServer) -> None:
    long_prompt = "word " * 12_000
    result = scorer(llm_server, [], navigate="auto", prompt=long_prompt,
                    with_navigation=False).run_sync(input="q", output="a")
    assert result.score is None and result.not_scorable is not None
    assert result.not_scorable.step == "analyze"
    reason = result.not_scorable.reason or ""
    assert "the analyze prompt needs" in reason and "at most 8,192 input tokens" in reason
    needed = int(reason.split("needs ")[1].split(" tokens")[0].replace(",", ""))
    assert 12_000 <= needed <= 12_300  # counted by litellm's token_counter
    assert llm_server.requests == []
    # a model litellm does not know has no known size: the prompt is sent as it is
    llm_server.script(Reply(content=ANSWER))
    unknown = scorer(llm_server, [], model="openai/scripted-judge", navigate="auto",
                     prompt=long_prompt, with_navigation=False).run_sync(input="q", output="a")
    assert unknown.score == 1.0 and len(llm_server.requests) == 1


@pytest.mark.parametrize(("caps", "message"), [
    ({"max_tool_calls": 0}, "max_tool_calls must be a whole number of at least 1"),
    ({"max_tokens": 1.5}, "max_tokens must be a whole number"),
    ({"max_cost_usd": -1}, "max_cost_usd must be a positive number or None"),
])
def test_caps_are_checked(caps: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NavigationCaps(**caps)


def test_navigate_must_be_auto_or_always() -> None:
    from tracescore.scoring import ScorerDefinitionError

    with pytest.raises(ScorerDefinitionError, match="navigate must be 'auto' or 'always'"):
        create_scorer("x", judge=Judge(model="openai/x", instructions="i")).analyze(
            PromptStep("d", lambda run, results: "p", output_schema=Verdict,
                       navigate="sometimes"))  # type: ignore[arg-type]


def test_tool_specs_are_openai_functions() -> None:
    [lookup, _] = tools([])
    assert lookup.spec() == {"type": "function", "function": {
        "name": "lookup", "description": "Look a key up.",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}}
    assert json.loads(json.dumps(lookup.spec()))  # JSON-ready
