"""Stored XSS (issue 27's hostile probe): markup sent as data comes back as text on every page.

A real server stores HTML that would run script if a page ever parsed it as markup, in every
field a client controls and the dashboard shows: an agent trace exported through the
OpenTelemetry SDK (service, span, agent, tool and model names, messages, tool arguments and
results, session and user ids, an event, a status message), scores and judge executions
(``POST /api/scores``), a dataset's items, an experiment and its results, and a label schema,
a queue and a label with a comment. Headless Chromium then opens every page that shows them
(each tab of the trace page, and the SQL page after a click on Run); every page must run none of
the payloads, open no dialog and link nowhere but inside the dashboard, and the pages together
must show each payload as text (so the test sees the data it attacks with).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from server_process import ServerProcess, running_server, sql

from .conftest import Dashboard, open_dashboard

pytestmark = pytest.mark.browser


def payload(field: str) -> str:
    """Markup that, parsed as HTML, records that it ran in ``window.__xss``; ``field`` names
    where it was stored (no quotes, so a JSON view shows it unchanged)."""
    run = "(window.__xss=window.__xss||[]).push(1)"
    return f"<img src=x onerror={run} alt=xss-{field}><svg onload={run}></svg>"


SHOWN = re.compile(r"<img src=x onerror=\S+ alt=xss-([a-z-]+)>")
"""A payload as a page shows it: as text."""

SESSION = payload("session")
SCORER_NAME = payload("scorer-name")
DATASET = "xss-items"
QUEUE = "xss-queue"


def send_agent_trace(url: str) -> str:
    """One agent run with a tool call, every shown string a payload; its trace id."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind, Status, StatusCode

    provider = TracerProvider(resource=Resource.create({"service.name": payload("service")}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("tests.dashboard.xss", "1.0")
    tool = payload("tool-name")
    call = {"type": "tool_call", "id": "call_1", "name": tool,
            "arguments": {"city": payload("tool-arguments")}}
    asked = [{"role": "system", "parts": [{"type": "text", "content": payload("system")}]},
             {"role": "user", "parts": [{"type": "text", "content": payload("user")}]}]
    called = [{"role": "assistant", "parts": [call], "finish_reason": "tool_calls"}]
    result = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                          "response": payload("tool-result")}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": payload("answer")}],
             "finish_reason": "stop"}]
    model = payload("model")
    with tracer.start_as_current_span(payload("agent-span"), kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes({
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": payload("agent"),
            "gen_ai.conversation.id": SESSION, "session.id": SESSION,
            "user.id": payload("user-id"),
            "gen_ai.input.messages": json.dumps(asked[1:]),
            "gen_ai.output.messages": json.dumps(said)})
        agent.add_event(payload("event"), {"detail": payload("event-attribute")})
        for turn_in, turn_out in ((asked, called), (asked + called + result, said)):
            with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT) as chat:
                chat.set_attributes({
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                    "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 40,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.input.messages": json.dumps(turn_in),
                    "gen_ai.output.messages": json.dumps(turn_out)})
            if turn_out is called:
                with tracer.start_as_current_span(f"execute_tool {tool}") as run:
                    run.set_attributes({
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": "call_1",
                        "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                        "gen_ai.tool.call.result": payload("tool-result")})
                    run.set_status(Status(StatusCode.ERROR, payload("status")))
        trace_id = f"{agent.get_span_context().trace_id:032x}"
    provider.force_flush()
    provider.shutdown()
    return trace_id


def seed(server: ServerProcess) -> tuple[str, str]:
    """Everything a client can write that a page shows, with payloads; (trace id, the query
    comparing two experiments)."""
    trace_id = send_agent_trace(server.url)
    [[span_id]] = sql(server, "SELECT span_id FROM spans WHERE trace_id = ? AND "
                      "parent_span_id IS NULL", [trace_id])
    baseline, candidate = uuid.uuid4().hex, uuid.uuid4().hex
    with server.client() as client:
        def ok(path: str, body: Any) -> None:
            response = client.post(path, json=body)
            assert response.status_code == 200, f"{path}: {response.text[:300]}"

        ok("/api/scores", {
            "scores": [{
                "score_id": "xss-s1", "trace_id": trace_id, "span_id": span_id,
                "scorer_id": "xss-judge", "scorer_name": SCORER_NAME, "scorer_version": "v1",
                "source": "live", "status": "success", "score": 0.5,
                "reason": payload("reason"),
                "analyze_step_result": json.dumps({"why": payload("analyze")}),
                "generate_reason_prompt": payload("reason-prompt")},
                {"score_id": "xss-s2", "trace_id": trace_id, "span_id": span_id,
                 "scorer_id": "xss-failing", "scorer_version": "v1", "source": "live",
                 "status": "failed", "score": None,
                 "error": json.dumps({"name": "JudgeOutputError",
                                      "message": payload("score-error")})}],
            "judge_executions": [{
                "execution_id": "xss-x1", "score_id": "xss-s1", "trace_id": trace_id,
                "scorer_id": "xss-judge", "step": "analyze", "status": "success",
                "prompt": payload("judge-prompt"), "judge_model_id": payload("judge-model"),
                "output": json.dumps({"verdict": payload("judge-output")}),
                "raw_output": payload("judge-raw-output")}],
            "decisions": [{
                "trace_id": trace_id, "span_id": span_id, "scorer_id": "xss-failing",
                "scorer_version": "v1", "decision": "failed", "attempts": 3,
                "score_id": "xss-s2", "last_error": payload("decision-error")}]})
        ok("/api/datasets", {"name": DATASET, "description": payload("dataset-description"),
                             "items": [{"input": payload("item-input"),
                                        "ground_truth": payload("item-truth"),
                                        "metadata": {"note": payload("item-metadata")},
                                        "source_trace_id": "javascript:alert(1)"}]})
        for experiment_id, score in ((baseline, 0.9), (candidate, 0.1)):
            ok("/api/experiments", {
                "experiment": {"experiment_id": experiment_id, "name": "xss-run",
                               "target_name": payload("experiment-target"),
                               "status": "completed", "item_count": 1,
                               "metadata": {"note": payload("experiment-metadata")},
                               "verdict": payload("experiment-verdict")},
                "results": [{"item_id": "0", "scorer_id": "xss-judge", "score": score,
                             "reason": payload("result-reason"),
                             "output": payload("result-output"),
                             "error": payload("result-error")}]})
        ok("/api/label-schemas", {"name": "xss-correct", "kind": "boolean",
                                  "scorer_id": "xss-judge", "rubric": payload("rubric")})
        ok("/api/queues", {"name": QUEUE, "schemas": ["xss-correct"], "order": "oldest",
                           "size": 1})
        ok("/api/labels", [{"trace_id": trace_id, "schema": "xss-correct", "value": True,
                            "annotator": "xss-annotator", "comment": payload("label-comment")}])
    return trace_id, f"baseline={baseline}&candidate={candidate}"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str, str]]:
    folder = tmp_path_factory.mktemp("dashboard-xss")
    with running_server(folder / "xss.duckdb", args=["--no-grpc"]) as server:
        trace_id, comparison = seed(server)
        yield server, trace_id, comparison


def pages(trace_id: str, comparison: str) -> list[str]:
    """Every route that shows the seeded data."""
    from urllib.parse import quote

    trace = f"traces/{trace_id}"
    return [
        "overview", "traces", "traces?service=" + quote(payload("service")),
        trace, f"{trace}?tab=scores", f"{trace}?tab=input", f"{trace}?tab=steps",
        f"{trace}?tab=decisions", "scorers", "scorers/xss-judge", "scorers/xss-failing",
        "sessions", "sessions/" + quote(SESSION, safe=""), "datasets", f"datasets/{DATASET}",
        "experiments", f"experiments/compare?{comparison}",
        "review", f"review/{QUEUE}",
    ]


def test_no_stored_markup_runs_on_any_page(chromium: Any,
                                           seeded: tuple[ServerProcess, str, str]) -> None:
    server, trace_id, comparison = seeded
    dash: Dashboard = open_dashboard(chromium, server)
    # a reviewer who has not labelled the queue's item yet sees it with its rubric
    dash.page.context.add_init_script("localStorage.setItem('tracescore.annotator', 'xss-b');")
    dialogs: list[str] = []
    dash.page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    # a payload's <img src=x> is never requested as an image; anything else the page fails to
    # load is an error like any other
    dash.allowed.append("Failed to load resource")
    shown: set[str] = set()
    try:
        for route in pages(trace_id, comparison):
            page = dash.page
            before = page.evaluate("() => document.getElementById('main')?.dataset.rendered")
            dash.open(route)
            # routes differ only after '#': wait for this route's render, not the last one's
            page.wait_for_function("b => document.getElementById('main').dataset.rendered !== b",
                                   arg=before)
            page.wait_for_load_state("networkidle")
            if route.startswith("review/"):
                page.wait_for_selector(".rubric")  # the queue's item loads after the page
            assert page.evaluate("window.__xss || []") == [], route
            links = page.eval_on_selector_all(
                "a[href]", "els => els.map(e => e.getAttribute('href'))")
            outside = [h for h in links if not h.startswith(("#", "blob:", "/"))]
            assert outside == [], f"{route}: links leaving the dashboard {outside}"
            shown.update(SHOWN.findall(page.text_content("main") or ""))
        page = dash.open("sql")
        page.fill("#sql-input", "SELECT name, attributes->>'gen_ai.agent.name' FROM spans")
        page.click("#sql-run")
        page.wait_for_selector("#sql-result table")
        assert page.evaluate("window.__xss || []") == [], "sql"
        assert {"agent", "agent-span"} <= set(SHOWN.findall(page.inner_text("main")))
    finally:
        dash.page.context.close()
    assert dialogs == []
    assert dash.unexpected_errors() == []
    # every kind of stored text was on a page as text (the test saw what it attacks with)
    for field in ("service", "agent-span", "user", "answer", "tool-name", "model", "reason",
                  "judge-prompt", "session", "item-input", "rubric", "scorer-name",
                  "result-output", "decision-error"):
        assert field in shown, f"{field} never shown; shown: {sorted(shown)}"
