"""Messages of every shape the conventions write, read into ``Msg`` values, and out as ``Message``.

Shapes read: OpenAI chat (``content`` string or parts, ``tool_calls``, ``tool_call_id``), OTel GenAI
parts (``{"role", "parts": [{"type": "text"|"tool_call"|"tool_call_response"|…}]}``), the AI SDK's
content parts (``tool-call``/``tool-result`` with ``args``/``input`` and ``result``/``output``),
Mastra's stored messages (``content: {"format": 2, "parts": [...]}`` with ``tool-invocation``
parts), Anthropic blocks (``tool_use``/``tool_result``), Gemini parts (``functionCall``), LangChain
roles (``human``/``ai``), flattened attributes (OpenInference ``llm.input_messages.N.message.*``
and the older ``gen_ai.prompt.N.*``), smolagents' text tool roles, and plain strings. ``Msg``
values become the model's ``Message`` in ``_message_out``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from ._repr_data import repr_data
from ._run_text import is_repr
from ._steps import Call, File, Msg, Part, Reasoning, Result
from ._values import langchain_message, parse_json, parse_json_any, text_of, words

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "chatbot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "tool_result": "tool",
}
_TOOL_WORDS = frozenset({"tool", "function"})
_CALL_WORDS = frozenset({"call", "use", "request"})
_RESULT_WORDS = frozenset({"result", "response", "return", "output"})


@functools.lru_cache(maxsize=256)
def _tool_part(kind: str) -> str | None:
    """``"call"`` or ``"result"`` for a part or item type that names a tool call the model made
    or the result handed back — a tool word, then a call word or a result word, in any spelling
    (``tool_call``, ``tool-call``, ``tool_use``, ``toolUse``, ``function_call``,
    ``tool_call_request``; ``tool_result``, ``toolResult``,
    ``tool-return``, ``tool_call_response``, ``function_call_output``) — else None."""
    said = words(kind)
    if len(said) < 2 or said[0] not in _TOOL_WORDS:
        return None
    if said[-1] in _CALL_WORDS:
        return "call"
    return "result" if said[-1] in _RESULT_WORDS else None


def _tool_part_of(kind: Any) -> str | None:
    return _tool_part(kind) if isinstance(kind, str) else None


_SIDES = {"request": "user", "response": "assistant"}
"""The role of a message record that says only whether it is a request to the model or its
response (``kind``)."""
_FOUR_ROLES = frozenset({"system", "user", "assistant", "tool"})
_TEXT_TYPES = frozenset({"text", "input_text", "output_text", "message_content"})
_SKIP_TYPES = frozenset(
    {"step-start", "source", "source-url", "source-document", "redacted-reasoning"}
)


def norm_role(value: Any, default: str = "user") -> str:
    """A role in our four (system, user, assistant, tool); unknown roles keep their name. A
    message class's name is read by its first word (``SystemMessage``, ``HumanMessage``,
    ``AssistantMessage``, ``FunctionExecutionResultMessage`` → system, user, assistant, tool)."""
    if not isinstance(value, str) or not value:
        return default
    lowered = value.lower()
    role = _ROLES.get(lowered)
    if role is None and value.endswith("Message") and value[:1].isupper():
        first = _CLASS_WORD.match(value)
        role = _ROLES.get(first.group(0).lower()) if first else None
    return role or lowered


_CLASS_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z][a-z]*")


def parse_messages(value: Any, *, default_role: str = "user") -> list[Msg] | None:
    """Messages from a list, a JSON string, a ``{"messages": [...]}`` container or plain text.

    Returns None when ``value`` holds nothing; text that is not JSON becomes one message of
    ``default_role`` (kept whole, never dropped).
    """
    if value is None or value == "":
        return None
    value = parse_json(value)
    if isinstance(value, str):
        return [Msg(default_role, [value])]
    if isinstance(value, dict):
        for key in ("messages", "prompt_messages", "input_messages", "inputMessages", "contents"):
            inner = value.get(key)
            if isinstance(inner, list):
                msgs = parse_messages(inner, default_role=default_role) or []
                system = request_system(value)
                if system is not None:
                    msgs.insert(0, Msg("system", [system]))
                return msgs
        if "role" not in value:
            if record_side(value) is not None:
                return parse_messages([value], default_role=default_role)
            inner = _message_list_in(value)
            if inner is not None:
                return parse_messages(inner, default_role=default_role)
        msg = parse_message(value, default_role=default_role)
        return [msg] if msg is not None else None
    if isinstance(value, list):
        value = _one_of_batch(value)
        out: list[Msg] = []
        for item in value:
            for each in _by_role(item) if record_side(item) is not None else (item,):
                msg = parse_message(each, default_role=default_role)
                if msg is not None:
                    out.append(msg)
        return text_tool_roles(results_named_by_role(out))
    return [Msg(default_role, [text_of(value)])]


def held_messages(record: dict[str, Any], depth: int = 2) -> list[dict[str, Any]]:
    """The message records (records with a ``role``) among a record's values; when it has
    none, those of the first of its records that has some, ``depth`` levels down (an ADK
    event's ``content``; LlamaIndex's ``{"result": {"response": {"role": …}}}``)."""
    held = [v for v in record.values() if isinstance(v, dict) and "role" in v]
    if held or depth <= 1:
        return held
    for value in record.values():
        if isinstance(value, dict):
            found = held_messages(value, depth - 1)
            if found:
                return found
    return []


def _one_of_batch(value: list[Any]) -> list[Any]:
    """A batch of one conversation (a list holding one list, as LangChain hands a chat model
    its prompts and gets its generations back) is that conversation; a list holding one
    ``(role, text)`` pair is not a batch."""
    while (
        len(value) == 1
        and isinstance(value[0], list)
        and not any(isinstance(item, str) for item in value[0])
    ):
        value = value[0]
    return value


def _message_list_in(record: dict[str, Any]) -> list[Any] | None:
    """The one list value of a record whose items are all messages (``{"replies": [...]}``,
    also as a batch of one: ``{"generations": [[...]]}``); messages printed as reprs count
    (``ChatMessage(_role=…)``), and so do records holding one (``{"text": …, "message":
    {...}}``)."""
    for item in record.values():
        if isinstance(item, list) and item:
            item = _one_of_batch(item)
            if item and all(_message_item(i) for i in item):
                return item
    return None


def message_record(item: Any) -> bool:
    """A message record: one with a ``role``, or one typed by a message class (AutoGen's
    ``{"type": "SystemMessage", "content": …}``)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return "role" in item or (isinstance(kind, str) and kind.endswith("Message"))


def record_side(item: Any) -> str | None:
    """The role of a message record that holds parts and says by its ``kind`` only whether it
    is a request to the model or its response (Pydantic AI's ``ModelRequest`` /
    ``ModelResponse``), else None."""
    if not isinstance(item, dict) or "role" in item or not isinstance(item.get("parts"), list):
        return None
    kind = item.get("kind")
    return _SIDES.get(kind) if isinstance(kind, str) else None


def _by_role(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A request or response record (``record_side``) as one message record per role, in order:
    the system text it declares (``request_system``: Pydantic AI's ``instructions``) as the
    system's, then its parts, each part whose kind starts with a
    role word (``system-prompt``, ``user-prompt``) that role's, the others the record's."""
    side = record_side(record) or "user"
    out: list[dict[str, Any]] = []
    system = request_system(record)
    if system is not None:
        out.append({"role": "system", "content": system})
    for part in record["parts"]:
        kind = (part.get("type") or _typed(part)) if isinstance(part, dict) else None
        role = side
        if isinstance(kind, str) and _tool_part(kind) is None:
            head, dash, _ = kind.replace("_", "-").partition("-")
            role = _ROLES.get(head.lower(), side) if dash else side
        if out and out[-1]["role"] == role and "parts" in out[-1]:
            out[-1]["parts"].append(part)
        else:
            out.append({"role": role, "parts": [part]})
    return out


def conversation_item(item: Any) -> bool:
    """An item of a conversation list: a message record, or an item typed as a tool call the
    model made or a result handed back (the OpenAI Responses API's ``function_call`` and
    ``function_call_output`` beside its role messages)."""
    if message_record(item) or record_side(item) is not None:
        return True
    kind = item.get("type") if isinstance(item, dict) else None
    return _tool_part_of(kind) is not None


def request_system(record: dict[str, Any]) -> str | None:
    """The system text a model request record declares beside its messages (``system``, as
    Anthropic's API takes it; ``instructions``, as OpenAI's Responses API does)."""
    for key in ("system", "instructions"):
        text = record.get(key)
        if isinstance(text, str) and text:
            return text
    return None


def _message_item(item: Any) -> bool:
    """A message in any form a list of messages holds: a message record, a record holding one
    (``{"message": {…}}``), a LangChain serialisation, or a repr with a role."""
    if isinstance(item, dict):
        return message_record(item) or record_side(item) is not None or (
            isinstance(item.get("message"), dict) and _message_item(item["message"])
        ) or langchain_message(item) is not None
    return isinstance(item, str) and is_repr(item) and "role=" in item


def parse_message(obj: Any, *, default_role: str = "user") -> Msg | None:
    """One message from any supported shape (None for an empty or unreadable item)."""
    if type(obj) is not dict:
        obj = parse_json(obj)
        if isinstance(obj, str) and is_repr(obj):
            data = repr_data(obj)  # a framework message printed with repr: read, never shown
            if isinstance(data, dict):
                return parse_message(data, default_role=default_role)
            return None
        if isinstance(obj, str):
            return Msg(default_role, [obj]) if obj else None
        if (
            isinstance(obj, (list, tuple))
            and len(obj) == 2
            and isinstance(obj[0], str)
            and obj[0].lower() in _ROLES
        ):
            # LangChain's (role, text) pair
            return parse_message({"role": obj[0], "content": obj[1]}, default_role=default_role)
        if not isinstance(obj, dict):
            return None if obj is None else Msg(default_role, [text_of(obj)])
    kind = obj.get("type")
    if kind is not None and "content" not in obj:
        # a Responses-API item typed as the assistant's call or its result, with or without a
        # role beside the type (Laminar writes ``"role": "assistant"`` on every output item)
        part = _tool_part_of(kind)
        if part == "call":
            call = _call_of(obj)
            return Msg("assistant", [call]) if call is not None else None
        if part == "result":
            return Msg("tool", [_result_of(obj)])
    if "role" not in obj:
        if "message" in obj and isinstance(obj["message"], dict):
            return parse_message(obj["message"], default_role=default_role)
        if "lc" in obj or "data" in obj:
            fields = langchain_message(obj)
            if fields is not None:
                return parse_message(fields, default_role=default_role)
    get = obj.get
    role = norm_role(get("role") or get("type") or get("author"), default_role)
    if role not in _FOUR_ROLES:
        role = default_role if "role" not in obj else role
    parts: list[Part] = []
    content = get("content")
    if isinstance(content, dict) and ("parts" in content or "format" in content):
        _read_parts(content.get("parts") or [], parts)
        if not any(isinstance(p, str) for p in parts) and isinstance(content.get("content"), str):
            parts.append(content["content"])
        for inv in content.get("toolInvocations") or []:
            _read_invocation(inv, parts)
    elif isinstance(content, str):
        if content.startswith("[{"):
            blocks = parse_json(content)
            if isinstance(blocks, list):
                _read_parts(blocks, parts)
            if not parts:
                parts.append(content)
        elif content:
            parts.append(content)
    elif isinstance(content, list):
        _read_parts(content, parts)
    elif content is not None:
        parts.append(text_of(content))
    listed = get("parts") or get("blocks")
    if isinstance(listed, list):
        _read_parts(listed, parts)
    if not parts:
        text = get("text")
        if isinstance(text, str) and text:
            parts.append(text)
    for call in get("tool_calls") or get("toolCalls") or ():
        parsed = _call_of(call)
        if parsed is not None:
            parts.append(parsed)
    function_call = get("function_call")
    if isinstance(function_call, dict) and function_call.get("name"):
        parts.append(
            Call(None, str(function_call["name"]), _args(function_call.get("arguments")))
        )
    if role == "tool":
        call_id = (obj.get("tool_call_id") or obj.get("toolCallId") or obj.get("id")
                   or _extra(obj, "tool_call_id"))
        name = obj.get("name") or obj.get("tool_name") or obj.get("toolName")
        texts = [p for p in parts if isinstance(p, str)]
        others: list[Part] = [p for p in parts if not isinstance(p, str)]
        if texts or not others:
            result = parse_json("".join(texts)) if texts else None
            if not texts or not any(isinstance(o, Result) and o.result == result for o in others):
                # (a text that repeats a result part's content is that result: OpenLIT)
                others.insert(0, Result(str(call_id) if call_id else None, name, result))
        parts = others
    if role == "user" and parts and all(isinstance(p, Result) for p in parts):
        role = "tool"  # Gemini/ADK/Bedrock hand tool results back as a user message
    if not parts and role != "assistant":
        return Msg(role, [])
    msg_id = get("id")
    return Msg(role, parts, id=msg_id if type(msg_id) is str and role != "tool" else None)


def _read_parts(items: Any, parts: list[Part]) -> None:
    for item in items if isinstance(items, list) else [items]:
        if isinstance(item, str) and is_repr(item):
            item = repr_data(item)
        if isinstance(item, str):
            if item:
                parts.append(item)
            continue
        if not isinstance(item, dict):
            continue
        ptype = item.get("type") or _typed(item)
        if ptype in _SKIP_TYPES:
            continue
        if ptype in _TEXT_TYPES or (ptype is None and isinstance(item.get("text"), str)):
            text = item.get("text")
            if not isinstance(text, str):
                text = item.get("content")
            if isinstance(text, str) and text:
                parts.append(text)
            continue
        part = _tool_part_of(ptype)
        if part == "call":
            call = _call_of(item)
            if call is not None:
                parts.append(call)
            continue
        if part == "result":
            parts.append(_result_of(item))
            continue
        if ptype == "tool-invocation":
            _read_invocation(item.get("toolInvocation") or item.get("tool_invocation") or {}, parts)
            continue
        if ptype in ("reasoning", "thinking"):
            text = item.get("text") or item.get("content") or item.get("thinking") or ""
            if isinstance(text, str) and text:
                parts.append(Reasoning(text))
            continue
        if ptype in ("image", "image_url", "file", "blob", "uri", "input_image", "input_file"):
            parts.append(_file_of(item))
            continue
        if ptype is None and _read_block(item, parts):
            continue
        if ptype is None and len(item) == 1:  # a part keyed by its kind: {"tool_call": {…}}
            ((key, inner),) = item.items()
            if isinstance(inner, dict):
                # the record itself, when it reads as a call or result on its own (Haystack's
                # ``ToolCallResult`` names its call as its ``origin``); else typed by its key
                if not _read_block(inner, parts):
                    known = _tool_part(key) is not None
                    _read_parts([{"type": key, **inner} if known else inner], parts)
                continue
        if ptype is None and isinstance(item.get("content"), str):
            parts.append(item["content"])
        elif ptype is not None and isinstance(item.get("content"), str) and item["content"]:
            parts.append(item["content"])


def _extra(obj: dict[str, Any], key: str) -> Any:
    """``key`` in a record of extras beside a message's fields (LlamaIndex and LangChain keep a
    tool message's call id in ``additional_kwargs``)."""
    for value in obj.values():
        if isinstance(value, dict) and value.get(key):
            return value[key]
    return None


def _typed(item: dict[str, Any]) -> Any:
    """A block's type under a ``…_type`` or ``…_kind`` key when it has no ``type`` (LlamaIndex's
    ``block_type``, Pydantic AI's ``part_kind``)."""
    for key, value in item.items():
        if key.endswith(("_type", "_kind")) and isinstance(value, str):
            return value
    return None


def _read_block(item: dict[str, Any], parts: list[Part]) -> bool:
    """Untyped blocks: Gemini/ADK ``functionCall``/``function_call`` and ``functionResponse``,
    Genkit ``toolRequest``/``toolResponse``, Bedrock/Strands ``toolUse``/``toolResult``, call
    records (``name`` + ``arguments``) and result records (``call_id`` + ``content``). True when
    the block was one of them."""
    fc = item.get("functionCall") or item.get("function_call")
    if isinstance(fc, dict):
        parts.append(Call(fc.get("id"), str(fc.get("name") or ""), _args(fc.get("args"))))
        return True
    fr = item.get("functionResponse") or item.get("function_response")
    if isinstance(fr, dict):
        parts.append(Result(fr.get("id"), fr.get("name"), _unwrap_output(fr.get("response"))))
        return True
    named = item.get("tool_name") or item.get("name")
    if named and isinstance(item.get("arguments"), (dict, str)):
        # a call record (Haystack's ToolCall)
        parts.append(Call(item.get("id"), str(named), _args(item["arguments"])))
        return True
    call_id = item.get("call_id") or item.get("tool_call_id")
    if call_id and isinstance(item.get("content"), str) and "arguments" not in item:
        # a result record (AutoGen's FunctionExecutionResult: content, name, call_id, is_error)
        parts.append(Result(str(call_id), item.get("name"), parse_json(item["content"]),
                            item.get("is_error") is True))
        return True
    origin = item.get("origin")
    if isinstance(origin, dict) and "result" in item:
        name = origin.get("tool_name") or origin.get("name")
        parts.append(Result(origin.get("id"), name, parse_json(item["result"]),
                            bool(item.get("error"))))  # its result record (ToolCallResult)
        return True
    request = item.get("toolRequest")
    if isinstance(request, dict):
        parts.append(Call(request.get("ref"), str(request.get("name") or ""),
                          _args(request.get("input"))))
        return True
    response = item.get("toolResponse")
    if isinstance(response, dict):
        parts.append(Result(response.get("ref"), response.get("name"),
                            parse_json(response.get("output"))))
        return True
    use = item.get("toolUse")
    if isinstance(use, dict):
        parts.append(
            Call(use.get("toolUseId"), str(use.get("name") or ""), _args(use.get("input")))
        )
        return True
    result = item.get("toolResult")
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, list):
            texts = [
                c.get("text")
                if isinstance(c, dict) and "text" in c
                else c.get("json")
                if isinstance(c, dict)
                else c
                for c in content
            ]
            content = texts[0] if len(texts) == 1 else texts
        parts.append(
            Result(
                result.get("toolUseId"), None, parse_json(content), result.get("status") == "error"
            )
        )
        return True
    return False


_ARG_TAILS = ("_arguments", "_args", "_kwargs", "_input")


def _call_of(item: Any) -> Call | None:
    item = parse_json(item)
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):
        name = function.get("name")
        args = function.get("arguments", function.get("args"))
    else:
        name = item.get("name") or item.get("toolName") or item.get("tool_name")
        args = item.get("arguments")
        if args is None:
            args = item.get("args", item.get("input"))
        if args is None:  # under a prefixed key: ``tool_kwargs``, ``tool_args``, ``call_input``
            args = next((v for k, v in item.items() if k.endswith(_ARG_TAILS)), None)
    if not name:
        return None
    call_id = None
    for key, value in item.items():
        if value and _names_call_id(key):
            call_id = value
            break
    call_id = call_id or item.get("id")
    return Call(str(call_id) if call_id else None, str(name), _args(args))


@functools.lru_cache(maxsize=256)
def _names_call_id(key: str) -> bool:
    """A key naming the id of a tool call, in any spelling: its last word ``id`` after a tool or
    call word (``call_id``, ``callId``, ``tool_call_id``, ``toolCallId``, ``toolUseId``)."""
    said = words(key)
    return len(said) > 1 and said[-1] == "id" and any(
        word in _TOOL_WORDS or word == "call" for word in said[:-1]
    )


def _args(value: Any) -> Any:
    """A tool call's arguments: JSON text, once or twice encoded (a JSON string holding the JSON
    text, as Mastra's OpenInference export writes them), read as data."""
    value = parse_json_any(value)
    if isinstance(value, str):
        value = parse_json(value)
    return value


def _result_of(item: dict[str, Any]) -> Result:
    call_id = (
        item.get("call_id")
        or item.get("callId")
        or item.get("toolCallId")
        or item.get("tool_use_id")
        or item.get("tool_call_id")
        or item.get("id")
    )
    name = item.get("name") or item.get("toolName") or item.get("tool_name")
    for key in ("response", "result", "output", "content"):
        if key in item:
            value = item[key]
            break
    else:
        value = None
    value = _unwrap_output(parse_json(value))
    is_error = bool(item.get("is_error") or item.get("isError"))
    if isinstance(item.get("output"), dict) and str(item["output"].get("type", "")).startswith(
        "error"
    ):
        is_error = True
    return Result(str(call_id) if call_id else None, name, value, is_error)


def _unwrap_output(value: Any) -> Any:
    """AI SDK v5 tool outputs are ``{"type": "json"|"text"|"error-text", "value": ...}``."""
    if isinstance(value, dict) and set(value) <= {"type", "value"} and "value" in value:
        inner = value["value"]
        return parse_json(inner) if isinstance(inner, str) else inner
    if isinstance(value, dict) and value.get("type") == "tool" and "content" in value:
        inner = value["content"]
        return parse_json(inner) if isinstance(inner, str) else inner
    text = value.get("text") if isinstance(value, dict) else None
    if isinstance(text, str) and value.get("type") == "text":
        return parse_json(text)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        only = value[0]
        if only.get("type") == "text" and isinstance(only.get("text"), str):
            return parse_json(only["text"])
    return value


def _read_invocation(inv: Any, parts: list[Part]) -> None:
    if not isinstance(inv, dict):
        return
    name = inv.get("toolName") or inv.get("tool_name") or ""
    call_id = inv.get("toolCallId") or inv.get("tool_call_id")
    call_id = str(call_id) if call_id else None
    parts.append(Call(call_id, str(name), parse_json(inv.get("args", inv.get("input")))))
    state = inv.get("state")
    if state in ("result", "output-available", "output-error") or "result" in inv:
        result = inv.get("result", inv.get("output"))
        parts.append(Result(call_id, str(name), parse_json(result), state == "output-error"))


def _file_of(item: dict[str, Any]) -> File:
    url = item.get("url") or item.get("uri") or item.get("image_url") or item.get("image")
    if isinstance(url, dict):
        url = url.get("url")
    data = item.get("data")
    return File(
        media_type=item.get("mediaType") or item.get("mime_type") or item.get("mimeType"),
        url=url if isinstance(url, str) and not url.startswith("data:") else None,
        data=data
        if isinstance(data, str)
        else (url if isinstance(url, str) and url.startswith("data:") else None),
        filename=item.get("filename"),
    )


_FLAT = re.compile(r"^(\d+)\.(.+)$")

_Keyed = tuple[tuple[str, str], ...]
"""(field, attribute key) pairs: where one record's fields are read from."""


@dataclass(frozen=True, slots=True)
class _FlatPlan:
    """Where one flattened message's fields are (derived from the attribute keys alone)."""

    fields: _Keyed
    contents: tuple[_Keyed, ...]
    """Its ``contents.N.*`` parts, in index order (the ``message_content.`` prefix dropped)."""
    calls: tuple[_Keyed, ...]
    """Its ``tool_calls.N.*`` calls, in index order (the ``tool_call.`` prefix dropped)."""


def flattened_messages(attrs: dict[str, Any], prefix: str) -> list[Msg] | None:
    """Messages written as flattened attributes (``<prefix>.<N>.<field>``), in index order.

    Reads OpenInference (``llm.input_messages.0.message.role``, ``…message.tool_calls.0.tool_call
    .function.name``, ``…message.contents.0.message_content.text``) and the older GenAI/OpenLLMetry
    form (``gen_ai.prompt.0.role``, ``gen_ai.completion.0.tool_calls.0.name``). A tool message's
    call id may sit on its content part (``…contents.0.message.tool_call_id``: BeeAI's). Which
    key holds which field is worked out once per key layout (the spans of one instrumentation
    share a few).
    """
    if not attrs:
        return None
    plans = _flat_plans(tuple(attrs), prefix + ".")
    if not plans:
        return None
    out: list[Msg] = []
    for plan in plans:
        msg = _flat_message(plan, attrs)
        if msg is not None:
            out.append(msg)
    return text_tool_roles(out)


@functools.lru_cache(maxsize=1024)
def _flat_plans(keys: tuple[str, ...], dotted: str) -> tuple[_FlatPlan, ...]:
    grouped: dict[int, list[tuple[str, str]]] = {}
    for key in keys:
        if not key.startswith(dotted):
            continue
        match = _FLAT.match(key[len(dotted) :])
        if match is not None:
            field = match.group(2).removeprefix("message.")
            grouped.setdefault(int(match.group(1)), []).append((field, key))
    return tuple(_flat_plan(grouped[index]) for index in sorted(grouped))


def _flat_plan(keyed: list[tuple[str, str]]) -> _FlatPlan:
    fields = dict(keyed)  # a repeated field keeps its last key, as a dict of values would
    contents = _sub_records(fields, "contents.", "message_content.")
    calls = _sub_records(fields, "tool_calls.", "tool_call.")
    return _FlatPlan(tuple(fields.items()), contents, calls)


def _sub_records(fields: dict[str, str], head: str, inner: str) -> tuple[_Keyed, ...]:
    """The ``<head>N.<inner><sub>`` records among a message's fields, in index order."""
    records: dict[int, dict[str, str]] = {}
    for field, key in fields.items():
        if field.startswith(head):
            match = _FLAT.match(field[len(head) :])
            if match:
                records.setdefault(int(match.group(1)), {})[
                    match.group(2).removeprefix(inner)] = key
    return tuple(tuple(records[index].items()) for index in sorted(records))


def _flat_message(plan: _FlatPlan, attrs: dict[str, Any]) -> Msg | None:
    fields = {field: attrs[key] for field, key in plan.fields}
    role = norm_role(fields.get("role"), "user")
    parts: list[Part] = []
    content = fields.get("content")
    if isinstance(content, str) and content:
        parts.append(content)
    elif isinstance(content, list):
        _read_parts(content, parts)
    part_call_id = None  # a tool message's call id written on its content part (BeeAI's)
    for keyed in plan.contents:
        item = {sub: attrs[key] for sub, key in keyed}
        part_call_id = part_call_id or next(
            (v for k, v in item.items() if k.endswith("tool_call_id") and v), None)
        if item.get("type", "text") == "text" and isinstance(item.get("text"), str):
            if item["text"] != content:  # the Agents SDK writes the text in both places
                parts.append(item["text"])
        elif "image.url" in item or item.get("type") == "image":
            parts.append(File(url=item.get("image.url") or item.get("image")))
    for keyed in plan.calls:
        item = {sub: attrs[key] for sub, key in keyed}
        name = item.get("function.name") or item.get("name")
        if name:
            args = item.get("function.arguments", item.get("arguments"))
            call_id = item.get("id")
            parts.append(Call(str(call_id) if call_id else None, str(name), _args(args)))
    fc_name = fields.get("function_call_name")
    if fc_name:
        parts.append(
            Call(None, str(fc_name), parse_json(fields.get("function_call_arguments_json")))
        )
    if role == "tool":
        call_id = fields.get("tool_call_id") or fields.get("id") or part_call_id
        text = "".join(p for p in parts if isinstance(p, str))
        records = [_record_result(v) for k, v in sorted(fields.items()) if k[:1] != "m"]
        results = [r for r in records if r is not None]
        if results and not text:
            parts = list(results)  # results written as records of their own (AutoGen)
        else:
            parts = [Result(str(call_id) if call_id else None, fields.get("name"),
                            parse_json(text))]
    if not parts and not fields.get("role"):
        return None
    return Msg(role, parts)


def _record_result(value: Any) -> Result | None:
    """A tool result written as a record of its own in a tool message's fields: ``{"content",
    "call_id", "name", "is_error"}`` (AutoGen's ``function.N``)."""
    record = parse_json(value)
    if not isinstance(record, dict) or "content" not in record:
        return None
    call_id = record.get("call_id") or record.get("tool_call_id") or record.get("id")
    if call_id is None and record.get("name") is None:
        return None
    return Result(
        str(call_id) if call_id else None,
        record.get("name"),
        parse_json(record.get("content")),
        bool(record.get("is_error")),
    )


_CALL_ROLES = frozenset({"tool-call", "tool_call"})
_RESPONSE_ROLES = frozenset({"tool-response", "tool_response"})
_TEXT_ROLES = _CALL_ROLES | _RESPONSE_ROLES


def results_named_by_role(msgs: list[Msg]) -> list[Msg]:
    """A message whose role is the name of a tool an earlier assistant message called (and whose
    result has not come yet) is that call's result: Langfuse's JS LangChain handler writes a
    ``ToolMessage`` as ``{"role": "get_weather", "content": …}``, without its call id."""
    for msg in msgs:  # most lists: one cheap look
        if msg.role not in _FOUR_ROLES:
            break
    else:
        return msgs
    open_calls: list[Call] = []
    out: list[Msg] = []
    for msg in msgs:
        if msg.role == "assistant":
            open_calls.extend(msg.calls)
        elif msg.role == "tool":
            answered = {p.id for p in msg.parts if isinstance(p, Result) and p.id}
            open_calls = [c for c in open_calls if c.id not in answered]
        call = next((c for c in open_calls if c.name == msg.role), None)
        if call is None or msg.role in _FOUR_ROLES:
            out.append(msg)
            continue
        open_calls.remove(call)
        out.append(Msg("tool", [Result(call.id, call.name, parse_json(msg.text))]))
    return out


def text_tool_roles(msgs: list[Msg]) -> list[Msg]:
    """Tool calls and results replayed as text messages, read as what they are.

    smolagents sends its earlier tool calls as role ``tool-call`` (``Calling tools:\n[{...}]``,
    a Python repr) and their results as role ``tool-response`` (``Observation:\n...``): they
    become an assistant message with the calls and a tool message with the result, the result
    joined to the oldest call still open (the text carries no call id). The same by content
    when an exporter mapped those roles to ``assistant`` and ``user`` (OpenLIT): an assistant
    text that is a label line over a printed list of call records is those calls, and a user
    message right after them, not the last message, their result.
    """
    for msg in msgs:  # most lists replay nothing: one cheap look first
        if msg.role in _TEXT_ROLES or (
            msg.role == "assistant" and msg.parts and isinstance(msg.parts[0], str)
            and ":\n" in msg.parts[0]
        ):
            break
    else:
        return msgs
    calls_at = {i: calls for i, msg in enumerate(msgs) if (calls := _replayed_calls(msg))}
    out: list[Msg] = []
    pending: list[Call] = []
    last = len(msgs) - 1
    for index, msg in enumerate(msgs):
        replayed = calls_at.get(index)
        if replayed is not None or msg.role in _CALL_ROLES:
            pending.extend(replayed or [])
            out.append(Msg("assistant", list(replayed) if replayed else msg.parts))
        elif msg.role in _RESPONSE_ROLES or (
            msg.role == "user" and pending and index != last and index - 1 in calls_at
        ):
            text = msg.text
            if text.startswith("Observation:"):
                text = text[len("Observation:") :].strip()
            call = pending.pop(0) if pending else None
            result = parse_json(text)
            out.append(
                Msg(
                    "tool", [Result(call.id if call else None, call.name if call else None, result)]
                )
            )
        else:
            out.append(msg)
    return out


def _replayed_calls(msg: Msg) -> list[Call]:
    """The calls a message replays as text: a ``tool-call`` message's, or an assistant text
    that is a label line (``Calling tools:``) over a printed list of call records."""
    if msg.role in _CALL_ROLES:
        return _text_calls(msg.text)
    if msg.role != "assistant" or not msg.parts or not all(isinstance(p, str) for p in msg.parts):
        return []
    head, _, body = msg.text.partition("\n")
    if not head.endswith(":") or not body.lstrip().startswith("["):
        return []
    return _text_calls(body)


def _text_calls(text: str) -> list[Call]:
    """Calls from ``Calling tools:\n[{'id': ..., 'function': {'name': ..., 'arguments': ...}}]``."""
    body = text.split(":", 1)[1].strip() if text.startswith("Calling tools:") else text
    items = parse_json(body)
    calls: list[Call] = []
    for item in items if isinstance(items, list) else []:
        call = _call_of(item)
        if call is not None:
            calls.append(call)
    return calls


__all__ = [
    "flattened_messages",
    "held_messages",
    "conversation_item",
    "message_record",
    "record_side",
    "request_system",
    "norm_role",
    "parse_message",
    "parse_messages",
    "text_tool_roles",
]
