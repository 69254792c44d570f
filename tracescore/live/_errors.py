"""Errors of the live scorer.

::

    TracescoreError
    └── ConfigError      a bad ``[live]``, ``[live.budget]`` or ``[[scorers]]`` entry, or a
                         scorer that cannot be loaded; the message names the entry and the key
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class ConfigError(TracescoreError):
    """A configuration value that tracescore cannot use; the message names the key and the fix."""
