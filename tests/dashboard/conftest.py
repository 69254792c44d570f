"""Dashboard fixtures: a real ``tracescore serve`` holding the captured traces plus score rows,
and headless Chromium (Debian's ``/usr/bin/chromium``) driven by Playwright.

The seeded server is shared by every dashboard test (session scope): it gets the four captured
OTLP payloads replayed to ``/v1/traces`` and, through ``POST /api/scores``, scores with reasons,
judge executions and scoring decisions under scorer ids starting with ``dash-`` (live scoring may
add its own scores next to them; tests only look for ours).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from server_process import ServerProcess, running_server, sql

FIXTURES = Path(__file__).parents[1] / "fixtures"
ARTIFACTS = Path(__file__).parents[1] / "artifacts" / "dashboard"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

INDEX = json.loads((FIXTURES / "INDEX.json").read_text())


def fixture_trace(folder: str, scenario: str) -> dict[str, Any]:
    """INDEX.json's entry for one captured trace (traceId, root name and span id)."""
    return next(t for t in INDEX[folder]["traces"] if t["scenario"] == scenario)


# The traces the tests look at.
AGENT = fixture_trace("py-openai-v2-genai-span", "turn1")
MASTRA = fixture_trace("mastra-otel-exporter-protobuf", "turn1")
WORKFLOW = fixture_trace("mastra-otel-exporter-protobuf", "workflow")
AISDK = fixture_trace("aisdk5-experimental-telemetry", "turn1")

RELEVANCY_REASON = "The answer gives the current Paris weather in Fahrenheit, as the user asked."
LOW_REASON = "The answer repeats the weather but never says whether to take an umbrella."
JUDGE_PROMPT = (
    "Rate how relevant the assistant's answer is to the user's question. "
    "Question: What is the weather in Paris"
)
FAILED_MESSAGE = "judge returned no JSON object after 2 attempts"


def replay_fixtures(server: ServerProcess) -> int:
    """POST every shared captured payload to /v1/traces exactly as it was received; the span
    count. The issue-11 client captures (folders with a CLIENT.json) are left out: the pages
    are tested on the four shared ones."""
    spans = 0
    with server.client() as client:
        for path in sorted(FIXTURES.glob("*/0001-traces.b64")):
            if (path.parent / "CLIENT.json").exists():
                continue
            body = base64.b64decode(path.read_text())
            response = client.post(
                "/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"}
            )
            assert response.status_code == 200, response.text
        result = client.post("/api/sql", json={"sql": "SELECT count(*) FROM spans"}).json()
        spans = int(result["rows"][0][0])
    return spans


def _root(trace: dict[str, Any]) -> str:
    return str(trace["root"][0]["spanId"])


def score_rows() -> dict[str, list[dict[str, Any]]]:
    """Scores, judge executions and decisions the tests assert on."""
    scores = [
        {
            "score_id": "dash-s1",
            "trace_id": AGENT["traceId"],
            "span_id": _root(AGENT),
            "project": "default",
            "scorer_id": "dash-relevancy",
            "scorer_name": "Answer relevancy",
            "scorer_version": "v1",
            "source": "live",
            "status": "success",
            "score": 0.92,
            "reason": RELEVANCY_REASON,
            "duration_ms": 812.0,
            "analyze_step_result": json.dumps({"verdicts": [{"verdict": "yes"}]}),
            "generate_reason_prompt": "Explain the score of 0.92 in one sentence.",
            "judge_input_tokens": 412,
            "judge_output_tokens": 57,
            "judge_total_tokens": 469,
            "judge_cost": 0.000096,
        },
        {
            "score_id": "dash-s2",
            "trace_id": AGENT["traceId"],
            "span_id": _root(AGENT),
            "project": "default",
            "scorer_id": "dash-tool-judge",
            "scorer_name": "Tool judge",
            "scorer_version": "v1",
            "source": "live",
            "status": "failed",
            "score": None,
            "error": json.dumps({"name": "JudgeOutputError", "message": FAILED_MESSAGE}),
            "judge_input_tokens": 300,
            "judge_output_tokens": 12,
            "judge_total_tokens": 312,
            "judge_cost": 0.00005,
        },
        {
            "score_id": "dash-s3",
            "trace_id": MASTRA["traceId"],
            "span_id": _root(MASTRA),
            "project": "default",
            "scorer_id": "dash-relevancy",
            "scorer_name": "Answer relevancy",
            "scorer_version": "v1",
            "source": "live",
            "status": "success",
            "score": 0.35,
            "reason": LOW_REASON,
            "judge_input_tokens": 398,
            "judge_output_tokens": 61,
            "judge_total_tokens": 459,
            "judge_cost": 0.000093,
        },
        {
            # Written by run_evals(store=...): an eval scorer the live registry does not know.
            "score_id": "dash-s4",
            "trace_id": WORKFLOW["traceId"],
            "span_id": _root(WORKFLOW),
            "project": "default",
            "scorer_id": "dash-eval",
            "scorer_name": "Eval check",
            "scorer_version": "v1",
            "source": "eval",
            "status": "success",
            "score": 1.0,
            "reason": "exactly right",
        },
    ]
    executions = [
        {
            "execution_id": "dash-x1",
            "score_id": "dash-s1",
            "trace_id": AGENT["traceId"],
            "scorer_id": "dash-relevancy",
            "step": "analyze",
            "status": "success",
            "prompt": JUDGE_PROMPT,
            "judge_model_id": "openai/gpt-4o-mini",
            "judge_provider": "openai",
            "attempt_count": 2,
            "model_call_count": 2,
            "duration_ms": 640.0,
            "output": json.dumps({"verdicts": [{"verdict": "yes"}]}),
            "raw_output": '{"verdicts": [{"verdict": "yes"}]}',
            "finish_reason": "stop",
            "input_tokens": 301,
            "output_tokens": 31,
            "total_tokens": 332,
            "cost_amount": 0.000064,
            "cost_unit": "USD",
            "cost_source": "litellm",
        },
        {
            "execution_id": "dash-x2",
            "score_id": "dash-s1",
            "trace_id": AGENT["traceId"],
            "scorer_id": "dash-relevancy",
            "step": "generate_reason",
            "status": "success",
            "prompt": "Explain the score of 0.92 in one sentence.",
            "judge_model_id": "openai/gpt-4o-mini",
            "judge_provider": "openai",
            "attempt_count": 1,
            "model_call_count": 1,
            "duration_ms": 170.0,
            "output": json.dumps({"reason": RELEVANCY_REASON}),
            "input_tokens": 111,
            "output_tokens": 26,
            "total_tokens": 137,
            "cost_amount": 0.000032,
            "cost_unit": "USD",
            "cost_source": "litellm",
        },
    ]
    decisions = [
        {
            "trace_id": AGENT["traceId"],
            "span_id": _root(AGENT),
            "scorer_id": "dash-relevancy",
            "scorer_version": "v1",
            "decision": "scored",
            "attempts": 1,
            "score_id": "dash-s1",
        },
        {
            "trace_id": AGENT["traceId"],
            "span_id": _root(AGENT),
            "scorer_id": "dash-tool-judge",
            "scorer_version": "v1",
            "decision": "failed",
            "attempts": 3,
            "score_id": "dash-s2",
            "last_error": FAILED_MESSAGE,
        },
        {
            "trace_id": MASTRA["traceId"],
            "span_id": _root(MASTRA),
            "scorer_id": "dash-relevancy",
            "scorer_version": "v1",
            "decision": "scored",
            "attempts": 1,
            "score_id": "dash-s3",
        },
        {
            "trace_id": AISDK["traceId"],
            "span_id": _root(AISDK),
            "scorer_id": "dash-relevancy",
            "scorer_version": "v1",
            "decision": "sampled_out",
            "attempts": 0,
        },
    ]
    return {"scores": scores, "judge_executions": executions, "decisions": decisions}


# Live scoring with two code scorers, settling fast so their scores exist before pages load.
LIVE_CONFIG = """
[live]
interval_seconds = 0.5
settle_seconds = 1

[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"

[[scorers]]
id = "trajectory-efficiency"
use = "tracescore.live:trajectory_efficiency_scorer"
"""
LIVE_SCORERS = 2


def wait_for_live_scores(server: ServerProcess, pairs: int, *, deadline_s: float = 90.0) -> None:
    """Poll until live scoring decided ``pairs`` (trace, scorer) pairs (not a timing assert)."""
    query = (
        "SELECT count(*) FROM scoring_decisions WHERE scorer_id NOT LIKE 'dash-%' "
        "AND decision IN ('scored', 'not_scorable', 'failed')"
    )
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if sql(server, query)[0][0] >= pairs:
            return
        time.sleep(0.2)
    raise AssertionError(f"live scoring decided fewer than {pairs} pairs:\n{server.log()[-3000:]}")


@pytest.fixture(scope="session")
def seeded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server holding the four captured payloads, their live code scores and the
    ``dash-*`` score rows."""
    folder = tmp_path_factory.mktemp("dashboard")
    config = folder / "tracescore.toml"
    config.write_text(LIVE_CONFIG)
    with running_server(folder / "dashboard.duckdb", args=["--config", str(config)]) as server:
        assert replay_fixtures(server) >= 90
        with server.client() as client:
            response = client.post("/api/scores", json=score_rows())
            assert response.status_code == 200, response.text
        roots = sql(server, "SELECT count(*) FROM spans WHERE parent_span_id IS NULL")[0][0]
        wait_for_live_scores(server, roots * LIVE_SCORERS)
        yield server


@pytest.fixture(scope="session")
def empty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server on an empty database."""
    with running_server(tmp_path_factory.mktemp("dashboard-empty") / "empty.duckdb") as server:
        yield server


API_KEY = "dash-key"


@pytest.fixture(scope="session")
def key_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server on an empty database that needs ``Authorization: Bearer dash-key``."""
    db = tmp_path_factory.mktemp("dashboard-key") / "key.duckdb"
    with running_server(db, api_key=API_KEY) as server:
        yield server


# ---- browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium from apt, driven by Playwright (skips when it is not installed).

    Module scope on purpose: Playwright's sync API keeps an event loop running in the main
    thread while it is open, which would break every async test collected after it.
    """
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Dashboard:
    """One browser tab on a server's dashboard, recording JavaScript errors."""

    page: Any
    base_url: str
    errors: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)

    def open(self, route: str) -> Any:
        """Load ``/#/<route>`` and wait until the page's first render finished."""
        self.page.goto(f"{self.base_url}/#/{route}")
        self.page.wait_for_selector("main[data-rendered]", state="attached")
        return self.page

    def shot(self, name: str) -> Path:
        """Save a full-page screenshot under tests/artifacts/dashboard/."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def unexpected_errors(self) -> list[str]:
        """Console errors and uncaught exceptions not listed in ``allowed``."""
        return [e for e in self.errors if not any(a in e for a in self.allowed)]


def open_dashboard(
    chromium: Any, server: ServerProcess, *, api_key: str | None = None
) -> Dashboard:
    """A fresh browser context on ``server`` (range "all time": the captures are not recent)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    script = "localStorage.setItem('tracescore.range', 'all');"
    if api_key:
        script += f"localStorage.setItem('tracescore.apiKey', {json.dumps(api_key)});"
    context.add_init_script(script)
    page = context.new_page()
    dash = Dashboard(page=page, base_url=server.url)
    page.on("console", lambda msg: dash.errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: dash.errors.append(f"uncaught: {exc}"))
    return dash


@pytest.fixture
def dashboard(chromium: Any, seeded_server: ServerProcess) -> Iterator[Dashboard]:
    """A browser tab on the seeded server; the test fails on any JavaScript error."""
    dash = open_dashboard(chromium, seeded_server)
    yield dash
    dash.page.context.close()
    assert dash.unexpected_errors() == []

