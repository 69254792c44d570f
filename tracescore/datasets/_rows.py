"""Items ⇄ ``dataset_items`` rows: validation, ids, JSON values (pure, no database)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from tracescore.evals import EvalItem

from ._errors import InvalidDatasetItem
from ._models import DatasetItem

JSON_FIELDS = ("input", "ground_truth", "expected_trajectory", "request_context", "metadata")
"""Item fields stored as JSON columns."""

MAX_VALUE_BYTES = 1024 * 1024
"""Default cap of one string value of an item, in UTF-8 bytes (the server passes its
``max_attribute_bytes``); a longer one is cut and its path listed under ``TRUNCATED_KEY``."""

MAX_ITEM_DEPTH = 64
"""Deepest nesting of lists/objects in one item field."""

TRUNCATED_KEY = "tracescore.truncated"
"""Key of an item's ``metadata`` listing the paths of the values that were cut
(``input[0].content``), like ``tracescore.truncated_attributes`` on spans."""


def _known_keys() -> frozenset[str]:
    """The keys an item dict may have (snake_case and camelCase)."""
    fields = DatasetItem.model_fields
    return frozenset({*fields, *(f.alias for f in fields.values() if f.alias)})


def to_item(value: Any, index: int) -> DatasetItem:
    """An item given as a ``DatasetItem``, an ``EvalItem`` or a dict, checked for storing.
    ``index`` counts from 0; messages count items from 1, as people (and JSONL lines) do."""
    number = index + 1
    if isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key not in _known_keys())
        if unknown:
            raise InvalidDatasetItem(
                f"item {number}: unknown key {unknown[0]!r}; an item's keys are input, "
                "ground_truth, expected_trajectory, request_context, metadata, item_id, "
                "source_trace_id, source_span_id")
    index = number  # the messages below name the item by its number
    try:
        if isinstance(value, DatasetItem):
            item = value
        elif isinstance(value, EvalItem):
            item = DatasetItem.model_validate(value.model_dump(exclude_unset=True))
        elif isinstance(value, Mapping):
            item = DatasetItem.model_validate(dict(value))
        else:
            raise InvalidDatasetItem(
                f"item {index}: expected a dict or an EvalItem, got {type(value).__name__}"
            )
    except ValidationError as exc:
        raise InvalidDatasetItem(f"item {index}: {exc.errors()[0]['msg']}") from None
    if item.inputs is not None or item.turns is not None:
        raise InvalidDatasetItem(
            f"item {index}: a dataset item holds one `input`; put a conversation's history "
            "in that input as a list of messages instead of `inputs` or `turns`"
        )
    if "input" not in item.model_fields_set:
        raise InvalidDatasetItem(f"item {index}: `input` is missing")
    return item


def item_rows(items: Iterable[Any], *, dataset_id: str, version: int, now: Any,
              taken: set[str], max_value_bytes: int = MAX_VALUE_BYTES
              ) -> list[dict[str, Any]]:
    """``dataset_items`` rows for new items; ids must be new to the dataset (``taken``).

    String values longer than ``max_value_bytes`` are cut (whole UTF-8 characters) and listed
    in the item's ``metadata[TRUNCATED_KEY]``; a field nested deeper than ``MAX_ITEM_DEPTH``
    is refused."""
    rows: list[dict[str, Any]] = []
    seen = set(taken)
    for index, value in enumerate(items):
        item = to_item(value, index)
        item_id = item.item_id or uuid.uuid4().hex
        if item_id in seen:
            raise InvalidDatasetItem(
                f"item {index}: item_id {item_id!r} is already in the dataset (ids are never "
                "reused, even after removal); give a new id or leave it out"
            )
        seen.add(item_id)
        row = _json_fields(item, index, max_value_bytes)
        rows.append({
            **row,
            "dataset_id": dataset_id,
            "item_id": item_id,
            "version_added": version,
            "version_removed": None,
            "source_trace_id": item.source_trace_id,
            "source_span_id": item.source_span_id,
            "created_at": now,
        })
    return rows


def _json_fields(item: DatasetItem, index: int, limit: int) -> dict[str, Any]:
    """The item's JSON fields as plain values, long strings cut, the cut paths recorded."""
    row: dict[str, Any] = {}
    cut: list[str] = []
    for name in JSON_FIELDS:
        try:
            value = to_jsonable_python(getattr(item, name), fallback=repr)
            row[name] = _cut_strings(value, limit, name, cut, 1)
        except (ValueError, RecursionError):
            raise InvalidDatasetItem(
                f"item {index}: `{name}` nests lists/objects deeper than {MAX_ITEM_DEPTH} "
                "levels; flatten it or store it as JSON text") from None
    if cut:
        metadata = dict(row["metadata"] or {})
        earlier = metadata.get(TRUNCATED_KEY)
        metadata[TRUNCATED_KEY] = [*(earlier if isinstance(earlier, list) else ()), *cut]
        row["metadata"] = metadata
    return row


def _cut_strings(value: Any, limit: int, path: str, cut: list[str], depth: int) -> Any:
    if isinstance(value, str):
        if len(value) * 4 <= limit or len(value.encode("utf-8")) <= limit:
            return value
        cut.append(path)
        return value.encode("utf-8")[:limit].decode("utf-8", "ignore")
    if not isinstance(value, list | dict):
        return value
    if depth > MAX_ITEM_DEPTH:
        raise ValueError("too deep")
    if isinstance(value, list):
        return [_cut_strings(v, limit, f"{path}[{i}]", cut, depth + 1)
                for i, v in enumerate(value)]
    return {k: _cut_strings(v, limit, f"{path}.{k}", cut, depth + 1) for k, v in value.items()}


def row_item(row: Mapping[str, Any]) -> DatasetItem:
    """A stored ``dataset_items`` row as a ``DatasetItem`` (JSON text parsed)."""
    values = {name: _loads(row.get(name)) for name in JSON_FIELDS}
    return DatasetItem(
        **values,
        item_id=row["item_id"],
        source_trace_id=row.get("source_trace_id"),
        source_span_id=row.get("source_span_id"),
        version_added=row.get("version_added"),
    )


def _loads(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str) else value


def export_line(item: DatasetItem) -> dict[str, Any]:
    """The JSONL form of an item (what ``--from-jsonl`` reads back)."""
    line = {name: to_jsonable_python(getattr(item, name), fallback=repr)
            for name in ("item_id", *JSON_FIELDS, "source_trace_id", "source_span_id")}
    return {key: value for key, value in line.items() if value is not None or key == "input"}


__all__ = ["JSON_FIELDS", "MAX_ITEM_DEPTH", "MAX_VALUE_BYTES", "TRUNCATED_KEY", "export_line",
           "item_rows", "row_item", "to_item"]
