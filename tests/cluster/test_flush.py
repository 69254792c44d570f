"""The flush: rows go to the lake once, tagged; traces fold across nodes in PostgreSQL; a flush
committed before a kill -9 is noted at the next start and never copied again; retention keeps
unflushed rows. Real PostgreSQL, real DuckLake files, real node stores."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest

from tracescore.cluster import ClusterNode, ClusterSettings, ClusterUnavailable, FlushFailed
from tracescore.store import CheckpointPolicy, Store

from .spans import BASE_NS, span_rows, trace_id


def lake_count(store: Any, sql: str, params: list[Any] | None = None) -> Any:
    cur = store.cursor()
    try:
        return cur.execute(sql, params or []).fetchall()
    finally:
        cur.close()


def assert_each_flush_once(store: Any, *, spans: int, flushes: int) -> None:
    """The lake holds ``spans`` spans, each once, and flushes 1 to ``flushes`` of node-1, each
    once; the node noted each of them in its file."""
    assert lake_count(store, "SELECT count(*), count(DISTINCT span_id) FROM lake.spans") == [
        (spans, spans)]
    assert lake_count(store, "SELECT flush_no, count(*) FROM lake.flushes "
                             "GROUP BY flush_no ORDER BY flush_no") == [
        (n, 1) for n in range(1, flushes + 1)]
    noted = store.read("SELECT flush_no FROM cluster_flushes ORDER BY flush_no")
    assert [r["flush_no"] for r in noted] == list(range(1, flushes + 1))


def test_a_flush_copies_what_arrived_since_the_mark_once_with_its_tag(make_node: Any) -> None:
    node, store, reader = make_node("node-1")
    for trace in range(1, 21):
        store.write_spans_sync(span_rows(trace))
    store.write_logs_sync([{"log_id": "log-1", "trace_id": trace_id(1), "span_id": None,
                            "time_unix_nano": BASE_NS, "observed_time_unix_nano": BASE_NS,
                            "body": '"hello"', "project": "cluster-test"}])
    first = node.flusher.flush()
    assert first is not None
    assert (first.mark.flush_no, first.spans, first.logs, first.traces) == (1, 60, 1, 20)
    assert node.flusher.flush() is None, "nothing new: no flush"
    for trace in range(21, 26):
        store.write_spans_sync(span_rows(trace))
    second = node.flusher.flush()
    assert second is not None and (second.mark.flush_no, second.spans) == (2, 15)
    assert second.mark.span_mark > first.mark.span_mark

    assert lake_count(store, "SELECT count(*), count(DISTINCT span_id) FROM lake.spans") == [
        (75, 75)]
    assert lake_count(store, "SELECT count(*) FROM lake.logs") == [(1,)]
    assert lake_count(store, "SELECT node_id, flush_no, spans FROM lake.flushes "
                             "ORDER BY flush_no") == [("node-1", 1, 60), ("node-1", 2, 15)]
    tags = lake_count(store, "SELECT commit_message, commit_extra_info FROM lake.snapshots() "
                             "WHERE commit_extra_info IS NOT NULL ORDER BY snapshot_id")
    assert [orjson.loads(extra)["flush_no"] for _, extra in tags] == [1, 2]
    assert all(orjson.loads(extra)["node_id"] == "node-1" for _, extra in tags)
    assert tags[0][0] == "flush 1 of node node-1"
    noted = store.read("SELECT flush_no, spans FROM cluster_flushes ORDER BY flush_no")
    assert [(r["flush_no"], r["spans"]) for r in noted] == [(1, 60), (2, 15)]


def test_sql_on_a_node_sees_the_lake_and_its_unflushed_rows_once(make_node: Any) -> None:
    node, store, reader = make_node("node-1")
    store.write_spans_sync(span_rows(1))
    node.flusher.flush()
    store.write_spans_sync(span_rows(2))  # not flushed yet
    result = reader.query("SELECT count(*), count(DISTINCT span_id), min(node_id) FROM spans")
    assert result.rows == [[6, 6, "node-1"]]
    assert reader.query("SELECT count(*) FROM traces").rows == [[1]], "traces: flushed only"
    assert reader.query("SELECT count(*) FROM lake.spans").rows == [[3]]
    decided = reader.query("SELECT count(*) FROM scoring_decisions").rows
    assert decided == [[0]], "PostgreSQL tables answer through the cluster views"
    assert reader.query("SELECT max(flush_no) FROM cluster_flushes").rows == [[1]]
    assert reader.query("SELECT count(*) FROM sessions").rows == [[0]]


def test_traces_fold_the_spans_two_nodes_received(make_node: Any, pg_dsn: str) -> None:
    node1, store1, reader1 = make_node("node-1")
    node2, store2, reader2 = make_node("node-2")
    store1.write_spans_sync(span_rows(7, 3))            # the root and two children
    store2.write_spans_sync(span_rows(7, 2, offset=3))  # two more children
    assert node1.flusher.flush() is not None
    assert node2.flusher.flush() is not None
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute(
            "SELECT span_count, nodes, root_span_id, has_root, first_received_at <= "
            "last_received_at FROM tracescore.traces WHERE trace_id = %s",
            [trace_id(7)]).fetchone()
        per_node = conn.execute("SELECT node_id, span_count FROM tracescore.trace_nodes "
                                "ORDER BY node_id").fetchall()
    assert row == (5, ["node-1", "node-2"], f"{7:08x}{0:08x}", True, True)
    assert per_node == [("node-1", 3), ("node-2", 2)]
    # Either node reads the whole trace: the other's spans from the lake.
    for reader in (reader1, reader2):
        spans = reader.fetch_trace_rows(trace_id(7))
        assert [s["span_id"] for s in spans] == [f"{7:08x}{i:08x}" for i in range(5)]
        assert spans[0]["attributes"] == {"i": 0, "trace": 7}
        assert reader.query("SELECT count(*) FROM spans WHERE trace_id = ?",
                            [trace_id(7)]).rows == [[5]]


def test_a_span_stored_by_two_nodes_shows_once_in_the_trace_view(make_node: Any) -> None:
    node1, store1, reader1 = make_node("node-1")
    node2, store2, reader2 = make_node("node-2")
    store1.write_spans_sync(span_rows(9))
    store2.write_spans_sync(span_rows(9))  # a request the router sent to both
    node1.flusher.flush()
    node2.flusher.flush()
    assert len(reader1.fetch_trace_rows(trace_id(9))) == 3
    assert reader1.query("SELECT count(*) FROM spans").rows == [[6]], (
        "SQL shows what each node stored (node_id tells them apart)")


CRASH = textwrap.dedent("""
    import os, signal, sys
    from tracescore.cluster import ClusterNode, ClusterSettings
    from tracescore.store import Store
    sys.path.insert(0, {tests!r})
    from cluster.spans import span_rows

    def die(mark):
        print("lake commit", mark.flush_no, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    settings = ClusterSettings(node_id="node-1", postgres={dsn!r}, data_path={lake!r},
                               flush_interval_seconds=3600)
    node = ClusterNode(settings, _after_lake_commit=die)
    store = Store({db!r}, on_connect=node.on_connect).open()
    for trace in range(1, 11):
        store.write_spans_sync(span_rows(trace))
    node.start(store)
    node.flusher.flush()
    print("not killed", flush=True)
""")


def test_kill_9_between_the_lake_commit_and_the_local_note_applies_the_flush_once(
        pg_dsn: str, tmp_path: Path) -> None:
    db, lake = tmp_path / "node-1.duckdb", str(tmp_path / "lake")
    script = CRASH.format(tests=str(Path(__file__).parents[1]), dsn=pg_dsn, lake=lake,
                          db=str(db))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == -9, done.stdout + done.stderr
    assert "lake commit 1" in done.stdout and "not killed" not in done.stdout

    settings = ClusterSettings(node_id="node-1", postgres=pg_dsn, data_path=lake,
                               flush_interval_seconds=3600)
    node = ClusterNode(settings)
    store = Store(db, on_connect=node.on_connect).open()
    try:
        assert store.read("SELECT count(*) AS n FROM cluster_flushes") == [{"n": 0}], (
            "the crash came before the local note")
        reader = node.start(store)
        assert node.flusher.stats.recovered == 1
        assert node.flusher.mark.flush_no == 1
        assert node.flusher.flush() is None, "the 30 spans were flushed before the crash"
        store.write_spans_sync(span_rows(11))
        assert node.flusher.flush() is not None
        assert_each_flush_once(store, spans=33, flushes=2)
        with psycopg.connect(pg_dsn) as conn:
            traces = conn.execute("SELECT count(*), sum(span_count) FROM tracescore.traces"
                                  ).fetchone()
            flushed = conn.execute("SELECT flush_no FROM tracescore.node_flushes").fetchone()
        assert traces == (11, 33), "the traces upsert the crash cut off was redone at start"
        assert flushed == (2,)
        assert reader.query("SELECT count(*) FROM spans").rows == [[33]]
    finally:
        node.stop(flush=False)
        store.close()


def test_a_lake_commit_that_landed_but_raised_is_read_back_not_copied_again(
        pg_dsn: str, tmp_path: Path) -> None:
    reported: list[int] = []

    def error_after_commit(mark: Any) -> None:  # as a connection lost after COMMIT would
        if not reported:
            reported.append(mark.flush_no)
            raise OSError("connection to the catalog lost after COMMIT")

    settings = ClusterSettings(node_id="node-1", postgres=pg_dsn, data_path=str(tmp_path / "lake"),
                               flush_interval_seconds=3600)
    node = ClusterNode(settings, _after_lake_commit=error_after_commit)
    store = Store(tmp_path / "node-1.duckdb", on_connect=node.on_connect).open()
    try:
        node.start(store)
        store.write_spans_sync(span_rows(1))
        with pytest.raises(FlushFailed):
            node.flusher.flush()
        assert reported == [1] and node.flusher.mark.flush_no == 0, (
            "the commit landed, but the node never saw it return")
        again = node.flusher.flush()
        assert again is not None and again.mark.flush_no == 1 and again.spans == 0, (
            "the next flush found flush 1 in the lake and took its marks, copying nothing")
        store.write_spans_sync(span_rows(2))
        after = node.flusher.flush()
        assert after is not None and after.mark.flush_no == 2 and after.spans == 3
        assert_each_flush_once(store, spans=6, flushes=2)
    finally:
        node.stop(flush=False)
        store.close()


def test_retention_deletes_flushed_rows_only(make_node: Any) -> None:
    node, store, reader = make_node("node-1", local_retention_seconds=0)
    store.write_spans_sync(span_rows(1))
    node.flusher.flush()
    store.write_spans_sync(span_rows(2))
    assert node.flusher.delete_retained() == 3
    local = store.read("SELECT DISTINCT trace_id FROM spans")
    assert local == [{"trace_id": trace_id(2)}], "unflushed rows stay"
    assert reader.query("SELECT count(*) FROM spans").rows == [[6]]
    assert len(reader.fetch_trace_rows(trace_id(1))) == 3, "read back from the lake"


def _chat_span(trace: int, index: int, *, root: bool) -> dict[str, Any]:
    return {
        "trace_id": trace_id(trace), "span_id": f"{trace:08x}{index:08x}",
        "parent_span_id": None if root else f"{trace:08x}{0:08x}", "project": "p",
        "service_name": "agent", "name": "invoke_agent" if root else "chat gpt-4o-mini",
        "kind": "INTERNAL" if root else "CLIENT",
        "start_time_ns": BASE_NS + index, "end_time_ns": BASE_NS + 1_000_000 + index,
        "status_code": "OK",
        "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
        if root else {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                      "gen_ai.system": "openai", "gen_ai.usage.input_tokens": 10,
                      "gen_ai.usage.output_tokens": 5},
    }


def test_model_calls_and_totals_follow_once_the_totals_are_computed(
        make_node: Any, pg_dsn: str) -> None:
    from tracescore.live import TotalsMaintainer

    node, store, reader = make_node("node-1")
    store.write_spans_sync([_chat_span(3, 0, root=True), _chat_span(3, 1, root=False),
                            _chat_span(3, 2, root=False)])
    first = node.flusher.flush()
    assert first is not None and first.model_calls == 0, "totals pending: no calls yet"
    assert first.mark.calls_mark < first.mark.span_mark
    computed = asyncio.run(TotalsMaintainer(store, settle_s=0, max_wait_s=0).run_once())
    assert computed == 1
    local_calls = store.read("SELECT count(*) AS n FROM model_calls")[0]["n"]
    assert local_calls == 2
    assert reader.query("SELECT count(*) FROM model_calls").rows == [[2]], "local, unflushed"
    second = node.flusher.flush()
    assert second is not None and second.model_calls == 2 and second.spans == 0
    assert lake_count(store, "SELECT count(*), min(node_id) FROM lake.model_calls") == [
        (2, "node-1")]
    assert reader.query("SELECT count(*), sum(input_tokens) FROM model_calls").rows == [[2, 20]]
    with psycopg.connect(pg_dsn) as conn:
        totals = conn.execute("SELECT model_call_count, input_tokens, totals_received_at IS "
                              "NOT NULL FROM tracescore.traces").fetchone()
    assert totals == (2, 20, True)


def test_a_second_start_on_a_fresh_file_keeps_flush_numbers(make_node: Any, pg_dsn: str,
                                                             tmp_path: Path) -> None:
    node, store, reader = make_node("node-1")
    store.write_spans_sync(span_rows(1))
    node.flusher.flush()
    # The same node id on a new disk: refused while the first runs, then its flushes continue
    # after the lake's last one.
    settings = ClusterSettings(node_id="node-1", postgres=pg_dsn, data_path=str(tmp_path / "lake"),
                               flush_interval_seconds=3600)
    other = ClusterNode(settings)
    fresh = Store(tmp_path / "fresh.duckdb", on_connect=other.on_connect).open()
    try:
        with pytest.raises(ClusterUnavailable, match="another node is running with node_id"):
            other.start(fresh)
        node.stop(flush=False)
        other.start(fresh)
        assert other.flusher.mark.flush_no == 1
        fresh.write_spans_sync(span_rows(2))
        assert other.flusher.flush().mark.flush_no == 2
    finally:
        other.stop(flush=False)
        fresh.close()


def test_a_traces_upsert_postgresql_refused_is_made_good_by_the_next_flush(
        make_node: Any, pg_dsn: str) -> None:
    from tracescore.cluster import Flusher

    node, store, reader = make_node("node-1")
    down = True

    def connect() -> Any:
        if down:
            raise psycopg.OperationalError("connection refused (the test's PostgreSQL is away)")
        return psycopg.connect(pg_dsn)

    flusher = Flusher(store, node.settings, connect, local=node.local)
    store.write_spans_sync(span_rows(1) + span_rows(2))
    first = flusher.flush()
    assert first is not None and first.spans == 6, "the lake commit does not wait for it"
    assert flusher.stats.traces_upsert_failures == 1
    assert "traces upsert" in (flusher.stats.last_error or "")
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM tracescore.traces").fetchone() == (0,)
    assert reader.query("SELECT count(*) FROM spans").rows == [[6]]
    down = False
    store.write_spans_sync(span_rows(3))
    second = flusher.flush()
    assert second is not None and second.spans == 3
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*), sum(span_count) FROM tracescore.traces"
                            ).fetchone() == (3, 9)
        assert conn.execute("SELECT flush_no FROM tracescore.node_flushes").fetchone() == (2,)
    assert flusher.stats.last_error is None
    flusher.close()


def test_a_planned_reopen_keeps_the_lake_attached_and_flushes_going_once(
        make_node: Any, pg_dsn: str) -> None:
    """The writer's planned reopen (``CheckpointPolicy.reopen_after``) opens a new connection:
    the node's hook attaches the lake and PostgreSQL to it again, the next flush starts at the
    mark of the last one, and readers see the lake through the new connection."""
    every = CheckpointPolicy(idle_s=0.05, min_wal_bytes=1, reopen_after=1)
    node, store, reader = make_node("node-1", checkpoint=every)
    for trace in range(1, 6):
        store.write_spans_sync(span_rows(trace))
    first = node.flusher.flush()
    assert first is not None and (first.mark.flush_no, first.spans) == (1, 15)
    deadline = time.monotonic() + 30
    while store.stats().refreshes < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.stats().refreshes >= 1, store.stats()

    for trace in range(6, 9):
        store.write_spans_sync(span_rows(trace))
    store.write_spans_sync(span_rows(1))  # a resend after the reopen: dropped, not flushed
    second = node.flusher.flush()
    assert second is not None and (second.mark.flush_no, second.spans) == (2, 9)
    assert lake_count(store, "SELECT count(*), count(DISTINCT span_id) FROM lake.spans") == [
        (24, 24)]
    assert lake_count(store, "SELECT node_id, flush_no FROM lake.flushes ORDER BY flush_no") == [
        ("node-1", 1), ("node-1", 2)]
    assert reader.query("SELECT count(*), count(DISTINCT span_id) FROM spans").rows == [[24, 24]]
    assert [s["span_id"] for s in reader.fetch_trace_rows(trace_id(7))] == [
        f"{7:08x}{i:08x}" for i in range(3)]
    with psycopg.connect(pg_dsn) as conn:
        # (the resent trace's span_count counts the resend until its totals are recomputed,
        # on one node as here: docs/server.md, "traces")
        folded = conn.execute("SELECT count(*), sum(span_count) FILTER (WHERE trace_id <> %s) "
                              "FROM tracescore.traces", [trace_id(1)]).fetchone()
    assert folded == (8, 21)
