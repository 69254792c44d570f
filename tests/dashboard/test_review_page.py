"""The review page in headless Chromium, driven with the keyboard only: an annotator names
herself, labels a queue end to end (a comment, a changed label on the previous item, a skip),
sees the judge's score and reason only after labelling, and the trace page's score card then
shows the judge's agreement with people."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from labels.helpers import qa_pairs, send_qa_traces
from server_process import ServerProcess, running_server

from .conftest import Dashboard, open_dashboard

pytestmark = pytest.mark.browser

CONFIG = """
[live]
interval_seconds = 0.5
settle_seconds = 1

[labels]
agreement_interval_seconds = 0.5

[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
"""
NAMES = [f"item-{i:02d}" for i in range(8)]


def seed_queue(server: ServerProcess, names: list[str], *, queue: str = "qa") -> list[str]:
    """QA traces with a judge's scores and reasons, a boolean schema checking that judge, and a
    queue over them (oldest first); the trace ids."""
    ids = send_qa_traces(server.url, qa_pairs(names))
    scores = [{"trace_id": t, "span_id": "0" * 16, "scorer_id": "qa-judge", "scorer_version": "v1",
               "source": "live", "status": "success", "score": float(i % 2),
               "reason": f"judged {names[i]}", "judge_input_tokens": 120,
               "judge_output_tokens": 9, "judge_total_tokens": 129, "judge_cost": 0.00002}
              for i, t in enumerate(ids)]
    with server.client() as client:
        assert client.post("/api/scores", json={"scores": scores}).status_code == 200
        assert client.post("/api/label-schemas", json={
            "name": "correct", "kind": "boolean", "scorer_id": "qa-judge",
            "rubric": "Is the answer right?"}).status_code == 200
        made = client.post("/api/queues", json={"name": queue, "schemas": ["correct"],
                                                "order": "oldest", "size": len(names)})
        assert made.status_code == 200, made.text
        assert made.json()["items"] == len(names)
    return ids


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("dashboard-review")
    config = folder / "tracescore.toml"
    config.write_text(CONFIG)
    with running_server(folder / "review.duckdb",
                        args=["--config", str(config), "--no-grpc"]) as running:
        yield running


@pytest.fixture
def dash(chromium: Any, server: ServerProcess) -> Iterator[Dashboard]:
    d = open_dashboard(chromium, server)
    yield d
    d.page.context.close()
    assert d.unexpected_errors() == []


def _wait_item(page: Any, key: str | None = None, *, after: str | None = None) -> str:
    """Wait until an item (``key``, or any but ``after``) is drawn with its conversation;
    its key."""
    item = "#review-item"
    if key is not None:
        item += f"[data-key='{key}']"
    elif after is not None:
        item += f":not([data-key='{after}'])"
    page.wait_for_selector(f"{item} .review-target[data-loaded]")
    return str(page.locator("#review-item").get_attribute("data-key"))


def test_a_queue_is_labelled_with_the_keyboard_only(dash: Dashboard,
                                                    server: ServerProcess) -> None:
    from playwright.sync_api import expect

    ids = seed_queue(server, NAMES)
    page = dash.open("review/qa")
    expect(page.locator("#annotator-input")).to_be_focused()
    page.keyboard.type("alice")
    page.keyboard.press("Enter")

    first = _wait_item(page)
    expect(page.locator("#review-judge")).to_contain_text("stay hidden until you label")
    expect(page.locator(".scorer-input")).to_contain_text("What is the capital of country")
    page.keyboard.press("1")  # true
    expect(page.locator("#review-status")).to_have_text("saved")
    expect(page.locator("#review-judge")).to_contain_text("judged item-00")
    expect(page.locator("#review-judge .agreement-line")).to_be_visible()
    dash.shot("review-item-labelled")

    page.keyboard.press("n")
    second = _wait_item(page, after=first)
    page.keyboard.press("c")
    expect(page.locator("#review-comment")).to_be_focused()
    page.keyboard.type("the capital is wrong")
    page.keyboard.press("Enter")
    page.keyboard.press("2")  # false, with the comment
    expect(page.locator("#review-status")).to_have_text("saved")

    page.keyboard.press("p")  # back to the first: change its label
    _wait_item(page, first)
    expect(page.locator(".choice.picked")).to_contain_text("true")
    page.keyboard.press("2")
    expect(page.locator(".choice.picked")).to_contain_text("false")
    expect(page.locator("#review-status")).to_have_text("saved")
    page.keyboard.press("ArrowRight")
    _wait_item(page, second)
    page.keyboard.press("n")
    third = _wait_item(page, after=second)
    page.keyboard.press("s")  # skip the third
    key = _wait_item(page, after=third)
    labelled = 2
    while True:
        page.keyboard.press("1" if labelled % 2 else "2")
        expect(page.locator("#review-status")).to_have_text("saved")
        labelled += 1
        page.keyboard.press("n")
        page.wait_for_selector(f"#review-done, #review-item:not([data-key='{key}'])")
        if page.locator("#review-done").count():
            break
        key = _wait_item(page, after=key)
    assert labelled == len(NAMES) - 1  # all but the skipped one
    expect(page.locator("#review-progress")).to_contain_text(f"yours: {labelled}")
    dash.shot("review-queue-done")

    with server.client() as client:
        current = client.get("/api/labels", params={"annotator": "alice"}).json()["labels"]
        history = client.get("/api/labels", params={"annotator": "alice",
                                                     "current": "false"}).json()["labels"]
        queue = client.get("/api/queues/qa").json()
    assert len(current) == labelled and len(history) == labelled + 1
    by_trace = {label["trace_id"]: label for label in current}
    assert by_trace[first.removeprefix("trace:")]["value"] is False  # changed on the way back
    assert by_trace[second.removeprefix("trace:")]["comment"] == "the capital is wrong"
    assert third.removeprefix("trace:") not in by_trace
    assert (queue["done"], queue["skipped"]) == (labelled, 1)

    # the trace page's score card shows the judge version's agreement with people
    agreement = httpx.get(f"{server.url}/api/agreement", timeout=30).json()["agreement"]
    assert [a["n"] for a in agreement] == [labelled]
    trace = dash.open(f"traces/{ids[0]}?tab=scores")
    card = trace.locator(".score-card[data-scorer='qa-judge']")
    expect(card.locator(".agreement-line")).to_contain_text("this judge agrees with people κ")
    expect(card.locator(".agreement-line")).to_contain_text(f"n {labelled}")
    scorers = dash.open("scorers")
    expect(scorers.locator("h1")).to_have_text("Scorers")
