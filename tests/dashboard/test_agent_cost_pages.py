"""The agent's spend in the dashboard (headless Chromium, the seeded server): the traces list's
models, tokens and cost columns (sortable, "cost above" filter), the waterfall's cost badges
and the trace header's totals, and the Overview's agent charts and most expensive traces."""

from __future__ import annotations

import time
from typing import Any

import pytest
from server_process import ServerProcess

from .conftest import AGENT, Dashboard, sql

pytestmark = pytest.mark.browser


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def _wait_for_totals(server: ServerProcess, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if sql(server, "SELECT count(*) FROM traces WHERE totals_received_at IS NULL")[0][0] == 0:
            return
        time.sleep(0.2)
    raise AssertionError("trace totals were not computed:\n" + server.log()[-3000:])


def _fmt_cost(value: float) -> str:
    """The dashboard's TS.fmtCost for costs under a cent (two significant digits)."""
    text = f"{value:.2g}"
    return "$" + (f"{float(text):.10f}".rstrip("0") if "e" in text else text)


def test_traces_list_has_models_tokens_and_sortable_cost(
    dashboard: Dashboard, seeded_server: ServerProcess
) -> None:
    expect = _expect()
    _wait_for_totals(seeded_server)
    cost, tokens = sql(seeded_server, "SELECT cost_usd, total_tokens FROM traces "
                       "WHERE trace_id = ?", [AGENT["traceId"]])[0]
    page = dashboard.open("traces")
    row = page.locator("#trace-list tr", has=page.locator(f"span[title='{AGENT['traceId']}']"))
    expect(row.locator("td.models")).to_contain_text("gpt-4o-mini")
    expect(row.locator("td.cost")).to_have_text(_fmt_cost(cost))
    expect(row.locator("td.tokens")).to_have_text(str(tokens))

    page.locator("a.sort[data-sort=cost]").click()
    page.wait_for_function("location.hash.includes('sort=cost')")
    page.wait_for_selector("main[data-rendered]", state="attached")
    top_id, top_cost = sql(seeded_server, "SELECT trace_id, cost_usd FROM traces "
                           "ORDER BY cost_usd DESC NULLS LAST, trace_id LIMIT 1")[0]
    first = page.locator("#trace-list tbody tr").first
    expect(first).to_contain_text(top_id[:8])
    expect(first.locator("td.cost")).to_have_text(_fmt_cost(top_cost))
    dashboard.shot("traces-by-cost")

    second_cost = sql(seeded_server, "SELECT cost_usd FROM traces ORDER BY cost_usd DESC "
                      "NULLS LAST LIMIT 1 OFFSET 1")[0][0]
    dashboard.open(f"traces?mincost={second_cost}")
    expect(page.locator("#trace-list tbody tr")).to_have_count(1)
    expect(page.locator("#trace-list tbody tr")).to_contain_text(top_id[:8])


def test_trace_page_shows_cost_badges_and_totals(
    dashboard: Dashboard, seeded_server: ServerProcess
) -> None:
    expect = _expect()
    _wait_for_totals(seeded_server)
    calls = sql(seeded_server, "SELECT span_id, cost_usd FROM model_calls WHERE trace_id = ?",
                [AGENT["traceId"]])
    total = sql(seeded_server, "SELECT model_call_count, input_tokens FROM traces "
                "WHERE trace_id = ?", [AGENT["traceId"]])[0]
    page = dashboard.open(f"traces/{AGENT['traceId']}")
    expect(page.locator(".wf-cost")).to_have_count(len(calls))
    for span_id, cost in calls:
        badge = page.locator(f".wf-row[data-span-id='{span_id}'] .wf-cost")
        expect(badge).to_have_text(_fmt_cost(cost))
    expect(page.locator("#trace-totals")).to_contain_text(f"{total[0]} model calls")
    expect(page.locator("#trace-totals")).to_contain_text(f"{total[1]} in")
    dashboard.shot("trace-cost")


def test_overview_charts_agent_cost_and_most_expensive_traces(
    dashboard: Dashboard, seeded_server: ServerProcess
) -> None:
    expect = _expect()
    _wait_for_totals(seeded_server)
    page = dashboard.open("overview")
    panels = page.locator("section.panel")
    expect(panels.filter(has_text="Agent cost per day by model").locator("svg rect")
           ).not_to_have_count(0)
    expect(panels.filter(has_text="Agent tokens per day").locator("svg rect")).not_to_have_count(0)
    top = sql(seeded_server, "SELECT trace_id FROM traces WHERE cost_usd IS NOT NULL "
              "ORDER BY cost_usd DESC, trace_id LIMIT 10")
    rows = page.locator("#expensive-traces tbody tr")
    expect(rows).to_have_count(len(top))
    href = rows.first.locator("a.trace-name").get_attribute("href") or ""
    assert top[0][0] in href
    dashboard.shot("overview-agent-cost")
