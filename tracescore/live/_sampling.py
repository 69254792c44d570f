"""Deterministic sampling: a trace is in or out by a hash of its id, the same on every run.

Every scorer at the same rate picks the same traces, and a lower rate picks a subset of what a
higher rate picks, because all of them compare the same number with their rate.
"""

from __future__ import annotations

import hashlib

_SCALE = float(1 << 64)


def sample_fraction(trace_id: str) -> float:
    """Map a trace id to a stable number in [0, 1): the first 8 bytes of its sha256."""
    digest = hashlib.sha256(trace_id.strip().lower().encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def is_sampled(trace_id: str, sample_rate: float) -> bool:
    """True when the trace is in the sample at ``sample_rate`` (0 = none, 1 = all)."""
    if sample_rate >= 1.0:
        return True
    if sample_rate <= 0.0:
        return False
    return sample_fraction(trace_id) < sample_rate
