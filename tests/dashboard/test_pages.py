"""The dashboard in headless Chromium against a real server holding captured traces and scores.

Each test loads pages, asserts what a user would read (trace names, scores, reasons, the span
tree, the scorer input), fails on any JavaScript error, and saves screenshots under
tests/artifacts/dashboard/.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import ServerProcess

from .conftest import (
    AGENT,
    AISDK,
    API_KEY,
    FAILED_MESSAGE,
    JUDGE_PROMPT,
    LOW_REASON,
    MASTRA,
    RELEVANCY_REASON,
    WORKFLOW,
    Dashboard,
    open_dashboard,
    sql,
)

pytestmark = pytest.mark.browser


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def _allow_missing_metrics(dash: Dashboard, server: ServerProcess) -> None:
    """Until the live room serves GET /metrics, the Overview's fetch of it is a logged 404."""
    status = httpx.get(f"{server.url}/metrics", headers=server.headers, timeout=10).status_code
    if status == 404:
        dash.allowed.append("status of 404")


def test_overview_charts_traffic_scores_and_spend(
    dashboard: Dashboard, seeded_server: ServerProcess
) -> None:
    expect = _expect()
    _allow_missing_metrics(dashboard, seeded_server)
    page = dashboard.open("overview")
    # The tiles read the traces table; its span counts must add up to the spans table.
    traces = sql(seeded_server, "SELECT count(DISTINCT trace_id) FROM spans")[0][0]
    spans = sql(seeded_server, "SELECT count(*) FROM spans")[0][0]
    stats = page.locator(".stats")
    expect(stats).to_contain_text(f"{traces}traces", use_inner_text=False)
    expect(stats).to_contain_text(f"{spans}spans", use_inner_text=False)
    panels = page.locator("section.panel")
    expect(panels.filter(has_text="Traces received").locator("svg rect")).not_to_have_count(0)
    expect(panels.filter(has_text="Average score by scorer").locator(".legend")).to_contain_text(
        "dash-relevancy"
    )
    rates = panels.filter(has_text="Failed and not-scorable")
    expect(rates.locator("table")).to_contain_text("dash-tool-judge")
    tool_row = rates.locator("tr", has_text="dash-tool-judge")
    expect(tool_row).to_contain_text("100.0%")  # its one run failed
    expect(panels.filter(has_text="Judge cost per day").locator("svg rect")).not_to_have_count(0)
    expect(page.locator(".error-box")).to_have_count(0)
    dashboard.shot("overview")
    assert dashboard.unexpected_errors() == []


def test_traces_list_shows_every_client_and_filters(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("traces")
    table = page.locator("#trace-list table")
    for name in [
        "invoke_agent weather-agent",
        "invoke_agent Weather Agent",
        "ai.generateText",
        "ai.streamText",
        "weather-agent",
        "invoke_workflow travel-weather-workflow",
    ]:
        expect(table.locator("a.trace-name", has_text=name).first).to_be_visible()
    agent_row = table.locator("tr", has=page.locator(f"span[title='{AGENT['traceId']}']"))
    expect(agent_row).to_contain_text("dash-relevancy")
    expect(agent_row).to_contain_text("0.920")
    expect(agent_row).to_contain_text("failed")
    expect(agent_row.locator("td").nth(5)).to_have_text("6")  # spans
    dashboard.shot("traces")

    form = page.locator("#trace-filters")
    form.locator("select[name=scorer]").select_option("dash-relevancy")
    form.locator("input[name=min]").fill("0.9")
    form.locator("button[type=submit]").click()
    expect(page.locator("#trace-list tbody tr")).to_have_count(1)
    expect(page.locator("#trace-list tbody tr")).to_contain_text("invoke_agent weather-agent")

    dashboard.open("traces?q=generateText")
    expect(page.locator("#trace-list tbody tr")).to_have_count(1)
    expect(page.locator("#trace-list")).to_contain_text(AISDK["traceId"][:8])

    dashboard.open("traces?scorer=dash-relevancy&max=0.1")
    expect(page.locator(".empty-state")).to_contain_text("No traces match")
    assert dashboard.unexpected_errors() == []


def test_trace_page_waterfall_and_span_attributes(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open(f"traces/{AGENT['traceId']}")
    expect(page.locator("#trace-title")).to_have_text("invoke_agent weather-agent")
    rows = page.locator(".waterfall .wf-row:not(.wf-head)")
    expect(rows).to_have_count(6)
    assert rows.locator(".wf-name .wf-label").all_inner_texts() == [
        "invoke_agent weather-agent",
        "chat gpt-4o-mini",
        "execute_tool get_weather",
        "chat gpt-4o-mini",
        "execute_tool convert_temperature",
        "chat gpt-4o-mini",
    ]
    # The tree: children are indented under the root.
    pads = [
        rows.nth(i).locator(".wf-name").evaluate("e => parseInt(e.style.paddingLeft)")
        for i in range(2)
    ]
    assert pads[1] > pads[0]
    details = page.locator("#span-details")
    expect(details).to_contain_text("gen_ai.agent.name")
    rows.filter(has_text="execute_tool get_weather").click()
    expect(details.locator("h3")).to_have_text("execute_tool get_weather")
    expect(details).to_contain_text("gen_ai.tool.call.result")
    expect(details).to_contain_text('"temperatureC": 18')
    expect(page.locator(".trace-head .chips")).to_contain_text("dash-relevancy")
    dashboard.shot("trace-timeline")

    details.get_by_role("button", name="Scorer input for this span").click()
    expect(page.locator("#scorer-input")).to_contain_text("What a scorer of kind span receives")
    assert "input_span=" in page.url
    assert dashboard.unexpected_errors() == []


def test_trace_page_scores_reasons_and_judge_executions(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open(f"traces/{AGENT['traceId']}?tab=scores")
    relevancy = page.locator("#score-list .score-card[data-scorer='dash-relevancy']")
    expect(relevancy).to_contain_text("0.920")
    expect(relevancy.locator(".reason")).to_have_text(RELEVANCY_REASON)
    expect(relevancy).to_contain_text("412 in / 57 out tokens")
    executions = relevancy.locator(".executions > details")
    expect(executions).to_have_count(2)
    expect(executions.first).to_contain_text("analyze")
    expect(executions.first).to_contain_text("attempts 2")
    executions.first.locator("> summary").click()
    expect(executions.first.locator("pre.json").first).to_contain_text(JUDGE_PROMPT)
    failed = page.locator(".score-card[data-scorer='dash-tool-judge']")
    expect(failed).to_contain_text("failed")
    expect(failed.locator(".error-box")).to_contain_text(FAILED_MESSAGE)
    dashboard.shot("trace-scores")

    page.locator(".tab[data-tab='decisions']").click()
    decisions = page.locator(".tab-body table")
    expect(decisions).to_contain_text("dash-tool-judge")
    expect(decisions.locator("tr", has_text="dash-tool-judge")).to_contain_text(FAILED_MESSAGE)
    assert dashboard.unexpected_errors() == []


def test_trace_page_scorer_input_and_step_tree(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open(f"traces/{AGENT['traceId']}?tab=input")
    box = page.locator("#scorer-input")
    expect(box).to_contain_text("What a scorer of kind agent receives")
    expect(box.locator(".message.role-user")).to_have_text(
        "userWhat is the weather in Paris right now, in Fahrenheit?", use_inner_text=False
    )
    expect(box.locator(".message.role-assistant").last).to_contain_text(
        "Right now it is cloudy in Paris at 18°C (64.4°F)."
    )
    expect(box.locator(".tool-inv strong")).to_have_text(["get_weather", "convert_temperature"])
    names = box.locator(".tree-root > li .step-name").all_inner_texts()
    assert names == [
        "gpt-4o-mini",
        "get_weather",
        "gpt-4o-mini",
        "convert_temperature",
        "gpt-4o-mini",
    ]
    dashboard.shot("trace-scorer-input")

    page.locator(".tab[data-tab='steps']").click()
    tree = page.locator("#step-tree")
    expect(tree.locator(".tree-root > li[data-kind='agent_run'] .step-name").first).to_have_text(
        "weather-agent"
    )
    children = tree.locator(".tree-root > li > ul > li")
    expect(children).to_have_count(5)
    assert [children.nth(i).get_attribute("data-kind") for i in range(5)] == [
        "model_generation",
        "tool_call",
        "model_generation",
        "tool_call",
        "model_generation",
    ]
    children.nth(1).locator("summary").first.click()
    expect(children.nth(1)).to_contain_text('"city": "Paris"')
    dashboard.shot("trace-steps")

    dashboard.open(f"traces/{WORKFLOW['traceId']}?tab=input")
    box = page.locator("#scorer-input")
    expect(box).to_contain_text("What a scorer of kind workflow receives")
    nested = box.locator(
        ".tree-root > li[data-step-type='workflow_step'] li[data-step-type='agent_run']"
    )
    expect(nested).to_have_count(1)
    dashboard.shot("workflow-scorer-input")
    assert dashboard.unexpected_errors() == []


def test_scorers_list_and_scorer_page(dashboard: Dashboard, seeded_server: ServerProcess) -> None:
    expect = _expect()
    page = dashboard.open("scorers")
    row = page.locator("tr", has=page.locator("a.scorer-name", has_text="dash-relevancy"))
    expect(row).to_contain_text("0.635")  # (0.92 + 0.35) / 2
    expect(page.locator("tr", has_text="dash-tool-judge")).to_contain_text("not registered")
    live_row = page.locator("tr", has=page.locator("a.scorer-name", has_text="no-tool-errors"))
    expect(live_row).to_contain_text("running")
    scored = sql(seeded_server, "SELECT count(*) FROM scores WHERE scorer_id = 'no-tool-errors'")[
        0
    ][0]
    expect(live_row.locator("td").nth(4)).to_have_text(str(scored))  # runs
    dashboard.shot("scorers")

    page.locator("a.scorer-name", has_text="dash-relevancy").click()
    expect(page.locator("h1")).to_have_text("dash-relevancy")
    panels = page.locator("section.panel")
    expect(panels.filter(has_text="Score distribution").locator("svg rect")).to_have_count(10)
    expect(panels.filter(has_text="Decisions").locator("svg rect")).to_have_count(8)
    lowest = panels.filter(has_text="Lowest scores")
    expect(lowest.locator("tbody tr").first).to_contain_text(LOW_REASON)
    expect(lowest.locator("tbody tr").first).to_contain_text(MASTRA["traceId"][:8])
    dashboard.shot("scorer-relevancy")

    dashboard.open("scorers/dash-tool-judge")
    failures = page.locator("section.panel").filter(has_text="Recent failures")
    expect(failures).to_contain_text(FAILED_MESSAGE)
    assert dashboard.unexpected_errors() == []


def test_sql_page_runs_a_query_and_downloads_csv(
    dashboard: Dashboard, seeded_server: ServerProcess, tmp_path: Path
) -> None:
    expect = _expect()
    page = dashboard.open("sql")
    query = (
        "SELECT scorer_id, score, reason FROM scores "
        "WHERE scorer_id LIKE 'dash-%' AND source = 'live' ORDER BY score_id"
    )
    page.locator("#sql-input").fill(query)
    page.locator("#sql-run").click()
    result = page.locator("#sql-result")
    expect(result).to_contain_text("3 rows")
    expect(result.locator("tbody tr")).to_have_count(3)
    expect(result.locator("tbody tr").first).to_contain_text(RELEVANCY_REASON)
    dashboard.shot("sql")
    with page.expect_download() as download_info:
        page.locator("#csv-download").click()
    path = tmp_path / "result.csv"
    download_info.value.save_as(path)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[0] == ["scorer_id", "score", "reason"]
    assert rows[1] == ["dash-relevancy", "0.92", RELEVANCY_REASON]
    assert rows[2][0] == "dash-tool-judge" and rows[2][1] == ""
    # The query is in the link, so the page can be shared.
    assert "q=SELECT" in page.url

    dashboard.allowed.append("status of 400")  # the browser logs the refused request itself
    page.locator("#sql-input").fill("DELETE FROM spans")
    page.locator("#sql-run").click()
    expect(page.locator("#sql-output .error-box")).to_be_visible()
    assert sql(seeded_server, "SELECT count(*) FROM spans")[0][0] > 0
    assert dashboard.unexpected_errors() == []


def test_a_query_in_the_link_runs_only_on_a_click(dashboard: Dashboard) -> None:
    """Issue 27 defect 1: ``#/sql?q=…`` ran its query on page load with the user's stored key,
    so a link alone could make the server run any statement; now it only fills the box."""
    expect = _expect()
    posted: list[str] = []  # the bodies of the page's /api/sql requests (the shell sends its own)
    dashboard.page.on("request", lambda request: posted.append(request.post_data or "")
                      if request.url.endswith("/api/sql") else None)
    page = dashboard.open("sql?q=SELECT%2042%20AS%20answer")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#sql-input")).to_have_value("SELECT 42 AS answer")
    expect(page.locator("#sql-from-link")).to_contain_text("press Run")
    assert not [body for body in posted if "SELECT 42" in body]
    assert page.locator("#sql-result").count() == 0
    page.locator("#sql-run").click()
    expect(page.locator("#sql-result")).to_contain_text("1 row")
    assert len([body for body in posted if "SELECT 42" in body]) == 1


def test_empty_database_tells_a_new_user_what_to_do(
    chromium: Any, empty_server: ServerProcess
) -> None:
    expect = _expect()
    dash = open_dashboard(chromium, empty_server)
    try:
        page = dash.open("overview")
        help_box = page.locator(".empty-state")
        expect(help_box).to_contain_text("No traces yet")
        expect(help_box.locator("pre")).to_contain_text(
            f"OTEL_EXPORTER_OTLP_ENDPOINT={empty_server.url}"
        )
        expect(help_box.locator("pre")).to_contain_text("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
        expect(help_box).to_contain_text("tracescore demo")
        dash.shot("empty-overview")
        dash.open("traces")
        expect(page.locator(".empty-state")).to_contain_text("OTEL_EXPORTER_OTLP_ENDPOINT")
        dash.open("scorers")
        expect(page.locator(".empty-state")).to_contain_text("No scores yet")
        expect(page.locator(".empty-state pre")).to_contain_text("[[scorers]]")
        dash.shot("empty-scorers")
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()


def test_api_key_is_asked_for_and_used(chromium: Any, key_server: ServerProcess) -> None:
    expect = _expect()
    dash = open_dashboard(chromium, key_server)
    dash.allowed.append("status of 401")  # the first, keyless requests
    try:
        page = dash.open("overview")
        bar = page.locator("#auth-bar")
        expect(bar).to_be_visible()
        expect(page.locator("main .error-box")).to_contain_text("API key")
        page.locator("#api-key-input").fill(API_KEY)
        page.locator("#api-key-save").click()
        expect(bar).to_be_hidden()
        expect(page.locator(".empty-state")).to_contain_text("No traces yet")
        assert page.evaluate("localStorage.getItem('tracescore.apiKey')") == API_KEY
        dash.shot("api-key-accepted")
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()
