"""Datasets and experiments in headless Chromium: three production traces go into a dataset
through the trace page's "Add to dataset" (one with an edited expected output), the Datasets page
lists its versions and items, two agent versions run against it, and the compare view shows
the averages with deltas and the item that regressed with both outputs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from server_process import ServerProcess, running_server

from tracescore.evals import run_evals
from tracescore.model import get_assistant_message
from tracescore.scoring import create_scorer

from .conftest import AGENT, AISDK, MASTRA, Dashboard, open_dashboard, replay_fixtures

pytestmark = pytest.mark.browser

EDITED = "Yes: take a small umbrella, it is cloudy in Paris."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Its own server (the datasets and eval scores written here stay out of other pages' tests)."""
    folder = tmp_path_factory.mktemp("dashboard-datasets")
    with running_server(folder / "datasets.duckdb", args=["--no-grpc"]) as running:
        assert replay_fixtures(running) >= 90
        yield running


@pytest.fixture
def dash(chromium: Any, server: ServerProcess) -> Iterator[Dashboard]:
    d = open_dashboard(chromium, server)
    yield d
    d.page.context.close()
    assert d.unexpected_errors() == []


def _add(dash: Dashboard, trace_id: str, *, new_name: str | None = None,
         expected: str | None = None) -> None:
    from playwright.sync_api import expect

    page = dash.open(f"traces/{trace_id}")
    page.locator("#add-to-dataset").click()
    form = page.locator("#add-to-dataset-form")
    expect(form.locator("#dataset-expected")).not_to_have_value("")
    if new_name is not None:
        if form.locator("#dataset-pick option").count() > 1:
            form.locator("#dataset-pick").select_option("")
        form.locator("#dataset-new-name").fill(new_name)
    if expected is not None:
        form.locator("#dataset-expected").fill(expected)
    form.locator("#dataset-save").click()
    expect(page.locator("#add-to-dataset-done")).to_contain_text("Added to prod-failures")


class Agent:
    def __init__(self, forgets_umbrella: bool) -> None:
        self.forgets = forgets_umbrella

    def generate(self, input: Any, **options: Any) -> str:
        last = input[-1]["content"]
        if "umbrella" in last:
            return "I cannot say." if self.forgets else EDITED
        return "Right now it is cloudy in Paris at 18°C (64.4°F)."


def test_traces_to_dataset_to_compare_view(dash: Dashboard, server: ServerProcess) -> None:
    from playwright.sync_api import expect

    index = json.loads((Path(__file__).parents[1] / "fixtures" / "INDEX.json").read_text())
    turn2 = next(t for t in index["py-openai-v2-genai-span"]["traces"]
                 if t["scenario"] == "turn2")
    _add(dash, AGENT["traceId"], new_name="prod-failures")
    _add(dash, MASTRA["traceId"])
    _add(dash, turn2["traceId"], expected=EDITED)
    assert AISDK  # (the AI SDK capture stays out of the dataset)

    page = dash.open("datasets")
    expect(page.locator("#dataset-list")).to_contain_text("prod-failures")
    page.locator("#dataset-list a", has_text="prod-failures").click()
    expect(page.locator("#dataset-title")).to_have_text("prod-failures @ 4")
    items = page.locator("#dataset-items tbody tr")
    expect(items).to_have_count(3)
    expect(page.locator("#dataset-items")).to_contain_text(EDITED)
    expect(page.locator("#dataset-items")).to_contain_text("Should I bring an umbrella?")
    page.locator("#version-select").select_option("2")
    expect(page.locator("#dataset-title")).to_have_text("prod-failures @ 2")
    expect(page.locator("#dataset-items tbody tr")).to_have_count(1)
    dash.shot("datasets-page")

    exact = create_scorer("exact", "equals the expected answer").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) == run.ground_truth
        else 0.0)
    for name, forgets in (("v1", False), ("v2", True)):
        # Playwright's sync API holds the main thread's event loop: run the eval in a thread
        with ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, run_evals(
                Agent(forgets), "prod-failures", scorers=[exact], store=server.url,
                experiment=name)).result()
        assert result.store_errors == []

    page = dash.open("experiments?dataset=prod-failures")
    expect(page.locator("#experiment-list tbody tr")).to_have_count(2)
    expect(page.locator("#experiments-chart svg")).to_have_count(1)
    dash.shot("experiments-page")
    page.locator("#compare-form button").click()
    page.wait_for_selector("#compare-title")
    expect(page.locator("#compare-title")).to_have_text("v2 vs v1")
    expect(page.locator("#compare-verdict")).to_have_text("Regressed: exact")
    scorer_row = page.locator("#compare-scorers tbody tr")
    expect(scorer_row).to_contain_text("1.000")
    expect(scorer_row).to_contain_text("0.667")
    expect(scorer_row).to_contain_text("-0.333")
    expect(scorer_row).to_contain_text("regressed")
    drops = page.locator("#compare-items .compare-item")
    expect(drops).to_have_count(1)
    expect(drops.first).to_contain_text("I cannot say.")
    expect(drops.first).to_contain_text(EDITED)
    dash.shot("experiments-compare")
