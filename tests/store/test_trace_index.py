"""``TraceIndex``: the writer's index of stored traces (hash → earliest first arrival)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np

from tracescore.store import Store
from tracescore.store._trace_index import (
    HASH_SQL,
    NOT_STORED,
    TraceIndex,
    from_micros,
    to_micros,
    trace_hashes,
)


def _naive(*parts: int) -> datetime:
    """A naive UTC datetime, as the tables store them."""
    return datetime(*parts, tzinfo=UTC).replace(tzinfo=None)


def _hashes(index: TraceIndex, conn: duckdb.DuckDBPyConnection, ids: list[str]) -> np.ndarray:
    return index.masked(trace_hashes(conn, ids))


_IDS = [
    "0af7651916cd43dd8448eb211c80319c",  # OTLP: 32 lowercase hex digits
    f"{7:032x}",  # leading zeros
    "f" * 32,  # the largest key
    "0AF7651916CD43DD8448EB211C80319C",  # upper case: not what OTLP decoding gives
    "0af7651916cd43dd8448eb211c80319",  # 31 digits
    "0af7651916cd43dd8448eb211c80319g",  # not hex
    "0af7651916cd43dd 448eb211c80319c",
    "0af7651916cd43dd8448eb211c8031é9",
    "t1",
    "",
]


def test_keys_computed_in_python_are_the_keys_the_load_sql_computes() -> None:
    conn = duckdb.connect()
    conn.execute("CREATE TABLE ids (trace_id VARCHAR)")
    conn.executemany("INSERT INTO ids VALUES (?)", [[i] for i in _IDS])
    in_sql = dict(conn.execute(f"SELECT trace_id, {HASH_SQL} FROM ids").fetchall())
    assert trace_hashes(conn, _IDS) == [in_sql[i] for i in _IDS]
    assert trace_hashes(conn, _IDS[:3]) == [0x8448EB211C80319C, 7, 2**64 - 1]


def test_two_trace_ids_sharing_their_low_64_bits_stay_two_traces(tmp_path: Path) -> None:
    """Ids made to share the index's key: the second trace takes the exact path, right."""
    low = "8448eb211c80319c"
    ids = ["0af7651916cd43dd" + low, "1111111111111111" + low]

    def spans(trace_id: str, count: int) -> list[dict]:
        return [{"trace_id": trace_id, "span_id": f"{trace_id[:8]}{i:08x}",
                 "parent_span_id": None if i == 0 else f"{trace_id[:8]}{0:08x}",
                 "project": "p", "service_name": "s", "name": f"s{i}", "kind": "INTERNAL",
                 "start_time_ns": 1_750_000_000_000_000_000 + i,
                 "end_time_ns": 1_750_000_000_000_001_000 + i, "status_code": "OK",
                 "attributes": {}} for i in range(count)]

    with Store(tmp_path / "low.duckdb") as store:
        store.write_spans_sync(spans(ids[0], 2))
        store.write_spans_sync(spans(ids[1], 3))
        store.write_spans_sync(spans(ids[0], 2))  # a resend of the first trace
        rows = store.read("SELECT trace_id, span_count FROM traces ORDER BY trace_id")
        assert [r["trace_id"] for r in rows] == ids, "one row per trace, neither lost"
        assert rows[1]["span_count"] == 3
        assert store.stats().traces_exact_retries >= 1
        assert store.read("SELECT count(*) AS n FROM spans")[0]["n"] == 5


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
