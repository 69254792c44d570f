"""The writer's own checkpoints (idle, or past a WAL bound; never inside a commit) and its
duplicate path (plain INSERT, the transaction again with conflict handling on a stored key)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ingest.otlp_payloads import logs_request, traces_request

from tracescore.ingest import decode_logs_protobuf, decode_traces_protobuf
from tracescore.store import CheckpointPolicy, Store


def _count(store: Store, table: str = "spans") -> int:
    return int(store.read(f"SELECT count(*) AS n FROM {table}")[0]["n"])


def _wal(store: Store) -> int:
    try:
        return os.stat(store.path + ".wal").st_size
    except OSError:
        return 0


_BODIES: dict[tuple[int, int, int], bytes] = {}


def _batch(spans: int, trace: int, attribute_size: int = 16) -> object:
    """A decoded batch; the same arguments give the same span ids (a resend)."""
    key = (spans, trace, attribute_size)
    if key not in _BODIES:
        _BODIES[key] = traces_request(spans, trace_id=trace.to_bytes(16, "big"),
                                      attribute_size=attribute_size).SerializeToString()
    return decode_traces_protobuf(_BODIES[key])


def test_new_spans_take_the_plain_insert_and_a_resend_falls_back(store: Store) -> None:
    store.write_spans_sync(_batch(4, 1))
    store.write_spans_sync(_batch(4, 2))
    assert store.stats().duplicate_retries == 0  # no stored key: no conflict handling
    # One batch holding both stored spans and new ones: only the new ones are added.
    mixed = _batch(4, 1)
    fresh = _batch(3, 3)
    for name, column in mixed.columns.items():  # type: ignore[attr-defined]
        column.extend(fresh.columns[name])  # type: ignore[attr-defined]
    store.write_spans_sync(mixed)
    assert store.stats().duplicate_retries == 1
    assert _count(store) == 11
    assert store.stats().spans_inserted == 11
    rows = store.read("SELECT trace_id, count(*) AS n FROM spans GROUP BY 1 ORDER BY 1")
    assert [row["n"] for row in rows] == [4, 4, 3]


def test_a_duplicate_in_one_group_commit_does_not_lose_the_other_batches(store: Store) -> None:
    store.write_spans_sync(_batch(2, 7))
    futures = [store.submit_spans(_batch(2, trace)) for trace in (7, 8, 9, 7)]
    for future in futures:
        future.result(10)
    assert _count(store) == 6
    assert store.stats().duplicate_retries >= 1


def test_resent_logs_fall_back_and_stay_single(store: Store) -> None:
    body = logs_request(b"\x01" * 16, b"\x02" * 8).SerializeToString()
    store.write_logs_sync(decode_logs_protobuf(body))
    assert store.stats().duplicate_retries == 0
    store.write_logs_sync(decode_logs_protobuf(body))
    assert store.stats().duplicate_retries == 1
    assert _count(store, "logs") == 1


def _wait_for(predicate: object, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_the_writer_checkpoints_once_idle(tmp_path: Path) -> None:
    with Store(tmp_path / "idle.duckdb", checkpoint=CheckpointPolicy(idle_s=0.05)) as store:
        store.write_spans_sync(_batch(50, 1))
        assert _wait_for(lambda: store.stats().idle_checkpoints >= 1)
        assert _wal(store) == 0
        assert _count(store) == 50


def test_no_checkpoint_inside_a_commit_until_the_wal_bound(tmp_path: Path) -> None:
    # ~40 MB of WAL: past DuckDB's default 16 MB automatic checkpoint, below our bound.
    never_idle = CheckpointPolicy(idle_s=3600, max_wal_bytes=512 * 1024 * 1024,
                                  eager_wal_bytes=0)
    with Store(tmp_path / "big.duckdb", checkpoint=never_idle) as store:
        for trace in range(8):
            store.write_spans_sync(_batch(100, trace + 1, attribute_size=50_000))
        before = store.stats().checkpoints  # at most the one at start (the migrations' WAL)
        for trace in range(8):
            store.write_spans_sync(_batch(100, trace + 11, attribute_size=50_000))
        assert _wal(store) > 16 * 1024 * 1024
        assert store.stats().checkpoints == before
    bounded = CheckpointPolicy(idle_s=3600, max_wal_bytes=1024 * 1024, eager_wal_bytes=0)
    with Store(tmp_path / "bounded.duckdb", checkpoint=bounded) as store:
        # the migrations' WAL, folded in at start (counted once the checkpoint has returned)
        assert _wait_for(lambda: _wal(store) == 0 and store.stats().checkpoints >= 1)
        before = store.stats().checkpoints
        store.write_spans_sync(_batch(100, 1, attribute_size=50_000))
        assert _wait_for(lambda: store.stats().checkpoints > before)
        assert store.stats().idle_checkpoints == 0
        assert _wal(store) < 1024 * 1024


def test_an_eager_checkpoint_runs_between_commits_past_its_bound(tmp_path: Path) -> None:
    # Never idle long enough, far below max_wal_bytes: only the eager rule checkpoints.
    eager = CheckpointPolicy(idle_s=3600, max_wal_bytes=512 * 1024 * 1024,
                             eager_wal_bytes=1024 * 1024)
    with Store(tmp_path / "eager.duckdb", checkpoint=eager) as store:
        assert _wait_for(lambda: _wal(store) == 0 and store.stats().checkpoints >= 1)
        before = store.stats().checkpoints
        for trace in range(3):
            store.write_spans_sync(_batch(100, trace + 1, attribute_size=50_000))
        # After the last commit nothing waits: its WAL is folded in at once.
        assert _wait_for(lambda: _wal(store) < 1024 * 1024)
        assert store.stats().checkpoints > before
        assert store.stats().idle_checkpoints == 0
        assert _count(store) == 300
