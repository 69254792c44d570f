"""Parse ``--since`` / ``?since=`` values: a duration back from now (``24h``) or a timestamp."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str, *, now: datetime | None = None) -> datetime:
    """``24h``/``30m``/``7d``/``2w``/``90s`` before now, or an ISO-8601 time; naive UTC result.

    Raises ``ValueError`` with a sentence for anything else.
    """
    match = _DURATION.match(value)
    if match:
        seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
        current = now or datetime.now(UTC)
        return (current - timedelta(seconds=seconds)).astimezone(UTC).replace(tzinfo=None)
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{value!r} is neither a duration (24h, 30m, 7d) nor an ISO-8601 time"
        ) from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


__all__ = ["parse_since"]
