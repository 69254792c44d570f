"""The generic adapter by shape: spans of a schema no convention adapter knows.

A framework with its own span schema still writes what every agent trace holds, under keys of
its own: a kind word, a message list, token counts, a model name, a tool name and call id, an
input/output pair. This adapter reads them by the shape of keys (their last segment, whatever
the prefix and separator: ``.``, ``:``, ``/``, ``_``) and values, so a span of an unknown schema
still becomes a model call, a tool call or a run with its content:

- **Steps**: a ``…node_id``/``…step_id`` attribute makes the span a workflow step of that id.
- **Kind**: a ``type``/``kind``/``subtype``/``spanType`` attribute whose value is a kind word
  (``agent``, ``llm``/``model``/``chat``/``generation``, ``tool``/``function``, ``workflow``/
  ``flow``, ``step``/``flowstep``/``node``, ``memory``, ``retriever``/``retrieval``,
  ``embedding``/``embedder``), or words that each are one and name one kind (``CHAT_MODEL``,
  not ``FunctionExecutor``); when several disagree, a unit of work (a model call, a tool, a
  step) wins over a run (a span of an agent's tool is a tool). Without one: a message list with
  a model name or token counts is a model call; a tool name is a tool call; a leaf span taking a
  message list and giving out only assistant messages is a model call (its model, usage and
  finish reason from the reply's metadata record).
- **Values written as JSON**: an attribute whose whole value is the JSON text of a string
  (``"\"AGENT\""``: an exporter that JSON-encodes every value) is read as that string.
- **Where**: the span's attributes, and beneath them its events' (an exception's aside: a
  tracer may record what a call was given and gave out as events of its span, as LlamaIndex's
  own integration does); the span's own attributes win.
- **Content**: a key whose last word is ``input``/``inputs`` or ``output``/``outputs``
  (``input``, ``…:input``, ``…_input``, ``…spanInputs``), else one whose last segment is that
  word and a content word (``input_data``); an output that is only a record of token counts is
  accounting, not content; a message list under any
  key (``…messages``, ``…prompt``) as the model's input (items with roles, typed by a message
  class, or typed as a tool call or its result: the Responses API's items; a request record's
  ``instructions``/``system`` text beside them as the system prompt); an output record's
  ``message``/``messages``/``choices``/``output`` list as its answer; a tool's
  ``…arguments``/``…args``/``…parameters`` and ``…result`` when it has no input/output.
- **Usage**: ``…prompt_tokens``/``…input_tokens``/``…completion_tokens``/``…output_tokens``/
  ``…total_tokens`` (any case, any prefix); else an attribute holding a JSON record of such
  counts, under any key, or of bare ``input``/``output``/``total`` counts under a ``usage…``
  key (Langfuse's ``langfuse.observation.usage_details``); else a ``usage`` record inside the
  output.
- **Metadata**: a ``….metadata.<name>`` attribute is the span's metadata ``<name>`` (a graph
  node's ``langgraph_node``, whatever tracer prefixed it).
- **Names**: ``…model``/``…model_name``/``…model.id`` (a text: ``…is_chat_model = true`` is a
  flag); ``…tool.name``/``…tool_name`` and
  ``…call.id``/``…call_id``; an agent's or a tool's ``name`` (the traced object's own field),
  else an agent's ``…agent.name``/``…entity.name``, else the ``…agent_name`` its output record
  declares; an ``<object>.name`` attribute of a span named ``<object>.<method>`` names it,
  whether or not the span has a kind (``haystack.component.run`` with
  ``haystack.component.name``: a pipeline's component); else the span name, without
  a ``kind:`` prefix (``tool.execution:get_weather`` → ``get_weather``); ``…instructions`` as
  the agent's system prompt; ``…finish_reason``, else the first ``choices`` entry's of the
  output. On a span of no kind, an ``…agent.name``/``…agent_name`` is kept as the name of the
  agent run stage 2 may find it to be (a plain span the app wrote around its own loop).
- **Ids**: ``…session.id``/``…conversation.id`` and ``…user.id``, when one token (a sentence
  there is a placeholder: Logfire's ``[Scrubbed due to 'session']``); an agent run's input
  record's ids the same way (the arguments it was called with: Pydantic AI's
  ``conversation_id``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._identity import session_id_of, user_id_of
from ._messages import (
    conversation_item,
    held_messages,
    parse_message,
    parse_messages,
    record_side,
    request_system,
)
from ._run_text import is_repr
from ._span import Span
from ._steps import RUN_KINDS, Lazy, Msg, Step
from ._values import counts_only, id_like, parse_json, parse_json_any, to_int, words

_SPLIT = re.compile(r"[.:/]")
KIND_WORDS = {
    "agent": "agent_run",
    "llm": "model_generation",
    "model": "model_generation",
    "chat": "model_generation",
    "generation": "model_generation",
    "completion": "model_generation",
    "tool": "tool_call",
    "function": "tool_call",
    "workflow": "workflow_run",
    "flow": "workflow_run",
    "step": "workflow_step",
    "flowstep": "workflow_step",
    "node": "workflow_step",
    "memory": "memory_operation",
    "retriever": "retrieval",
    "retrieval": "retrieval",
    "embedding": "embedding",
    "embedder": "embedding",
}
"""Kind words a ``type``/``kind`` attribute may carry, and the step kind each names."""
_KIND_KEYS = frozenset({"type", "kind", "subtype", "spantype", "span_type", "category"})
_USAGE = (
    ("input_tokens", ("prompt_tokens", "input_tokens", "prompttokens", "inputtokens")),
    ("output_tokens", ("completion_tokens", "output_tokens", "completiontokens", "outputtokens")),
    ("total_tokens", ("total_tokens", "totaltokens")),
)


def last_segment(key: str) -> str:
    """The last segment of a key, lower case (``genkit:metadata:subtype`` → ``subtype``)."""
    return _SPLIT.split(key)[-1].lower()


_CONTENT_NOUNS = frozenset({"data", "value", "payload", "content"})
"""Words that, after ``input``/``output``, still name the content itself (``input_data``)."""


def io_value(attrs: dict[str, Any], which: str) -> Any:
    """The first attribute whose key's last word is ``which`` (``input``/``output``) or its
    plural, whatever the prefix (``input``, ``lmnr.span.input``, ``mlflow.spanInputs``); else
    one whose last segment is ``which`` and a word for the content (``haystack.pipeline.
    input_data``; not ``input_types`` or ``input_spec``: what the input is, not the input). A
    number or a flag there, also written as text (``stream_outputs = "False"``: an object's
    fields recorded as strings), is a count or a switch, not the content."""
    names = (which, which + "s")
    fallback = None
    for key, value in attrs.items():
        if value is None or value == "" or _switch(value):
            continue
        tail = words(_SPLIT.split(key)[-1])
        if tail and tail[-1] in names:
            return value
        if fallback is None and len(tail) == 2 and tail[0] in names and tail[1] in _CONTENT_NOUNS:
            fallback = value
    return fallback


_SWITCH_TEXTS = frozenset({"true", "false", "none", "null"})


def _switch(value: Any) -> bool:
    """A flag or a number, as a value or as its text (JSON-encoded or not)."""
    if isinstance(value, str) and len(value) <= 8:
        value = parse_json_any(value)
        if isinstance(value, str):
            text = value.strip().lower()
            return text in _SWITCH_TEXTS or text.lstrip("-").replace(".", "", 1).isdigit()
    return value is None or isinstance(value, (bool, int, float))


def _ends(key: str, *suffixes: str) -> bool:
    lowered = key.lower()
    return any(lowered == s or lowered.endswith(("." + s, ":" + s, "/" + s, "_" + s))
               for s in suffixes)


def kind_of(attrs: dict[str, Any]) -> str | None:
    """The step kind the span's type-like attributes name (a unit of work over a run)."""
    found: list[str] = []
    for key, value in attrs.items():
        if not isinstance(value, str) or last_segment(key) not in _KIND_KEYS:
            continue
        kind = KIND_WORDS.get(re.sub(r"[^a-z]", "", value.lower()))
        if kind is None:  # several words, each a kind word naming one kind (``CHAT_MODEL``)
            named = {KIND_WORDS.get(w) for w in words(value)}
            kind = named.pop() if len(named) == 1 else None
        if kind is not None:
            found.append(kind)
    if not found:
        return None
    work = [k for k in found if k not in RUN_KINDS]
    return work[0] if work else found[0]


def _values(attrs: dict[str, Any], *suffixes: str) -> Iterator[tuple[str, Any]]:
    """Attributes whose key ends with one of ``suffixes`` and that hold a value (not empty, and
    not ``null``: the JSON text an exporter that JSON-encodes every value writes for none)."""
    for key, value in attrs.items():
        if value is not None and value != "" and value != "null" and _ends(key, *suffixes):
            yield key, value


def first(attrs: dict[str, Any], *suffixes: str) -> Any:
    """The first attribute value whose key ends with one of ``suffixes`` (a string written as
    JSON read as the string)."""
    found = next((v for _, v in _values(attrs, *suffixes)), None)
    return parse_json_any(found) if isinstance(found, str) and found[:1] == '"' else found


def first_text(attrs: dict[str, Any], *suffixes: str) -> str | None:
    """The first text value (not a flag or a number, as a value or as its text) whose key ends
    with one of ``suffixes``: a name (``model_dict.model_name``, not the flag
    ``model_dict.is_chat_model`` beside it)."""
    for _, value in _values(attrs, *suffixes):
        if isinstance(value, str) and not _switch(value):
            return parse_json_any(value) if value[:1] == '"' else value
    return None


def usage_of(attrs: dict[str, Any], output: Any = None) -> dict[str, int] | None:
    """Token counts under any prefix; else in an attribute holding a record of counts (a JSON
    object whose keys are count names, under whatever key); else in an output record's
    ``usage``."""
    out = _counts(attrs)
    if not out:
        for key, value in attrs.items():
            if not (isinstance(value, str) and value.startswith("{")):
                continue
            if "tokens" in value.lower():
                record = parse_json(value)
                if isinstance(record, dict):
                    out = _counts(record)
            elif words(last_segment(key))[:1] == ["usage"]:  # ``usage_details``: bare names
                record = parse_json(value)
                if isinstance(record, dict):
                    out = _bare_counts(record)
            if out:
                break
    if not out and isinstance(output, dict) and isinstance(output.get("usage"), dict):
        out = _counts(output["usage"])
    return out or None


def _bare_counts(record: dict[str, Any]) -> dict[str, int]:
    """The counts of a usage record that names them bare (``{"input": 182, "output": 12,
    "total": 194}``: Langfuse's ``usage_details``)."""
    out: dict[str, int] = {}
    for name in ("input", "output", "total"):
        count = to_int(record.get(name))
        if count is not None:
            out[name + "_tokens"] = count
    return out


def _counts(record: dict[str, Any]) -> dict[str, int]:
    """The counts a record's count-named keys hold (an estimate is no count)."""
    out: dict[str, int] = {}
    for name, suffixes in _USAGE:
        for key, value in record.items():
            lowered = key.lower()
            if "estimat" in lowered:
                continue
            if lowered.replace(".", "_").endswith(suffixes) and to_int(value) is not None:
                out[name] = to_int(value)  # type: ignore[assignment]
                break
    return out


def message_list(value: Any) -> list[Msg] | None:
    """Messages when ``value`` is a message list (items with roles, or typed by a message class:
    AutoGen's ``{"type": "SystemMessage", "content": …}``, or as a tool call or its result: the
    Responses API's items), or a record holding one (a request, with the system text it
    declares beside it; a Responses API response's ``output``)."""
    value = parse_json(value)
    if isinstance(value, list) and value and all(conversation_item(item) for item in value):
        return parse_messages(value)
    if isinstance(value, dict):
        for key in ("messages", "history", "prompt", "input", "output"):
            inner = parse_json(value.get(key))
            if isinstance(inner, list) and inner and all(conversation_item(i) for i in inner):
                msgs = parse_messages(inner) or []
                system = request_system(value)
                if system is not None and not any(m.role == "system" for m in msgs):
                    msgs.insert(0, Msg("system", [system]))
                return msgs
    return None


def _messages_in_reply_out(step: Step) -> bool:
    """A span whose input holds a message list and whose output is only assistant messages (a
    reply, not the conversation): a model call, whatever it is named (Haystack's
    ``haystack.agent.step.llm`` with ``{"messages": …}`` in and ``{"replies": …}`` out)."""
    if step._input is None or step._output is None or not message_list(step.input):
        return False
    out = parse_messages(step.output, default_role="assistant") if isinstance(
        step.output, (dict, list)) else None
    # an empty record out (``{}``: a memory or processor step that passed the messages on) is
    # no reply
    return bool(out) and all(m.role == "assistant" for m in out or ()) and any(
        m.parts for m in out or ())


def _reply_meta(output: Any) -> dict[str, Any] | None:
    """The metadata record of a reply message in an output (``{"replies": [{"role":
    "assistant", "meta": {"model", "usage", "finish_reason"}}]}``): a record among the
    message's values that names a model or holds a usage record."""
    if not isinstance(output, dict):
        return None
    replies = [v for v in output.values() if isinstance(v, list) and len(v) == 1]
    for listed in replies:
        message = listed[0]
        if isinstance(message, dict) and message.get("role") in ("assistant", "model"):
            for value in message.values():
                if isinstance(value, dict) and ("usage" in value or "model" in value):
                    return value
    return None


def answer_messages(value: Any) -> list[Msg] | None:
    """The answer in an output value: a message, a message list's last message, an OpenAI
    ``choices`` list, an assistant message record under any key, a completion record (its
    ``content`` beside a ``finish_reason``: AutoGen's ``CreateResult``), plain text, or a list of
    one text (a batch of one completion)."""
    value = parse_json(value)
    if isinstance(value, str):  # a repr (a stream's generator) is no answer
        return [Msg("assistant", [value])] if value.strip() and not is_repr(value) else None
    if isinstance(value, dict):
        message = value.get("message")
        if isinstance(message, dict):
            msg = parse_message({**message, "role": message.get("role") or "assistant"})
            return [msg] if msg is not None else None
        choice = _first_choice(value)
        if choice is not None:
            inner = choice.get("message") or {}
            msg = parse_message({**inner, "role": "assistant"}) if isinstance(inner, dict) else None
            return [msg] if msg is not None else None
        listed = message_list(value)
        if listed:
            return _last_turn(listed)
        if value.get("role") in ("assistant", "model"):
            msg = parse_message(value)
            return [msg] if msg is not None else None
        if record_side(value) == "assistant":  # a response record of parts
            msgs = parse_messages(value, default_role="assistant")
            return _last_turn(msgs) if msgs else None
        if "finish_reason" in value and "content" in value:  # a completion record
            msg = parse_message({"role": "assistant", "content": value["content"]})
            return [msg] if msg is not None else None
        held = held_messages(value, depth=1)  # ``{"response": {"role": "assistant", …}, …}``
        if len(held) == 1 and held[0].get("role") in ("assistant", "model"):
            msg = parse_message(held[0])
            return [msg] if msg is not None else None
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], str):  # a batch of one completion (DSPy's LM)
            return answer_messages(value[0])
        listed = message_list(value)
        return _last_turn(listed) if listed else None
    return None


def _last_turn(msgs: list[Msg]) -> list[Msg]:
    """The last message of a list, joined with the assistant messages right before it when it
    is the assistant's (a Responses API output: one item per call or text)."""
    start = len(msgs) - 1
    if msgs[start].role != "assistant":
        return msgs[start:]
    while start > 0 and msgs[start - 1].role == "assistant":
        start -= 1
    if start == len(msgs) - 1:
        return msgs[start:]
    return [Msg("assistant", [p for m in msgs[start:] for p in m.parts], id=msgs[-1].id)]


def plain_name(name: str) -> str:
    """A span name without a ``kind:`` prefix (``tool.execution:get_weather`` → ``get_weather``)."""
    head, colon, tail = name.rpartition(":")
    return tail.strip() if colon and head and tail.strip() else name


def claims(span: Span) -> bool:
    """Any span (used when no convention adapter claims it)."""
    return True


def readable_attributes(span: Span) -> dict[str, Any]:
    """The span's attributes, and beneath them its events' (an exception's aside): a tracer
    that records what a call was given and gave out as events of its span (LlamaIndex's own
    OpenTelemetry integration: ``LLMChatStartEvent`` with the ``messages``, ``step.output``
    with the ``output``) says it there; the span's own attributes win."""
    if not span.events:
        return span.attributes
    merged: dict[str, Any] = {}
    for event in span.events:
        if event.get("name") != "exception" and isinstance(event.get("attributes"), dict):
            for key, value in event["attributes"].items():
                merged.setdefault(key, value)
    if not merged:
        return span.attributes
    merged.update(span.attributes)
    return merged


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from what the span's keys and values are shaped like (its attributes, and
    its events' beneath them)."""
    attrs = readable_attributes(span)
    for key, value in attrs.items():  # ``….metadata.<name>``: the span's metadata
        _, found, name = key.partition(".metadata.")
        if found and name and "." not in name and name not in step.metadata:
            step.metadata[name] = parse_json_any(value) if isinstance(value, str) else value
    if step._input is None:
        raw = io_value(attrs, "input")
        if raw is not None:
            step.input = Lazy(parse_json_any, raw)
    if step._output is None:
        raw = io_value(attrs, "output")
        if raw is not None and not counts_only(raw):
            step.output = Lazy(parse_json_any, raw)
    kind = kind_of(attrs)
    step_id = first(attrs, "node_id", "node.id", "step_id", "step.id", "nodeid", "stepid")
    if kind is None and step_id is not None and not isinstance(step_id, (dict, list)):
        step.kind = "workflow_step"
        step.hint = "shape"
        step.name = step.step_id = str(step_id)
        return
    listed_key = next((k for k, v in attrs.items() if _ends(k, "messages", "prompt")
                       and isinstance(v, str) and v.startswith("[")), None)
    model = first_text(attrs, "model", "model_name", "model.name", "model.id")
    tool = first(attrs, "tool.name", "tool_name", "toolname")
    if kind is None:
        if listed_key is not None and (model is not None or usage_of(attrs) is not None):
            kind = "model_generation"
        elif tool is not None:
            kind = "tool_call"
        elif not span.children and _messages_in_reply_out(step):
            kind = "model_generation"
    if kind is None:
        agent = first(attrs, "agent.name", "agent_name", "agentname")
        if agent is not None and not isinstance(agent, (dict, list)):
            step.agent_id = step.agent_id or str(agent)  # the run's name, if it is one
        named = _named_object(span)  # a pipeline's component, whatever stage 3 makes of it
        if named is not None:
            step.name = named
        return
    step.kind = kind
    step.hint = "shape"
    fill(step, span, kind, listed_key=listed_key, model=model, tool=tool, attrs=attrs)


def tool_task(span: Span, step: Step) -> None:
    """A task span (a unit of work a convention typed no further) that names a tool is that
    tool's execution."""
    tool = first(span.attributes, "tool.name", "tool_name", "toolname")
    if tool is None or isinstance(tool, (dict, list)):
        return
    step.kind = "tool_call"
    step.hint = "shape"
    fill(step, span, "tool_call", tool=tool)


def fill(
    step: Step,
    span: Span,
    kind: str,
    *,
    listed_key: str | None = None,
    model: Any = None,
    tool: Any = None,
    attrs: dict[str, Any] | None = None,
) -> None:
    """Fill a step of ``kind`` from shaped keys (shared with adapters of named schemas);
    ``attrs`` are what to read (the span's attributes unless given)."""
    if attrs is None:
        attrs = span.attributes
    conversation = first(attrs, "conversation.id", "conversation_id", "conversationid",
                         "session.id", "session_id", "sessionid")
    if id_like(conversation):
        step.conversation_id = step.conversation_id or str(conversation)
    user = first(attrs, "user.id", "user_id", "userid")
    if id_like(user):
        step.user_id = step.user_id or str(user)
    name = _named_object(span) or plain_name(span.name)
    if kind == "model_generation":
        step.hint = "llm_call"
        step.model = str(model) if model is not None else step.model or name
        step.name = step.model
        source = attrs.get(listed_key) if listed_key is not None else None
        step.input_messages = Lazy(_model_inputs, source, step)
        step.output_messages = Lazy(_model_outputs, step)
        step.usage = usage_of(attrs) or step.usage
        if step.usage is None and step._output is not None:
            step.usage = usage_of({}, step.output)
        finish = first(attrs, "finish_reason", "finishreason")
        if finish is None and step._output is not None:
            finish = (_first_choice(step.output) or {}).get("finish_reason") or None
        meta = _reply_meta(step.output) if step._output is not None else None
        if meta is not None:  # what the reply message's own metadata says (Haystack's ``meta``)
            if model is None and isinstance(meta.get("model"), str):
                step.model = step.name = meta["model"]
            if step.usage is None and isinstance(meta.get("usage"), dict):
                step.usage = _counts(meta["usage"]) or None
            finish = finish or meta.get("finish_reason") or None
        if finish is not None:
            step.finish_reason = str(finish)
    elif kind == "tool_call":
        if tool is None:  # the tool object's own name field, recorded as an attribute
            tool = _own_name(attrs)
        step.tool_name = str(tool) if tool is not None else name
        step.name = step.tool_name
        call_id = first(attrs, "call.id", "call_id", "callid")
        if call_id is not None:
            step.tool_call_id = str(call_id)
        step.tool_args = step.input
        step.tool_result = step.output
        if step._input is None:
            args = first(attrs, "arguments", "args", "parameters")
            if args is not None:
                step.tool_args = step.input = parse_json(args)
        if step._output is None:
            result = first(attrs, "result", "results", "return_value")
            if result is not None:
                step.tool_result = step.output = parse_json(result)
    elif kind == "agent_run":
        named = name if name != span.name else None  # ``subagent:weather_agent``
        agent = named or _own_name(attrs) or first(attrs, "agent.name", "entity.name")
        if agent is None and step._output is not None and isinstance(step.output, dict):
            agent = declared_agent_name(step.output)
        step.name = str(agent or name)
        step.agent_id = step.name
        instructions = first(attrs, "instructions", "system_prompt")
        if isinstance(instructions, str) and instructions:
            step.system = [instructions]
        if step._output is not None:
            step.output_messages = Lazy(_model_outputs, step)
        if step._input is not None and isinstance(step.input, dict):
            # ids the run was called with (Pydantic AI's ``conversation_id`` argument)
            step.conversation_id = step.conversation_id or session_id_of(step.input)
            step.user_id = step.user_id or user_id_of(step.input)
    elif kind == "workflow_run":
        step.name = str(first(attrs, "workflow.name") or name)
        step.workflow_id = step.name
    elif kind == "workflow_step":
        step.name = name
        step.step_id = step.name
    else:
        step.name = name


def _first_choice(output: Any) -> dict[str, Any] | None:
    """The first ``choices`` entry of an output record shaped as an OpenAI response."""
    choices = output.get("choices") if isinstance(output, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None


def _model_inputs(source: Any, step: Step) -> list[Msg] | None:
    if source is not None:
        found = message_list(source)
        if found:
            return found
    return message_list(step.input) if step._input is not None else None


def declared_agent_name(output: dict[str, Any]) -> str | None:
    """The ``…agent_name`` an agent's output record declares, at its top or one record down
    (LlamaIndex's ``{"result": {"current_agent_name": …}}``)."""
    for record in (output, *(v for v in output.values() if isinstance(v, dict))):
        found = first(record, "agent_name")
        if isinstance(found, str) and found:
            return found
    return None


def _named_object(span: Span) -> str | None:
    """The name a span gives the object its own name calls (``haystack.component.run`` with a
    ``haystack.component.name`` attribute)."""
    owner = span.name.rpartition(".")[0]
    return _text_attr(span.attributes, owner + ".name") if owner else None


def _own_name(attrs: dict[str, Any]) -> str | None:
    """A ``name`` attribute: the name field of the object the span traced (an agent's, a
    tool's), as a tracer that records an object's fields writes it."""
    return _text_attr(attrs, "name")


def _text_attr(attrs: dict[str, Any], key: str) -> str | None:
    """The text of attribute ``key`` (JSON text of a string read as the string), if not blank."""
    value = attrs.get(key)
    value = parse_json_any(value) if isinstance(value, str) else None
    return value if isinstance(value, str) and value.strip() else None


def _model_outputs(step: Step) -> list[Msg] | None:
    return answer_messages(step.output) if step._output is not None else None


__all__ = [
    "KIND_WORDS",
    "adapt",
    "answer_messages",
    "claims",
    "declared_agent_name",
    "fill",
    "first",
    "io_value",
    "kind_of",
    "last_segment",
    "message_list",
    "plain_name",
    "tool_task",
    "usage_of",
]
