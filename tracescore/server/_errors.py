"""Errors of the server room.

::

    TracescoreError
    ├── ConfigError      a bad config file, key, environment variable or flag (names which)
    ├── ServeError       the server cannot start: a port in use, the database held elsewhere
    └── TraceIdError     a trace id that is not 8–32 hex digits, unknown, or an ambiguous prefix
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class ConfigError(TracescoreError):
    """The configuration is invalid; the message names the key and where it came from."""


class ServeError(TracescoreError):
    """``serve`` cannot start; the message is one sentence saying what to change."""


class TraceIdError(TracescoreError):
    """A trace id (or prefix) that names no single trace; ``status_code`` is 400 or 404."""

    def __init__(self, message: str, *, status_code: int = 400) -> None:
        super().__init__(message)
        self.status_code = status_code


__all__ = ["ConfigError", "ServeError", "TraceIdError"]
