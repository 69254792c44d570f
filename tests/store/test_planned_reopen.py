"""The writer's planned reopen (``CheckpointPolicy.reopen_after``): the database is closed and
opened again after so many checkpoints, once no write is queued and no read is running, so
that DuckDB gives back what it holds per row group; reads wait for it, never fail, and what was
stored stays (issue 27, item 13)."""

from __future__ import annotations

import threading
from pathlib import Path

from ingest.otlp_payloads import traces_request

from tracescore.ingest import decode_traces_protobuf
from tracescore.store import CheckpointPolicy, Store

from ._waiting import wait_for

_EVERY_CHECKPOINT = CheckpointPolicy(idle_s=0.05, min_wal_bytes=1, reopen_after=1)


_BODIES: dict[tuple[int, int], bytes] = {}


def _batch(spans: int, trace: int) -> object:
    """A decoded batch; the same arguments give the same span ids (a resend)."""
    if (spans, trace) not in _BODIES:
        _BODIES[spans, trace] = traces_request(
            spans, trace_id=trace.to_bytes(16, "big")).SerializeToString()
    return decode_traces_protobuf(_BODIES[spans, trace])



def _count(store: Store) -> int:
    return int(store.read("SELECT count(*) AS n FROM spans")[0]["n"])


def test_reads_running_throughout_several_reopens_all_succeed(tmp_path: Path) -> None:
    with Store(tmp_path / "reopen.duckdb", checkpoint=_EVERY_CHECKPOINT) as store:
        errors: list[BaseException] = []
        reads = 0
        stop = threading.Event()

        def reader() -> None:
            nonlocal reads
            while not stop.is_set():
                try:
                    store.read("SELECT count(*) AS n, max(trace_id) AS t FROM spans")
                    cursor = store.cursor()
                    try:
                        cursor.execute("SELECT count(*) FROM traces").fetchall()
                    finally:
                        cursor.close()
                    reads += 1
                except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                    errors.append(exc)

        threads = [threading.Thread(target=reader) for _ in range(3)]
        for thread in threads:
            thread.start()
        try:
            for trace in range(1, 6):
                store.write_spans_sync(_batch(20, trace))
                assert wait_for(lambda n=trace: store.stats().refreshes >= n), store.stats()
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        assert errors == []
        assert reads > 0
        assert _count(store) == 100
        # the traces fold's index was read again after each reopen: a resend adds nothing
        store.write_spans_sync(_batch(20, 5))
        assert _count(store) == 100
        assert store.read("SELECT count(*) AS n FROM traces")[0]["n"] == 5


def test_a_cursor_left_open_puts_the_reopen_off_and_keeps_working(tmp_path: Path) -> None:
    with Store(tmp_path / "held.duckdb", checkpoint=_EVERY_CHECKPOINT) as store:
        held = store.cursor()
        store.write_spans_sync(_batch(10, 1))
        assert wait_for(lambda: store.stats().refreshes_skipped >= 1, timeout_s=30)
        assert store.stats().refreshes == 0
        assert held.execute("SELECT count(*) FROM spans").fetchall() == [(10,)]
        held.close()
        store.write_spans_sync(_batch(10, 2))
        assert wait_for(lambda: store.stats().refreshes >= 1, timeout_s=30)
        assert _count(store) == 20


def test_no_reopen_when_the_policy_says_never(tmp_path: Path) -> None:
    never = CheckpointPolicy(idle_s=0.05, min_wal_bytes=1, reopen_after=0)
    with Store(tmp_path / "never.duckdb", checkpoint=never) as store:
        for trace in range(1, 4):
            store.write_spans_sync(_batch(5, trace))
            assert wait_for(lambda n=trace: store.stats().idle_checkpoints >= n)
        assert (store.stats().refreshes, store.stats().refreshes_skipped) == (0, 0)
