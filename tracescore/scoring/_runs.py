"""Building ``ScorerRun`` and ``ScorerRunResult`` objects on the hot path of ``Scorer.run``."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from tracescore.model import ScorerRun

_M = TypeVar("_M", bound=BaseModel)


def construct(cls: type[_M], values: dict[str, Any]) -> _M:
    """Build a pydantic model from trusted values holding every field, without validation.

    pydantic's ``model_construct`` costs ~10 µs for ScorerRunResult (alias handling); this is
    the part of it we need, and a test checks the outcome equals a validated model.
    """
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


class _RandomPool:
    """Random bytes read from ``os.urandom`` 4 KB at a time. Each ``os.urandom`` call releases
    the GIL for its system call, and under a busy worker thread the event loop then waits for
    it again (up to the 5 ms switch interval): one read per 256 ids instead of one per id.
    Emptied in a forked child, so parent and child never hand out the same bytes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer = b""
        self._at = 0
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._buffer, self._at = b"", 0

    def take(self, size: int) -> bytes:
        with self._lock:
            if self._at + size > len(self._buffer):
                self._buffer, self._at = os.urandom(max(4096, size)), 0
            start = self._at
            self._at += size
            return self._buffer[start:self._at]


_random = _RandomPool()


def new_run_id() -> str:
    """A random (version 4) UUID string, about 4x cheaper than ``str(uuid.uuid4())``."""
    raw = bytearray(_random.take(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def make_run(
    run: ScorerRun | Mapping[str, Any] | None,
    input: Any,  # noqa: A002
    output: Any,
    run_id: str | None,
    request_context: Mapping[str, Any] | None,
    ground_truth: Any,
    expected_trajectory: Any,
) -> ScorerRun:
    if request_context is not None and not isinstance(request_context, Mapping):
        raise TypeError(f"request_context must be a dict, got {type(request_context).__name__}")
    if run is None:
        return construct(ScorerRun, {
            "run_id": run_id or new_run_id(),
            "input": input,
            "output": output,
            "ground_truth": ground_truth,
            "expected_trajectory": expected_trajectory,
            "request_context": dict(request_context) if request_context is not None else None,
            "trace_id": None,
            "span_id": None,
        })
    if isinstance(run, ScorerRun):
        base = run
    elif isinstance(run, Mapping):
        base = ScorerRun.model_validate(run)
    else:
        raise TypeError(
            "scorer.run() takes the run's fields as keywords (input=..., output=...) or a "
            f"ScorerRun / dict as its only positional argument, got {type(run).__name__}"
        )
    updates = {k: v for k, v in (("input", input), ("output", output), ("run_id", run_id),
                                 ("request_context", request_context),
                                 ("ground_truth", ground_truth),
                                 ("expected_trajectory", expected_trajectory)) if v is not None}
    return base.model_copy(update=updates) if updates else base


_RUN_FIELDS: dict[str, str] = {
    **{name: name for name in ScorerRun.model_fields},
    **{f.alias: name for name, f in ScorerRun.model_fields.items() if f.alias},
}


def coerce_prepared(prepared: Any, original: ScorerRun) -> ScorerRun:
    if prepared is None:
        return original
    if isinstance(prepared, ScorerRun):
        return prepared
    if isinstance(prepared, Mapping):
        unknown = [k for k in prepared if k not in _RUN_FIELDS]
        if unknown:
            raise TypeError(f"prepare_run returned unknown ScorerRun fields {unknown}")
        return original.model_copy(update={_RUN_FIELDS[k]: v for k, v in prepared.items()})
    raise TypeError(f"prepare_run must return a ScorerRun, a dict or None, got "
                    f"{type(prepared).__name__}")
