"""A failure that repeats every few seconds is logged once, then as a count now and then.

The totals maintainer retries every 2 s and the scheduler ticks every few seconds; when what
fails does not mend by itself (a damaged block of the database file fails every read that
touches it), logging each attempt buried the log in the same line forever. ``RepeatedFailure``
logs the first failure, then the same error again only after 1 min, 10 min and every hour
with how often it happened meanwhile, and a line when it works again; ``backoff_s`` grows the
wait between attempts while the same error repeats.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

REPORT_AFTER_S = (60.0, 600.0, 3600.0)
"""When the same failure is reported again (seconds after the previous report; the last
repeats)."""


def _text(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]


class RepeatedFailure:
    """The log of one repeating task's failures (``what`` names it in each line)."""

    def __init__(self, logger: logging.Logger, what: str, *, traceback: bool = False,
                 _clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.what = what
        self.traceback = traceback
        self.consecutive = 0
        """Failures in a row (of any error) since the last success."""
        self._clock = _clock
        self._text: str | None = None
        self._unreported = 0
        self._reported_at = 0.0
        self._reports = 0

    def failed(self, exc: BaseException, *, retry_in_s: float | None = None) -> None:
        """Record a failure; log it if it is new, or if the same one is due a report."""
        self.consecutive += 1
        text = _text(exc)
        now = self._clock()
        retry = f" (retrying in {retry_in_s:g} s)" if retry_in_s is not None else ""
        if text != self._text:
            self._text, self._unreported, self._reports, self._reported_at = text, 0, 0, now
            self.logger.warning("%s failed%s: %s", self.what, retry, text,
                                exc_info=exc if self.traceback else None)
            return
        self._unreported += 1
        due = REPORT_AFTER_S[min(self._reports, len(REPORT_AFTER_S) - 1)]
        if now - self._reported_at >= due:
            self.logger.warning("%s failed again %d times in the last %.0f s with the same "
                                "error%s: %s", self.what, self._unreported,
                                now - self._reported_at, retry, text)
            self._unreported, self._reported_at = 0, now
            self._reports += 1

    def succeeded(self) -> None:
        """Record a success (a line when it follows failures)."""
        if self.consecutive:
            self.logger.info("%s works again after %d failure%s", self.what, self.consecutive,
                             "" if self.consecutive == 1 else "s")
        self.consecutive = 0
        self._text = None

    def backoff_s(self, base_s: float, *, cap_s: float = 60.0) -> float:
        """The wait before the next attempt: ``base_s``, doubling per failure in a row."""
        doublings = max(min(self.consecutive - 1, 16), 0)
        return float(min(base_s * 2.0 ** doublings, max(cap_s, base_s)))


__all__ = ["REPORT_AFTER_S", "RepeatedFailure"]
