"""``TraceIndex``: the writer's index of stored traces (hash → earliest first arrival)."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import numpy as np

from tracescore.store._trace_index import NOT_STORED, TraceIndex, from_micros, to_micros


def _naive(*parts: int) -> datetime:
    """A naive UTC datetime, as the tables store them."""
    return datetime(*parts, tzinfo=UTC).replace(tzinfo=None)


def _hashes(index: TraceIndex, conn: duckdb.DuckDBPyConnection, ids: list[str]) -> np.ndarray:
    rows = conn.execute("SELECT hash(x) FROM unnest(?::VARCHAR[]) AS t(x)", [ids]).fetchall()
    return index.masked([row[0] for row in rows])


def test_what_is_learnt_is_found_before_and_after_a_merge() -> None:
    conn = duckdb.connect()
    index = TraceIndex(merge_every=4)
    ids = [f"{n:032x}" for n in range(10)]
    hashes = _hashes(index, conn, ids)
    index.add(hashes[:3], [100, 200, 300])  # stays fresh (3 < 4)
    index.add(hashes[3:8], [400, 500, 600, 700, 800])  # merged
    found = index.firsts(hashes)
    assert found.tolist() == [100, 200, 300, 400, 500, 600, 700, 800, NOT_STORED, NOT_STORED]
    assert len(index) == 8


def test_a_hash_held_twice_keeps_the_earlier_arrival() -> None:
    conn = duckdb.connect()
    index = TraceIndex(merge_every=2)
    hashes = _hashes(index, conn, ["a" * 32, "b" * 32])
    index.add(hashes, [500, 600])  # merged into the arrays
    index.add(hashes[:1], [50])  # fresh, earlier
    assert index.firsts(hashes).tolist() == [50, 600]
    index.add(hashes[1:], [900])  # later than held: merged, the earlier one kept
    assert index.firsts(hashes).tolist() == [50, 600]


def test_load_reads_every_stored_trace_and_one_bit_hashes_collide() -> None:
    conn = duckdb.connect()
    conn.execute("CREATE TABLE traces (trace_id VARCHAR, first_received_at TIMESTAMP)")
    conn.execute("INSERT INTO traces VALUES ('t1', '2026-01-01 00:00:01'), "
                 "('t2', '2026-01-01 00:00:02')")
    index = TraceIndex()
    index.load(conn)
    found = index.firsts(_hashes(index, conn, ["t1", "t2", "t3"]))
    assert [from_micros(v) if v != NOT_STORED else None for v in found.tolist()] == [
        _naive(2026, 1, 1, 0, 0, 1), _naive(2026, 1, 1, 0, 0, 2), None]
    narrow = TraceIndex(hash_bits=1)
    narrow.load(conn)
    assert len(narrow) <= 2
    # two stored traces fill both one-bit hashes, or share one: any other id then collides
    assert (narrow.firsts(_hashes(narrow, conn, ["t3"])) != NOT_STORED).any() or len(narrow) == 1


def test_micros_round_trip() -> None:
    moment = _naive(2026, 12, 1, 14, 30, 5, 123456)
    assert from_micros(to_micros(moment)) == moment
