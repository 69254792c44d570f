"""Waiting in store tests for what the writer thread does on its own (checkpoints, reopens)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], timeout_s: float = 20.0) -> bool:
    """True once ``predicate()`` holds (polled every 20 ms), False after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False
