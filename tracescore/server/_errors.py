"""Errors of the server room.

::

    TracescoreError
    └── ConfigError      a bad config file, key, environment variable or flag (names which)
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class ConfigError(TracescoreError):
    """The configuration is invalid; the message names the key and where it came from."""


__all__ = ["ConfigError"]
