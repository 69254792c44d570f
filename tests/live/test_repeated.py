"""``RepeatedFailure``: the same error every tick is logged once, then counted."""

from __future__ import annotations

import logging

import pytest

from tracescore.live._repeated import RepeatedFailure


def test_the_same_error_is_logged_once_then_as_counts(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    failures = RepeatedFailure(logging.getLogger("t"), "computing things",
                               _clock=lambda: now[0])
    caplog.set_level(logging.INFO, "t")
    for _ in range(30):  # 30 ticks of 2 s: one minute
        failures.failed(RuntimeError("Corrupt database file: block 7\nmore"))
        now[0] += 2
    failures.failed(RuntimeError("Corrupt database file: block 7"))
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "computing things failed: RuntimeError: Corrupt database file: block 7",
        "computing things failed again 30 times in the last 60 s with the same error: "
        "RuntimeError: Corrupt database file: block 7",
    ]
    assert failures.backoff_s(2.0) == 60.0 and failures.consecutive == 31
    failures.failed(ValueError("another"))  # a different error is logged at once
    failures.succeeded()
    assert [r.getMessage() for r in caplog.records][-2:] == [
        "computing things failed: ValueError: another",
        "computing things works again after 32 failures"]
    assert failures.backoff_s(2.0) == 2.0
