"""Lenient value helpers: JSON strings that may not parse, times of any shape, text of any value.

Span attributes arrive as JSON strings that may be truncated, huge or not JSON at all; rows from
DuckDB carry JSON columns as strings and times as datetimes. Everything here accepts what it gets
and never raises: a value that cannot be read is kept as it came.
"""

from __future__ import annotations

import ast
import functools
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

logger = logging.getLogger(__name__)

MAX_PARSE_CHARS = 4_000_000
"""JSON strings longer than this are kept as text instead of parsed (they stay whole)."""

_JSON_START = frozenset("{[")


_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def words(text: str) -> list[str]:
    """The words of a key or value, lower case, in any spelling (``spanInputs`` → ``span``,
    ``inputs``; ``CHAT_MODEL`` → ``chat``, ``model``; ``tool-call``, ``toolUse``)."""
    return [w.lower() for w in _WORDS.findall(text)]


def parse_json(value: Any) -> Any:
    """Parse ``value`` when it is a JSON object or array in a string; otherwise return it as is.

    Strings that fail to parse (truncated by an exporter's length limit, say) or that are longer
    than ``MAX_PARSE_CHARS`` come back unchanged, so nothing is dropped.
    """
    if not isinstance(value, str) or not value:
        return value
    first = value[0]
    if first not in _JSON_START:
        stripped = value.lstrip()
        if not stripped or stripped[0] not in _JSON_START:
            return value
    if len(value) > MAX_PARSE_CHARS:
        logger.debug("kept a %d-character JSON attribute as text (too large to parse)", len(value))
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return _python_literal(value)


_LITERAL_MAX_CHARS = 200_000


def _python_literal(value: str) -> Any:
    """A dict/list written as a Python literal (``{'city': 'Paris'}``, as LangChain logs tool
    input), else the text unchanged. Only literals are read; nothing is evaluated."""
    if len(value) > _LITERAL_MAX_CHARS or "'" not in value:
        return value
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value
    return parsed if isinstance(parsed, (dict, list)) else value


def parse_json_any(value: Any) -> Any:
    """Like ``parse_json`` but also reads JSON scalars written as strings (``"18"``, ``"true"``)."""
    parsed = parse_json(value)
    if isinstance(parsed, str) and parsed[:1] in ('"',):
        try:
            return orjson.loads(parsed)
        except orjson.JSONDecodeError:
            return parsed
    return parsed


def counts_only(value: Any) -> bool:
    """JSON text of a record of token and request counts and nothing else (``{"input_tokens":
    860, …, "requests": 3}``: what a run cost, which Laminar records as a task's or a turn's
    output): accounting, not what a span gave out."""
    if not (isinstance(value, str) and value.startswith("{") and "tokens" in value):
        return False
    record = parse_json(value)
    return (isinstance(record, dict) and any("tokens" in key for key in record)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in record.values()))


def as_dict(value: Any) -> dict[str, Any]:
    """A dict from a dict, a JSON object string, or anything else (empty dict)."""
    if isinstance(value, dict):
        return value
    parsed = parse_json(value)
    return parsed if isinstance(parsed, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list from a list/tuple, a JSON array string, or anything else (empty list)."""
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    parsed = parse_json(value)
    return parsed if isinstance(parsed, list) else []


def to_int(value: Any) -> int | None:
    """An int from an int, float or numeric string; None otherwise."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return None
    return None


def to_ns(value: Any) -> int | None:
    """Nanoseconds since the epoch from an int, a numeric string, a datetime or an ISO string."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, datetime):
        moment: datetime = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return int(text)
        try:
            return to_ns(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def duration_ms(start_ns: int | None, end_ns: int | None) -> float | None:
    """Milliseconds from ``start_ns`` to ``end_ns`` (never negative); None when either is
    missing (a span that has not ended)."""
    if end_ns is None or not start_ns:
        return None
    return max(0, end_ns - start_ns) / 1_000_000


def text_of(value: Any) -> str:
    """Readable text of any value: strings as they are, structures as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    try:
        return orjson.dumps(value, default=str).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def jsonable(value: Any) -> Any:
    """A copy of ``value`` that JSON can encode (bytes, sets and odd objects become text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return str(value)


def has_key_prefix(attrs: Mapping[str, Any], prefix: str) -> bool:
    """True when any key of ``attrs`` starts with ``prefix``; the answer is kept per key layout
    (the spans of one instrumentation share a few layouts), so a span's keys are scanned once
    per layout rather than once per span."""
    return bool(attrs) and bool(_layout_keys(tuple(attrs), prefix))


def keys_with_prefix(attrs: Mapping[str, Any], prefix: str) -> tuple[str, ...]:
    """The keys of ``attrs`` that start with ``prefix``, in order; kept per key layout, as
    ``has_key_prefix``."""
    return _layout_keys(tuple(attrs), prefix) if attrs else ()


@functools.lru_cache(maxsize=4096)
def _layout_keys(keys: tuple[str, ...], prefix: str) -> tuple[str, ...]:
    return tuple(key for key in keys if key.startswith(prefix))


def keys_named(attrs: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """The keys of ``attrs`` whose last ``.`` segment is ``name`` (``events``,
    ``logfire.events``), in order; kept per key layout, as ``has_key_prefix``."""
    return _layout_named(tuple(attrs), name) if attrs else ()


@functools.lru_cache(maxsize=4096)
def _layout_named(keys: tuple[str, ...], name: str) -> tuple[str, ...]:
    return tuple(key for key in keys if key.rpartition(".")[2] == name)


def first_present(attrs: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first key present (and not None or empty string) in ``attrs``."""
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def pick_usage(
    attrs: Mapping[str, Any], spec: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, int] | None:
    """Token counts read from ``attrs``: ``spec`` pairs each usage field with its attribute keys."""
    out: dict[str, int] = {}
    for name, keys in spec:
        for key in keys:
            value = attrs.get(key)
            if value is None:
                continue
            value = to_int(value)
            if value is not None:
                out[name] = value
                break
    return out or None


_LC_ROLES = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "ToolMessageChunk": "tool",
}


def id_like(value: Any) -> bool:
    """Whether a scalar value can be an id: one token, no whitespace. A sentence where an id
    belongs is a placeholder (an exporter's redaction such as ``[Scrubbed due to 'session']``),
    the same for every session, never the id."""
    if value is None or value == "" or isinstance(value, (dict, list)):
        return False
    return not any(c.isspace() for c in str(value))


def langchain_message(value: Any) -> dict[str, Any] | None:
    """The fields of a LangChain message serialisation, with its ``type`` as the role; None for
    anything else.

    Reads ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``
    (``dumpd``) and ``{"type": "ai", "data": {"content": ...}}`` (``message_to_dict``).
    """
    if not isinstance(value, dict):
        return None
    kwargs = value.get("kwargs")
    if value.get("type") == "constructor" and "lc" in value and isinstance(kwargs, dict):
        ids = value.get("id")
        cls = ids[-1] if isinstance(ids, list) and ids else None
        role = kwargs.get("type") or _LC_ROLES.get(str(cls))
        return {**kwargs, "role": role} if role else None
    data = value.get("data")
    kind = value.get("type")
    if isinstance(data, dict) and isinstance(kind, str) and "role" not in value:
        if "content" in data or "tool_calls" in data:
            return {**data, "role": data.get("type") or kind}
    return None


def tool_message(value: Any) -> dict[str, Any] | None:
    """The fields of a tool message a tool's result is written as, with its role: a LangChain
    serialisation, or a message record whose role or type is the tool's (``{"content": …,
    "type": "tool", "tool_call_id": …}``, as LangSmith exports a ``ToolMessage``); None for a
    plain result."""
    if not isinstance(value, dict):
        return None
    message = langchain_message(value)
    if message is None and "content" in value:
        role = value.get("role") or value.get("type")
        message = {**value, "role": role} if isinstance(role, str) else None
    if message is None or "content" not in message:
        return None
    role = message.get("role")
    return message if isinstance(role, str) and role.lower() == "tool" else None


__all__ = [
    "words",
    "MAX_PARSE_CHARS",
    "id_like",
    "tool_message",
    "langchain_message",
    "pick_usage",
    "as_dict",
    "counts_only",
    "as_list",
    "first_present",
    "has_key_prefix",
    "keys_with_prefix",
    "jsonable",
    "parse_json",
    "keys_named",
    "parse_json_any",
    "text_of",
    "to_int",
    "to_ns",
]
