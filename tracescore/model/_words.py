"""Counts as people read them: "1 span", "2 spans" (never "1 spans")."""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, the noun plural (an ``s`` added) unless the count is one."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


__all__ = ["counted"]
