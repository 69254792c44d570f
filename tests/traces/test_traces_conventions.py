"""Convention variants beyond the captured fixtures: the GenAI event/log form, the older flattened
GenAI attributes, an OpenInference agent without an AGENT span, AI SDK v4 names, Mastra's older
exporter; precedence between conventions; invalid JSON, huge messages and failing tools."""

from __future__ import annotations

import json

from tracescore.traces import (
    Trace,
    adapt_span,
    extract_trajectory_from_trace,
    scorer_input,
    trace_to_agent_run,
    trace_to_span_run,
)

from .helpers import TRACE_ID, row, span_id

SYSTEM = "You are terse."
QUESTION = "Weather in Oslo?"
ANSWER = "Oslo: 3°C, snow."


def _shape(trace: Trace) -> list[tuple[str, str]]:
    return [(s.step_type, s.name) for s in extract_trajectory_from_trace(trace).steps]


def _invocations(trace: Trace) -> list[tuple[str, object, object, str]]:
    output = trace_to_agent_run(trace).output
    return [(i.tool_name, i.args, i.result, i.state) for m in output for i in m.tool_invocations]


def test_genai_event_form_joined_from_span_events_and_log_records() -> None:
    """openai-v2 on the v1.30 conventions: messages are events; tool spans are not traced."""
    agent, chat1, chat2 = span_id(), span_id(), span_id()
    rows = [
        row(
            "invoke_agent oslo",
            span_id=agent,
            start_ms=0,
            end_ms=50,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "oslo"},
        ),
        row(
            "chat gpt-4o-mini",
            span_id=chat1,
            parent=agent,
            start_ms=1,
            end_ms=10,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 50,
                "gen_ai.usage.output_tokens": 7,
            },
            events=[
                {
                    "name": "gen_ai.system.message",
                    "time_unix_nano": 1,
                    "attributes": {"content": SYSTEM},
                },
                {
                    "name": "gen_ai.user.message",
                    "time_unix_nano": 2,
                    "attributes": {"content": QUESTION},
                },
                {
                    "name": "gen_ai.choice",
                    "time_unix_nano": 3,
                    "attributes": {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": json.dumps(
                            {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "id": "call_1",
                                        "type": "function",
                                        "function": {
                                            "name": "weather",
                                            "arguments": '{"city": "Oslo"}',
                                        },
                                    }
                                ],
                            }
                        ),
                    },
                },
            ],
        ),
        row(
            "chat gpt-4o-mini",
            span_id=chat2,
            parent=agent,
            start_ms=20,
            end_ms=40,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 80,
                "gen_ai.usage.output_tokens": 9,
            },
        ),
    ]

    def log(name: str, body: object, t: int) -> dict:
        return {
            "trace_id": TRACE_ID,
            "span_id": chat2,
            "time_unix_nano": t,
            "event_name": name,
            "body": body,
            "attributes": {"gen_ai.system": "openai"},
        }

    logs = [
        log("gen_ai.system.message", {"content": SYSTEM}, 1),
        log("gen_ai.user.message", {"content": QUESTION}, 2),
        log(
            "gen_ai.assistant.message",
            {
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ]
            },
            3,
        ),
        log("gen_ai.tool.message", {"content": '{"tempC": 3}', "id": "call_1"}, 4),
        log(
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": ANSWER},
            },
            5,
        ),
    ]
    trace = Trace.from_rows(rows, logs=logs)
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    # The tool ran untraced: its step comes from the call the model made and the result it got.
    assert _shape(trace) == [
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "weather"),
        ("model_generation", "gpt-4o-mini"),
    ]
    steps = extract_trajectory_from_trace(trace).steps
    assert [(s.tool_args, s.tool_result, s.success) for s in steps[1:2]] == [
        ({"city": "Oslo"}, {"tempC": 3}, True)
    ]
    models = [s for s in steps if s.step_type == "model_generation"]
    assert [(s.prompt_tokens, s.finish_reason) for s in models] == [
        (50, "tool_calls"),
        (80, "stop"),
    ]


def test_inference_details_event_carries_the_messages() -> None:
    chat = span_id()
    details = {
        "gen_ai.input.messages": [
            {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
        ],
        "gen_ai.output.messages": [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": ANSWER}],
                "finish_reason": "stop",
            }
        ],
        "gen_ai.system_instructions": [{"type": "text", "content": SYSTEM}],
    }
    rows = [
        row(
            "chat m",
            span_id=chat,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
            events=[
                {
                    "name": "gen_ai.client.inference.operation.details",
                    "time_unix_nano": 1,
                    "attributes": details,
                }
            ],
        )
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER
    assert scorer_input(trace)["kind"] == "agent"  # a plain LLM-call trace (class 9)


def test_older_flattened_genai_attributes() -> None:
    """OpenLLMetry-style gen_ai.prompt.N / gen_ai.completion.N and prompt/completion tokens."""
    root, chat, tool, chat2 = span_id(), span_id(), span_id(), span_id()
    rows = [
        row("handler", span_id=root, start_ms=0, end_ms=30),
        row(
            "openai.chat",
            span_id=chat,
            parent=root,
            start_ms=1,
            end_ms=5,
            attributes={
                "gen_ai.system": "OpenAI",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": SYSTEM,
                "gen_ai.prompt.1.role": "user",
                "gen_ai.prompt.1.content": QUESTION,
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "c1",
                "gen_ai.completion.0.tool_calls.0.name": "weather",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Oslo"}',
                "gen_ai.usage.prompt_tokens": 40,
                "gen_ai.usage.completion_tokens": 6,
            },
        ),
        row(
            "weather.tool",
            span_id=tool,
            parent=root,
            start_ms=6,
            end_ms=7,
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "weather",
                "traceloop.entity.input": json.dumps({"inputs": {"city": "Oslo"}}),
                "traceloop.entity.output": json.dumps({"outputs": {"tempC": 3}}),
            },
        ),
        row(
            "openai.chat",
            span_id=chat2,
            parent=root,
            start_ms=8,
            end_ms=20,
            attributes={
                "gen_ai.system": "OpenAI",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": QUESTION,
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": ANSWER,
                "gen_ai.usage.prompt_tokens": 60,
                "gen_ai.usage.completion_tokens": 8,
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace)
    assert data["kind"] == "agent"  # a plain root over model calls is the agent run
    assert data["input"]["input_messages"][0]["content"] == QUESTION
    assert data["input"]["system_messages"][0]["content"] == SYSTEM
    assert data["output"][0]["content"] == ANSWER
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    assert _shape(trace) == [
        ("model_generation", "gpt-4o"),
        ("tool_call", "weather"),
        ("model_generation", "gpt-4o"),
    ]
    assert [
        s.prompt_tokens
        for s in extract_trajectory_from_trace(trace).steps
        if s.step_type == "model_generation"
    ] == [40, 60]


def _oi_llm(
    sid: str, parent: str, start: float, inputs: list[dict], output: dict, tokens: int
) -> dict:
    attrs: dict[str, object] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": tokens,
        "llm.token_count.completion": 5,
    }
    for i, message in enumerate(inputs):
        for key, value in message.items():
            attrs[f"llm.input_messages.{i}.message.{key}"] = value
    for key, value in output.items():
        attrs[f"llm.output_messages.0.message.{key}"] = value
    return row(
        "ChatOpenAI", span_id=sid, parent=parent, start_ms=start, end_ms=start + 2, attributes=attrs
    )


def test_openinference_graph_without_an_agent_span_is_an_implicit_agent() -> None:
    """LangGraph-like: CHAIN root, CHAIN nodes holding LLM and TOOL spans."""
    graph, node1, llm1, node2, tool, node3, llm2 = (span_id() for _ in range(7))
    chain = {"openinference.span.kind": "CHAIN"}
    rows = [
        row(
            "LangGraph",
            span_id=graph,
            start_ms=0,
            end_ms=30,
            attributes={
                **chain,
                "input.value": json.dumps({"messages": [{"role": "user", "content": QUESTION}]}),
                "input.mime_type": "application/json",
                "output.value": ANSWER,
            },
        ),
        row("agent", span_id=node1, parent=graph, start_ms=1, end_ms=5, attributes=chain),
        _oi_llm(
            llm1,
            node1,
            2,
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
            {
                "role": "assistant",
                "tool_calls.0.tool_call.id": "t1",
                "tool_calls.0.tool_call.function.name": "weather",
                "tool_calls.0.tool_call.function.arguments": '{"city": "Oslo"}',
            },
            30,
        ),
        row("tools", span_id=node2, parent=graph, start_ms=6, end_ms=9, attributes=chain),
        row(
            "weather",
            span_id=tool,
            parent=node2,
            start_ms=7,
            end_ms=8,
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "weather",
                "input.value": '{"city": "Oslo"}',
                "output.value": '{"tempC": 3}',
            },
        ),
        row("agent", span_id=node3, parent=graph, start_ms=10, end_ms=20, attributes=chain),
        _oi_llm(
            llm2,
            node3,
            11,
            [{"role": "user", "content": QUESTION}],
            {"role": "assistant", "content": ANSWER},
            45,
        ),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace)
    assert data["kind"] == "agent" and data["span_id"] == graph
    assert _shape(trace) == [
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "weather"),
        ("model_generation", "gpt-4o-mini"),
    ]
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER


def test_aisdk_v4_names_and_a_nested_single_call() -> None:
    """v4 usage names, args as a JSON string, and generateText nested in an app span."""
    app, top, call1, tool, call2, summary, summary_call = (span_id() for _ in range(7))
    base = {
        "ai.telemetry.functionId": "oslo-agent",
        "ai.model.id": "gpt-4o",
        "ai.model.provider": "openai.chat",
    }
    rows = [
        row(
            "POST /api/chat",
            span_id=app,
            start_ms=0,
            end_ms=100,
            attributes={"http.method": "POST"},
        ),
        row(
            "ai.generateText",
            span_id=top,
            parent=app,
            start_ms=1,
            end_ms=50,
            attributes={
                **base,
                "ai.operationId": "ai.generateText",
                "ai.prompt": json.dumps({"system": SYSTEM, "prompt": QUESTION}),
                "ai.response.text": ANSWER,
                "ai.usage.promptTokens": 70,
                "ai.usage.completionTokens": 9,
            },
        ),
        row(
            "ai.generateText.doGenerate",
            span_id=call1,
            parent=top,
            start_ms=2,
            end_ms=10,
            attributes={
                **base,
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps(
                    [
                        {"role": "system", "content": SYSTEM},
                        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
                    ]
                ),
                "ai.response.toolCalls": json.dumps(
                    [
                        {
                            "toolCallType": "function",
                            "toolCallId": "c1",
                            "toolName": "weather",
                            "args": '{"city":"Oslo"}',
                        }
                    ]
                ),
                "ai.finishReason": "tool-calls",
                "ai.usage.promptTokens": 30,
                "ai.usage.completionTokens": 5,
            },
        ),
        row(
            "ai.toolCall",
            span_id=tool,
            parent=top,
            start_ms=11,
            end_ms=12,
            attributes={
                "ai.operationId": "ai.toolCall",
                "ai.toolCall.name": "weather",
                "ai.toolCall.id": "c1",
                "ai.toolCall.args": '{"city":"Oslo"}',
                "ai.toolCall.result": '{"tempC":3}',
            },
        ),
        row(
            "ai.generateText.doGenerate",
            span_id=call2,
            parent=top,
            start_ms=13,
            end_ms=40,
            attributes={
                **base,
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.response.text": ANSWER,
                "ai.finishReason": "stop",
                "ai.usage.promptTokens": 70,
                "ai.usage.completionTokens": 9,
            },
        ),
        row(
            "ai.generateText",
            span_id=summary,
            parent=app,
            start_ms=60,
            end_ms=90,
            attributes={
                **base,
                "ai.operationId": "ai.generateText",
                "ai.prompt": json.dumps({"prompt": "Summarise"}),
                "ai.response.text": "short",
                "ai.usage.promptTokens": 5,
                "ai.usage.completionTokens": 1,
            },
        ),
        row(
            "ai.generateText.doGenerate",
            span_id=summary_call,
            parent=summary,
            start_ms=61,
            end_ms=89,
            attributes={
                **base,
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.response.text": "short",
                "ai.usage.promptTokens": 5,
                "ai.usage.completionTokens": 1,
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    assert trace.steps[0].children[0].kind == "agent_run"  # loops over a tool
    assert trace.steps[0].children[1].kind == "model_generation"  # one call, no tools
    data = scorer_input(trace)
    assert data["kind"] == "agent" and data["span_id"] == top
    assert data["input"]["input_messages"][0]["content"] == QUESTION
    assert data["input"]["system_messages"][0]["content"] == SYSTEM
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    steps = [(s["step_type"], s.get("prompt_tokens")) for s in data["trajectory"]["steps"]]
    assert steps == [("model_generation", 30), ("tool_call", None), ("model_generation", 70)]


def test_mastra_older_exporter_attributes() -> None:
    """Older @mastra/otel-exporter: llm_generation spans, plain input/output, tool spans under the
    agent, gen_ai.prompt/completion on the generation."""
    agent, llm, tool1 = span_id(), span_id(), span_id()
    rows = [
        row(
            "agent.oslo",
            span_id=agent,
            start_ms=0,
            end_ms=40,
            attributes={
                "mastra.span.type": "agent_run",
                "agent.id": "oslo",
                "input": QUESTION,
                "output": json.dumps({"text": ANSWER}),
                "agent.instructions": SYSTEM,
            },
        ),
        row(
            "chat gpt-4o",
            span_id=llm,
            parent=agent,
            start_ms=1,
            end_ms=30,
            attributes={
                "mastra.span.type": "llm_generation",
                "gen_ai.request.model": "gpt-4o",
                "input": json.dumps(
                    {
                        "messages": [
                            {"role": "system", "content": SYSTEM},
                            {"role": "user", "content": QUESTION},
                        ]
                    }
                ),
                "output": json.dumps(
                    {
                        "text": ANSWER,
                        "toolCalls": [
                            {"toolCallId": "c1", "toolName": "weather", "args": {"city": "Oslo"}}
                        ],
                    }
                ),
                "gen_ai.usage.input_tokens": 90,
                "gen_ai.usage.output_tokens": 12,
            },
        ),
        row(
            "tool.execute weather",
            span_id=tool1,
            parent=agent,
            start_ms=10,
            end_ms=12,
            attributes={
                "mastra.span.type": "tool_call",
                "gen_ai.tool.name": "weather",
                "input": json.dumps({"city": "Oslo"}),
                "output": json.dumps({"tempC": 3}),
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert run.span_id == agent
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    assert _shape(trace) == [("model_generation", "gpt-4o"), ("tool_call", "weather")]


def test_precedence_mastra_over_openinference_over_aisdk_over_genai() -> None:
    attrs = {
        "mastra.span.type": "tool_call",
        "openinference.span.kind": "LLM",
        "ai.operationId": "ai.generateText.doGenerate",
        "gen_ai.operation.name": "chat",
        "gen_ai.tool.name": "weather",
    }
    trace = Trace.from_rows([row("x", span_id=span_id(), attributes=attrs)])
    step = adapt_span(trace.spans[0])
    assert (step.convention, step.kind) == ("mastra", "tool_call")
    del attrs["mastra.span.type"]
    step = adapt_span(Trace.from_rows([row("x", span_id=span_id(), attributes=attrs)]).spans[0])
    assert (step.convention, step.kind) == ("openinference", "model_generation")
    del attrs["openinference.span.kind"]
    step = adapt_span(Trace.from_rows([row("x", span_id=span_id(), attributes=attrs)]).spans[0])
    assert step.convention == "aisdk"
    del attrs["ai.operationId"]
    step = adapt_span(Trace.from_rows([row("x", span_id=span_id(), attributes=attrs)]).spans[0])
    assert step.convention == "genai"
    step = adapt_span(Trace.from_rows([row("workflow_step fetch", span_id=span_id())]).spans[0])
    assert (step.convention, step.kind, step.step_id) == ("generic", "workflow_step", "fetch")


def test_invalid_json_is_kept_as_text_and_never_crashes() -> None:
    agent, chat, tool = span_id(), span_id(), span_id()
    truncated = '[{"role":"user","parts":[{"type":"text","content":"Weather in Os'
    rows = [
        row(
            "invoke_agent a",
            span_id=agent,
            start_ms=0,
            end_ms=10,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": truncated,
                "gen_ai.system_instructions": "{not json",
            },
        ),
        row(
            "chat m",
            span_id=chat,
            parent=agent,
            start_ms=1,
            end_ms=3,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.input.messages": truncated,
                "gen_ai.output.messages": "{broken",
                "gen_ai.response.finish_reasons": "[stop",
            },
        ),
        row(
            "execute_tool weather",
            span_id=tool,
            parent=agent,
            start_ms=4,
            end_ms=5,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.arguments": "{city: Oslo}",
                "gen_ai.tool.call.result": "not json",
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    data = scorer_input(trace)
    json.dumps(data)
    assert data["input"]["input_messages"][0]["content"] == truncated
    assert data["input"]["system_messages"][0]["content"] == "{not json"
    assert data["output"][0]["tool_invocations"][0]["args"] == "{city: Oslo}"
    assert data["output"][0]["tool_invocations"][0]["result"] == "not json"
    assert data["output"][0]["content"] == "{broken"
    span_run = trace_to_span_run(trace, chat)
    assert span_run.output[0].content == "{broken"


def test_huge_messages_are_kept_whole() -> None:
    huge = "x" * 5_000_000
    agent, chat = span_id(), span_id()
    messages = json.dumps([{"role": "user", "content": huge}])
    rows = [
        row(
            "invoke_agent a",
            span_id=agent,
            start_ms=0,
            end_ms=10,
            attributes={"gen_ai.operation.name": "invoke_agent"},
        ),
        row(
            "chat m",
            span_id=chat,
            parent=agent,
            start_ms=1,
            end_ms=3,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.input.messages": messages,
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "content": "ok " + "y" * 1_000_000}]
                ),
            },
        ),
    ]
    run = trace_to_agent_run(Trace.from_rows(rows))
    # Too large to parse: the whole JSON text is the message, nothing is cut.
    assert run.input.input_messages[0].content == messages
    assert len(run.output[0].content) == 1_000_003


def test_failed_tool_is_an_output_error_and_an_unsuccessful_step() -> None:
    agent, chat, tool, chat2 = span_id(), span_id(), span_id(), span_id()
    rows = [
        row(
            "invoke_agent a",
            span_id=agent,
            start_ms=0,
            end_ms=10,
            attributes={"gen_ai.operation.name": "invoke_agent"},
        ),
        row(
            "chat m",
            span_id=chat,
            parent=agent,
            start_ms=1,
            end_ms=2,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {
                                    "type": "tool_call",
                                    "id": "c1",
                                    "name": "weather",
                                    "arguments": {"city": "Atlantis"},
                                }
                            ],
                        }
                    ]
                ),
            },
        ),
        row(
            "execute_tool weather",
            span_id=tool,
            parent=agent,
            start_ms=3,
            end_ms=4,
            status="ERROR",
            status_message="city not found",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "c1",
                "error.type": "LookupError",
            },
            events=[
                {
                    "name": "exception",
                    "time_unix_nano": 1,
                    "attributes": {
                        "exception.type": "LookupError",
                        "exception.message": "city not found",
                    },
                }
            ],
        ),
        row(
            "chat m",
            span_id=chat2,
            parent=agent,
            start_ms=5,
            end_ms=6,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "No such city."}]}]
                ),
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    inv = trace_to_agent_run(trace).output[0].tool_invocations[0]
    assert (inv.tool_name, inv.args, inv.state, inv.is_error, inv.result) == (
        "weather",
        {"city": "Atlantis"},
        "output-error",
        True,
        "city not found",
    )
    tool_step = extract_trajectory_from_trace(trace).steps[1]
    assert tool_step.step_type == "tool_call" and tool_step.success is False
    assert tool_step.metadata["error"] == "city not found"


def test_span_run_of_a_model_call_and_of_a_tool() -> None:
    from .helpers import fixture_trace

    trace = fixture_trace("py-openai-v2-genai-span", "turn1")
    chat = trace.steps[0].children[0]
    run = trace_to_span_run(trace, chat.span_id)
    assert [m.role for m in run.input] == ["system", "user"]
    assert run.output[0].tool_invocations[0].tool_name == "get_weather"
    tool = trace.steps[0].children[1]
    run = trace_to_span_run(trace, tool.span_id)
    assert (run.input, run.output) == (
        {"city": "Paris"},
        {"city": "Paris", "temperatureC": 18, "condition": "cloudy"},
    )
    data = scorer_input(trace, tool.span_id)
    assert data["kind"] == "span"
    assert [(s["step_type"], s["name"]) for s in data["trajectory"]["steps"]] == [
        ("tool_call", "get_weather")
    ]


def test_adk_style_gemini_request_and_response_attributes() -> None:
    """Google ADK on GenAI spans: the request/response as JSON in vendor attributes, Gemini parts,
    tool results handed back as a user message."""
    agent, call1, tool, call2 = span_id(), span_id(), span_id(), span_id()
    fc = {"function_call": {"id": "adk-1", "name": "weather", "args": {"city": "Oslo"}}}
    fr = {"function_response": {"id": "adk-1", "name": "weather", "response": {"tempC": 3}}}
    user = {"role": "user", "parts": [{"text": QUESTION}]}
    config = {"system_instruction": SYSTEM}
    rows = [
        row(
            "invoke_agent oslo",
            span_id=agent,
            start_ms=0,
            end_ms=30,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "oslo"},
        ),
        row(
            "call_llm",
            span_id=call1,
            parent=agent,
            start_ms=1,
            end_ms=5,
            attributes={
                "gen_ai.system": "gcp.vertex.agent",
                "gen_ai.request.model": "gemini-2.0-flash",
                "gcp.vertex.agent.llm_request": json.dumps({"contents": [user], "config": config}),
                "gcp.vertex.agent.llm_response": json.dumps(
                    {"content": {"role": "model", "parts": [fc]}}
                ),
                "gen_ai.usage.input_tokens": 20,
                "gen_ai.usage.output_tokens": 4,
            },
        ),
        row(
            "execute_tool weather",
            span_id=tool,
            parent=agent,
            start_ms=6,
            end_ms=7,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "adk-1",
                "gcp.vertex.agent.tool_call_args": json.dumps({"city": "Oslo"}),
                "gcp.vertex.agent.tool_response": json.dumps({"tempC": 3}),
            },
        ),
        row(
            "call_llm",
            span_id=call2,
            parent=agent,
            start_ms=8,
            end_ms=20,
            attributes={
                "gen_ai.system": "gcp.vertex.agent",
                "gen_ai.request.model": "gemini-2.0-flash",
                "gcp.vertex.agent.llm_request": json.dumps(
                    {
                        "contents": [
                            user,
                            {"role": "model", "parts": [fc]},
                            {"role": "user", "parts": [fr]},
                        ],
                        "config": config,
                    }
                ),
                "gcp.vertex.agent.llm_response": json.dumps(
                    {
                        "content": {"role": "model", "parts": [{"text": ANSWER}]},
                        "finish_reason": "STOP",
                    }
                ),
                "gen_ai.usage.input_tokens": 40,
                "gen_ai.usage.output_tokens": 6,
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]
    assert _shape(trace) == [
        ("model_generation", "gemini-2.0-flash"),
        ("tool_call", "weather"),
        ("model_generation", "gemini-2.0-flash"),
    ]


def test_bedrock_style_blocks_in_span_events() -> None:
    """Strands-like: content blocks as JSON in span-event attributes (toolUse/toolResult)."""
    agent, chat1, chat2 = span_id(), span_id(), span_id()
    use = {"toolUse": {"toolUseId": "t-1", "name": "weather", "input": {"city": "Oslo"}}}
    result = {
        "toolResult": {
            "toolUseId": "t-1",
            "status": "success",
            "content": [{"text": '{"tempC": 3}'}],
        }
    }

    def event(name: str, **attrs: object) -> dict:
        return {"name": name, "time_unix_nano": 1, "attributes": attrs}

    rows = [
        row(
            "invoke_agent Strands Agents",
            span_id=agent,
            start_ms=0,
            end_ms=30,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "Strands Agents",
                "gen_ai.system_instructions": SYSTEM,
            },
        ),
        row(
            "chat",
            span_id=chat1,
            parent=agent,
            start_ms=1,
            end_ms=5,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude"},
            events=[
                event("gen_ai.user.message", content=json.dumps([{"text": QUESTION}])),
                event("gen_ai.choice", message=json.dumps([use]), finish_reason="tool_use"),
            ],
        ),
        row(
            "chat",
            span_id=chat2,
            parent=agent,
            start_ms=10,
            end_ms=20,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude"},
            events=[
                event("gen_ai.user.message", content=json.dumps([{"text": QUESTION}])),
                event("gen_ai.assistant.message", content=json.dumps([use])),
                event("gen_ai.tool.message", content=json.dumps([result]), id="t-1"),
                event(
                    "gen_ai.choice",
                    message=json.dumps([{"text": ANSWER}]),
                    finish_reason="end_turn",
                ),
            ],
        ),
    ]
    trace = Trace.from_rows(rows)
    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == ANSWER
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]


def test_python_literal_tool_input_and_unnamed_operations() -> None:
    """LangChain writes tool input as a Python literal; pydantic-ai-like tool spans carry
    gen_ai.tool.name without an operation name."""
    agent, tool = span_id(), span_id()
    rows = [
        row(
            "agent run",
            span_id=agent,
            start_ms=0,
            end_ms=10,
            attributes={"gen_ai.agent.name": "oslo"},
        ),
        row(
            "running tool",
            span_id=tool,
            parent=agent,
            start_ms=1,
            end_ms=2,
            attributes={
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "p1",
                "tool_arguments": "{'city': 'Oslo'}",
                "tool_response": '{"tempC": 3}',
            },
        ),
    ]
    trace = Trace.from_rows(rows)
    assert [(s.kind, s.name) for s in trace.steps[0].walk()] == [
        ("agent_run", "oslo"),
        ("tool_call", "weather"),
    ]
    assert _invocations(trace) == [("weather", {"city": "Oslo"}, {"tempC": 3}, "result")]


def test_call_usage_from_the_provider_body_when_the_span_reports_none() -> None:
    """A Mastra version whose per-step spans carry no usage (only the wrapper's total) but keep
    the provider's response body: each call's tokens come from its own body."""
    agent, gen, step1, step2 = span_id(), span_id(), span_id(), span_id()

    def body(prompt: int, completion: int) -> str:
        return json.dumps(
            {"id": "x", "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
        )

    rows = [
        row(
            "invoke_agent a",
            span_id=agent,
            start_ms=0,
            end_ms=20,
            attributes={"mastra.span.type": "agent_run", "mastra.agent_run.input": QUESTION},
        ),
        row(
            "chat gpt-4o",
            span_id=gen,
            parent=agent,
            start_ms=1,
            end_ms=19,
            attributes={
                "mastra.span.type": "model_generation",
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 300,
                "gen_ai.usage.output_tokens": 30,
            },
        ),
        row(
            "step 0",
            span_id=step1,
            parent=gen,
            start_ms=2,
            end_ms=8,
            attributes={
                "mastra.span.type": "model_step",
                "mastra.model_step.output": json.dumps({"text": "", "toolCalls": []}),
                "mastra.metadata.body": body(100, 10),
            },
        ),
        row(
            "step 1",
            span_id=step2,
            parent=gen,
            start_ms=9,
            end_ms=18,
            attributes={
                "mastra.span.type": "model_step",
                "mastra.model_step.output": json.dumps({"text": ANSWER}),
                "mastra.metadata.body": body(200, 20),
            },
        ),
    ]
    steps = extract_trajectory_from_trace(Trace.from_rows(rows)).steps
    assert [(s.step_type, s.prompt_tokens, s.completion_tokens) for s in steps] == [
        ("model_generation", 100, 10),
        ("model_generation", 200, 20),
    ]
