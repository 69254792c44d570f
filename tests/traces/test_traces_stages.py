"""The content rules of issue 26, one class at a time on small span rows of no framework in
particular (the real clients' captures are test_traces_clients.py): agent runs found bottom-up,
wrappers and workflows by what they contain, inputs that are not messages, tool identity from
the model's call, control tools by role, declared answers, the generic shape adapter, session ids
by key pattern, and a targeted plain subtree."""

from __future__ import annotations

import json
from typing import Any

from tracescore.traces import (
    Trace,
    explain,
    extract_trajectory_from_trace,
    find_target_spans,
    scorer_input,
    session_id_of,
    trace_identity,
    trace_to_agent_run,
    user_id_of,
)

from .helpers import row, span_id
from .test_traces_rules import SYSTEM, _call, _chat, _result, _text

Q, A = "Weather in Oslo?", "Oslo: 3°C, snow."
TOOL_RESULT = {"tempC": 3}


def _loop(parent: str, start: float, *, call_name: str = "weather") -> list[dict[str, Any]]:
    """A model call asking for a tool, the tool span, and the answering call, under ``parent``."""
    first, tool, second = span_id(), span_id(), span_id()
    asked = [_text("system", SYSTEM), _text("user", Q)]
    return [
        _chat("chat m", first, parent, asked, output=[_call("c1", call_name, {"city": "Oslo"})],
              start=start),
        row("tool", span_id=tool, parent=parent, start_ms=start + 2, end_ms=start + 3,
            attributes={"openinference.span.kind": "TOOL", "tool.name": "weather",
                        "input.value": json.dumps({"city": "Oslo"}),
                        "output.value": json.dumps(TOOL_RESULT)}),
        _chat("chat m", second, parent,
              [*asked, _call("c1", call_name, {"city": "Oslo"}), _result("c1", TOOL_RESULT)],
              output=[_text("assistant", A)], start=start + 4),
    ]


def _chain(name: str, sid: str, parent: str | None, start: float, end: float,
           **io: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"openinference.span.kind": "CHAIN"}
    for key, value in io.items():
        attrs[f"{key}.value"] = value if isinstance(value, str) else json.dumps(value)
    return row(name, span_id=sid, parent=parent, start_ms=start, end_ms=end, attributes=attrs)


def _kinds(trace: Trace) -> dict[str, str]:
    return {s["span_name"]: s["kind"] for s in explain(trace)["spans"]}


def test_the_agent_is_found_below_an_outer_chain_holding_it() -> None:
    """Class 1: the smallest span holding the conversation is the agent run; a chain above it
    with output of its own and steps is a workflow, its steps kept."""
    root, parse, agent, fmt = span_id(), span_id(), span_id(), span_id()
    rows = [
        _chain("Pipeline.forward", root, None, 0, 30, input="Plan a trip to Oslo",
               output="[Oslo] " + A),
        _chain("Parse.forward", parse, root, 1, 2, input="Plan a trip to Oslo", output="Oslo"),
        _chain("Inner.forward", agent, root, 3, 20, input={"question": Q}, output={"answer": A}),
        *_loop(agent, 4),
        _chain("Format.forward", fmt, root, 21, 22, input=A, output="[Oslo] " + A),
    ]
    trace = Trace.from_rows(rows)
    kinds = _kinds(trace)
    assert kinds["Inner.forward"] == "agent_run"
    assert kinds["Pipeline.forward"] == "workflow_run"
    steps = extract_trajectory_from_trace(trace).steps
    assert [(s.step_type, s.name) for s in steps] == [
        ("workflow_step", "Parse"), ("agent_run", "Inner"), ("workflow_step", "Format")]
    assert find_target_spans(trace, "agent_run") == [agent]


def test_a_wrapper_is_recognised_by_content_whatever_its_kind_and_siblings() -> None:
    """Class 2: an AGENT-typed root whose input and output are the run's, beside a span of its
    own (a history loader), is a wrapper: the agent below is the run and the target."""
    root, history, agent = span_id(), span_id(), span_id()
    rows = [
        row("conversation", span_id=root, start_ms=0, end_ms=30,
            attributes={"openinference.span.kind": "AGENT", "input.value": Q,
                        "output.value": A}),
        _chain("insert_history", history, root, 1, 2, input=Q, output={"history": []}),
        row("weather_agent", span_id=agent, parent=root, start_ms=3, end_ms=29,
            attributes={"openinference.span.kind": "AGENT", "agent.name": "weather_agent"}),
        *_loop(agent, 4),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace)
    assert data["kind"] == "agent" and data["span_id"] == agent
    assert _kinds(trace)["conversation"] == "generic"


def test_a_span_with_output_of_its_own_is_a_workflow_even_without_step_spans() -> None:
    """Class 2: a framework that writes its workflow steps only as attributes still gets a
    workflow run: its output is not the agent's."""
    root, agent = span_id(), span_id()
    rows = [
        _chain("travel-workflow", root, None, 0, 30, input="Plan a trip to Oslo",
               output="[Oslo] " + A),
        row("weather_agent", span_id=agent, parent=root, start_ms=3, end_ms=29,
            attributes={"openinference.span.kind": "AGENT", "agent.name": "weather_agent"}),
        *_loop(agent, 4),
    ]
    trace = Trace.from_rows(rows)
    assert scorer_input(trace)["kind"] == "workflow"
    assert find_target_spans(trace, "agent_run") == [agent]


def test_an_agent_input_that_is_a_repr_is_never_the_users_text() -> None:
    """Class 3: the agent span's input is a framework object's repr; the current turn comes from
    the first model call, and the repr appears nowhere as text."""
    agent = span_id()
    repr_input = f"id='x1' source='user' models_usage=None content='{Q}' type='TextMessage'"
    rows = [
        row("agent", span_id=agent, start_ms=0, end_ms=30,
            attributes={"openinference.span.kind": "AGENT", "input.value": repr_input,
                        "input.mime_type": "text/plain"}),
        *_loop(agent, 1),
    ]
    run = trace_to_agent_run(Trace.from_rows(rows))
    assert [(m.role, m.content) for m in run.input.input_messages] == [("user", Q)]
    assert repr_input not in json.dumps(run.model_dump(mode="json"))


def test_a_record_input_gives_the_users_words_inside_the_models_template() -> None:
    """Class 3: a record input (``{"input_args": {"question": …}}``) is not a message: the user's
    own text is the record's text that fills its line in the model's templated turn."""
    agent, call = span_id(), span_id()
    templated = f"[[ ## question ## ]]\n{Q}\n\n[[ ## trajectory ## ]]\n\nRespond with the fields."
    rows = [
        _chain("Agent.forward", agent, None, 0, 10,
               input={"input_args": {"question": Q, "history": "messages=[]"}}),
        _chat("chat m", call, agent, [_text("system", SYSTEM), _text("user", templated)],
              output=[_text("assistant", A)], start=1),
    ]
    run = trace_to_agent_run(Trace.from_rows(rows), agent)
    assert [(m.role, m.content) for m in run.input.input_messages] == [("user", Q)]


def test_a_tool_step_is_named_by_the_models_call_not_its_span() -> None:
    """Class 4: a tool span named ``get_weather.__call__`` with no call id executes the model's
    call ``weather``: the step has the call's name, arguments and id; the span its result."""
    agent = span_id()
    rows = [row("agent", span_id=agent, start_ms=0, end_ms=30,
                attributes={"openinference.span.kind": "AGENT", "agent.name": "a"}),
            *_loop(agent, 1)]
    rows[2]["name"] = "weather.__call__"
    rows[2]["attributes"] = {"openinference.span.kind": "TOOL",
                             "input.value": json.dumps({"input": {"city": "Oslo"}, "options": {}}),
                             "output.value": json.dumps(TOOL_RESULT)}
    trace = Trace.from_rows(rows)
    [tool] = [s for s in extract_trajectory_from_trace(trace).steps if s.step_type == "tool_call"]
    assert (tool.name, tool.tool_args, tool.tool_result, tool.tool_call_id) == (
        "weather", {"city": "Oslo"}, TOOL_RESULT, "c1")


def test_control_tools_are_recognised_by_their_role() -> None:
    """Class 5: a call naming another agent that runs next is a handoff (its run becomes the
    caller's child); a last call whose arguments carry the run's declared answer is the final
    answer; neither is a tool call of the run."""
    root, triage, call, other, answer_call = (span_id() for _ in range(5))
    rows = [
        _chain("root", root, None, 0, 40),
        row("triage", span_id=triage, parent=root, start_ms=1, end_ms=5,
            attributes={"openinference.span.kind": "AGENT", "agent.name": "triage"}),
        _chat("chat m", call, triage, [_text("system", "Route."), _text("user", Q)],
              output=[_call("h1", "handoff_to_WeatherAgent", {})], start=2),
        row("WeatherAgent", span_id=other, parent=root, start_ms=6, end_ms=30,
            attributes={"openinference.span.kind": "AGENT", "agent.name": "WeatherAgent",
                        "output.value": A}),
        _chat("chat m", answer_call, other, [_text("system", SYSTEM), _text("user", Q)],
              output=[_call("f1", "submit", {"text": A})], start=7),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert run.span_id == triage
    assert find_target_spans(trace, "agent_run") == [triage, other]
    assert [i.tool_name for m in run.output for i in m.tool_invocations] == []
    assert run.output[0].content == A
    handed = trace_to_agent_run(trace, other)
    assert handed.output[0].content == A and not handed.output[0].tool_invocations


def test_an_argumentless_call_after_which_another_call_answers_ends_the_loop() -> None:
    """Class 5: a last tool call with no arguments, after which the loop's conversation makes no
    further call but another one writes the answer (DSPy's ``finish`` and extract step)."""
    agent, first, tool, extract = span_id(), span_id(), span_id(), span_id()
    rows = [
        _chain("Agent.forward", agent, None, 0, 20, input=Q, output={"answer": A}),
        _chat("chat m", first, agent, [_text("system", "Loop."), _text("user", Q)],
              output=[_call("d1", "done", {})], start=1),
        row("done", span_id=tool, parent=agent, start_ms=3, end_ms=4,
            attributes={"openinference.span.kind": "TOOL", "tool.name": "done",
                        "output.value": "Completed."}),
        _chat("chat m", extract, agent, [_text("system", "Extract."), _text("user", Q)],
              output=[_text("assistant", "[[ ## answer ## ]]\n" + A)], start=5),
    ]
    run = trace_to_agent_run(Trace.from_rows(rows), agent)
    assert run.output[0].tool_invocations == []
    assert run.output[0].content == A  # the declared record's one text field, not the template


def test_an_unknown_schema_is_read_by_the_shape_of_its_keys() -> None:
    """Class 7: spans of no known convention: a kind word, a message list, token counts, a
    model name, a tool name and call id, an input/output pair under a prefix of their own."""
    agent, llm, tool = span_id(), span_id(), span_id()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q}]
    rows = [
        row("weather_agent", span_id=agent, start_ms=0, end_ms=20,
            attributes={"acme.span.kind": "agent", "acme.input": Q, "acme.output": A,
                        "acme.conversation.id": "conv-7", "acme.user_id": "u-1"}),
        row("acme:chat", span_id=llm, parent=agent, start_ms=1, end_ms=2,
            attributes={"acme.span.kind": "llm", "acme.model": "m-1",
                        "acme.messages": json.dumps(messages),
                        "acme.output": json.dumps({"message": {"role": "assistant",
                                                               "content": A}}),
                        "acme.usage.prompt_tokens": 12, "acme.usage.completion_tokens": 4}),
        row("acme:tool:weather", span_id=tool, parent=agent, start_ms=3, end_ms=4,
            attributes={"acme.tool.name": "weather", "acme.tool.call.id": "t1",
                        "acme.input": json.dumps({"city": "Oslo"}),
                        "acme.output": json.dumps(TOOL_RESULT)}),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert run.span_id == agent
    assert [m.content for m in run.input.input_messages] == [Q]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == A
    assert [(i.tool_name, i.args, i.result) for i in run.output[0].tool_invocations] == [
        ("weather", {"city": "Oslo"}, TOOL_RESULT)]
    [model] = [s for s in extract_trajectory_from_trace(trace).steps
               if s.step_type == "model_generation"]
    assert (model.model_id, model.prompt_tokens, model.completion_tokens) == ("m-1", 12, 4)
    assert run.request_context == {"conversation_id": "conv-7", "user_id": "u-1"}


def test_a_schema_writing_every_value_as_json_is_read_by_shape_too() -> None:
    """Class 7, as MLflow's tracing SDK exports: kind words joined in one value (``CHAT_MODEL``),
    input and output under keys whose last word says so (``…spanInputs``), every value JSON text
    (strings too), an OpenAI response record as the output (its finish reason read from it),
    token counts in a JSON record; a type value naming something that is no kind
    (``FunctionExecutor``) leaves the span's kind alone."""
    agent, llm, tool, other = span_id(), span_id(), span_id(), span_id()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q}]
    response = {"choices": [{"finish_reason": "stop",
                             "message": {"role": "assistant", "content": A}}]}
    rows = [
        row("weather_agent", span_id=agent, start_ms=0, end_ms=20,
            attributes={"acme.spanType": json.dumps("AGENT"),
                        "acme.spanInputs": json.dumps({"question": Q}),
                        "acme.spanOutputs": json.dumps(A)}),
        row("Completions", span_id=llm, parent=agent, start_ms=1, end_ms=2,
            attributes={"acme.spanType": json.dumps("CHAT_MODEL"),
                        "acme.llm.model": json.dumps("m-1"),
                        "acme.spanInputs": json.dumps({"model": "m-1", "messages": messages}),
                        "acme.spanOutputs": json.dumps(response),
                        "acme.chat.tokenUsage": json.dumps({"input_tokens": 12,
                                                            "output_tokens": 4})}),
        row("lookup", span_id=tool, parent=agent, start_ms=3, end_ms=4,
            attributes={"acme.spanType": json.dumps("TOOL"),
                        "acme.spanInputs": json.dumps({"city": "Oslo"}),
                        "acme.spanOutputs": json.dumps(TOOL_RESULT)}),
        row("executor.process", span_id=other, parent=agent, start_ms=5, end_ms=6,
            attributes={"executor.type": "FunctionExecutor"}),
    ]
    trace = Trace.from_rows(rows)
    assert _kinds(trace) == {"weather_agent": "agent_run", "Completions": "model_generation",
                             "lookup": "tool_call", "executor.process": "generic"}
    run = trace_to_agent_run(trace)
    assert run.span_id == agent
    assert [m.content for m in run.input.input_messages] == [Q]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert [m.content for m in run.output] == [A], "the declared answer, without JSON quotes"
    [model] = [s for s in extract_trajectory_from_trace(trace).steps
               if s.step_type == "model_generation"]
    assert (model.model_id, model.prompt_tokens, model.completion_tokens,
            model.finish_reason) == ("m-1", 12, 4, "stop")
    [tool_step] = [s for s in extract_trajectory_from_trace(trace).steps
                   if s.step_type == "tool_call"]
    assert (tool_step.tool_args, tool_step.tool_result) == ({"city": "Oslo"}, TOOL_RESULT)


def test_session_and_user_ids_are_read_by_key_pattern() -> None:
    """Class 8: ids under keys of any framework's naming."""
    assert session_id_of({"ai.settings.context.sessionId": "s1"}) == "s1"
    assert session_id_of({"conversation.id": "c1", "operation.id": "x"}) == "c1"
    assert session_id_of({"mastra.metadata.threadId": "t1"}) == "t1"
    assert session_id_of({"metadata": json.dumps({"thread_id": "t2"})}) == "t2"
    assert session_id_of({"thread.id": "t", "session.id": "s"}) == "s"  # session first
    assert session_id_of({"gen_ai.tool.call.id": "c", "entity.id": "e"}) is None
    # a group id is a session's only as the whole key (the OpenAI Agents SDK's trace group),
    # last in preference; a prefixed one is the id of some other group
    assert session_id_of({"group_id": "g1"}) == "g1"
    assert session_id_of({"group_id": "g1", "thread_id": "t3"}) == "t3"
    assert session_id_of({"edge_group.id": "e1", "consumer.groupId": "e2"}) is None
    # among a trace's metadata it is the app's own label (Laminar's association properties)
    laminar = "lmnr.association.properties.metadata.openai.agents.group_id"
    assert session_id_of({laminar: "conv-1", "consumer.groupId": "e2"}) == "conv-1"
    assert user_id_of({"ai.settings.context.userId": "u1"}) == "u1"
    assert user_id_of({"enduser.id": "u2"}) == "u2"
    agent = span_id()
    trace = Trace.from_rows([
        row("agent", span_id=agent, start_ms=0, end_ms=9,
            attributes={"ai.settings.context.sessionId": "s9", "ai.settings.context.userId":
                        "u9"}),
        *_loop(agent, 1),
    ])
    assert trace_identity(trace) == ("s9", "u9")
    assert trace_to_agent_run(trace).request_context == {"conversation_id": "s9",
                                                         "user_id": "u9"}


def test_a_targeted_plain_span_over_a_model_call_loop_is_an_agent() -> None:
    """Class 9: asked for by id, a plain span whose subtree is a plain LLM-call loop (no run in
    it) is seen as an agent run, as the same loop at the root would be."""
    root, inner = span_id(), span_id()
    first, second = span_id(), span_id()
    asked = [_text("user", Q)]
    other = [_text("user", "Something else")]
    rows = [
        row("request", span_id=root, start_ms=0, end_ms=30),
        row("weather_agent", span_id=inner, parent=root, start_ms=1, end_ms=20),
        # two calls that do not continue each other: no conversation makes a run
        _chat("chat m", first, inner, asked, output=[_text("assistant", "Thinking.")], start=2),
        _chat("chat m", second, inner, other, output=[_text("assistant", A)], start=5),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace, inner)
    assert data["kind"] == "agent"
    assert data["output"][0]["content"] == A


def test_with_no_model_call_traced_the_span_whose_steps_hand_around_a_conversation_is_the_run(
) -> None:
    """Class 10: no model call anywhere; the innermost span whose steps give out a conversation
    (a message list with the user's message) and then an assistant's answer is the agent run,
    its input that conversation and its output that answer; the span around it is not a run
    (LlamaIndex's agent workflow through OpenLLMetry)."""
    outer, inner, tool = span_id(), span_id(), span_id()
    conversation = {"input": [{"role": "system", "content": SYSTEM},
                              {"role": "user", "content": Q}]}
    answer = {"result": {"response": {"role": "assistant", "content": A},
                         "current_agent_name": "oslo_agent"}}
    rows = [
        row("app", span_id=outer, start_ms=0, end_ms=30,
            attributes={"output": json.dumps({"messages": [{"role": "user", "content": Q}]})}),
        row("step.setup", span_id=span_id(), parent=outer, start_ms=1, end_ms=2,
            attributes={"output": json.dumps(conversation)}),
        row("agent.run", span_id=inner, parent=outer, start_ms=3, end_ms=20),
        row("step.setup", span_id=span_id(), parent=inner, start_ms=4, end_ms=5,
            attributes={"output": json.dumps(conversation)}),
        row("step.tool", span_id=tool, parent=inner, start_ms=6, end_ms=7,
            attributes={"tool.name": "get_weather", "tool.arguments": '{"city": "Oslo"}',
                        "output": json.dumps(TOOL_RESULT)}),
        row("step.finish", span_id=span_id(), parent=inner, start_ms=8, end_ms=9,
            attributes={"output": json.dumps(answer)}),
        row("step.finish", span_id=span_id(), parent=outer, start_ms=21, end_ms=22,
            attributes={"output": json.dumps(answer)}),
    ]
    trace = Trace.from_rows(rows)
    assert find_target_spans(trace, "agent_run") == [inner]
    run = trace_to_agent_run(trace)
    assert run.span_id == inner
    assert [(m.role, m.content) for m in run.input.input_messages] == [("user", Q)]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == A
    assert [(i.tool_name, i.args) for i in run.output[0].tool_invocations] == [
        ("get_weather", {"city": "Oslo"})]
    assert _kinds(trace)["app"] != "agent_run"
    assert {s.span_id: s.name for r in trace.steps for s in r.walk()}[inner] == "oslo_agent"
