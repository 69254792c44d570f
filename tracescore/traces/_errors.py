"""Errors of the traces room.

::

    TracescoreError
    └── TraceError            a trace could not be turned into what was asked
        ├── TraceNotFound     the store holds no span of that trace id
        ├── SpanNotFound      the trace has no span with the requested span id
        ├── SessionNotFound   no stored trace carries the requested session id
        └── TraceIdError      a trace id that is not 8–32 hex digits, unknown, or an ambiguous
                              prefix (``status_code`` 400 or 404)
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


class TraceIdError(TraceError):
    """A trace id (or prefix) that names no single trace; ``status_code`` is 400 or 404."""

    def __init__(self, message: str, *, status_code: int = 400) -> None:
        super().__init__(message)
        self.status_code = status_code


__all__ = ["SessionNotFound", "SpanNotFound", "TraceError", "TraceIdError", "TraceNotFound"]
