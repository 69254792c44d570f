"""The writer's own checkpoints (idle, or past a WAL bound; never inside a commit) and its
duplicate checks (spans: an anti-join against the spans received since the batch's stored
traces first arrived; logs: plain INSERT, the transaction again with conflict handling on a
stored key)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ingest.otlp_payloads import logs_request, traces_request

from tracescore.ingest import decode_logs_protobuf, decode_traces_protobuf
from tracescore.store import CheckpointPolicy, Store

from ._waiting import wait_for


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


def test_new_traces_need_no_key_check_and_a_resend_adds_nothing(store: Store) -> None:
    store.write_spans_sync(_batch(4, 1))
    store.write_spans_sync(_batch(4, 2))
    assert store.stats().span_key_checks == 0  # every trace new: nothing stored to check
    # One batch holding both stored spans and new ones: only the new ones are added.
    mixed = _batch(4, 1)
    fresh = _batch(3, 3)
    for name, column in mixed.columns.items():  # type: ignore[attr-defined]
        column.extend(fresh.columns[name])  # type: ignore[attr-defined]
    store.write_spans_sync(mixed)
    assert store.stats().span_key_checks == 1
    assert _count(store) == 11
    assert store.stats().spans_inserted == 11
    rows = store.read("SELECT trace_id, count(*) AS n FROM spans GROUP BY 1 ORDER BY 1")
    assert [row["n"] for row in rows] == [4, 4, 3]


def test_a_key_twice_in_one_batch_is_stored_once(store: Store) -> None:
    twice = _batch(3, 4)
    again = _batch(3, 4)
    for name, column in twice.columns.items():  # type: ignore[attr-defined]
        column.extend(again.columns[name])  # type: ignore[attr-defined]
    store.write_spans_sync(twice)
    assert _count(store) == 3
    assert store.stats().spans_received == 6 and store.stats().spans_inserted == 3


def test_a_resend_long_after_many_other_traces_is_still_dropped(store: Store) -> None:
    store.write_spans_sync(_batch(5, 20))
    for trace in range(21, 61):  # later traffic: the first trace's spans are far back
        store.write_spans_sync(_batch(2, trace))
    store.write_spans_sync(_batch(5, 20))
    mixed = _batch(5, 20)  # the five stored again, and one new span of the same trace
    late = _batch(1, 20, attribute_size=99)
    for name, column in mixed.columns.items():  # type: ignore[attr-defined]
        column.extend(late.columns[name])  # type: ignore[attr-defined]
    store.write_spans_sync(mixed)
    rows = store.read("SELECT count(*) AS n, count(DISTINCT span_id) AS ids FROM spans "
                      "WHERE trace_id = ?", [(20).to_bytes(16, "big").hex()])
    assert rows == [{"n": 6, "ids": 6}]
    assert _count(store) == 6 + 40 * 2


def test_a_duplicate_in_one_group_commit_does_not_lose_the_other_batches(store: Store) -> None:
    store.write_spans_sync(_batch(2, 7))
    futures = [store.submit_spans(_batch(2, trace)) for trace in (7, 8, 9, 7)]
    for future in futures:
        future.result(10)
    assert _count(store) == 6
    assert store.stats().span_key_checks >= 1


def test_resent_logs_fall_back_and_stay_single(store: Store) -> None:
    body = logs_request(b"\x01" * 16, b"\x02" * 8).SerializeToString()
    store.write_logs_sync(decode_logs_protobuf(body))
    assert store.stats().duplicate_retries == 0
    store.write_logs_sync(decode_logs_protobuf(body))
    assert store.stats().duplicate_retries == 1
    assert _count(store, "logs") == 1



def test_the_writer_checkpoints_once_idle(tmp_path: Path) -> None:
    idle = CheckpointPolicy(idle_s=0.05, min_wal_bytes=1)
    with Store(tmp_path / "idle.duckdb", checkpoint=idle) as store:
        store.write_spans_sync(_batch(50, 1))
        assert wait_for(lambda: store.stats().idle_checkpoints >= 1)
        assert _wal(store) == 0
        assert _count(store) == 50


def test_a_small_wal_waits_for_the_interval_before_an_idle_checkpoint(tmp_path: Path) -> None:
    # Each checkpoint ends a row group (DuckDB's metadata per row group stays in memory): a
    # trickle of small commits must not checkpoint after every pause (issue 27, item 13).
    policy = CheckpointPolicy(idle_s=0.05, min_wal_bytes=64 * 1024 * 1024, interval_s=2.0)
    with Store(tmp_path / "trickle.duckdb", checkpoint=policy) as store:
        for index in range(5):
            store.write_spans_sync(_batch(20, index + 1))
            time.sleep(0.1)  # idle longer than idle_s after each
        assert store.stats().idle_checkpoints == 0 and _wal(store) > 0
        assert wait_for(lambda: store.stats().idle_checkpoints >= 1)  # the interval passed
        assert _wal(store) == 0 and _count(store) == 100


def test_by_default_pauses_and_gaps_wait_for_32_mib_of_wal(tmp_path: Path) -> None:
    # With DuckDB's vacuum off each checkpoint leaves a row group in every table it appended
    # to, whose metadata stays in memory: at 8 MiB a soak ran ten a minute and its RSS kept
    # growing (issue 27, item 13). ~15 MB of WAL, idle after each commit: no checkpoint yet.
    policy = CheckpointPolicy(idle_s=0.05)
    assert policy.min_wal_bytes == policy.eager_wal_bytes == 32 * 1024 * 1024
    with Store(tmp_path / "default.duckdb", checkpoint=policy) as store:
        before = store.stats().checkpoints
        for trace in range(3):
            store.write_spans_sync(_batch(100, trace + 1, attribute_size=50_000))
            time.sleep(0.1)  # idle longer than idle_s after each
        assert _wal(store) > 8 * 1024 * 1024
        assert store.stats().checkpoints == before
        rows = store.read("SELECT count(DISTINCT row_group_id) AS n FROM pragma_storage_info("
                          "'spans') WHERE persistent")
        assert rows[0]["n"] == 0  # nothing checkpointed: no row group ended


def test_no_checkpoint_inside_a_commit_until_the_wal_bound(tmp_path: Path) -> None:
    # ~40 MB of WAL: past DuckDB's default 16 MB automatic checkpoint, below our bound.
    never_idle = CheckpointPolicy(idle_s=3600, max_wal_bytes=512 * 1024 * 1024,
                                  eager_wal_bytes=0)
    with Store(tmp_path / "big.duckdb", checkpoint=never_idle) as store:
        assert _wal(store) == 0  # the migrations' WAL, folded in at open
        for trace in range(8):
            store.write_spans_sync(_batch(100, trace + 1, attribute_size=50_000))
        before = store.stats().checkpoints
        for trace in range(8):
            store.write_spans_sync(_batch(100, trace + 11, attribute_size=50_000))
        assert _wal(store) > 16 * 1024 * 1024
        assert store.stats().checkpoints == before
    bounded = CheckpointPolicy(idle_s=3600, max_wal_bytes=1024 * 1024, eager_wal_bytes=0)
    with Store(tmp_path / "bounded.duckdb", checkpoint=bounded) as store:
        assert _wal(store) == 0  # the migrations' WAL, folded in at open
        before = store.stats().checkpoints
        store.write_spans_sync(_batch(100, 1, attribute_size=50_000))
        assert wait_for(lambda: store.stats().checkpoints > before)
        assert store.stats().idle_checkpoints == 0
        assert _wal(store) < 1024 * 1024


def test_an_eager_checkpoint_runs_between_commits_past_its_bound(tmp_path: Path) -> None:
    # Never idle long enough, far below max_wal_bytes: only the eager rule checkpoints.
    eager = CheckpointPolicy(idle_s=3600, max_wal_bytes=512 * 1024 * 1024,
                             eager_wal_bytes=1024 * 1024)
    with Store(tmp_path / "eager.duckdb", checkpoint=eager) as store:
        assert _wal(store) == 0  # the migrations' WAL, folded in at open
        before = store.stats().checkpoints
        for trace in range(3):
            store.write_spans_sync(_batch(100, trace + 1, attribute_size=50_000))
        # After the last commit nothing waits: its WAL is folded in at once (the counter moves
        # once the checkpoint has returned, a moment after the WAL shrank).
        assert wait_for(lambda: _wal(store) < 1024 * 1024
                         and store.stats().checkpoints > before)
        assert store.stats().idle_checkpoints == 0
        assert _count(store) == 300


def test_opening_a_file_runs_its_first_checkpoint_before_any_write(tmp_path: Path) -> None:
    """DuckDB's first checkpoint after an open rewrites every table's metadata (slow on a
    large file); the store runs it at open, which also folds in a WAL left behind."""
    import duckdb

    path = tmp_path / "left.duckdb"
    with Store(path) as store:
        store.write_spans_sync(_batch(20, 1))
    conn = duckdb.connect(str(path))  # a process that stops without folding its WAL
    conn.execute("PRAGMA disable_checkpoint_on_shutdown")
    conn.execute("SET checkpoint_threshold = '1GB'")
    conn.execute("UPDATE spans SET name = 'renamed' WHERE span_id = (SELECT min(span_id) "
                 "FROM spans)")
    conn.close()
    assert Path(f"{path}.wal").stat().st_size > 0
    with Store(path, checkpoint=CheckpointPolicy(idle_s=3600)) as store:
        assert _wal(store) == 0  # at open, not later from the writer thread
        assert store.read("SELECT count(*) AS n FROM spans WHERE name = 'renamed'") == [{"n": 1}]
        assert store.stats().checkpoints == 0
