"""The judge stand-in: answers that fit whatever a judge scorer asks for, derived from its schema.

``tracescore judge-standin`` (and ``standin_server()``) is the scripted OpenAI-compatible server
answering every request with ``standin_reply``: the object the request's output schema
describes, built by one rule from the schema (``example_of``), so every scorer, prebuilt or
yours, gets an answer it can validate, with no key and no model:

- the schema is the request's ``response_format`` (native structured output), else the JSON
  Schema a prompt carries after ``JSON Schema:`` (the schema injected into the prompt);
- an object has every property of its schema; an array one item (``minItems`` when larger); a
  string its first ``enum`` value or ``const``, else ``"stand-in answer"``; a number 0.8 held
  inside ``minimum``/``maximum``; an integer 1 likewise; a boolean ``true``; ``anyOf`` and
  ``oneOf`` their first non-null choice; ``$ref`` is followed into ``$defs``;
- a request without a schema (a reason step) gets a sentence saying it is a stand-in.

The answers are not judgements: they exercise the plumbing (scores, judge executions, tokens,
costs) end to end. Usage figures are the scripted server's fixed ones.
"""

from __future__ import annotations

import json
from typing import Any

from ._llm_server import Reply, ScriptedLLMServer

STANDIN_TEXT = ("A stand-in judge wrote this (tracescore judge-standin): the plumbing works; "
                "this is not a real judgement.")
_MARKER = "JSON Schema:"


def example_of(schema: Any, *, root: Any = None, depth: int = 0) -> Any:
    """A value that validates against ``schema`` by the rule in the module docstring."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 12:
        return None
    if "$ref" in schema:
        return example_of(_resolve(root, schema["$ref"]), root=root, depth=depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        choices = [c for c in schema.get(key) or () if c.get("type") != "null"]
        if choices:
            return example_of(choices[0], root=root, depth=depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        return {name: example_of(sub, root=root, depth=depth + 1)
                for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 1))
        return [example_of(schema.get("items") or {}, root=root, depth=depth + 1)
                for _ in range(count)]
    if kind in ("number", "integer"):
        value: float = 0.8 if kind == "number" else 1
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(high, int | float) and value > high:
            value = high
        if isinstance(low, int | float) and value < low:
            value = low
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "stand-in answer"


def _resolve(root: Any, ref: str) -> Any:
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def schema_of(request: dict[str, Any]) -> dict[str, Any] | None:
    """The output schema a chat request asks for (native ``response_format`` or injected in a
    message), or None."""
    fmt = request.get("response_format")
    if isinstance(fmt, dict):
        schema = (fmt.get("json_schema") or {}).get("schema")
        if isinstance(schema, dict):
            return schema
    for message in reversed(request.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and _MARKER in content:
            text = content.rsplit(_MARKER, 1)[1].lstrip()
            try:
                found, _ = json.JSONDecoder().raw_decode(text)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
    return None


def standin_reply(request: dict[str, Any]) -> Reply:
    """The stand-in's answer to one chat request."""
    schema = schema_of(request)
    if schema is None:
        return Reply(content=STANDIN_TEXT)
    return Reply(content=example_of(schema))


def standin_server(*, port: int = 0, latency_s: float = 0.0) -> ScriptedLLMServer:
    """A scripted server (not started) that answers every request with ``standin_reply``."""
    server = ScriptedLLMServer(port=port, latency_s=latency_s, keep_requests=False)
    server.set_default(standin_reply)
    return server


__all__ = ["STANDIN_TEXT", "example_of", "schema_of", "standin_reply", "standin_server"]
