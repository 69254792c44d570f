"""Result records of the scorer utilities, and the one rounding rule every score follows.

Utilities such as ``compare_trajectories`` return a ``Record``: a plain ``dict`` (so it compares
equal to a dict literal, serialises as JSON and lands in ``preprocess_step_result`` unchanged)
whose keys can also be read as attributes (``result.score`` is ``result["score"]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


class Record(dict[str, Any]):
    """A dict whose keys read as attributes too; nested mappings become records on creation."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, value in list(self.items()):
            super().__setitem__(key, to_record(value))

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no key {name!r}; keys are {sorted(self)}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = to_record(value)

    def __repr__(self) -> str:
        return f"Record({dict.__repr__(self)})"


_ATOMS = frozenset({str, int, float, bool, type(None)})


def to_record(value: Any) -> Any:
    """Turn mappings (also inside lists) into ``Record``; leave other values alone."""
    kind = type(value)  # the common cases by exact type first (``Mapping`` is an ABC: slow)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return Record(value)
    if isinstance(value, Record):
        return value
    if isinstance(value, Mapping):
        return Record(value)
    if isinstance(value, list):
        return [to_record(v) for v in value]
    return value


def round_score(value: float) -> float:
    """Round to two decimals, half up (0.125 → 0.13, 1.005 → 1.01), as Mastra's scores do.

    The float's shortest decimal form is rounded, so float noise such as 0.1 + 0.2 does not
    leak into the result.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a score must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"a score must be finite, got {value!r}")
    rounded = Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    result = float(rounded)
    return 0.0 if result == 0 else result


def clamp_score(value: float) -> float:
    """Clamp to [0, 1], then round to two decimals half up."""
    return round_score(min(1.0, max(0.0, float(value))))
