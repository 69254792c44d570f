"""The writer: group commit, dedupe, backpressure, function jobs, scores (tracescore.store)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from ingest.otlp_payloads import FIXTURE_DIRS, fixture_protobuf, logs_request, traces_request

from tracescore.ingest import decode_logs_protobuf, decode_traces_protobuf, span_dicts_from_otlp
from tracescore.store import (
    DuplicateRows,
    InvalidRow,
    Store,
    StoreClosed,
    WriteQueueFull,
    score_rows_writer,
)


def _count(store: Store, table: str = "spans") -> int:
    return int(store.read(f"SELECT count(*) AS n FROM {table}")[0]["n"])


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_fixture_round_trip(store: Store, name: str) -> None:
    body = fixture_protobuf(name)
    store.write_spans_sync(decode_traces_protobuf(body))
    expected = span_dicts_from_otlp(body)
    stored = []
    for trace_id in sorted({row["trace_id"] for row in expected}):
        stored.extend(store.fetch_trace_rows(trace_id))
    key = lambda row: (row["trace_id"], row["span_id"])  # noqa: E731
    assert sorted(stored, key=key) == sorted(expected, key=key)


def test_resent_spans_are_not_duplicated(store: Store) -> None:
    body = traces_request(5).SerializeToString()
    store.write_spans_sync(decode_traces_protobuf(body))
    store.write_spans_sync(decode_traces_protobuf(body))
    doubled = decode_traces_protobuf(body)
    for column in doubled.columns.values():
        column.extend(list(column))
    store.write_spans_sync(doubled)
    assert _count(store) == 5
    assert store.stats().spans_inserted == 5


def test_row_dicts_are_accepted(store: Store) -> None:
    rows = span_dicts_from_otlp(traces_request(2).SerializeToString())
    store.write_spans_sync(rows)
    assert store.fetch_trace_rows(rows[0]["trace_id"]) == rows


def _block_writer(store: Store) -> tuple[threading.Event, object]:
    entered, release = threading.Event(), threading.Event()

    def hold(conn: object) -> str:
        entered.set()
        release.wait(10)
        return "held"

    future = store._submit("fn", hold, 0)
    assert entered.wait(10)
    return release, future


def test_queued_batches_share_one_commit(store: Store) -> None:
    release, held = _block_writer(store)
    commits_before = store.stats().commits
    futures = [
        store.submit_spans(decode_traces_protobuf(traces_request(3).SerializeToString()))
        for _ in range(10)
    ]
    release.set()
    for future in futures:
        future.result(10)
    assert held.result(10) == "held"  # type: ignore[attr-defined]
    assert store.stats().commits - commits_before == 2  # the blocking function + one group
    assert _count(store) == 30


def test_full_queue_raises_with_retry_after(tmp_path: Path) -> None:
    with Store(tmp_path / "q.duckdb", max_pending_rows=10, retry_after_s=2.5) as store:
        release, _ = _block_writer(store)
        first = store.submit_spans(decode_traces_protobuf(traces_request(8).SerializeToString()))
        with pytest.raises(WriteQueueFull) as caught:
            store.submit_spans(decode_traces_protobuf(traces_request(8).SerializeToString()))
        assert caught.value.retry_after_s == 2.5
        release.set()
        first.result(10)
        assert _count(store) == 8
        store.write_spans_sync(decode_traces_protobuf(traces_request(8).SerializeToString()))
        assert _count(store) == 16


def test_a_bad_batch_fails_alone(store: Store) -> None:
    release, _ = _block_writer(store)
    good = decode_traces_protobuf(traces_request(2).SerializeToString())
    bad = decode_traces_protobuf(traces_request(2).SerializeToString())
    bad.columns["project"][0] = None  # violates NOT NULL
    good_future, bad_future = store.submit_spans(good), store.submit_spans(bad)
    release.set()
    good_future.result(10)
    with pytest.raises(Exception, match="NOT NULL"):
        bad_future.result(10)
    assert _count(store) == 2


def test_write_fn_commits_or_rolls_back(store: Store) -> None:
    def insert(conn: Any) -> int:
        conn.execute("INSERT INTO scoring_decisions (trace_id, span_id, scorer_id, "
                     "scorer_version, decision) VALUES ('t', 's', 'x', '1', 'pending')")
        return 7

    assert store.write_sync(insert) == 7

    def fail(conn: Any) -> None:
        conn.execute("DELETE FROM scoring_decisions")
        raise RuntimeError("nope")

    with pytest.raises(RuntimeError, match="nope"):
        store.write_sync(fail)
    assert _count(store, "scoring_decisions") == 1


async def test_async_writes(store: Store) -> None:
    await store.write_spans(decode_traces_protobuf(traces_request(4).SerializeToString()))
    assert await store.write(lambda conn: conn.execute("SELECT 41 + 1").fetchone()[0]) == 42
    rows = await store.aread("SELECT count(*) AS n FROM spans")
    assert rows == [{"n": 4}]


def test_logs_round_trip_and_dedupe(store: Store) -> None:
    trace_id, span_id = os.urandom(16), os.urandom(8)
    body = logs_request(trace_id, span_id).SerializeToString()
    store.write_logs_sync(decode_logs_protobuf(body))
    store.write_logs_sync(decode_logs_protobuf(body))
    assert store.fetch_trace_logs(trace_id.hex()) == span_dicts_from_otlp(body, kind="logs")


def test_write_scores(store: Store) -> None:
    score = {
        "score_id": "s1",
        "trace_id": "t" * 32,
        "scorer_id": "faithfulness",
        "status": "success",
        "score": 0.75,
        "input": {"question": "q"},
        "judge_input_tokens": 120,
    }
    execution = {"execution_id": "e1", "score_id": "s1", "step": "analyze", "input_tokens": 120,
                 "output": {"verdicts": []}}
    decision = {"trace_id": "t" * 32, "span_id": "r" * 16, "scorer_id": "faithfulness",
                "scorer_version": "1", "decision": "pending"}
    store.write_scores_sync([score], [execution], [decision])
    store.write_scores_sync([{**score, "score": 0.1}], [], [{**decision, "decision": "scored",
                                                              "score_id": "s1"}])
    rows = store.read("SELECT score, input, created_at FROM scores")
    assert len(rows) == 1 and rows[0]["score"] == 0.75  # a re-sent score id is ignored
    assert rows[0]["input"] == '{"question":"q"}'
    assert rows[0]["created_at"] is not None
    assert store.read("SELECT step, input_tokens FROM judge_executions") == [
        {"step": "analyze", "input_tokens": 120}
    ]
    assert store.read("SELECT decision, score_id FROM scoring_decisions") == [
        {"decision": "scored", "score_id": "s1"}
    ]
    with pytest.raises(InvalidRow, match="unknown columns"):
        store.write_scores_sync([{"scorre": 1}])


def test_fresh_score_rows_are_plain_inserts_and_a_stored_twin_writes_nothing(
    store: Store,
) -> None:
    """``score_rows_writer(fresh=True)`` (rows of new pairs) inserts; a row whose key is stored
    already makes the whole write fail with ``DuplicateRows`` and leaves the tables as they
    were, so the caller can write the rows again with ``fresh=False``."""
    decision = {"trace_id": "t" * 32, "span_id": "r" * 16, "scorer_id": "x",
                "scorer_version": "1", "decision": "scored", "score_id": "s1"}
    score = {"score_id": "s1", "trace_id": "t" * 32, "scorer_id": "x", "status": "success",
             "score": 1.0, "input": {"q": 1}}
    store.write_sync(score_rows_writer([score], (), [decision], fresh=True))
    assert store.read("SELECT score_id, score, input FROM scores") == [
        {"score_id": "s1", "score": 1.0, "input": '{"q":1}'}]
    other = {**decision, "span_id": "o" * 16, "score_id": "s2"}
    again = score_rows_writer([{**score, "score_id": "s2"}], (), [other, decision], fresh=True)
    with pytest.raises(DuplicateRows, match="scoring_decisions.*fresh=False"):
        store.write_sync(again)
    assert _count(store, "scores") == 1 and _count(store, "scoring_decisions") == 1
    store.write_sync(score_rows_writer([{**score, "score_id": "s2"}], (),
                                       [other, {**decision, "decision": "failed"}]))
    assert _count(store, "scores") == 2
    assert store.read("SELECT span_id, decision FROM scoring_decisions ORDER BY span_id") == [
        {"span_id": "o" * 16, "decision": "scored"}, {"span_id": "r" * 16, "decision": "failed"}]


def test_durable_across_reopen_and_read_only(tmp_path: Path) -> None:
    path = tmp_path / "d.duckdb"
    with Store(path) as store:
        store.write_spans_sync(decode_traces_protobuf(traces_request(3).SerializeToString()))
    with Store(path, read_only=True) as reader:
        assert reader.query("SELECT count(*) FROM spans").rows == [[3]]
        with pytest.raises(StoreClosed):
            reader.write_spans_sync(
                decode_traces_protobuf(traces_request(1).SerializeToString())
            )


def test_a_lone_sequential_writer_does_not_linger(tmp_path: Path) -> None:
    # A linger this long would hang each write; sequential writes must not wait for company.
    with Store(tmp_path / "l.duckdb", linger_s=600, min_batch_rows=10**6) as store:
        for _ in range(3):
            store.submit_spans(
                decode_traces_protobuf(traces_request(2).SerializeToString())
            ).result(timeout=30)
        assert _count(store) == 6


def test_decoded_json_columns_are_json_and_queryable(store: Store) -> None:
    body = traces_request(3).SerializeToString()
    store.write_spans_sync(decode_traces_protobuf(body))
    rows = store.read(
        "SELECT typeof(attributes) AS t, typeof(resource_attributes) AS r, "
        "attributes->>'$' IS NOT NULL AS parsed, json_valid(attributes) AS valid FROM spans"
    )
    assert len(rows) == 3
    assert all(r["t"] == "JSON" and r["r"] == "JSON" and r["parsed"] and r["valid"] for r in rows)
    indexes = store.read("SELECT (attributes->>'index')::INT AS i FROM spans ORDER BY i")
    assert [row["i"] for row in indexes] == [0, 1, 2]


def test_row_dicts_with_invalid_json_text_are_refused_even_beside_decoded_spans(
    store: Store,
) -> None:
    release, _ = _block_writer(store)
    good = decode_traces_protobuf(traces_request(2).SerializeToString())
    bad = span_dicts_from_otlp(traces_request(1).SerializeToString())
    bad[0]["attributes"] = "{not json"
    good_future, bad_future = store.submit_spans(good), store.submit_spans(bad)
    release.set()
    good_future.result(10)
    with pytest.raises(Exception, match="(?i)json"):
        bad_future.result(10)
    assert _count(store) == 2


def test_recent_traces_read_many_as_one_reads_each(store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    for name in FIXTURE_DIRS:
        store.write_spans_sync(decode_traces_protobuf(fixture_protobuf(name)))
    trace_id, span_id = os.urandom(16), os.urandom(8)
    store.write_logs_sync(decode_logs_protobuf(logs_request(trace_id, span_id).SerializeToString()))
    ids = [r["trace_id"] for r in store.read("SELECT DISTINCT trace_id FROM spans")]
    since = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=1)
    spans, logs = store.fetch_recent_traces([*ids, trace_id.hex()], spans_since=since,
                                            logs_since=since)
    assert len(ids) > 10 and sorted(spans) == sorted(ids)
    for one in ids:
        assert spans[one] == store.fetch_trace_rows(one)  # same rows, values and order
    assert logs == {trace_id.hex(): store.fetch_trace_logs(trace_id.hex())}
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1)
    assert store.fetch_recent_traces(ids, spans_since=later, logs_since=later) == ({}, {})
