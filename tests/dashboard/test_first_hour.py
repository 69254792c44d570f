"""Dashboard fixes a first-time user asked for, checked in headless Chromium: chart axes, the
time zone switch, real ports in the set-up hint, fresh data filling the chart, eval scorers on
the Scorers page, readable numbers and a schema panel on the SQL page."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from server_process import ServerProcess, running_server

from .conftest import Dashboard, open_dashboard
from .schema_docs import SCHEMA_DOCS, render

pytestmark = pytest.mark.browser


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def _texts(locator: Any) -> list[str]:
    return [t.strip() for t in locator.all_text_contents()]


def test_schema_docs_match_the_server_docs() -> None:
    assert SCHEMA_DOCS.read_text() == render(), (
        "docs/server.md's table docs changed: run python tests/dashboard/schema_docs.py")


def test_overview_axes_are_distinct_whole_and_dated(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("overview")
    panels = page.locator("section.panel")
    rates = panels.filter(has_text="Failed and not-scorable")
    expect(rates.locator("svg text.y-tick").first).to_be_visible()
    labels = _texts(rates.locator("svg text.y-tick"))
    assert len(labels) == len(set(labels)) and all(label.endswith("%") for label in labels)
    counts = _texts(panels.filter(has_text="Traces received").locator("svg text.y-tick"))
    assert counts and all(re.fullmatch(r"\d+", c) for c in counts), counts  # no 0.25 traces
    days = _texts(panels.filter(has_text="Judge tokens per day").locator("svg text.x-tick"))
    assert days and all(re.fullmatch(r"\d\d-\d\d", d) for d in days), days
    zone = _texts(panels.filter(has_text="Traces received").locator("svg text.zone"))
    assert zone == ["UTC"]
    # Series at the same score stay visible: earlier series get larger markers.
    radii = page.evaluate("""() => [...document.querySelectorAll('section.panel')]
        .find(p => p.textContent.includes('Average score by scorer'))
        .querySelectorAll('svg circle').length ? [...new Set([...[...document
        .querySelectorAll('section.panel')].find(p => p.textContent.includes(
        'Average score by scorer')).querySelectorAll('svg circle')].map(c => c.getAttribute('r')))]
        : []""")
    series = page.locator("section.panel", has_text="Average score by scorer").locator(
        ".legend-item").count()
    assert len(radii) == min(series, 5), (radii, series)
    dashboard.shot("first-hour-overview")


def test_times_are_labelled_and_the_zone_can_be_switched(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("traces")
    first = page.locator("#trace-list tbody tr").first.locator("td").first
    expect(first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    page.locator("#tz-select").select_option("local")
    expect(page.locator("#trace-list tbody tr").first.locator("td").first).to_have_text(
        re.compile(r" local$"))
    assert page.evaluate("localStorage.getItem('tracescore.tz')") == "local"
    page.locator("#tz-select").select_option("utc")
    expect(page.locator("#trace-list tbody tr").first.locator("td").first).to_have_text(
        re.compile(r" UTC$"))


def test_eval_scorers_and_closed_score_bins(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("scorers")
    row = page.locator("tr", has=page.locator("a.scorer-name", has_text="dash-eval"))
    expect(row.locator(".badge-eval")).to_have_text("eval")
    cells = row.locator("td")
    expect(cells.nth(2)).to_have_text("eval")  # source
    expect(cells.nth(4)).to_have_text("1")  # runs
    expect(cells.nth(5)).to_have_text("1")  # scored: its own count, not 0
    expect(page.locator("tr", has_text="dash-tool-judge")).to_contain_text("not registered")
    dashboard.shot("first-hour-scorers")
    dashboard.open("scorers/dash-eval")
    hist = page.locator("section.panel").filter(has_text="Score distribution")
    expect(hist.locator("svg rect")).to_have_count(10)
    labels = _texts(hist.locator("svg text.x-tick"))
    assert labels[0] == "0–0.1" and labels[-1] == "0.9–1"
    last = hist.locator("svg rect").nth(9).locator("title")
    expect(last).to_have_text("0.9 ≤ score ≤ 1: 1 scores")


def test_sql_numbers_are_readable_and_the_schema_is_at_hand(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("sql")
    schema = page.locator("#sql-schema")
    scores = schema.locator("details[data-table='scores']")
    expect(scores).to_be_attached()
    scores.locator("summary").click()
    cost = scores.locator("li", has=page.locator("button.col-name", has_text="judge_cost"))
    expect(cost.first).to_contain_text("DOUBLE")
    expect(cost.first.locator(".col-doc")).not_to_be_empty()
    # traces is a maintained table now (schema version 2), with the agent's totals
    expect(schema.locator("details[data-table='traces']")).to_contain_text("cost_usd")
    expect(schema.locator("details[data-table='model_calls']")).to_be_attached()
    box = page.locator("#sql-input")
    box.fill("SELECT ")
    box.evaluate("el => { el.selectionStart = el.selectionEnd = el.value.length; }")
    scores.locator("button.col-name", has_text="scorer_id").first.click()
    assert box.input_value() == "SELECT scorer_id"
    box.fill("SELECT 0.004901999999999998 AS cost, 123456 AS n, 0.5 AS half")
    page.locator("#sql-run").click()
    cells = page.locator("#sql-result tbody tr").first.locator("td")
    expect(cells.nth(0)).to_have_text("0.004902")
    expect(cells.nth(0)).to_have_attribute("title", "0.004901999999999998")
    expect(cells.nth(1)).to_have_text("123,456")
    expect(cells.nth(2)).to_have_text("0.5")
    dashboard.shot("first-hour-sql")


def test_empty_state_shows_the_real_grpc_port(chromium: Any, empty_server: ServerProcess) -> None:
    expect = _expect()
    dash = open_dashboard(chromium, empty_server)
    try:
        page = dash.open("overview")
        expect(page.locator(".grpc-endpoint")).to_have_text(
            f"http://127.0.0.1:{empty_server.grpc_port}")
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()


def test_fresh_data_fills_the_24_hour_chart(chromium: Any, tmp_path: Path) -> None:
    expect = _expect()
    now = time.time_ns()
    spans = [{"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": f"run {i}",
              "startTimeUnixNano": str(now - (i * 60 + 5) * 10**9),
              "endTimeUnixNano": str(now - (i * 60 + 4) * 10**9)} for i in range(5)]
    body = {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}
    with running_server(tmp_path / "fresh.duckdb", args=["--no-grpc"]) as server:
        with server.client() as client:
            answer = client.post("/v1/traces", content=json.dumps(body),
                                 headers={"Content-Type": "application/json"})
            assert answer.status_code == 200, answer.text
        dash = open_dashboard(chromium, server)
        try:
            page = dash.open("overview")
            page.locator("#range-select").select_option("24h")
            bars = page.locator("section.panel", has_text="Traces received").locator("svg rect")
            expect(bars).to_have_count(5)
            window = page.evaluate(
                "({bucketMs: TS.window.bucketMs, span: TS.window.end - TS.window.start})")
            assert window["bucketMs"] == 60_000  # minute buckets, not one hour-wide bar
            assert window["span"] <= 60 * 60_000
            widths = [float(w) for w in
                      bars.evaluate_all("rs => rs.map(r => r.getAttribute('width'))")]
            assert min(widths) > 3  # visible bars, spread over the chart
            dash.shot("first-hour-fresh-24h")
            assert dash.unexpected_errors() == []
        finally:
            dash.page.context.close()


def test_trace_page_badges_labels_attributes_and_score_cards(dashboard: Dashboard) -> None:
    from .conftest import AGENT, JUDGE_PROMPT

    expect = _expect()
    page = dashboard.open(f"traces/{AGENT['traceId']}")
    rows = page.locator(".waterfall .wf-row:not(.wf-head)")
    chat = rows.filter(has_text="chat gpt-4o-mini").first
    expect(chat.locator(".wf-model")).to_have_attribute("title", re.compile(r"^model gpt-4o-mini"))
    expect(chat.locator(".wf-tokens")).to_have_text(re.compile(r"^\d+→\d+ tok$"))
    expect(rows.filter(has_text="execute_tool get_weather").locator(".wf-badge")).to_have_count(0)
    # No duration label covers its bar (the ones inside a wide bar are meant to).
    overlaps = page.evaluate("""() => [...document.querySelectorAll('.wf-row:not(.wf-head)')]
        .map(r => [r.querySelector('.wf-bar').getBoundingClientRect(),
                   r.querySelector('.wf-dur')])
        .filter(([bar, label]) => !label.classList.contains('inside'))
        .filter(([bar, label]) => { const l = label.getBoundingClientRect();
                                    return l.left < bar.right - 1 && l.right > bar.left + 1; })
        .length""")
    assert overlaps == 0
    # Message attributes read as a chat, not a JSON block.
    chat.click()
    details = page.locator("#span-details")
    expect(details.locator(".attr-chat .message").first).to_be_visible()
    dashboard.shot("first-hour-trace")

    page.locator(".tab", has_text="Scores").click()
    cards = page.locator(".score-card")
    judged = cards.filter(has=page.locator("a.scorer-name", has_text="dash-relevancy"))
    expect(judged.locator(".judge-line")).to_contain_text("412 in / 57 out tokens")
    code = cards.filter(has=page.locator("a.scorer-name", has_text="no-tool-errors"))
    expect(code).to_have_count(1)
    expect(code.locator(".judge-line")).to_have_count(0)  # no judge ran: no "0 in / 0 out · $0"
    judged.locator("summary", has_text="Prompts").click()
    for summary in judged.locator(".executions details > summary").all():
        summary.click()
    expect(judged.locator(".same-prompt")).to_have_count(1)  # generate_reason's prompt, once
    expect(judged.locator(".executions")).to_contain_text(JUDGE_PROMPT[:40])


def test_step_tree_tool_calls_say_where_their_result_is(dashboard: Dashboard) -> None:
    from .conftest import AGENT, AISDK, MASTRA

    expect = _expect()
    for trace in (AGENT, MASTRA, AISDK):
        page = dashboard.open(f"traces/{trace['traceId']}?tab=steps")
        tree = page.locator("#step-tree")
        expect(tree).to_be_visible()
        for summary in tree.locator("details > summary").all():
            summary.click()
        text = tree.inner_text()
        assert "tool ?" not in text and "?result" not in text, trace["traceId"]
        assert "[tool-result:" not in text  # a placeholder is said to be one, not shown as data
        results = tree.locator(".tool-io")
        expect(results.first).to_be_visible()
        shown = "\n" + "\n".join(results.all_inner_texts()) + "\n"
        assert "\nnull\n" not in shown, (trace["traceId"], shown[:2000])


def wait_until_judges_ready(server: Any, timeout_s: float = 120) -> None:
    """Wait for ``/healthz`` to say the judge machinery has loaded (and the judges checked)."""
    import time

    import httpx

    deadline = time.monotonic() + timeout_s
    while httpx.get(f"{server.url}/healthz", timeout=30).json()["judges"] != "ready":
        assert time.monotonic() < deadline, server.log()[-3000:]
        time.sleep(0.2)


def test_scorers_page_shows_a_judge_paused_for_missing_credentials(
    chromium: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = _expect()
    monkeypatch.delenv("OPENAI_API_KEY")
    env = {"TRACESCORE_JUDGE_MODEL": "openai/gpt-4o-mini"}
    with running_server(tmp_path / "paused.duckdb", args=["--no-grpc"], env=env) as server:
        wait_until_judges_ready(server)  # the judge checks run once litellm has loaded
        dash = open_dashboard(chromium, server)
        try:
            page = dash.open("scorers")
            row = page.locator("tr", has=page.locator("a.scorer-name", has_text="faithfulness"))
            expect(row.locator(".badge-bad")).to_have_text("paused")
            expect(page.locator("ul.notes")).to_contain_text(
                "faithfulness: judge openai/gpt-4o-mini has no credentials: set OPENAI_API_KEY")
            live = page.locator("tr", has=page.locator("a.scorer-name", has_text="no-tool-errors"))
            expect(live).to_contain_text("running")
            dash.open("scorers/faithfulness")
            expect(page.locator(".scorer-config .error-box")).to_contain_text("OPENAI_API_KEY")
            dash.shot("first-hour-paused-judge")
            assert dash.unexpected_errors() == []
        finally:
            dash.page.context.close()
