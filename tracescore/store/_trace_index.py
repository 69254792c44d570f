"""Which traces the ``traces`` table holds, kept in the writer's memory instead of a key index.

``traces`` had a primary-key index on ``trace_id``. With 10 M spans stored (1.7 M traces) it
made each commit's INSERT of new traces ~8 ms slower and each checkpoint ~20 ms slower, and held
~115 MB that DuckDB's memory limit had to share with its cache (measured 2026-12-01). The writer
is the only thing that adds ``traces`` rows, so it can know them all itself: this index holds,
for every stored trace, a 64-bit key of its id (``HASH_SQL``) and its ``first_received_at``. It
is loaded from the table when the store opens (and when it reopens the file) and learns the
traces of each commit after that commit. 16 bytes per trace (27 MB for 1.7 M traces).

A hash the index does not hold is a trace the table does not hold. A hash it holds means
"probably stored": two ids can share a hash (about 1 in 10^10 per new trace with 1.7 M random
ids stored; ids made to share their low 64 bits share it always), so the caller checks
(``TracesMaintainer``: an UPDATE that must find every such trace) and falls back to its exact
path when one was not there. Where two stored traces share a hash, the index keeps the earlier
arrival, so a bound taken from it is never too late.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

NOT_STORED = -(2**63)
"""What ``TraceIndex.firsts`` answers for a hash the index does not hold."""

_EPOCH = datetime(1970, 1, 1)  # noqa: DTZ001 - naive UTC, as the tables store
_MERGE_EVERY = 16_384

HASH_SQL = ("CASE WHEN regexp_full_match(trace_id, '[0-9a-f]{32}') "
            "THEN ('0x' || right(trace_id, 16))::UBIGINT ELSE hash(trace_id) END")
"""The index's 64-bit key of a trace id, in SQL: the low 64 bits of a 32-digit lowercase hex id
(every id OTLP decoding gives; random there, W3C Trace Context), DuckDB's ``hash`` of any other
id. ``trace_hashes`` computes the same in Python, so a commit needs no statement for it."""

_LOAD_SQL = f"""
SELECT ({HASH_SQL}) & ?::UBIGINT AS trace_hash, coalesce(epoch_us(first_received_at), 0)
       AS first_us
FROM traces
"""
"""Sorted and deduplicated in numpy: a GROUP BY … ORDER BY here left DuckDB's hash table and
sort memory held by the process (~45 MB of RSS at 1.7 M traces) for the server's life."""

_HEX_DIGITS = "0123456789abcdef"
_OTHER_HASHES = f"SELECT list_transform($1::VARCHAR[], lambda trace_id: {HASH_SQL})"
"""The key of each id in parameter 1, as one list in the ids' order (a list value keeps its
order whatever the threads; rows of an unnest need not)."""


def trace_hashes(conn: Any, ids: list[str]) -> list[int]:
    """``HASH_SQL`` of each of ``ids``, in order: a hex id's low 64 bits read here, the others
    (rare: ids not from OTLP decoding) from DuckDB on ``conn`` in one statement."""
    out: list[int] = []
    other: list[int] = []
    for position, trace_id in enumerate(ids):
        # strip() leaves "" only when every character is a lowercase hex digit
        if len(trace_id) == 32 and not trace_id.strip(_HEX_DIGITS):
            out.append(int(trace_id[16:], 16))
        else:
            out.append(0)
            other.append(position)
    if other:
        [(found,)] = conn.execute(_OTHER_HASHES, [[ids[p] for p in other]]).fetchall()
        for position, key in zip(other, found, strict=True):
            out[position] = key
    return out


def to_micros(moment: datetime) -> int:
    """A naive UTC ``datetime`` as microseconds since the epoch (the index's time unit)."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    """The naive UTC ``datetime`` of ``micros`` microseconds since the epoch."""
    return _EPOCH + timedelta(microseconds=int(micros))


class TraceIndex:
    """Every stored trace's id hash → earliest ``first_received_at`` (µs), writer thread only.

    A sorted array pair holds the bulk; traces learnt since the last merge wait in a dict and
    are merged in once there are ``merge_every`` of them (a copy of the arrays, ~10 ms at
    1.7 M traces). ``hash_bits`` below 64 keeps only that many bits of each hash, so that
    distinct ids share hashes often (tests of the exact path).
    """

    def __init__(self, *, hash_bits: int = 64, merge_every: int = _MERGE_EVERY) -> None:
        import numpy as np

        if not 1 <= hash_bits <= 64:
            raise ValueError(f"hash_bits must be between 1 and 64, not {hash_bits}")
        self.mask = (1 << hash_bits) - 1
        self._merge_every = merge_every
        self._keys = np.empty(0, dtype=np.uint64)
        self._firsts = np.empty(0, dtype=np.int64)
        self._fresh: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._keys) + len(self._fresh)

    def load(self, conn: Any) -> None:
        """Replace what the index holds with every trace of ``conn``'s ``traces`` table."""
        import numpy as np

        table = conn.sql(_LOAD_SQL, params=[self.mask]).to_arrow_table()
        keys = table.column("trace_hash").to_numpy().astype(np.uint64, copy=False)
        firsts = table.column("first_us").to_numpy().astype(np.int64, copy=False)
        del table
        order = np.lexsort((firsts, keys))  # by hash, the earliest arrival first
        keys, firsts = keys[order], firsts[order]
        first_of_each = np.ones(len(keys), dtype=bool)
        first_of_each[1:] = keys[1:] != keys[:-1]  # a hash held twice keeps its earliest
        self._keys, self._firsts = keys[first_of_each], firsts[first_of_each]
        self._fresh = {}

    def masked(self, hashes: Any) -> Any:
        """``hashes`` (``trace_hashes``, any array-like) as the index keys them."""
        import numpy as np

        return np.asarray(hashes, dtype=np.uint64) & np.uint64(self.mask)

    def firsts(self, hashes: Any) -> Any:
        """For each of ``hashes`` (already ``masked``): the earliest ``first_received_at`` in µs
        of a stored trace with that hash, or ``NOT_STORED``."""
        import numpy as np

        out = np.full(len(hashes), NOT_STORED, dtype=np.int64)
        if len(self._keys):
            at = np.searchsorted(self._keys, hashes)
            inside = at < len(self._keys)
            hit = np.zeros(len(hashes), dtype=bool)
            hit[inside] = self._keys[at[inside]] == hashes[inside]
            out[hit] = self._firsts[at[hit]]
        fresh = self._fresh
        if fresh:
            for position, key in enumerate(hashes.tolist()):
                first = fresh.get(key)
                if first is not None and (out[position] == NOT_STORED or first < out[position]):
                    out[position] = first
        return out

    def add(self, hashes: Any, firsts: Any) -> None:
        """Learn stored traces: ``hashes`` (``masked``) first received at ``firsts`` (µs)."""
        import numpy as np

        fresh = self._fresh
        for key, first in zip(np.asarray(hashes).tolist(), np.asarray(firsts).tolist(),
                              strict=True):
            known = fresh.get(key)
            if known is None or first < known:
                fresh[key] = first
        if len(fresh) >= self._merge_every:
            self._merge()

    def _merge(self) -> None:
        import numpy as np

        keys = np.fromiter(self._fresh.keys(), dtype=np.uint64, count=len(self._fresh))
        firsts = np.fromiter(self._fresh.values(), dtype=np.int64, count=len(self._fresh))
        order = np.argsort(keys)
        keys, firsts = keys[order], firsts[order]
        at = np.searchsorted(self._keys, keys)
        inside = at < len(self._keys)
        held = np.zeros(len(keys), dtype=bool)
        held[inside] = self._keys[at[inside]] == keys[inside]
        if held.any():  # a hash already held: keep the earlier arrival
            slots = at[held]
            self._firsts[slots] = np.minimum(self._firsts[slots], firsts[held])
        new = ~held
        self._keys = np.insert(self._keys, at[new], keys[new])
        self._firsts = np.insert(self._firsts, at[new], firsts[new])
        self._fresh = {}


__all__ = ["HASH_SQL", "NOT_STORED", "TraceIndex", "from_micros", "to_micros", "trace_hashes"]
