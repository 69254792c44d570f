"""A one-line progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from typing import TextIO

_WIDTH = 24


class Progress:
    """Counts finished items and redraws ``run_evals [#####.....] 5/10 items, 1 error``."""

    def __init__(self, total: int, *, enabled: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self._stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self._enabled = enabled
        self._total = total
        self._done = 0
        self._errors = 0

    def advance(self, *, errored: bool) -> None:
        """One more item finished."""
        self._done += 1
        self._errors += int(errored)
        self._draw()

    def close(self) -> None:
        """End the line."""
        if self._enabled and self._done:
            self._stream.write("\n")
            self._stream.flush()

    def _draw(self) -> None:
        if not self._enabled:
            return
        filled = int(_WIDTH * self._done / max(self._total, 1))
        bar = "#" * filled + "." * (_WIDTH - filled)
        errors = f", {self._errors} error{'s' if self._errors != 1 else ''}" if self._errors else ""
        self._stream.write(f"\rrun_evals [{bar}] {self._done}/{self._total} items{errors}")
        self._stream.flush()
