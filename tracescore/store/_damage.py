"""A damaged database file, as the store meets it: at open (one sentence, ``DatabaseDamaged``
or ``DamagedWal``) and in reads later (``DamageNote``: logged once, counted, shown by
``Store.damaged`` and ``/healthz``).

DuckDB checks each block's checksum when it reads the block, so damage inside a table shows up
only when a read touches it: opening works, ``select count(*)`` works, and the statement that
reads the bad block fails every time it runs. Retrying does not mend it and neither does a
reopen; the operator has to restore the file.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from ._errors import DamagedWal, DatabaseDamaged
from ._fatal import first_line, is_corruption
from ._wal import truncate_at_entry

log = logging.getLogger(__name__)

_WAL_ENTRY = re.compile(r"entry at byte position (\d+)")


def damaged_error(path: str, exc: BaseException) -> DatabaseDamaged:
    """The sentence for a database file DuckDB finds damaged while opening it."""
    return DatabaseDamaged(
        f"{path} is damaged and cannot be opened ({first_line(exc)}); restore it from a "
        "backup, or move it and its .wal aside (keep them: DuckDB may still read the undamaged "
        "tables) and start with a new --db file")


def connect_replaying(path: str, *, read_only: bool, config: dict[str, Any],
                      discard_damaged_wal: bool) -> Any:
    """``duckdb.connect``; a WAL entry failing its checksum (found while DuckDB replays the
    log) is ``DamagedWal``, or with ``discard_damaged_wal`` the log is cut before that entry
    (after a copy of it is kept) and the file opened again."""
    import duckdb

    try:
        return duckdb.connect(path, read_only=read_only, config=config)
    except duckdb.Error as exc:
        text = str(exc)
        if "replaying WAL" not in text or read_only:
            raise
        at = _WAL_ENTRY.search(text)
        if not discard_damaged_wal or at is None:
            raise DamagedWal(
                f"the write-ahead log {path}.wal is damaged ({first_line(exc)}), so DuckDB will "
                "not open the database. Restore the database and its WAL from a backup, or "
                "start with --discard-damaged-wal to replay the log up to the damaged entry (a "
                "copy of the whole log is kept)") from None
        kept, dropped, copy = truncate_at_entry(path, int(at.group(1)))
        log.warning("the write-ahead log %s.wal fails a checksum at byte %s: replaying its first "
                    "%d bytes, dropping the %d after them (--discard-damaged-wal); the whole log "
                    "is kept as %s", path, at.group(1), kept, dropped, copy)
        return duckdb.connect(path, read_only=read_only, config=config)


class DamageNote:
    """Damage that reads ran into: the first is logged (ERROR), later ones only counted."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.first: str | None = None
        self.count = 0

    def note(self, exc: BaseException | str) -> None:
        """Count ``exc`` if it is DuckDB's word for a damaged file."""
        if not is_corruption(exc):
            return
        text = (first_line(exc) if isinstance(exc, BaseException)
                else str(exc).splitlines()[0][:300])
        if self.first is None:
            self.first = text
            log.error("%s: the database file is damaged: %s. Reads that touch this block fail; "
                      "the rest of the file stays in use (/healthz says degraded). Restore the "
                      "file from a backup", self.path, text)
        self.count += 1

    @property
    def reason(self) -> str | None:
        """What ``/healthz`` says, or None when no read met damage."""
        if self.first is None:
            return None
        times = "once" if self.count == 1 else f"{self.count} times"
        return (f"the database file is damaged: {self.first} (reads failed on it {times}); "
                "the data in that block cannot be read. Restore the file from a backup")


__all__ = ["DamageNote", "connect_replaying", "damaged_error"]
