"""The ``traces`` maintenance (``TracesMaintainer`` with the writer's ``TraceIndex``): a trace's
spans that arrive over many commits, across a restart, or under hash collisions (which take the
exact path), fold into the one row a recompute from ``spans`` gives."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.store import Store

_DERIVED = ("project, service_name, root_span_id, root_span_name, start_time, end_time, "
            "duration_ms, span_count, error_count, has_root, root_ended")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC).replace(tzinfo=None)


def _expected(batches: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The span-derived ``traces`` columns computed here from every span sent."""
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for row in (row for batch in batches for row in batch):
        by_trace.setdefault(row["trace_id"], []).append(row)
    out = []
    for trace_id in sorted(by_trace):
        rows = by_trace[trace_id]
        roots = [row for row in rows if row["parent_span_id"] is None]
        root = roots[0] if roots else None
        start, end = min(r["start_time_ns"] for r in rows), max(r["end_time_ns"] for r in rows)
        out.append({
            "trace_id": trace_id, "project": "p",
            "service_name": (root or min(rows, key=lambda r: r["start_time_ns"]))["service_name"],
            "root_span_id": root and root["span_id"], "root_span_name": root and root["name"],
            "start_time": _EPOCH + timedelta(microseconds=start // 1000),
            "end_time": _EPOCH + timedelta(microseconds=end // 1000),
            "duration_ms": (end - start) // 1000 / 1000.0, "span_count": len(rows),
            "error_count": sum(r["status_code"] == "ERROR" for r in rows),
            "has_root": root is not None, "root_ended": root is not None,
        })
    return out


def _span(trace: int, index: int, rng: random.Random) -> dict[str, Any]:
    start = 1_700_000_000_000_000_000 + trace * 10**9 + index * 10**6
    root = index == 0
    return {
        "trace_id": f"{trace:032x}", "span_id": f"{trace:08x}{index:08x}",
        "parent_span_id": None if root else f"{trace:08x}{0:08x}",
        "project": "p", "service_name": f"svc-{trace % 3}", "name": f"step {index}",
        "kind": "INTERNAL", "start_time_ns": start,
        "end_time_ns": start + rng.randint(1, 5) * 10**6, "duration_ms": 1.0,
        "status_code": "ERROR" if rng.random() < 0.2 else "UNSET", "status_message": None,
        "attributes": "{}", "resource_attributes": "{}", "events": "[]", "links": "[]",
        "scope_name": None, "scope_version": None,
    }


def _batches(seed: int, traces: int = 12, spans: int = 6, size: int = 5) -> list[list[Any]]:
    """Every span of ``traces`` traces, shuffled (roots last or first) into small batches."""
    rng = random.Random(seed)
    rows = [_span(trace, index, rng) for trace in range(traces) for index in range(spans)]
    rng.shuffle(rows)
    return [rows[offset:offset + size] for offset in range(0, len(rows), size)]


def _traces(store: Store) -> list[dict[str, Any]]:
    return store.read(f"SELECT trace_id, {_DERIVED} FROM traces ORDER BY trace_id")


def test_spans_over_many_commits_fold_like_a_recompute(tmp_path: Path) -> None:
    batches = _batches(1)
    with Store(tmp_path / "window.duckdb") as store:
        for batch in batches:
            store.write_spans_sync(batch)
        assert store.stats().traces_exact_retries == 0  # every update found its trace
        assert _traces(store) == _expected(batches)
        assert len(_traces(store)) == 12


def test_the_index_and_the_exact_path_agree(tmp_path: Path) -> None:
    with Store(tmp_path / "index.duckdb") as indexed, \
            Store(tmp_path / "exact.duckdb", trace_hash_bits=1) as colliding:
        for batch in _batches(2):
            indexed.write_spans_sync(batch)
            colliding.write_spans_sync(batch)
        assert _traces(indexed) == _traces(colliding)
        assert colliding.stats().traces_exact_retries > 0  # one-bit hashes collide
        assert indexed.stats().traces_exact_retries == 0


def test_one_row_per_trace_when_hashes_collide(tmp_path: Path) -> None:
    batches = _batches(5, traces=40, size=7)
    with Store(tmp_path / "collide.duckdb", trace_hash_bits=3) as store:
        for batch in batches:
            store.write_spans_sync(batch)
        assert store.stats().traces_exact_retries > 0
        assert _traces(store) == _expected(batches)


def test_after_a_restart_the_index_is_read_from_the_table(tmp_path: Path) -> None:
    path = tmp_path / "restart.duckdb"
    batches = _batches(3)
    with Store(path) as store:
        for batch in batches[: len(batches) // 2]:
            store.write_spans_sync(batch)
    with Store(path) as store:  # a restart: the index is loaded, not empty
        for batch in batches[len(batches) // 2:]:
            store.write_spans_sync(batch)
        assert store.stats().traces_exact_retries == 0
        assert _traces(store) == _expected(batches)
        assert store.read("SELECT count(*) AS n FROM traces")[0]["n"] == 12


def test_a_resent_batch_keeps_spans_single(tmp_path: Path) -> None:
    with Store(tmp_path / "resend.duckdb") as store:
        batch = _batches(4, traces=2, spans=3, size=6)[0]
        store.write_spans_sync(batch)
        store.write_spans_sync(batch)
        assert store.stats().span_key_checks == 1  # the stored traces bound the check
        assert store.read("SELECT count(*) AS n FROM spans")[0]["n"] == 6
