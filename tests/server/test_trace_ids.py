"""Trace ids: a unique prefix of 8+ hex digits stands for the trace everywhere an id is taken
(``GET /api/traces/{id}``, the dashboard routes, ``tracescore trace show``); an ambiguous or
short prefix is a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
from server_process import ServerProcess, running_server

from .helpers import assert_error_shape, post_otlp, sql

SHARED = "abcdef01"


def _span(trace_id: str, span_id: str, name: str) -> dict[str, object]:
    now = time.time_ns()
    return {"traceId": trace_id, "spanId": span_id, "name": name,
            "startTimeUnixNano": str(now - 1_000_000), "endTimeUnixNano": str(now)}


def _post(server: ServerProcess, *spans: dict[str, object]) -> None:
    body = {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}
    response = post_otlp(server, json.dumps(body).encode(), content_type="application/json")
    assert response.status_code == 200, response.text


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracescore.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_prefixes_resolve_everywhere_and_ambiguity_is_explained(tmp_path: Path) -> None:
    one, two = SHARED + "1" * 24, SHARED + "2" * 24
    alone = "0e4aa402" + "3" * 24
    with running_server(tmp_path / "ids.duckdb", args=["--no-grpc"]) as server:
        _post(server, _span(one, "1" * 16, "first"), _span(two, "2" * 16, "second"),
              _span(alone, "3" * 16, "alone"))
        assert sql(server, "SELECT count(DISTINCT trace_id) FROM spans") == [[3]]
        get = lambda path: httpx.get(f"{server.url}{path}", timeout=30)  # noqa: E731

        answer = get(f"/api/traces/{alone[:8].upper()}")
        assert answer.status_code == 200 and answer.json()["trace_id"] == alone
        assert get(f"/api/traces/{one[:9]}").json()["trace_id"] == one
        steps = get(f"/api/traces/{alone[:10]}/steps")
        assert steps.status_code == 200 and steps.json()["trace_id"] == alone
        assert get(f"/api/traces/{alone[:8]}/scorer-input").json()["trace_id"] == alone

        message = assert_error_shape(get(f"/api/traces/{SHARED}"), 400)
        assert "ambiguous" in message and one in message and two in message
        assert "at least 8" in assert_error_shape(get(f"/api/traces/{alone[:7]}"), 400)
        assert "no stored trace id starts with" in assert_error_shape(
            get("/api/traces/ffffffff"), 404)
        assert assert_error_shape(get("/api/traces/ffffffff/steps"), 404)

        shown = cli("trace", "show", alone[:8], "--url", server.url)
        assert shown.returncode == 0, shown.stderr
        assert "alone" in shown.stdout
        ambiguous = cli("trace", "show", SHARED, "--url", server.url)
        assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr
        short = cli("trace", "show", "0e4aa4", "--url", server.url)
        assert short.returncode == 2 and "at least 8" in short.stderr
    on_file = cli("trace", "show", alone[:8], "--db", str(tmp_path / "ids.duckdb"), "--json")
    assert on_file.returncode == 0, on_file.stderr
    assert json.loads(on_file.stdout)["trace_id"] == alone
    ambiguous = cli("trace", "show", SHARED, "--db", str(tmp_path / "ids.duckdb"))
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr


def test_trace_show_json_carries_inputs_outputs_and_messages(tmp_path: Path) -> None:
    from tracescore.live import send_agent_traces

    db = tmp_path / "agent.duckdb"
    with running_server(db, args=["--no-grpc"]) as server:
        [trace_id] = send_agent_traces(server.url, count=1)
        time.sleep(0.2)
    shown = cli("trace", "show", trace_id[:8], "--db", str(db), "--json")
    assert shown.returncode == 0, shown.stderr
    tree = json.loads(shown.stdout)
    steps, stack = [], list(tree["steps"])
    while stack:
        step = stack.pop()
        steps.append(step)
        stack.extend(step["children"])
    [agent] = [s for s in steps if s["kind"] == "agent_run"]
    user = [m for m in agent["input_messages"] if m["role"] == "user"]
    assert "What is the weather in" in json.dumps(user)
    assert "output_messages" in agent or "output" in agent
    model_calls = [s for s in steps if s["kind"] == "model_generation"]
    assert model_calls and all("input_messages" in s for s in model_calls)
    tools = [s for s in steps if s["kind"] == "tool_call"]
    assert tools and all("tool_args" in s and "tool_result" in s for s in tools)
