"""Structured judge output: schemas (pydantic models or JSON Schema dicts), injection, parsing.

The schema is turned into JSON Schema once, when the step is added; validation of a reply uses
pydantic for models and ``jsonschema`` (validator built once) for dicts. Validated output is
plain JSON data (dicts, lists, numbers), like the rest of a ``ScorerRunResult``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ._errors import ScorerDefinitionError

SchemaLike = type[BaseModel] | Mapping[str, Any]


class SchemaMismatch(Exception):  # noqa: N818 - internal signal, never leaves the judge module
    """A reply that is not JSON or does not match the schema (message says why)."""


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A step's output schema, ready to send and to validate against."""

    name: str
    json_schema: dict[str, Any]
    model: type[BaseModel] | None
    validator: Any

    def validate(self, value: Any) -> Any:
        """Validate parsed JSON; return plain data or raise ``SchemaMismatch``."""
        if self.model is not None:
            try:
                return self.model.model_validate(value).model_dump(mode="json")
            except ValidationError as exc:
                raise SchemaMismatch(_short_pydantic_error(exc)) from exc
        errors = sorted(self.validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.path) or "(root)"
            raise SchemaMismatch(f"{where}: {first.message}")
        return value


def _short_pydantic_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = "/".join(str(p) for p in err.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def as_output_schema(schema: SchemaLike, *, name: str) -> OutputSchema:
    """Accept a pydantic model class or a JSON Schema dict; fail clearly on anything else."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return OutputSchema(name=schema.__name__, json_schema=schema.model_json_schema(),
                            model=schema, validator=None)
    if isinstance(schema, Mapping):
        import jsonschema  # type: ignore[import-untyped]

        json_schema = dict(schema)
        try:
            cls = jsonschema.validators.validator_for(json_schema)
            cls.check_schema(json_schema)
        except jsonschema.SchemaError as exc:
            raise ScorerDefinitionError(f"{name}: not a valid JSON Schema: {exc.message}") from exc
        return OutputSchema(name=name, json_schema=json_schema, model=None,
                            validator=cls(json_schema))
    raise ScorerDefinitionError(
        f"{name}: output_schema must be a pydantic model class or a JSON Schema dict, "
        f"got {type(schema).__name__}"
    )


def schema_instruction(schema: OutputSchema) -> str:
    """The text injected into a prompt (or system message) to ask for the schema's object."""
    return (
        "Answer with a single JSON value that conforms to the following JSON Schema. "
        "Write only the JSON: no explanation, no markdown fences.\n"
        f"JSON Schema:\n{json.dumps(schema.json_schema, ensure_ascii=False)}"
    )


def correction_message(problem: str) -> str:
    """The follow-up user message of the fallback attempt, after an invalid reply."""
    return (
        f"That answer could not be used ({problem}). Reply again with only the JSON value, "
        "conforming to the schema above."
    )


def response_format(schema: OutputSchema) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` for native structured output."""
    safe_name = re.sub(r"[^a-zA-Z0-9_-]", "_", schema.name)[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": safe_name, "schema": schema.json_schema, "strict": False},
    }


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)\n?```", re.DOTALL)


def parse_json_reply(text: str | None) -> Any:
    """Parse a judge reply as JSON, tolerating markdown fences and prose around one object."""
    if text is None or not text.strip():
        raise SchemaMismatch("the reply was empty")
    candidate = text.strip()
    try:
        return json.loads(candidate)
    except ValueError:
        pass
    fence = _FENCE.search(candidate)
    if fence:
        try:
            return json.loads(fence.group(1).strip())
        except ValueError:
            pass
    for open_char, close_char in (("{", "}"), ("[", "]")):
        start, end = candidate.find(open_char), candidate.rfind(close_char)
        if 0 <= start < end:
            try:
                return json.loads(candidate[start : end + 1])
            except ValueError:
                continue
    raise SchemaMismatch("the reply was not JSON")
