"""Errors of the server room.

::

    TracescoreError
    ├── ConfigError      a bad config file, key, environment variable or flag (names which)
    ├── ServeError       the server cannot start: a port in use, the database held elsewhere
    └── TraceIdError     (tracescore.traces) a trace id that is not 8–32 hex digits, unknown,
                         or an ambiguous prefix
"""

from __future__ import annotations

from tracescore.model import TracescoreError
from tracescore.traces import TraceIdError


class ConfigError(TracescoreError):
    """The configuration is invalid; the message names the key and where it came from."""


class ServeError(TracescoreError):
    """``serve`` cannot start; the message is one sentence saying what to change."""


__all__ = ["ConfigError", "ServeError", "TraceIdError"]
