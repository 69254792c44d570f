"""The lake's maintenance: one node at a time (advisory lock), small files merged, rows past
``retention_days`` deleted with their flushes' notes (each node's last two kept), every row still
read once afterwards."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from tracescore.cluster._maintenance import LOCK_KEY

from .spans import span_rows


def lake(store: Any, sql: str) -> Any:
    cur = store.cursor()
    try:
        return cur.execute(sql).fetchall()
    finally:
        cur.close()


def test_maintenance_runs_on_one_node_at_a_time_and_keeps_every_row(
        make_node: Any, pg_dsn: str) -> None:
    node1, store1, reader1 = make_node("node-1", retention_days=3)
    node2, store2, reader2 = make_node("node-2", retention_days=3)
    for trace in range(1, 9):  # eight small flushes: eight small files (or inlined rows)
        store1.write_spans_sync(span_rows(trace, 40))
        node1.flusher.flush()
    old = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=10)
    cur = store1.cursor()
    try:  # rows that arrived ten days ago
        cur.execute("INSERT INTO lake.spans (trace_id, span_id, project, received_at, node_id) "
                    "SELECT 'old' || range, 's' || range, 'p', ?, 'node-1' FROM range(5)",
                    [old])
        # node-1's flushes 1-7 noted ten days ago, and a node gone since with three old flushes
        cur.execute("UPDATE lake.flushes SET flushed_at = ? WHERE node_id = 'node-1' "
                    "AND flush_no <= 7", [old])
        cur.execute("INSERT INTO lake.flushes (node_id, flush_no, span_mark, calls_mark, spans, "
                    "logs, model_calls, traces, flushed_at) SELECT 'node-gone', range, ?, ?, 1, "
                    "0, 0, 1, ? FROM range(1, 4)", [old, old, old])
    finally:
        cur.close()
    files_before = lake(store1, "SELECT count(*) FROM ducklake_list_files('lake', 'spans')")[0][0]
    with psycopg.connect(pg_dsn, autocommit=True) as holder:
        assert holder.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY]).fetchone()[0]
        assert node2.maintenance.run(store2) is None, "another node holds the lock"
        assert node2.maintenance.skipped == 1
        holder.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    result = node2.maintenance.run(store2)
    assert result is not None and node2.maintenance.runs == 1
    assert result.steps["spans_deleted"] == 5
    assert result.steps["flushes_deleted"] == 6 + 1, result.steps
    assert lake(store1, "SELECT node_id, list(flush_no ORDER BY flush_no) FROM lake.flushes "
                        "GROUP BY node_id ORDER BY node_id") == [
        ("node-1", [7, 8]), ("node-gone", [2, 3])], "each node's last two flushes stay"
    assert node1.flusher.recover().flush_no == 8, "a restart still finds node-1's last flush"
    files_after = lake(store1, "SELECT count(*) FROM ducklake_list_files('lake', 'spans')")[0][0]
    assert files_after < files_before, (files_before, files_after)
    for reader in (reader1, reader2):
        assert reader.query("SELECT count(*), count(DISTINCT span_id) FROM spans").rows == [
            [320, 320]]
    store1.write_spans_sync(span_rows(99))
    flushed = node1.flusher.flush()
    assert flushed is not None and flushed.mark.flush_no == 9, "flushes go on after maintenance"
    assert reader2.query("SELECT count(*) FROM spans").rows == [[323]]
