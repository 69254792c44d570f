"""When the writer checkpoints: idle, or past a WAL size or age bound (never inside a commit).

DuckDB's automatic checkpoint runs inside whichever commit pushes the WAL past
``checkpoint_threshold`` (16 MB by default), so one request's commit took hundreds of
milliseconds instead of a few. The store sets the threshold to ``duckdb_threshold`` (far above
``max_wal_bytes``) and the writer checkpoints on its own terms with this policy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CheckpointPolicy:
    """Bounds of the write-ahead log between the writer's own checkpoints."""

    idle_s: float = 0.5
    """Checkpoint once no write has waited for this long (and the WAL holds ``min_wal_bytes``,
    or the last checkpoint is ``interval_s`` old)."""
    min_wal_bytes: int = 32 * 1024 * 1024
    """An idle checkpoint needs at least this much WAL, unless the last one is ``interval_s``
    old (1: any). With DuckDB's vacuum off, each checkpoint ends the row group every table was
    appending to, and DuckDB keeps about 2 KB of metadata per column of each row group in
    memory, outside its memory limit, for as long as the database is open: so what the
    server's RSS gains until the next reopen (``reopen_after``) is set by how many checkpoints
    it ran, not by how much it stored. An idle checkpoint after every pause of a steady
    trickle (about one a second) grew it by a few MB a minute (issue 27)."""
    max_wal_bytes: int = 64 * 1024 * 1024
    """Under load that never pauses, checkpoint between commits once the WAL is this large."""
    eager_wal_bytes: int = 32 * 1024 * 1024
    """Between commits, checkpoint once the WAL holds this much and no write is waiting at
    that moment: shorter checkpoints (~3 ms per MB here) that delay only the requests arriving
    meanwhile, instead of one of ``max_wal_bytes`` that every queued request waits for. 0:
    never. At 8 MiB a 30-minute mixed-load soak ran ten checkpoints a minute, each leaving a
    new row group in ~8 tables, and its RSS still grew ~3 MB a minute after DuckDB's cache had
    filled (``min_wal_bytes`` says why); 32 MiB makes a quarter as many."""
    interval_s: float = 300.0
    """... or once the last checkpoint is this old (a WAL of any size)."""
    vacuum: bool = False
    """Let DuckDB's checkpoints merge small row groups (``max_vacuum_tasks``). Off: each
    checkpoint then costs what its WAL holds (~3 ms per MB here) instead of rewriting ever
    larger runs of earlier row groups (one checkpoint in 16 took a second or more)."""

    reopen_after: int = 50
    """Close and reopen the database after this many checkpoints, at a moment no write is
    queued and no read is running (0: never). DuckDB holds ~2 KB per column of every row group
    it touched while a database stays open and reads a reopened file's row groups lazily:
    1,000 checkpoints of a 100-column table held 276 MB, 104 MB after a reopen in the same
    process (``tests/bench/bench_rowgroup_memory.py``). Reads wait for the moment it takes."""

    @property
    def duckdb_threshold(self) -> str:
        """DuckDB's ``checkpoint_threshold``: well past ``max_wal_bytes`` plus one commit, so
        DuckDB's own checkpoint never fires first."""
        return f"{max(4 * self.max_wal_bytes, 1024 * 1024 * 1024) // (1024 * 1024)}MB"

    @property
    def duckdb_config(self) -> dict[str, str | int]:
        """The DuckDB settings a writable store opens with (see the fields)."""
        config: dict[str, str | int] = {"checkpoint_threshold": self.duckdb_threshold}
        if not self.vacuum:
            config["max_vacuum_tasks"] = 0
        return config


def wal_bytes(wal_path: str) -> int:
    """The size of the database's WAL file (0 when there is none)."""
    try:
        return os.stat(wal_path).st_size
    except OSError:
        return 0


__all__ = ["CheckpointPolicy", "wal_bytes"]
