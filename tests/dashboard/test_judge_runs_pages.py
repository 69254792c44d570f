"""The dashboard's judge-run views in headless Chromium against real servers: a trace opened by
an 8-digit prefix shows its scores, "Add to dataset" and the datasets API take a prefix, the
scorer page rescores failed pairs, and the Overview names paused judges and why."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, running_server

from .conftest import AGENT, Dashboard, open_dashboard

pytestmark = pytest.mark.browser


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def test_a_trace_prefix_opens_the_trace_with_its_scores(dashboard: Dashboard,
                                                        seeded_server: ServerProcess) -> None:
    expect = _expect()
    prefix = AGENT["traceId"][:8]
    page = dashboard.open(f"traces/{prefix}?tab=scores")
    expect(page.locator(".tab[data-tab='scores']")).not_to_have_text("Scores (0)")
    expect(page.locator("#score-list .score-card[data-scorer='dash-relevancy']")).to_contain_text(
        "0.920")
    answer = httpx.post(f"{seeded_server.url}/api/datasets/items-from-traces",
                        json={"trace_ids": [prefix]}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["items"][0]["source_trace_id"] == AGENT["traceId"]


def test_the_scorer_page_rescores_failed_pairs(dashboard: Dashboard) -> None:
    expect = _expect()
    page = dashboard.open("scorers/no-tool-errors")
    page.locator("#rescore-failed").click()
    expect(page.locator("#rescore-status")).to_have_text("0 failed pairs rescored")


@pytest.fixture(scope="module")
def paused_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The embedded default config with a judge model whose provider key is not set: its
    three judge scorers start paused."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("ANTHROPIC_API_KEY is set here: the judges would not start paused")
    db = tmp_path_factory.mktemp("dashboard-paused") / "paused.duckdb"
    env = {"TRACESCORE_JUDGE_MODEL": "anthropic/claude-haiku-4-5"}
    with running_server(Path(db), env=env, args=["--no-grpc"]) as server:
        deadline = time.monotonic() + 120  # the judge checks run once litellm has loaded
        while httpx.get(f"{server.url}/healthz", timeout=30).json().get("judges") == "loading":
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        yield server


def test_the_overview_names_paused_judges(chromium: Any, paused_server: ServerProcess) -> None:
    expect = _expect()
    dash = open_dashboard(chromium, paused_server)
    try:
        page = dash.open("overview")
        paused = page.locator("#paused-judges li")
        expect(paused).to_have_count(3)
        expect(paused.first).to_contain_text("has no credentials: set ANTHROPIC_API_KEY")
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()
