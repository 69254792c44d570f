"""The tools a model was offered, read from its model-call steps' span attributes.

Conventions record them differently: OTel GenAI ``gen_ai.tool.definitions`` (a JSON list of
``{name, description, parameters}``, ``{type: function, function: {...}}`` or bare names),
OpenInference ``llm.tools.<i>.tool.json_schema`` (one OpenAI tool each), the AI SDK's
``ai.prompt.tools`` (a list of JSON strings with ``inputSchema``) and Traceloop's
``llm.request.functions.<i>.{name,description,parameters}``. Each becomes ``{"name",
"description", "parameters"}`` (``parameters`` a JSON Schema, or None when the source gives
only a name); the first definition of a name with a schema wins. Any step may carry them
(model calls usually; some agents list their tools' names on the agent span).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._steps import Step
from ._values import parse_json

_OPENINFERENCE = re.compile(r"^llm\.tools\.(\d+)\.tool\.json_schema$")
_TRACELOOP = re.compile(r"^llm\.request\.functions\.(\d+)\.(name|description|parameters)$")


def _definition(value: Any) -> dict[str, Any] | None:
    """One tool definition of any of the shapes above, normalised (None when it is not one)."""
    value = parse_json(value)
    if isinstance(value, str):
        return {"name": value, "description": None, "parameters": None} if value else None
    if not isinstance(value, Mapping):
        return None
    inner = value.get("function")
    if isinstance(inner, Mapping):
        value = inner
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None
    schema = parse_json(value.get("parameters") or value.get("inputSchema")
                        or value.get("input_schema"))
    description = value.get("description")
    return {"name": name, "description": description if isinstance(description, str) else None,
            "parameters": dict(schema) if isinstance(schema, Mapping) else None}


def _listed(value: Any) -> list[Any]:
    value = parse_json(value)
    return list(value) if isinstance(value, list | tuple) else []


def _from_attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    found: list[Any] = []
    found += _listed(attributes.get("gen_ai.tool.definitions"))
    found += _listed(attributes.get("ai.prompt.tools"))
    indexed: dict[int, Any] = {}
    functions: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith("llm."):
            continue
        match = _OPENINFERENCE.match(key)
        if match:
            indexed[int(match[1])] = value
            continue
        match = _TRACELOOP.match(key)
        if match:
            functions.setdefault(int(match[1]), {})[match[2]] = value
    found += [indexed[i] for i in sorted(indexed)]
    found += [functions[i] for i in sorted(functions)]
    return [d for d in map(_definition, found) if d is not None]


def tool_definitions(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """The tools offered to the model calls among ``steps`` (and their descendants), in the
    order first seen: ``[{"name", "description", "parameters"}]``."""
    out: dict[str, dict[str, Any]] = {}
    for root in steps:
        for step in root.walk():
            for definition in _from_attributes(step.attributes):
                kept = out.get(definition["name"])
                if kept is None or (kept["parameters"] is None and definition["parameters"]):
                    out[definition["name"]] = definition
    return list(out.values())


__all__ = ["tool_definitions"]
