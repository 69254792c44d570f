"""``rows_table``: row dicts to an Arrow table typed after the schema, values converted."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from tracescore.store import InvalidRow, rows_table


def _column(table: object, name: str) -> list[object]:
    return table.column(name).to_pylist()  # type: ignore[attr-defined]


def test_values_are_converted_per_column_type() -> None:
    shared = {"steps": [1, 2]}
    rows = [
        {"score_id": "a", "trace_id": 7, "score": 1, "duration_ms": math.nan,
         "input": shared, "output": "text", "judge_input_tokens": 3.0,
         "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)},
        {"score_id": "b", "trace_id": "t", "score": 0.5, "duration_ms": 2.5,
         "input": shared, "output": None, "judge_input_tokens": None,
         "created_at": "2026-01-02T03:04:05Z"},
    ]
    table = rows_table("scores", rows, defaults={"source": "live"})
    assert _column(table, "trace_id") == ["7", "t"]
    assert _column(table, "score") == [1.0, 0.5]
    assert _column(table, "duration_ms") == [None, 2.5]
    assert _column(table, "input") == ['{"steps":[1,2]}', '{"steps":[1,2]}']
    assert _column(table, "output") == ['"text"', None]
    assert _column(table, "judge_input_tokens") == [3, None]
    assert _column(table, "source") == ["live", "live"]
    naive = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).replace(tzinfo=None)
    assert _column(table, "created_at") == [naive, naive]
    assert _column(table, "reason") == [None, None]


def test_unknown_columns_and_bad_values_are_refused() -> None:
    with pytest.raises(InvalidRow, match="unknown columns \\['nope'\\]"):
        rows_table("scores", [{"score_id": "a"}, {"score_id": "b", "nope": 1}])
    with pytest.raises(InvalidRow, match="scores.score"):
        rows_table("scores", [{"score_id": "a", "score": "high"}])
