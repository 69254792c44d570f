"""A crash's write-ahead log, looked at before DuckDB replays it (issue 27: nothing acknowledged
disappears without a word).

DuckDB replays ``<db>.wal`` when it opens the file and stops quietly where the log stops making
sense: a WAL whose header is unreadable is skipped whole (and the store's first checkpoint then
deletes it), a WAL cut short loses its tail; an entry failing its checksum stops the open with an
error. So before the open, ``inspect_wal`` walks the log's framing (DuckDB's WAL version 2: a
header, then entries of ``size (u64) | checksum (u64) | payload``, a transaction ending with a
``WAL_FLUSH`` entry) and ``recover_wal`` decides:

- the log is whole: nothing to do;
- it ends in an incomplete entry (a crash mid-write, or a file cut short): a copy of the whole
  WAL is kept as ``<db>.wal.damaged-<UTC time>``, a WARNING says how many bytes and commits
  replay and where replay stops, and the open goes on (DuckDB replays that much);
- nothing in it can be read (its header or first entry is not a WAL's): the copy is kept and
  the store refuses to open (``DamagedWal``) unless ``discard_damaged_wal``, which moves the
  log aside (to that name) and opens without it.

An entry that fails its checksum is found by DuckDB during the open; ``truncate_at_entry``
cuts the log before it (after the copy) when ``discard_damaged_wal`` allows.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ._errors import DamagedWal

log = logging.getLogger(__name__)

WAL_VERSION_ENTRY = 98
WAL_FLUSH_ENTRY = 100
_FIELD_TYPE, _FIELD_VERSION, _FIELD_IDENTIFIER, _END = 100, 101, 102, 0xFFFF
_FRAME = struct.Struct("<QQ")


WalState = Literal["complete", "partial", "unreadable", "unknown"]


@dataclass(frozen=True, slots=True)
class WalReport:
    """What a walk over a WAL's framing found."""

    size: int
    """Bytes in the file."""
    state: WalState
    """``complete``: every byte is in a complete entry. ``partial``: the log stops in an
    incomplete entry (replay stops there). ``unreadable``: its header, or its first entry, is
    not a WAL's (nothing can be replayed). ``unknown``: a WAL version this walk does not know
    (nothing is claimed; DuckDB decides)."""
    entries: int = 0
    """Complete entries."""
    commits: int = 0
    """Complete transactions (``WAL_FLUSH`` entries)."""
    replay_bytes: int = 0
    """Where the last complete transaction ends: what DuckDB can replay."""
    end_of_entries: int = 0
    """Where the last complete entry ends (replay stops here at the latest)."""
    entry_offsets: tuple[int, ...] = ()
    """Start of every complete entry (to cut the log before a bad one)."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


class _Torn(Exception):
    """The file ends inside the header (a crash while writing it)."""


def _header_end(data: bytes) -> tuple[int | None, bool]:
    """(where the entries start, whether the version is one this walk knows); (None, True) for
    a header whose bytes are not a WAL header. ``_Torn`` when the file ends inside it."""
    try:
        field, = struct.unpack_from("<H", data, 0)
        kind, at = _varint(data, 2)
        if field != _FIELD_TYPE or kind != WAL_VERSION_ENTRY:
            return None, True
        field, = struct.unpack_from("<H", data, at)
        version, at = _varint(data, at + 2)
        if field != _FIELD_VERSION:
            return None, True
        if version != 2:
            return at, False
        while True:
            field, = struct.unpack_from("<H", data, at)
            at += 2
            if field == _END:
                return at, True
            if field == _FIELD_IDENTIFIER:  # a list: count, then that many varints
                count, at = _varint(data, at)
                for _ in range(count):
                    _, at = _varint(data, at)
            elif field in (103, 104, 105):  # scalar header fields (checkpoint iteration, …)
                _, at = _varint(data, at)
            else:
                return at, False
    except (struct.error, IndexError):
        raise _Torn from None


def _is_entry_start(data: bytes, at: int) -> bool:
    """The payload at ``at`` starts like a WAL entry (its ``wal_type`` field), as far as the
    file holds it (a torn entry with fewer than two bytes counts as one)."""
    head = data[at:at + 2]
    return len(head) < 2 or struct.unpack("<H", head)[0] == _FIELD_TYPE


def inspect_wal(path: str | os.PathLike[str]) -> WalReport | None:
    """Walk the WAL at ``path`` (None when there is none, or it is empty)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    try:
        start, known = _header_end(data)
    except _Torn:
        return WalReport(size=len(data), state="partial")
    if start is None:
        return WalReport(size=len(data), state="unreadable")
    if not known:
        return WalReport(size=len(data), state="unknown")
    at, entries, commits, replay, offsets = start, 0, 0, start, []
    state: WalState = "complete"
    while at < len(data):
        if at + _FRAME.size > len(data):
            state = "partial"
            break
        size, _checksum = _FRAME.unpack_from(data, at)
        payload = at + _FRAME.size
        if size < 3 or not _is_entry_start(data, payload):
            state = "unreadable" if entries == 0 else "partial"
            break
        if payload + size > len(data):
            state = "partial"
            break
        offsets.append(at)
        entries += 1
        kind, _ = _varint(data, payload + 2)
        at = payload + size
        if kind == WAL_FLUSH_ENTRY:
            commits += 1
            replay = at
    return WalReport(size=len(data), state=state, entries=entries, commits=commits,
                     replay_bytes=replay, end_of_entries=at, entry_offsets=tuple(offsets))


def damaged_copy_path(wal: str, now: datetime | None = None) -> Path:
    """``<wal>.damaged-<UTC time>`` (a new name: an earlier copy is never overwritten)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    candidate = Path(f"{wal}.damaged-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = Path(f"{wal}.damaged-{stamp}-{number}")
    return candidate


def keep_copy(wal: str, *, move: bool = False) -> Path:
    """Copy (or move) the WAL aside before anything can drop it; ``DamagedWal`` if it cannot."""
    target = damaged_copy_path(wal)
    try:
        if move:
            os.replace(wal, target)
        else:
            shutil.copyfile(wal, target)
            with open(target, "rb+") as handle:
                os.fsync(handle.fileno())
    except OSError as exc:
        target.unlink(missing_ok=True)
        raise DamagedWal(
            f"the write-ahead log {wal} is damaged and a copy of it could not be kept "
            f"({exc.strerror or exc}); free disk space (or fix the permissions) and start again: "
            "nothing was changed") from None
    return target


@dataclass(frozen=True, slots=True)
class WalRecovery:
    """What ``recover_wal`` did: the WARNING to log once the database has opened, and the copy
    it kept of a log left in place (``undo`` removes that copy when the open fails: the file
    may then be another process's live log)."""

    note: str
    copy: Path | None = None

    def undo(self) -> None:
        """Remove the copy of a log that is still in place (the open failed)."""
        if self.copy is not None:
            self.copy.unlink(missing_ok=True)


def recover_wal(db_path: str, *, discard_damaged_wal: bool = False) -> WalRecovery | None:
    """Before DuckDB opens ``db_path``: look at its WAL and act as the module says. Returns
    what to log once the database has opened (None: nothing to say); raises ``DamagedWal``
    for a log that cannot be read at all (unless ``discard_damaged_wal``)."""
    wal = db_path + ".wal"
    report = inspect_wal(wal)
    if report is None or report.state in ("complete", "unknown"):
        return None
    if report.state == "unreadable":
        copy = keep_copy(wal, move=discard_damaged_wal)
        if not discard_damaged_wal:
            raise DamagedWal(
                f"the write-ahead log {wal} ({report.size} bytes) cannot be read at all (its "
                "header or first entry is not a DuckDB WAL's), so the writes it holds since the "
                f"last checkpoint cannot be replayed; a copy is kept as {copy} and nothing else "
                "was changed: restore the database and its WAL from a backup, or start with "
                "--discard-damaged-wal to open the database without them")
        return WalRecovery(f"discarded the unreadable write-ahead log {wal} ({report.size} "
                           f"bytes); it is kept as {copy} (--discard-damaged-wal)")
    copy = keep_copy(wal)
    return WalRecovery(
        f"the write-ahead log {wal} does not replay completely: it stops in an incomplete "
        f"entry at byte {report.end_of_entries} of {report.size}. Replayed {report.replay_bytes} "
        f"bytes ({report.commits} committed transactions in {report.entries} complete "
        f"entries); the {report.size - report.replay_bytes} bytes after byte "
        f"{report.replay_bytes} were not (a crash while writing leaves an unacknowledged last "
        "transaction so; a log cut short loses committed ones). A copy of the whole WAL is "
        f"kept as {copy}", copy)


def truncate_at_entry(db_path: str, payload_offset: int) -> tuple[int, int, Path]:
    """Cut the WAL before the entry whose payload starts at ``payload_offset`` (DuckDB's
    "entry at byte position N" of a checksum error), after keeping a copy; returns (bytes kept,
    bytes dropped, copy)."""
    wal = db_path + ".wal"
    report = inspect_wal(wal)
    starts = [o for o in (report.entry_offsets if report else ())
              if o + _FRAME.size == payload_offset]
    cut = starts[0] if starts else max(payload_offset - _FRAME.size, 0)
    size = os.path.getsize(wal)
    copy = keep_copy(wal)
    with open(wal, "rb+") as handle:
        handle.truncate(cut)
        os.fsync(handle.fileno())
    return cut, size - cut, copy


__all__ = [
    "WalRecovery",
    "WalReport",
    "WalState",
    "damaged_copy_path",
    "inspect_wal",
    "keep_copy",
    "recover_wal",
    "truncate_at_entry",
]
