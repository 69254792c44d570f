"""A gate between the store's readers and a planned reopen of its database.

Every reader's DuckDB cursor hangs off the store's one connection, and closing that connection
closes them all. The writer reopens the file now and then to give back what DuckDB holds for
each row group while a database stays open (``Writer``'s ``refresh_after_checkpoints``); before
it does, the gate waits for the reads in flight (cursors handed out and not closed yet) and
holds new ones until the file is open again. A cursor nobody closes is released when it is
garbage (``GatedCursor.__del__``); a reader that keeps one open past the wait makes the writer
skip that reopen, never fail a read.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ._errors import StoreUnavailable


class ReadGate:
    """Counts the cursors in use; ``drain`` closes the gate once none is, ``resume`` opens it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._closed = False

    def enter(self, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) while the gate is closed, then count one more reader."""
        with self._cond:
            if self._closed and not self._cond.wait_for(lambda: not self._closed, timeout_s):
                raise StoreUnavailable(
                    "the database is being reopened; retry in a moment", retry_after_s=1.0)
            self._active += 1

    def leave(self) -> None:
        """One reader is done."""
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def drain(self, timeout_s: float) -> bool:
        """Close the gate to new readers and wait for those in flight; False (gate open again)
        when some are still reading after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._closed = True
            while self._active:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._closed = False
                    self._cond.notify_all()
                    return False
                self._cond.wait(left)
            return True

    def resume(self) -> None:
        """Open the gate again."""
        with self._cond:
            self._closed = False
            self._cond.notify_all()

    @property
    def active(self) -> int:
        """Cursors handed out and not closed yet."""
        return self._active


class GatedCursor:
    """A DuckDB cursor that tells its gate when it is closed (or garbage); everything else is
    the cursor's own."""

    __slots__ = ("_cursor", "_gate")

    def __init__(self, cursor: Any, gate: ReadGate) -> None:
        self._cursor = cursor
        self._gate: ReadGate | None = gate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def close(self) -> None:
        """Close the cursor and release its place at the gate (once)."""
        gate, self._gate = self._gate, None
        try:
            self._cursor.close()
        finally:
            if gate is not None:
                gate.leave()

    def __enter__(self) -> GatedCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        gate = getattr(self, "_gate", None)
        if gate is not None:
            self._gate = None
            gate.leave()


__all__ = ["GatedCursor", "ReadGate"]
