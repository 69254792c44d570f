"""The dashboard's HTTP routes on a real ``tracescore serve``: static pages, scorer input, steps."""

from __future__ import annotations

from pathlib import Path

import httpx
from server_process import ServerProcess

from .conftest import AGENT, MASTRA, WORKFLOW

WEB = Path(__file__).parents[2] / "dashboards" / "web"


def _get(server: ServerProcess, path: str, **kwargs: object) -> httpx.Response:
    return httpx.get(f"{server.url}{path}", headers=server.headers, timeout=30, **kwargs)  # type: ignore[arg-type]


def test_index_and_assets_are_served_offline(seeded_server: ServerProcess) -> None:
    index = _get(seeded_server, "/")
    assert index.status_code == 200
    assert index.headers["content-type"].startswith("text/html")
    html = index.text
    assert "<title>tracescore</title>" in html
    scripts = [line.split('"')[1] for line in html.splitlines() if "<script src=" in line]
    assert "ui/js/app.js" in scripts and len(scripts) >= 8
    for src in [*scripts, "ui/style.css"]:
        asset = _get(seeded_server, "/" + src)
        assert asset.status_code == 200, src
        assert asset.headers["cache-control"] == "no-cache"
        assert asset.text == (WEB / src.removeprefix("ui/")).read_text()
    # Offline: nothing is loaded from another host.
    for path in [WEB / "index.html", *WEB.glob("js/*.js"), WEB / "style.css"]:
        text = path.read_text()
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), path
        assert "https://" not in text and "//cdn" not in text, path
        assert "import(" not in text and " from '" not in text, path  # no module fetches


def test_scorer_input_of_an_agent_run(seeded_server: ServerProcess) -> None:
    response = _get(seeded_server, f"/api/traces/{AGENT['traceId']}/scorer-input")
    assert response.status_code == 200
    data = response.json()
    assert data["trace_id"] == AGENT["traceId"]
    assert data["kind"] == "agent"
    assert data["span_id"] == AGENT["root"][0]["spanId"]
    user = data["input"]["input_messages"]
    assert [m["content"] for m in user] == [
        "What is the weather in Paris right now, in Fahrenheit?"
    ]
    assert "concise travel weather assistant" in data["input"]["system_messages"][0]["content"]
    tools = [t["tool_name"] for m in data["output"] for t in m["tool_invocations"]]
    assert tools == ["get_weather", "convert_temperature"]
    assert data["output"][-1]["content"] == "Right now it is cloudy in Paris at 18°C (64.4°F)."
    names = [s["name"] for s in data["trajectory"]["steps"]]
    assert names[1::2] == ["get_weather", "convert_temperature"]


def test_scorer_input_for_a_chosen_span_and_a_workflow(seeded_server: ServerProcess) -> None:
    tree = _get(seeded_server, f"/api/traces/{AGENT['traceId']}").json()
    tool = next(s for s in tree["spans"][0]["children"] if s["name"] == "execute_tool get_weather")
    data = _get(
        seeded_server,
        f"/api/traces/{AGENT['traceId']}/scorer-input",
        params={"span_id": tool["span_id"]},
    ).json()
    assert data["span_id"] == tool["span_id"]
    assert data["kind"] == "span"
    workflow = _get(seeded_server, f"/api/traces/{WORKFLOW['traceId']}/scorer-input").json()
    assert workflow["kind"] == "workflow"
    steps = workflow["trajectory"]["steps"]
    assert [s["step_type"] for s in steps] == ["workflow_step"] * len(steps)
    nested = [c["step_type"] for s in steps for c in (s.get("children") or [])]
    assert "agent_run" in nested


def test_steps_are_the_normalized_tree(seeded_server: ServerProcess) -> None:
    data = _get(seeded_server, f"/api/traces/{AGENT['traceId']}/steps").json()
    assert data["trace_id"] == AGENT["traceId"]
    [root] = data["steps"]
    assert root["kind"] == "agent_run" and root["name"] == "weather-agent"
    assert root["span_id"] == AGENT["root"][0]["spanId"]
    kinds = [(c["kind"], c["name"]) for c in root["children"]]
    assert kinds == [
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "get_weather"),
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "convert_temperature"),
        ("model_generation", "gpt-4o-mini"),
    ]
    tool = root["children"][1]
    assert tool["tool_args"] == {"city": "Paris"}
    assert tool["duration_ms"] >= 0
    first_call = root["children"][0]
    assert first_call["usage"]["input_tokens"] == 189
    assert first_call["input_messages"][1] == {
        "role": "user",
        "parts": ["What is the weather in Paris right now, in Fahrenheit?"],
        "id": None,
        "type": "message",
    }
    assert "parent" not in tool and "attributes" not in tool
    mastra = _get(seeded_server, f"/api/traces/{MASTRA['traceId']}/steps").json()
    assert mastra["steps"][0]["kind"] == "agent_run"


def test_errors_have_the_api_error_shape(seeded_server: ServerProcess) -> None:
    bad = _get(seeded_server, "/api/traces/not-hex/steps")
    assert bad.status_code == 400
    assert "32 hex digits" in bad.json()["error"]["message"]
    missing = _get(seeded_server, f"/api/traces/{'0' * 32}/scorer-input")
    assert missing.status_code == 404
    assert missing.json()["error"]["status"] == 404
    no_span = _get(
        seeded_server, f"/api/traces/{AGENT['traceId']}/scorer-input", params={"span_id": "0" * 16}
    )
    assert no_span.status_code == 404
    assert "0000000000000000" in no_span.json()["error"]["message"]
    bad_span = _get(
        seeded_server, f"/api/traces/{AGENT['traceId']}/scorer-input", params={"span_id": "xyz"}
    )
    assert bad_span.status_code == 400


def test_pages_stay_open_and_data_routes_need_the_key(key_server: ServerProcess) -> None:
    url = key_server.url
    assert httpx.get(f"{url}/", timeout=10).status_code == 200
    assert httpx.get(f"{url}/ui/js/core.js", timeout=10).status_code == 200
    steps = httpx.get(f"{url}/api/traces/{AGENT['traceId']}/steps", timeout=10)
    assert steps.status_code == 401
    with_key = httpx.get(
        f"{url}/api/traces/{AGENT['traceId']}/steps", headers=key_server.headers, timeout=10
    )
    assert with_key.status_code == 404  # authorized; the empty database has no such trace
