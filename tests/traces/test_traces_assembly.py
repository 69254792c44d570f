"""Trace assembly and its edge cases: orphans, a missing root, duplicate span ids, parent loops,
DuckDB-shaped rows, an empty trace, a trace still in progress."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tracescore.traces import (
    SpanNotFound,
    Trace,
    TraceNotFound,
    extract_trajectory_from_trace,
    find_target_spans,
    load_trace,
    render_tree,
    scorer_input,
    trace_to_agent_run,
    trace_to_span_run,
)

from .helpers import SCENARIO, fixture_rows, fixture_trace, row, trace_id_of

MASTRA = "mastra-otel-exporter-protobuf"


def _turn1_rows(folder: str = MASTRA) -> list[dict]:
    trace_id = trace_id_of(folder, "turn1")
    return [dict(r) for r in fixture_rows(folder) if r["trace_id"] == trace_id]


def _shape(trajectory) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(s.step_type, s.name) for s in trajectory.steps]


def test_children_are_ordered_by_start_time_whatever_the_row_order() -> None:
    rows = _turn1_rows()
    trace = Trace.from_rows(list(reversed(rows)))
    for span in trace.walk():
        starts = [c.start_time_ns for c in span.children]
        assert starts == sorted(starts)
    assert [s.name for s in trace.roots] == ["invoke_agent Weather Agent"]
    assert len(trace) == 18


def test_orphan_spans_become_roots_and_the_run_is_still_found() -> None:
    rows = _turn1_rows()
    root_id = next(r["span_id"] for r in rows if r["parent_span_id"] is None)
    # The root arrived, but one tool span points at a parent that never did.
    tool = next(r for r in rows if r["name"] == "execute_tool convert_temperature")
    tool["parent_span_id"] = "ffffffffffffffff"
    trace = Trace.from_rows(rows)
    assert len(trace.roots) == 2
    assert {s.span_id for s in trace.roots} == {root_id, tool["span_id"]}
    run = trace_to_agent_run(trace)
    assert run.span_id == root_id
    assert [inv.tool_name for inv in run.output[0].tool_invocations][0] == "get_weather"


def test_missing_root_transforms_what_the_trace_has() -> None:
    """The agent span never arrived: its children are roots, taken together as the run."""
    rows = [r for r in _turn1_rows() if r["parent_span_id"] is not None]
    trace = Trace.from_rows(rows)
    assert len(trace.roots) == 4
    assert _shape(extract_trajectory_from_trace(trace)) == [
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "get_weather"),
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "convert_temperature"),
        ("model_generation", "gpt-4o-mini"),
    ]
    run = trace_to_agent_run(trace)
    assert run.span_id is None
    assert [m.content for m in run.input.input_messages] == [
        SCENARIO["turn1"]["input_messages"][0]["text"]
    ]
    assert run.output[0].content == SCENARIO["turn1"]["final_text"]
    assert [i.tool_name for i in run.output[0].tool_invocations] == [
        "get_weather",
        "convert_temperature",
    ]
    data = scorer_input(trace)
    assert data["kind"] == "agent" and data["span_id"] is None
    assert find_target_spans(trace, "trace") == []


def test_duplicate_span_ids_are_kept_once_preferring_the_finished_copy() -> None:
    rows = _turn1_rows()
    unfinished = dict(rows[3], end_time_ns=None, attributes={})
    trace = Trace.from_rows([unfinished, *rows, *rows])
    assert len(trace) == 18
    assert trace.by_id[rows[3]["span_id"]].end_time_ns == rows[3]["end_time_ns"]
    assert _shape(extract_trajectory_from_trace(trace)) == _shape(
        extract_trajectory_from_trace(Trace.from_rows(rows))
    )


def test_a_parent_loop_is_cut_not_followed() -> None:
    a, b, c = "000000000000000a", "000000000000000b", "000000000000000c"
    rows = [
        row("a", span_id=a, parent=b, start_ms=0),
        row("b", span_id=b, parent=a, start_ms=1),
        row("c", span_id=c, parent=None, start_ms=2),
    ]
    trace = Trace.from_rows(rows)
    assert {s.span_id for s in trace.walk()} == {a, b, c}
    assert len(list(trace.walk())) == 3
    render_tree(trace)
    extract_trajectory_from_trace(trace)


def test_a_span_that_is_its_own_parent_is_a_root() -> None:
    trace = Trace.from_rows([row("self", span_id="000000000000000a", parent="000000000000000a")])
    assert [s.name for s in trace.roots] == ["self"]


def test_duckdb_shaped_rows_with_json_strings_and_datetimes() -> None:
    """What a DuckDB cursor gives: JSON columns as strings, TIMESTAMP columns as datetimes."""
    rows = []
    for r in _turn1_rows():
        start = datetime.fromtimestamp(r["start_time_ns"] / 1e9, tz=UTC).replace(tzinfo=None)
        end = datetime.fromtimestamp(r["end_time_ns"] / 1e9, tz=UTC).replace(tzinfo=None)
        rows.append(
            {
                **{k: v for k, v in r.items() if k not in ("start_time_ns", "end_time_ns")},
                "start_time": start,
                "end_time": end,
                "attributes": json.dumps(r["attributes"]),
                "resource_attributes": json.dumps(r["resource_attributes"]),
                "events": json.dumps(r["events"]),
                "links": "[]",
            }
        )
    trace = Trace.from_rows(rows)
    expected = fixture_trace(MASTRA, "turn1")
    assert _shape(extract_trajectory_from_trace(trace)) == _shape(
        extract_trajectory_from_trace(expected)
    )
    assert trace_to_agent_run(trace).output[0].content == SCENARIO["turn1"]["final_text"]
    root = trace.roots[0]
    assert root.duration_ms == pytest.approx(expected.roots[0].duration_ms, abs=0.01)


def test_camel_case_rows_like_the_flat_fixture_files() -> None:
    from .helpers import FIXTURES

    flat = json.loads((FIXTURES / MASTRA / "spans.flat.json").read_text())
    trace = Trace.from_rows(flat, trace_id=trace_id_of(MASTRA, "turn1"))
    assert len(trace) == 18
    assert _shape(extract_trajectory_from_trace(trace))[1] == ("tool_call", "get_weather")
    assert trace.roots[0].status_code == "OK" and trace.roots[0].kind == "INTERNAL"


def test_empty_trace() -> None:
    trace = Trace.from_rows([])
    assert trace.steps == []
    assert extract_trajectory_from_trace(trace).steps == []
    run = trace_to_agent_run(trace)
    assert run.input.input_messages == [] and run.output == []
    data = scorer_input(trace)
    assert data["kind"] == "span" and data["span_id"] is None and data["trajectory"]["steps"] == []
    assert find_target_spans(trace, "trace") == []
    assert "(no spans)" in render_tree(trace)


def test_unknown_span_id_is_a_clear_error() -> None:
    trace = fixture_trace(MASTRA, "turn1")
    with pytest.raises(SpanNotFound, match="no span 'ffffffffffffffff'"):
        scorer_input(trace, "ffffffffffffffff")
    with pytest.raises(SpanNotFound):
        trace_to_span_run(trace, "ffffffffffffffff")


class _Store:
    """The duck-typed surface ``load_trace`` uses."""

    def __init__(self, rows: list[dict], logs: list[dict] | None = None) -> None:
        self.rows = rows
        self.logs = logs or []

    def fetch_trace_rows(self, trace_id: str) -> list[dict]:
        return [r for r in self.rows if r["trace_id"] == trace_id]

    def fetch_trace_logs(self, trace_id: str) -> list[dict]:
        return [r for r in self.logs if r["trace_id"] == trace_id]


def test_load_trace_reads_rows_and_logs_and_refuses_an_unknown_id() -> None:
    rows = list(fixture_rows(MASTRA))
    trace = load_trace(_Store(rows), trace_id_of(MASTRA, "turn2"))
    assert len(trace) == 8
    with pytest.raises(TraceNotFound, match="no spans stored for trace"):
        load_trace(_Store(rows), "0" * 32)


def test_trace_in_progress_transforms_what_it_has() -> None:
    """The agent and the second tool have not ended: the tool call shows as a pending call."""
    rows = _turn1_rows()
    cut = next(r for r in rows if r["name"] == "execute_tool convert_temperature")
    keep = [r for r in rows if r["start_time_ns"] <= cut["start_time_ns"]]
    for r in keep:
        if r["parent_span_id"] is None or r["span_id"] == cut["span_id"]:
            r["end_time_ns"] = None
            r["status_code"] = "UNSET"
    cut["attributes"] = {
        k: v for k, v in cut["attributes"].items() if k != "gen_ai.tool.call.result"
    }
    trace = Trace.from_rows(keep)
    output = trace_to_agent_run(trace).output
    states = [(i.tool_name, i.state) for i in output[0].tool_invocations]
    assert states == [("get_weather", "result"), ("convert_temperature", "call")]
    trajectory = extract_trajectory_from_trace(trace)
    assert trajectory.total_duration_ms is None
    assert trajectory.steps[-1].step_type == "tool_call" and trajectory.steps[-1].success is None


def test_a_released_trace_is_freed_without_the_cycle_collector() -> None:
    """Spans and steps point at their parents and children (cycles); ``release`` drops those
    links, so once the last reference goes the whole tree is freed by reference counting (live
    scoring releases each trace it has scored, keeping the collector's passes short). The
    scorer inputs built before stay as they were."""
    import gc
    import weakref

    trace = fixture_trace(MASTRA, "turn1")
    agent = find_target_spans(trace, "agent_run")[0]
    run = trace_to_agent_run(trace, agent)
    before = run.model_dump()
    step = weakref.ref(trace.steps[0])
    child = weakref.ref(trace.steps[0].children[0])
    gc.disable()
    try:
        unreleased = fixture_trace(MASTRA, "turn1")
        kept = weakref.ref(unreleased.steps[0])
        del unreleased
        assert kept() is not None  # a cycle: it waits for the collector
        trace.release()
        del trace
        assert step() is None and child() is None
    finally:
        gc.enable()
    assert run.model_dump() == before
