"""Trace ids as people type them: the full 32 hex digits, or any unique prefix of 8 or more.

(Here, not in the server, so every room that takes a trace id accepts a prefix: the API and
dashboard routes, ``tracescore trace show``, datasets made from traces, rescore.)

``tracescore demo`` and the dashboard show 8-digit ids; everywhere a trace id is taken (``GET
/api/traces/{id}``, the dashboard's trace routes, ``tracescore trace show``) a prefix that names
one stored trace stands for it. ``resolve_trace_id(read, text)`` returns the full id or raises
``TraceIdError`` with the HTTP status to answer: 400 for text that is not 8–32 hex digits or a
prefix several traces share (the message lists some), 404 when no trace starts with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ._errors import TraceIdError

MIN_PREFIX = 8
_REF = re.compile(r"^[0-9a-f]{8,32}$")
PREFIX_SQL = ("SELECT DISTINCT trace_id FROM spans WHERE starts_with(trace_id, ?) "
              "ORDER BY trace_id LIMIT 4")

Read = Callable[[str, Sequence[Any]], list[dict[str, Any]]]


def check_trace_ref(text: str) -> str:
    """``text`` trimmed and lower-cased; ``TraceIdError`` (400) unless it is 8–32 hex digits."""
    ref = text.strip().lower()
    if not _REF.match(ref):
        raise TraceIdError(
            f"trace id must be 32 hex digits, or a unique prefix of at least {MIN_PREFIX}; "
            f"got {text!r}", status_code=400)
    return ref


def resolve_trace_id(read: Read, text: str) -> str:
    """The full trace id ``text`` names (itself when it has 32 digits; no query then)."""
    ref = check_trace_ref(text)
    if len(ref) == 32:
        return ref
    ids = [str(row["trace_id"]) for row in read(PREFIX_SQL, [ref])]
    if not ids:
        raise TraceIdError(f"no stored trace id starts with {ref}", status_code=404)
    if len(ids) > 1:
        shown = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
        raise TraceIdError(
            f"trace id prefix {ref} is ambiguous: it starts {shown}; give more digits",
            status_code=400)
    return ids[0]


__all__ = ["MIN_PREFIX", "PREFIX_SQL", "check_trace_ref", "resolve_trace_id"]
