"""At most ``limit`` user SQL statements run at once; the others wait their turn.

DuckDB computes 2,048 rows at a time and hands each such vector to its client whole, outside
its memory limit, so one statement can hold 2,048 times its widest value however its answer is
cut (``_query.py``). The number of statements running at once is what bounds that memory. A
statement waits for a slot in arrival order, for up to twice its time limit (a statement ahead
of it runs at most about one), then runs with its whole limit; one that found no slot within
that is refused (``SqlBusy``) without having run.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator

from ._errors import SqlBusy


class SqlSlots:
    """A counting gate for user statements (``limit`` 0: no limit), with the counts
    ``/metrics`` shows."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._cond = threading.Condition()
        self._running = 0
        self._queue: deque[object] = deque()  # waiters, first come first served

    @property
    def running(self) -> int:
        """Statements holding a slot."""
        return self._running

    @property
    def waiting(self) -> int:
        """Statements waiting for a slot."""
        return len(self._queue)

    @contextlib.contextmanager
    def hold(self, wait_s: float) -> Iterator[None]:
        """Hold a slot while the block runs. Raises ``SqlBusy`` when none came free within
        ``wait_s``."""
        start = time.monotonic()
        me = object()
        with self._cond:
            self._queue.append(me)
            while self.limit and (self._running >= self.limit or self._queue[0] is not me):
                left = start + wait_s - time.monotonic()
                if left <= 0:
                    self._queue.remove(me)
                    self._cond.notify_all()  # the next in line may be free to go now
                    raise SqlBusy(
                        f"{self.limit} SQL statements (sql_max_concurrent) kept running for "
                        f"the {wait_s:g} s this one waited for its turn; it was not run: "
                        "retry in a moment, or raise sql_max_concurrent"
                    )
                self._cond.wait(left)
            self._queue.remove(me)
            self._running += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()


__all__ = ["SqlSlots"]
