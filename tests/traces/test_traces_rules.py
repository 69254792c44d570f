"""The tree-level rules of issue 11, one at a time on small span rows (the captures in
test_traces_clients.py are their real-client tests): plain LLM-call traces, wrapper collapse,
the current turn inside a framework's template, request preparation, control tools, handoffs,
tool-named spans, and what ``--explain`` records for them."""

from __future__ import annotations

import json
from typing import Any

from tracescore.traces import (
    Trace,
    explain,
    extract_trajectory_from_trace,
    find_target_spans,
    render_tree,
    scorer_input,
    trace_to_agent_run,
    trace_to_scorer_run,
)

from .helpers import fixture_trace, row, span_id

SYSTEM = "You are terse."
Q1, A1 = "Weather in Oslo?", "Oslo: 3°C, snow."
Q2, A2 = "Should I take a coat?", "Yes, a warm one."
OUT_CALL = "llm.output_messages.0.message.tool_calls.0.tool_call"


def _chat(
    name: str,
    sid: str,
    parent: str | None,
    messages: list[dict[str, Any]],
    *,
    output: list[dict[str, Any]],
    start: float,
    tokens: tuple[int, int] = (10, 5),
) -> dict:
    """An OTel GenAI chat span with its messages as attributes."""
    return row(
        name,
        span_id=sid,
        parent=parent,
        start_ms=start,
        end_ms=start + 1,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps(output),
            "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1],
        },
    )


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": args}],
    }


def _result(call_id: str, result: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": result}],
    }


def test_a_lone_model_call_is_the_agent_of_a_plain_llm_trace() -> None:
    """Class 9: only a model call, no agent span: it stands as the agent (input, history, system
    from its prompt), agent scorers find it, and span scorers still see the call itself."""
    chat = span_id()
    prompt = [_text("system", SYSTEM), _text("user", Q1), _text("assistant", A1), _text("user", Q2)]
    trace = Trace.from_rows(
        [_chat("chat m", chat, None, prompt, output=[_text("assistant", A2)], start=0)]
    )
    data = scorer_input(trace)
    assert (data["kind"], data["span_id"]) == ("agent", chat)
    assert [m["content"] for m in data["input"]["input_messages"]] == [Q2]
    assert [m["content"] for m in data["input"]["remembered_messages"]] == [Q1, A1]
    assert [m["content"] for m in data["input"]["system_messages"]] == [SYSTEM]
    assert data["output"][0]["content"] == A2
    assert find_target_spans(trace, "agent_run") == [chat]
    assert find_target_spans(trace, "model_generation") == [chat]
    # A model_generation scorer (no type) asks for the span: it gets the call's own messages.
    span_run = trace_to_scorer_run(trace, chat)
    assert [m.content for m in span_run.input] == [SYSTEM, Q1, A1, Q2]
    assert [(s.step_type, s.prompt_tokens) for s in extract_trajectory_from_trace(trace).steps] == [
        ("model_generation", 10)
    ]
    notes = explain(trace)
    assert "stands as the agent" in notes["target"]["reason"]
    assert any("plain LLM-call trace" in n for n in notes["spans"][0]["notes"])


def test_a_later_call_of_a_plain_trace_keeps_its_own_work_out_of_the_history() -> None:
    """The current turn is the last user message of the first call: what follows it in that
    call's prompt (this run's tool call and result) is the run's work, not remembered history."""
    chat = span_id()
    prompt = [
        _text("system", SYSTEM),
        _text("user", Q1),
        _call("c1", "weather", {"city": "Oslo"}),
        _result("c1", {"tempC": 3}),
    ]
    trace = Trace.from_rows(
        [_chat("chat m", chat, None, prompt, output=[_text("assistant", A1)], start=0)]
    )
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [Q1]
    assert run.input.remembered_messages == []


def test_a_workflow_that_only_wraps_one_agent_collapses_onto_it() -> None:
    """Class 1: invoke_workflow X → invoke_agent X (Google ADK); the agent is the target, and
    inherits the wrapper's conversation id."""
    wf, agent, chat = span_id(), span_id(), span_id()
    rows = [
        row(
            "invoke_workflow a",
            span_id=wf,
            start_ms=0,
            end_ms=10,
            attributes={
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.workflow.name": "a",
                "gen_ai.conversation.id": "conv-1",
            },
        ),
        row(
            "invoke_agent a",
            span_id=agent,
            parent=wf,
            start_ms=1,
            end_ms=9,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
        ),
        _chat("chat m", chat, agent, [_text("user", Q1)], output=[_text("assistant", A1)], start=2),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert run.span_id == agent
    assert scorer_input(trace)["span_id"] == agent
    assert run.request_context == {"conversation_id": "conv-1"}
    assert find_target_spans(trace, "workflow_run") == []
    # With a step of its own beside the agent, the workflow is a workflow.
    rows.append(
        row(
            "invoke_node report",
            span_id=span_id(),
            parent=wf,
            start_ms=9.5,
            end_ms=9.8,
            attributes={"gen_ai.operation.name": "invoke_node"},
        )
    )
    workflow = Trace.from_rows(rows)
    assert scorer_input(workflow)["kind"] == "workflow"
    assert [s.step_type for s in extract_trajectory_from_trace(workflow).steps] == [
        "agent_run",
        "workflow_step",
    ]


def test_an_agent_span_input_in_a_framework_envelope_keeps_the_users_text() -> None:
    """Class 2/3: the agent span's input is ``{"task": ...}``; the model got the turn inside a
    template. The input is the user's own text, earlier turns are read out of the same template,
    and a final_answer tool is the answer, not a tool call."""
    agent, chat, tool = span_id(), span_id(), span_id()
    prompt = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"New task:\n{Q1}"},
        {"role": "assistant", "content": A1},
        {"role": "user", "content": f"New task:\n{Q2}"},
    ]
    rows = [
        row(
            "coach.run",
            span_id=agent,
            start_ms=0,
            end_ms=10,
            attributes={
                "openinference.span.kind": "AGENT",
                "input.value": json.dumps({"task": Q2, "reset": False}),
            },
        ),
        row(
            "Model.generate",
            span_id=chat,
            parent=agent,
            start_ms=1,
            end_ms=3,
            attributes={
                "openinference.span.kind": "LLM",
                **{
                    f"llm.input_messages.{i}.message.{k}": v
                    for i, m in enumerate(prompt)
                    for k, v in m.items()
                },
                "llm.output_messages.0.message.role": "assistant",
                **{f"{OUT_CALL}.id": "f1", f"{OUT_CALL}.function.name": "final_answer"},
                f"{OUT_CALL}.function.arguments": json.dumps({"answer": A2}),
                "llm.token_count.prompt": 20,
                "llm.token_count.completion": 4,
            },
        ),
        row(
            "FinalAnswerTool",
            span_id=tool,
            parent=agent,
            start_ms=4,
            end_ms=5,
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "final_answer",
                "input.value": json.dumps({"answer": A2}),
                "output.value": A2,
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [Q2]
    assert [(m.role, m.content) for m in run.input.remembered_messages] == [
        ("user", Q1),
        ("assistant", A1),
    ]
    assert run.output[0].content == A2
    assert run.output[0].tool_invocations == []
    assert [s.step_type for s in extract_trajectory_from_trace(trace).steps] == ["model_generation"]
    assert find_target_spans(trace, "tool_call") == []


def test_request_preparation_is_not_a_model_call() -> None:
    """Class 5: LlamaIndex's ``_prepare_chat_with_tools`` is tagged LLM but carries no messages,
    no response and no usage: each turn has exactly the scenario's model calls."""
    for scenario, calls in (("turn1", 3), ("turn2", 1)):
        trace = fixture_trace("py-llamaindex-agent-openinference", scenario)
        assert len(find_target_spans(trace, "model_generation")) == calls
        prepared = [
            s
            for r in trace.steps
            for s in r.walk()
            if s.span_name == "OpenAI._prepare_chat_with_tools"
        ]
        assert prepared and all(s.kind == "generic" and s.notes for s in prepared)


def test_plain_spans_named_by_an_asked_for_tool_are_its_steps() -> None:
    """Class 6: the plain OpenAI client traced with hand-made spans named by the tool: each is
    the execution of the tool the call before it asked for, with args and result from the
    conversation."""
    trace = fixture_trace("py-openai-plain-openinference", "turn1")
    tools = find_target_spans(trace, "tool_call")
    named = [
        s.span_id
        for r in trace.steps
        for s in r.walk()
        if s.span_name in ("get_weather", "convert_temperature")
    ]
    assert tools == named and len(tools) == 2
    steps = [s for s in extract_trajectory_from_trace(trace).steps if s.step_type == "tool_call"]
    assert [(s.tool_args, s.tool_call_id is not None, s.metadata["span_id"]) for s in steps] == [
        ({"city": "Paris"}, True, tools[0]),
        ({"celsius": 18}, True, tools[1]),
    ]


def test_a_handoff_puts_the_handed_to_agent_inside_the_agent_that_handed_off() -> None:
    """Class 4: the Agents SDK traces the handed-to agent as a sibling; it becomes the child of
    the triage agent, the transfer call is no tool call, and the answer is the handed-to one's."""
    trace = fixture_trace("py-openai-agents-openinference", "handoff")
    run = trace_to_agent_run(trace)
    names = [i.tool_name for m in run.output for i in m.tool_invocations]
    assert names == ["get_weather", "convert_temperature"]
    steps = extract_trajectory_from_trace(trace, run.span_id).steps
    assert [s.step_type for s in steps] == ["model_generation", "agent_run"]
    assert steps[1].name == "weather_agent"
    moved = [s for s in explain(trace)["spans"] if s["name"] == "weather_agent"]
    assert any("handed off to by 'triage_agent'" in n for n in moved[0]["notes"])


def test_the_tree_shows_the_derived_input_of_an_agent_whose_span_has_none() -> None:
    """``trace show`` prints an agent's input as agent scorers see it: LlamaIndex's agent span
    carries no user text, its first model call does."""
    trace = fixture_trace("py-llamaindex-agent-openinference", "turn1")
    lines = render_tree(trace).splitlines()
    assert lines[1].strip().startswith("- agent_run FunctionAgent")
    assert lines[2].strip() == "input: What is the weather in Paris right now, in Fahrenheit?"


def _agent_answering(sid: str, chat: str, parent: str, start: float) -> list[dict[str, Any]]:
    """An agent span ``a`` under ``parent`` with one model call answering ``Q1`` with ``A1``."""
    return [
        row(
            "invoke_agent a",
            span_id=sid,
            parent=parent,
            start_ms=start,
            end_ms=start + 0.9,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
        ),
        _chat("chat m", chat, sid, [_text("user", Q1)], output=[_text("assistant", A1)],
              start=start + 0.1),
    ]


def _task(name: str, sid: str, parent: str, start: float, *, order: int) -> dict[str, Any]:
    """A workflow task span of a schema no adapter knows, carrying no input or output."""
    return row(
        f"task.run {name}",
        span_id=sid,
        parent=parent,
        start_ms=start,
        end_ms=start + 1,
        attributes={"task.handler": name, "task.order": order},
    )


def _route(sid: str, parent: str, start: float) -> dict[str, Any]:
    """A routing span between tasks, carrying nothing."""
    return row(
        "route.deliver",
        span_id=sid,
        parent=parent,
        start_ms=start,
        end_ms=start + 0.1,
        attributes={"route.delivered": True},
    )


def test_steps_that_carry_nothing_are_steps_as_peers_of_the_one_holding_the_run() -> None:
    """A workflow whose step spans carry no input or output (Agent Framework's executor spans):
    the spans with the attribute keys of the one holding the agent are its steps, named by the
    target their name and attributes share; routing spans of other keys are plumbing. Without
    such peers the same span around the agent is a wrapper."""
    wf, agent, chat = span_id(), span_id(), span_id()
    first, middle, last = span_id(), span_id(), span_id()
    wf_row = row(
        "invoke_workflow trip",
        span_id=wf,
        start_ms=0,
        end_ms=10,
        attributes={"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "trip"},
    )
    agent_rows = _agent_answering(agent, chat, middle, 3)
    rows = [
        wf_row,
        _route(span_id(), wf, 0.5),
        _task("parse", first, wf, 1, order=1),
        _route(span_id(), wf, 2.5),
        _task("ask", middle, wf, 3, order=2),
        _route(span_id(), wf, 4.5),
        _task("report", last, wf, 5, order=3),
        *agent_rows,
    ]
    trace = Trace.from_rows(rows)
    assert scorer_input(trace)["kind"] == "workflow"
    steps = extract_trajectory_from_trace(trace).steps
    assert [(s.step_type, s.name) for s in steps] == [
        ("workflow_step", "parse"),
        ("workflow_step", "ask"),
        ("workflow_step", "report"),
    ]
    assert [c.step_type for c in steps[1].children or []] == ["agent_run"]
    assert trace_to_agent_run(trace).span_id == agent
    # The task holding the agent with no peer of its keys: it and the workflow wrap the agent.
    alone = Trace.from_rows([wf_row, _route(span_id(), wf, 0.5), _task("ask", middle, wf, 3,
                                                                        order=2), *agent_rows])
    assert scorer_input(alone)["span_id"] == agent
    assert find_target_spans(alone, "workflow_run") == []


def test_usage_in_a_record_of_counts_under_any_key() -> None:
    """A model call of an unknown schema whose counts are one JSON record under a key of its own
    (Langfuse's ``usage_details``) has those tokens."""
    call = span_id()
    trace = Trace.from_rows([
        row(
            "some-generation",
            span_id=call,
            attributes={
                "obs.type": "generation",
                "obs.input": json.dumps({"messages": [{"role": "user", "content": Q1}]}),
                "obs.output": json.dumps({"role": "assistant", "content": A1}),
                "obs.model.name": "m",
                "obs.cost": json.dumps({"total": 0.5}),
                "obs.counts": json.dumps({"prompt_tokens": 7, "completion_tokens": 3,
                                          "total_tokens": 10}),
            },
        )
    ])
    steps = extract_trajectory_from_trace(trace).steps
    assert [(s.step_type, s.prompt_tokens, s.completion_tokens) for s in steps] == [
        ("model_generation", 7, 3)
    ]


def test_a_declared_answer_padded_with_whitespace_is_the_models_text() -> None:
    """The agent span declares the model's answer with a newline added (Strands): the answer is
    the model's text; a declared answer that says something else still wins."""
    agent, chat = span_id(), span_id()

    def rows(declared: str) -> list[dict[str, Any]]:
        return [
            row(
                "invoke_agent a",
                span_id=agent,
                start_ms=0,
                end_ms=5,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "a",
                    "gen_ai.output.messages": json.dumps([_text("assistant", declared)]),
                },
            ),
            _chat("chat m", chat, agent, [_text("user", Q1)], output=[_text("assistant", A1)],
                  start=1),
        ]

    assert trace_to_agent_run(Trace.from_rows(rows(A1 + "\n"))).output[0].content == A1
    assert trace_to_agent_run(Trace.from_rows(rows(f"{A1} Anything else?"))).output[
        0
    ].content == f"{A1} Anything else?"


def test_a_span_asked_something_else_as_a_message_is_a_workflow_not_a_wrapper() -> None:
    """A span around one agent that carries no input value but the user's message (Strands'
    ``invoke_graph`` with a ``gen_ai.user.message`` event) is compared by that message: a task
    other than the agent's makes it a workflow run; the agent's own question, a wrapper."""
    outer, agent, chat = span_id(), span_id(), span_id()

    def rows(task: str) -> list[dict[str, Any]]:
        return [
            row(
                "invoke_graph",
                span_id=outer,
                start_ms=0,
                end_ms=10,
                attributes={"gen_ai.operation.name": "invoke_graph"},
                events=[{"name": "gen_ai.user.message", "time_unix_nano": 1,
                         "attributes": {"content": task}}],
            ),
            *_agent_answering(agent, chat, outer, 1),
        ]

    planned = Trace.from_rows(rows("Plan my trip to Oslo."))
    data = scorer_input(planned)
    assert (data["kind"], data["span_id"]) == ("workflow", outer)
    assert "Plan my trip to Oslo." in str(data["input"])
    assert trace_to_agent_run(planned).span_id == agent
    wrapped = Trace.from_rows(rows(Q1))
    assert (scorer_input(wrapped)["kind"], scorer_input(wrapped)["span_id"]) == ("agent", agent)


def _lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message as ``dumpd`` writes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls],
            "kwargs": kwargs}


def test_a_batch_of_one_conversation_is_that_conversation() -> None:
    """A model call given a batch of one prompt (``{"messages": [[...]]}``) and answering with a
    batch of one generation (``{"generations": [[{"text", "message"}]]}``), as LangSmith's
    OpenTelemetry export writes a LangChain chat model, has those messages; a list holding
    one ``(role, text)`` pair is still one message."""
    chat = span_id()
    prompt = {"messages": [[_lc("SystemMessage", content=SYSTEM, type="system"),
                            _lc("HumanMessage", content=Q1, type="human")]]}
    answer = {"generations": [[{"text": A1, "message": _lc("AIMessage", content=A1, type="ai")}]]}
    trace = Trace.from_rows([row("ChatModel", span_id=chat, attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.prompt": json.dumps(prompt), "gen_ai.completion": json.dumps(answer)})])
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert [m.content for m in run.input.input_messages] == [Q1]
    assert [m.content for m in run.output] == [A1]
    pair = Trace.from_rows([row("chain", span_id=span_id(), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.prompt": json.dumps({"messages": [["user", Q1]]})})])
    assert [m.content for m in trace_to_agent_run(pair).input.input_messages] == [Q1]


def _asking_agent(sid: str, parent: str | None, name: str, attributes: dict[str, Any],
                  result_attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """A plain span ``sid`` around a model call asking get_weather(Oslo), the tool span (with
    ``result_attrs``), and the model's answer ``A1``."""
    ask, tool, answer = span_id(), span_id(), span_id()
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1",
                                            "name": "get_weather",
                                            "arguments": {"city": "Oslo"}}]}
    return [
        row(name, span_id=sid, parent=parent, start_ms=0, end_ms=10, attributes=attributes),
        _chat("chat m", ask, sid, [_text("user", Q1)], output=[call], start=1),
        row("run tool", span_id=tool, parent=sid, start_ms=3, end_ms=4, attributes=result_attrs),
        _chat("chat m", answer, sid, [_text("user", Q1), call], output=[_text("assistant", A1)],
              start=5),
    ]


def test_a_tool_span_gives_its_output_as_the_result_and_reads_a_tool_message() -> None:
    """A tool span of a convention that names no result key (LangSmith's ``execute_tool`` with
    ``gen_ai.completion``) gives its output value as the result; a result written as a tool
    message record (``{"content": …, "type": "tool"}``) is that message's content."""
    root = span_id()
    message = {"output": {"content": '{"temperatureC": 3}', "type": "tool",
                          "tool_call_id": "c1", "status": "success"}}
    trace = Trace.from_rows(_asking_agent(root, None, "agent", {}, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "c1", "gen_ai.prompt": '{"city": "Oslo"}',
        "gen_ai.completion": json.dumps(message)}))
    [tool] = [s for s in extract_trajectory_from_trace(trace).steps if s.step_type == "tool_call"]
    assert (tool.tool_args, tool.tool_result) == ({"city": "Oslo"}, {"temperatureC": 3})


def test_a_plain_tool_span_gives_its_arguments_and_result_and_a_plain_agent_its_name() -> None:
    """A plain span of a tool (``tool.name``) gives its ``…arguments`` and ``…result`` when it
    has no input or output; a plain span found as the agent run is named by the
    ``…agent.name`` it carries, not by its span name (``agent weather_agent``)."""
    root = span_id()
    trace = Trace.from_rows(_asking_agent(
        root, None, "agent a1", {"agent.name": "a1", "agent.question": Q1},
        {"tool.name": "get_weather", "tool.arguments": '{"city": "Oslo"}',
         "tool.result": '{"temperatureC": 3}'}))
    [tool] = [s for s in extract_trajectory_from_trace(trace).steps if s.step_type == "tool_call"]
    assert (tool.tool_args, tool.tool_result) == ({"city": "Oslo"}, {"temperatureC": 3})
    assert (trace.steps[0].span_id, trace.steps[0].name) == (root, "a1")


def test_a_plain_span_with_a_task_of_its_own_in_its_attributes_is_a_workflow() -> None:
    """A plain span around a run and a step beside it, with no input or output value, whose
    attributes hold a sentence that is not the run's question but is about its work (a step
    below reads it again: Logfire's ``logfire.span``s with keyword arguments) is a workflow run,
    not a wrapper; with the run's question, a wrapper."""
    outer, agent, first = span_id(), span_id(), span_id()

    def rows(task: str) -> list[dict[str, Any]]:
        return [
            row("{name}", span_id=outer, start_ms=0, end_ms=20,
                attributes={"name": "trip", "request": task}),
            row("parse", span_id=first, parent=outer, start_ms=0.5, end_ms=0.8,
                attributes={"request": task, "city": "Oslo"}),
            *_asking_agent(agent, outer, "agent", {}, {"tool.name": "get_weather"}),
        ]

    planned = Trace.from_rows(rows("Plan my trip to Oslo."))
    assert (scorer_input(planned)["kind"], scorer_input(planned)["span_id"]) == (
        "workflow", outer)
    wrapped = Trace.from_rows(rows(Q1))
    assert scorer_input(wrapped)["kind"] == "agent"


def test_a_plain_workflow_reads_its_input_from_its_first_step_and_output_from_its_last() -> None:
    """A plain workflow span with no input or output values (Logfire's ``logfire.span`` with
    keyword arguments and ``set_attribute``) takes as input the sentence its first step also
    carries and its last does not, and as output the one its last step carries and its first
    does not; a sentence every step carries (a scrubbed session id) is neither. Its name, a
    template of its own attributes (``{name}``), reads with their values."""
    outer, first, middle, agent, last = span_id(), span_id(), span_id(), span_id(), span_id()
    task, report = "Plan my trip to Oslo, please.", f"[Oslo] {A1}"
    scrubbed = {"session.id": "[Scrubbed due to 'session']"}
    rows = [
        row("{name}", span_id=outer, start_ms=0, end_ms=20,
            attributes={"name": "trip", "request": task, **scrubbed, "report": report}),
        row("parse", span_id=first, parent=outer, start_ms=0.5, end_ms=0.8,
            attributes={"request": task, "city": "Oslo", **scrubbed}),
        row("ask {unknown}", span_id=middle, parent=outer, start_ms=1, end_ms=15,
            attributes={"city": "Oslo", "answer": A1, **scrubbed}),
        *_asking_agent(agent, middle, "agent", {}, {"tool.name": "get_weather"}),
        row("format", span_id=last, parent=outer, start_ms=16, end_ms=17,
            attributes={"city": "Oslo", "answer": A1, "report": report, **scrubbed}),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace)
    assert (data["kind"], data["span_id"]) == ("workflow", outer)
    assert (data["input"], data["output"]) == (task, report)
    assert trace.steps[0].name == "trip"
    assert [s.name for s in trace.steps[0].children][:2] == ["parse", "ask {unknown}"]
    shared = Trace.from_rows([{**rows[0], "attributes": {"name": "trip", **scrubbed}},
                              *rows[1:]])
    assert (scorer_input(shared)["input"], scorer_input(shared)["output"]) == (None, None)


def test_a_sentence_about_nothing_below_leaves_a_plain_span_a_wrapper() -> None:
    """An HTTP server span around an agent run whose only sentence is the browser's user agent
    (nothing below says it, and it holds neither the run's question nor its answer) is a
    wrapper: the agent run stays the target, with its own input."""
    outer, agent = span_id(), span_id()
    trace = Trace.from_rows([
        row("POST /api/chat", span_id=outer, start_ms=0, end_ms=20, attributes={
            "http.request.method": "POST",
            "user_agent.original": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"}),
        *_asking_agent(agent, outer, "agent", {}, {"tool.name": "get_weather"}),
    ])
    found = scorer_input(trace)
    assert (found["kind"], found["span_id"]) == ("agent", agent)
    assert found["input"]["input_messages"][0]["content"] == Q1


def test_a_graph_state_holding_a_steps_output_is_a_workflow_not_a_wrapper() -> None:
    """A span whose input and output carry the run's (a graph's state collects every step's
    output) is still the workflow when its output also carries what a step beside the run gave
    out; and it reports its own input value when its messages carry nothing."""
    outer, middle, agent, last = span_id(), span_id(), span_id(), span_id()
    report = f"[Oslo] {A1}"

    def chain(name: str, sid: str, parent: str | None, given: Any, out: Any,
              start: float) -> dict[str, Any]:
        return row(name, span_id=sid, parent=parent, start_ms=start, end_ms=start + 5,
                   attributes={"gen_ai.operation.name": "chain",
                               "gen_ai.prompt": json.dumps(given),
                               "gen_ai.completion": json.dumps(out)})

    rows = [
        chain("trip", outer, None, {"request": Q1}, {"request": Q1, "answer": A1,
                                                     "report": report}, 0),
        chain("ask", middle, outer, {"request": Q1}, {"answer": A1}, 1),
        *_agent_answering(agent, span_id(), middle, 2),
        chain("format", last, outer, {"answer": A1}, {"report": report}, 8),
    ]
    data = scorer_input(Trace.from_rows(rows))
    assert (data["kind"], data["span_id"]) == ("workflow", outer)
    assert Q1 in str(data["input"]) and report in str(data["output"])


def test_a_placeholder_where_the_session_id_belongs_is_no_session() -> None:
    """A sentence under a session key (Logfire scrubs ``session.id`` on the spans it writes to
    ``[Scrubbed due to 'session']``, the same for every session) is no session id: the run's
    session is the one its model calls carry."""
    root, chat = span_id(), span_id()
    call = _chat("chat m", chat, root, [_text("user", Q1)], output=[_text("assistant", A1)],
                 start=1)
    call["attributes"]["session.id"] = "s-1"
    trace = Trace.from_rows([
        row("agent", span_id=root, start_ms=0, end_ms=5,
            attributes={"session.id": "[Scrubbed due to 'session']", "user.id": "u-1"}),
        call,
    ])
    assert trace_to_agent_run(trace).request_context == {"conversation_id": "s-1",
                                                          "user_id": "u-1"}


def test_the_peer_step_holding_the_run_is_a_step_though_it_carries_the_runs_answer() -> None:
    """Steps of a workflow written as plain spans of one shape (``step.output`` each): the one
    around the agent, carrying only the agent's answer, is still a step among its peers, the
    agent nested in it, not a wrapper the agent replaces."""
    wf, first, middle, last, agent = span_id(), span_id(), span_id(), span_id(), span_id()
    rows = [
        row("trip", span_id=wf, start_ms=0, end_ms=20,
            attributes={"workflow.input": "Plan my trip to Oslo.", "workflow.output": A1}),
        row("parse", span_id=first, parent=wf, start_ms=0.5, end_ms=0.8,
            attributes={"step.output": "Oslo"}),
        row("ask", span_id=middle, parent=wf, start_ms=1, end_ms=9,
            attributes={"step.output": A1}),
        *_agent_answering(agent, span_id(), middle, 2),
        row("format", span_id=last, parent=wf, start_ms=10, end_ms=11,
            attributes={"step.output": A1}),
    ]
    steps = extract_trajectory_from_trace(Trace.from_rows(rows)).steps
    assert [(s.step_type, s.name) for s in steps] == [
        ("workflow_step", "parse"), ("workflow_step", "ask"), ("workflow_step", "format")]
    assert [c.step_type for c in steps[1].children or []] == ["agent_run"]


def test_explain_states_this_rounds_rules_on_their_captures() -> None:
    """``--explain`` (``Step.notes``) says why a declared agent around a step holding the
    conversation is not its run (Laminar declares every graph an agent), and which calls got
    their answer from the next call's prompt (LlamaIndex's own integration drops streamed
    answers)."""
    workflow = fixture_trace("py-langchain-agent-laminar", "workflow").steps[0]
    assert workflow.kind == "workflow_run"
    assert any("not their run" in n for n in workflow.notes or [])
    runs = [s for s in workflow.descendants() if s.kind == "agent_run"]
    assert [r.name for r in runs] == ["weather_agent"]
    assert any("below the agent span around its steps" in n for n in runs[0].notes or [])

    run = fixture_trace("py-llamaindex-agent-otel", "turn1").steps[0]
    calls = [s for s in run.descendants() if s.is_model_call]
    recovered = [any("records no answer" in n for n in c.notes or []) for c in calls]
    assert recovered == [True, True, False]  # the last call's answer was never exported
    assert [m.calls[0].name for c in calls[:2] for m in c.output_messages or []] == [
        "get_weather", "convert_temperature"]
