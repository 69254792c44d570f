"""Errors of the traces room.

::

    TracescoreError
    └── TraceError            a trace could not be turned into what was asked
        ├── TraceNotFound     the store holds no span of that trace id
        └── SpanNotFound      the trace has no span with the requested span id
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class TraceError(TracescoreError):
    """A trace could not be loaded or transformed as asked."""


class TraceNotFound(TraceError):
    """The store holds no span of the requested trace."""


class SpanNotFound(TraceError):
    """The trace holds no span with the requested id."""


__all__ = ["SpanNotFound", "TraceError", "TraceNotFound"]
