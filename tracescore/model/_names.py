"""What a dataset or experiment name may hold (one rule for the API, the CLI and Python).

A name is 1 to 200 characters: letters and digits of any script, space, and ``_ - . : + = ,
( )``; it starts with a letter or a digit, does not end with a space and holds no ``..``. So
every name is reachable in a URL path segment, fits a log line and a file name, and ``/``, ``@``
(the ``name@version`` reference), NUL, newlines and other control characters never appear.
"""

from __future__ import annotations

MAX_NAME_CHARS = 200
"""Longest dataset or experiment name."""

NAME_RULE = (
    f"1 to {MAX_NAME_CHARS} characters: letters and digits, space and _ - . : + = , ( ); "
    "starting with a letter or a digit, without '..' or a trailing space"
)
"""The rule in words, for error messages and docs."""

_PUNCTUATION = frozenset(" _-.:+=,()")


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid dataset/experiment name, or None when it is."""
    if not isinstance(name, str):
        return f"a name is text, got {type(name).__name__}"
    if not name.strip():
        return "the name is blank"
    if len(name) > MAX_NAME_CHARS:
        return f"the name is {len(name)} characters long; at most {MAX_NAME_CHARS}"
    if not name[0].isalnum():
        return "the name must start with a letter or a digit"
    if name.endswith(" "):
        return "the name ends with a space"
    if ".." in name:
        return "the name holds '..'"
    for char in name:
        if not (char.isalnum() or char in _PUNCTUATION):
            return f"the name holds {char!r}, which a name may not"
    return None


__all__ = ["MAX_NAME_CHARS", "NAME_RULE", "name_problem"]
