"""Errors of the traces room.

::

    TracescoreError
    └── TraceError            a trace could not be turned into what was asked
        ├── TraceNotFound     the store holds no span of that trace id
        ├── SpanNotFound      the trace has no span with the requested span id
        └── SessionNotFound   no stored trace carries the requested session id
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class TraceError(TracescoreError):
    """A trace could not be loaded or transformed as asked."""


class TraceNotFound(TraceError):
    """The store holds no span of the requested trace."""


class SpanNotFound(TraceError):
    """The trace holds no span with the requested id."""


class SessionNotFound(TraceError):
    """No stored trace carries the requested session id (or its totals are still pending)."""


__all__ = ["SessionNotFound", "SpanNotFound", "TraceError", "TraceNotFound"]
