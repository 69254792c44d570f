"""The navigating judge's view of a run and its four tools (outline, read_step, read_span,
search_trace), on captured traces and on runs without a trace."""

from __future__ import annotations

import pytest
from agent_runs import LARGEST, fixture_run, repeated_rows, rows_of, traced_run

from tracescore.model import ScorerRun, Trajectory
from tracescore.scorers import view_of
from tracescore.scorers._trace_tools import (
    outline,
    read_span,
    read_step,
    search_trace,
    view_tools,
    whole_text,
)


def test_a_captured_trace_becomes_numbered_steps_with_their_spans() -> None:
    view = view_of(fixture_run("mastra-otel-exporter-protobuf", "turn1"))
    assert view.source == "trace" and len(view.steps) == 18
    assert [s.id for s in view.steps[:3]] == ["s1", "s2", "s3"]
    [tool] = [s for s in view.steps if s.name == "get_weather"]
    assert tool.kind == "tool_call" and tool.input == {"city": "Paris"}
    assert tool.span_id == "0f79353851b4b117" and view.find("0f79353851b4b117") is tool
    assert view.find(tool.id[1:]) is tool  # "9" as well as "s9"
    assert tool.attributes and tool.attributes["gen_ai.operation.name"] == "execute_tool"
    with pytest.raises(KeyError, match="step ids run s1 to s18"):
        view.find("s99")


def test_outline_fits_its_lines_folds_and_pages() -> None:
    view = view_of(fixture_run("mastra-otel-exporter-protobuf", "turn1"))
    full = outline(view).splitlines()
    assert full[0].startswith("Outline of the run: 18 steps, 0 with errors; levels shown: 5")
    assert full[9] == "      s9 [tool_call] get_weather · in 17 · out 60 chars"
    short = outline(view, max_lines=5).splitlines()
    assert "levels shown: 2" in short[0]
    assert short[4] == ("  s4 [model_generation] gpt-4o-mini · in 270 · out 260 chars · "
                        "+13 inside")
    inside = outline(view, "s4", depth=1)
    assert inside.splitlines()[0].startswith("Outline of step s4: 14 steps")
    assert "\n  s10 [model_step]" in inside and "s11" not in inside
    paged = outline(view, depth=4, start=3, max_lines=4).splitlines()
    assert paged[1].startswith("  s3 ") and paged[-1].startswith("… lines 3–6 of 18")


def test_the_400_span_trace_outline_names_its_error_and_pages() -> None:
    view = view_of(traced_run(repeated_rows()))
    text = outline(view, max_lines=80)
    lines = text.splitlines()
    assert lines[0].startswith("Outline of the run: 401 steps, 1 with errors (s288)")
    assert len(lines) == 82 and lines[-1] == (
        "… lines 1–80 of 401; call outline with start=81 for more")
    assert "ERROR: upstream timeout after 30 s" in outline(view, start=281)
    [hit] = search_trace(view, "upstream timeout").splitlines()
    assert hit.startswith("s288 [tool_call] get_weather: …")


def test_read_step_and_read_span_page_by_offset() -> None:
    view = view_of(fixture_run("py-openinference-openai", "turn1"))
    text = read_step(view, "s2", limit=300)
    assert text.startswith("s2 [model_generation] gpt-4o-mini · span ")
    assert "input (" in text and text.endswith("with offset=300 to read on")
    rest = read_step(view, "s2", offset=300, limit=100_000)
    assert "output (" in rest and "get_weather" in rest and "to read on" not in rest
    span = read_span(view, "s2", limit=100_000)
    assert '"llm.tools.0.tool.json_schema"' in span and '"llm.model_name"' in span
    assert read_step(view, "s2", offset=10**6).startswith("(nothing from offset 1000000")


def test_a_run_without_a_trace_is_read_from_its_data() -> None:
    run = fixture_run("py-openinference-openai", "turn1")
    plain = ScorerRun(input=run.input, output=run.output)
    view = view_of(plain)
    assert view.source == "run"
    assert [(s.kind, s.name) for s in view.steps] == [
        ("conversation", "input"), ("message", "system"), ("message", "user"),
        ("answer", "output"), ("message", "assistant"), ("tool_call", "get_weather"),
        ("tool_call", "convert_temperature")]
    assert "no span attributes: this run was scored from its data" in read_span(view, "s6")
    trajectory = ScorerRun(input="q", output=Trajectory.model_validate({"steps": [
        {"step_type": "tool_call", "name": "search", "tool_args": {"q": 1}, "success": False,
         "metadata": {"span_id": "ab", "error": "boom"}}]}))
    steps = view_of(trajectory).steps
    assert [(s.kind, s.name, s.error) for s in steps] == [
        ("conversation", "input", None), ("message", "user", None),
        ("trajectory", "steps taken", None), ("tool_call", "search", "boom")]
    text_only = view_of(ScorerRun(input=None, output="just text")).steps
    assert [(s.kind, s.output) for s in text_only] == [
        ("answer", None), ("message", {"role": "assistant", "text": "just text"})]
    assert view_of(ScorerRun(input=None, output=42)).steps[0].output == 42


def test_the_tools_as_the_judge_calls_them() -> None:
    view = view_of(fixture_run("py-openinference-openai", "turn1"))
    tools = {t.name: t for t in view_tools(view, read_chars=200)}
    assert sorted(tools) == ["outline", "read_span", "read_step", "search_trace"]
    assert tools["outline"].run({}).startswith("Outline of the run: 6 steps")
    assert tools["outline"].run({"step": "s1", "depth": 0}).count("\n") == 1
    assert tools["read_step"].run({"step": "s3"}).startswith("s3 [tool_call] get_weather")
    assert "offset=200" in tools["read_span"].run({"span_id": "s2"})
    assert tools["search_trace"].run({"query": "CONVERT_temperature"}).startswith("s")
    assert tools["search_trace"].run({"query": "no such words"}) == (
        "no step holds 'no such words'")
    with pytest.raises(ValueError, match="needs a query"):
        tools["search_trace"].run({"query": "  "})
    with pytest.raises(KeyError):
        tools["read_step"].run({"step": "s77"})


def test_the_largest_capture_read_whole_is_far_bigger_than_its_outline() -> None:
    view = view_of(traced_run(rows_of(*LARGEST), None))
    whole, short = whole_text(view), outline(view)
    assert len(view.steps) == 28
    assert len(whole) > 60_000 and len(short) < 4_000
