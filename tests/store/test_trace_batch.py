"""``aggregate_by_trace``: the writer's per-commit aggregate, in Arrow, against the SQL rule the
exact recompute uses (``_traces_table._AGGREGATE``) on the same batches."""

from __future__ import annotations

import random
from datetime import datetime

import duckdb
import pyarrow as pa
import pytest

from tracescore.store._trace_batch import aggregate_by_trace
from tracescore.store._traces_table import _AGGREGATE, SPAN_DERIVED

COLUMNS = ("trace_id", *(name for name in SPAN_DERIVED if name != "duration_ms"))

_RECEIVED = datetime(2026, 12, 6, 15, 0, 0, 123456)  # noqa: DTZ001 - naive UTC, as stored
_BASE_NS = 1_790_000_000_000_000_000


def _batch(seed: int, *, traces: int = 6, spans: int = 40) -> pa.Table:
    """Spans of a few traces with every case the rule tells apart: roots by null and by empty
    parent id, several roots, no root, roots without values, missing ends, errors."""
    rng = random.Random(seed)
    rows: dict[str, list] = {name: [] for name in (
        "trace_id", "span_id", "parent_span_id", "project", "service_name", "name",
        "start_time", "end_time", "status_code")}
    starts = rng.sample(range(1, 10_000_000), spans)  # distinct: "earliest" is never a tie
    for n in range(spans):
        trace = f"t{rng.randrange(traces)}"
        rows["trace_id"].append(trace)
        rows["span_id"].append(f"s{n}")
        rows["parent_span_id"].append(rng.choice([None, "", "p1", "p2", "p3", "p4"]))
        # one project per trace where no root names one (SQL's fallback is any_value)
        rows["project"].append(rng.choice([None, f"proj-{trace}", f"root-proj-{n}"])
                               if rows["parent_span_id"][-1] in (None, "")
                               else rng.choice([None, f"proj-{trace}"]))
        rows["service_name"].append(rng.choice([None, f"svc-{n}"]))
        rows["name"].append(rng.choice([None, f"span {n}"]))
        start = _BASE_NS + starts[n] * 1_001
        rows["start_time"].append(start)
        rows["end_time"].append(rng.choice([None, start + rng.randrange(0, 5_000_000_000)]))
        rows["status_code"].append(rng.choice([None, "OK", "ERROR", "UNSET"]))
    types = {"start_time": pa.timestamp("ns"), "end_time": pa.timestamp("ns")}
    return pa.table({name: pa.array(values, types.get(name, pa.string()))
                     for name, values in rows.items()})


def _by_trace(table: pa.Table) -> dict[str, dict]:
    """Rows by trace id, nanosecond times as integers (``datetime`` has no nanoseconds)."""
    columns = [table[name].cast(pa.int64()) if name in ("start_time", "end_time") else table[name]
               for name in COLUMNS]
    return {row["trace_id"]: row for row in pa.table(columns, names=list(COLUMNS)).to_pylist()}


@pytest.mark.parametrize("seed", range(25))
def test_the_arrow_aggregate_is_the_sql_one(seed: int) -> None:
    batch = _batch(seed)
    conn = duckdb.connect()
    conn.register("batch", batch)
    expected = conn.sql(
        _AGGREGATE.format(first="?::TIMESTAMP", last="?::TIMESTAMP", source="batch"),
        params=[_RECEIVED, _RECEIVED],
    ).to_arrow_table()
    got = aggregate_by_trace(batch, _RECEIVED)
    assert got.column_names == list(COLUMNS)
    assert _by_trace(got) == _by_trace(expected)


def test_a_batch_of_one_span_without_a_parent_is_its_own_root() -> None:
    batch = pa.table({
        "trace_id": ["t"], "span_id": ["s"], "parent_span_id": pa.array([None], pa.string()),
        "project": ["p"], "service_name": ["svc"], "name": ["agent run"],
        "start_time": pa.array([_BASE_NS], pa.timestamp("ns")),
        "end_time": pa.array([_BASE_NS + 5_000], pa.timestamp("ns")),
        "status_code": ["ERROR"],
    })
    (row,) = aggregate_by_trace(batch, _RECEIVED).to_pylist()
    assert (row["root_span_id"], row["root_span_name"], row["span_count"], row["error_count"],
            row["has_root"], row["root_ended"]) == ("s", "agent run", 1, 1, True, True)
    assert row["first_received_at"] == row["last_received_at"] == _RECEIVED
