"""The limits every decoded span and log record obeys, the same for protobuf and JSON.

- ``MAX_VALUE_DEPTH``: an attribute value (or log body) may nest arrays and key-value lists at
  most this deep. A deeper value rejects its span or record (``ValueTooDeep``, counted in
  ``partial_success``): serializing it would fail (orjson stops at 255 levels) and nobody
  queries data that deep. It is well below what the parsers refuse (upb: about 31 levels of
  ``kvlistValue``, 47 of ``arrayValue``; orjson: 1024 JSON levels), so both encodings reject
  the same spans.
- ``MAX_TIME_UNIX_NANO``: span and record times are stored as signed 64-bit nanoseconds; a time
  above 2^63 − 1 (legal on the wire as fixed64) rejects its span or record.
- ``max_attribute_bytes``: a string value (attribute, event/link attribute, log body, at any
  depth) longer than this many UTF-8 bytes is cut to it, and the attribute
  ``tracescore.truncated_attributes`` lists the keys that were cut, so one 15 MB string cannot
  take the store's memory. Checked once per span on the serialized JSON, so ordinary spans pay
  one ``len``.
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_VALUE_DEPTH = 16
"""Deepest nesting of arrays / key-value lists in one attribute value or log body."""

MAX_TIME_UNIX_NANO = 2**63 - 1
"""Latest span or record time that can be stored (int64 nanoseconds, year 2262)."""

MAX_ATTRIBUTE_BYTES = 1024 * 1024
"""Default cap of one string value, in UTF-8 bytes (``[server].max_attribute_bytes``)."""

TRUNCATED_KEY = "tracescore.truncated_attributes"
"""Attribute added to a span (event, link, log record) listing the keys whose values were cut."""

BODY_KEY = "(body)"
"""The name a log record's body goes by in ``tracescore.truncated_attributes``."""


class ValueTooDeep(ValueError):
    """An attribute value nests deeper than ``MAX_VALUE_DEPTH``; its span or record is rejected."""

    def __init__(self) -> None:
        super().__init__(
            f"an attribute value nests arrays/maps deeper than {MAX_VALUE_DEPTH} levels; "
            "flatten it or send it as a JSON string"
        )


def time_in_range(value: int | None) -> bool:
    """True when a span/record time fits the store's int64 nanoseconds."""
    return value is None or value <= MAX_TIME_UNIX_NANO


def _cut(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def cap_value(value: Any, limit: int) -> tuple[Any, bool]:
    """``value`` with every string longer than ``limit`` UTF-8 bytes cut; (value, cut?)."""
    if isinstance(value, str):
        if len(value) * 4 <= limit or len(value.encode("utf-8")) <= limit:
            return value, False
        return _cut(value, limit), True
    if isinstance(value, list):
        cut_any = False
        items = []
        for item in value:
            item, cut = cap_value(item, limit)
            cut_any |= cut
            items.append(item)
        return (items, True) if cut_any else (value, False)
    if isinstance(value, dict):
        cut_any = False
        out = {}
        for key, item in value.items():
            out[key], cut = cap_value(item, limit)
            cut_any |= cut
        return (out, True) if cut_any else (value, False)
    return value, False


def cap_attributes(attributes: dict[str, Any], limit: int) -> dict[str, Any]:
    """``attributes`` with over-long strings cut and ``TRUNCATED_KEY`` naming their keys."""
    cut_keys = []
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        out[key], cut = cap_value(value, limit)
        if cut:
            cut_keys.append(key)
    if not cut_keys:
        return attributes
    earlier = attributes.get(TRUNCATED_KEY)
    out[TRUNCATED_KEY] = [*(earlier if isinstance(earlier, list) else ()), *cut_keys]
    return out


def dumps_attributes(attributes: dict[str, Any], limit: int) -> str:
    """The JSON text of an attribute dict, capped (see the module docstring)."""
    raw = orjson.dumps(attributes)
    if len(raw) > limit:
        raw = orjson.dumps(cap_attributes(attributes, limit))
    return raw.decode("utf-8")


def dumps_items(items: list[dict[str, Any]], limit: int) -> str:
    """The JSON text of events or links (dicts with an ``attributes`` dict), capped."""
    raw = orjson.dumps(items)
    if len(raw) > limit:
        capped = [{**item, "attributes": cap_attributes(item["attributes"], limit)}
                  for item in items]
        raw = orjson.dumps(capped)
    return raw.decode("utf-8")


__all__ = [
    "BODY_KEY",
    "MAX_ATTRIBUTE_BYTES",
    "MAX_TIME_UNIX_NANO",
    "MAX_VALUE_DEPTH",
    "TRUNCATED_KEY",
    "ValueTooDeep",
    "cap_attributes",
    "cap_value",
    "dumps_attributes",
    "dumps_items",
    "time_in_range",
]
