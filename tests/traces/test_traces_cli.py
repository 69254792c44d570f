"""``tracescore trace show`` against a database file (--db) and a running server (--url)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from server_process import ServerProcess, running_server

from tracescore.cli import main

from .helpers import FIXTURES, SCENARIO, trace_id_of

MASTRA = "mastra-otel-exporter-protobuf"
AISDK = "aisdk5-experimental-telemetry"


def _body(folder: str) -> bytes:
    return base64.b64decode((FIXTURES / folder / "0001-traces.b64").read_text())


@pytest.fixture(scope="module")
def db_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed database file holding the Mastra captures, written through the real store."""
    from tracescore.ingest import decode_request
    from tracescore.store import Store

    path = tmp_path_factory.mktemp("traces-cli") / "tracescore.duckdb"
    with Store(path) as store:
        store.write_spans_sync(decode_request(_body(MASTRA), encoding="protobuf", kind="traces"))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("traces-cli-server")
    with running_server(root / "tracescore.duckdb", args=["--no-grpc"]) as running:
        response = httpx.post(
            f"{running.url}/v1/traces",
            content=_body(AISDK),
            headers={"content-type": "application/x-protobuf", **running.headers},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        yield running


def test_show_from_db_prints_the_step_tree(db_file: Path) -> None:
    result = CliRunner().invoke(
        main, ["trace", "show", trace_id_of(MASTRA, "turn1"), "--db", str(db_file)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"trace {trace_id_of(MASTRA, 'turn1')}  (18 spans)")
    assert "- agent_run Weather Agent" in lines[1]
    calls = [line for line in lines if "(model call, " in line]
    assert len(calls) == 3 and "231→12 tokens" in calls[0]
    assert any("tool_call get_weather" in line and '{"city":"Paris"}' in line for line in lines)


def test_show_scorer_input_and_json_from_db(db_file: Path) -> None:
    trace_id = trace_id_of(MASTRA, "turn2")
    result = CliRunner().invoke(
        main, ["trace", "show", trace_id, "--db", str(db_file), "--scorer-input"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "agent"
    assert (
        data["input"]["input_messages"][0]["content"]
        == SCENARIO["turn2"]["input_messages"][0]["text"]
    )
    assert (
        data["input"]["remembered_messages"][0]["content"]
        == SCENARIO["turn1"]["input_messages"][0]["text"]
    )
    result = CliRunner().invoke(main, ["trace", "show", trace_id, "--db", str(db_file), "--json"])
    tree = json.loads(result.output)
    assert tree["steps"][0]["kind"] == "agent_run"
    assert [c["kind"] for c in tree["steps"][0]["children"]][:3] == [
        "processor_run",
        "memory_operation",
        "model_generation",
    ]


def test_explain_says_why_each_span_became_its_step(db_file: Path) -> None:
    """--explain: per span the adapter, the step kind, what it is in the trajectory and the
    rule that decided it; and why the default target was chosen."""
    trace_id = trace_id_of(MASTRA, "turn1")
    runner = CliRunner()
    result = runner.invoke(main, ["trace", "show", trace_id, "--db", str(db_file), "--explain"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"trace {trace_id}  (18 spans)")
    span_lines = [line for line in lines if line.lstrip().startswith("- ")]
    assert len(span_lines) == 18
    assert "mastra adapter → agent_run 'Weather Agent'" in span_lines[0]
    calls = [line for line in span_lines if "a model_generation step (one model call" in line]
    assert len(calls) == 3
    # The model_generation wrapper over its steps says why it is not a call.
    wrapper = next(line for line in span_lines if "mastra adapter → model_generation" in line)
    assert "dropped: a model-call wrapper (model work with model calls beneath" in wrapper
    assert lines[-1].startswith("default target: agent_run 'Weather Agent' [")
    assert "the outermost agent run of the trace" in lines[-1]

    as_json = runner.invoke(
        main, ["trace", "show", trace_id, "--db", str(db_file), "--explain", "--json"]
    )
    data = json.loads(as_json.output)
    assert data["target"]["kind"] == "agent_run"
    assert data["target"]["span_id"] == data["spans"][0]["span_id"]
    assert {s["adapter"] for s in data["spans"]} == {"mastra"}
    assert [s["depth"] for s in data["spans"]][:2] == [0, 1]


def test_show_errors_are_sentences(db_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["trace", "show", "0" * 32, "--db", str(db_file)])
    assert result.exit_code == 1 and "no spans stored for trace" in result.output
    result = runner.invoke(
        main, ["trace", "show", "0" * 32, "--db", str(tmp_path / "missing.duckdb")]
    )
    assert result.exit_code == 1 and "no database file" in result.output
    result = runner.invoke(
        main,
        [
            "trace",
            "show",
            trace_id_of(MASTRA, "turn1"),
            "--db",
            str(db_file),
            "--scorer-input",
            "--span-id",
            "ffffffffffffffff",
        ],
    )
    assert result.exit_code == 1 and "has no span 'ffffffffffffffff'" in result.output
    result = runner.invoke(main, ["trace", "show", "0" * 32, "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 1 and "cannot reach a tracescore server" in result.output
    assert "Traceback" not in result.output


def test_show_from_a_running_server(server: ServerProcess) -> None:
    trace_id = trace_id_of(AISDK, "turn1")
    args = ["trace", "show", trace_id, "--url", server.url]
    if server.api_key:
        args += ["--api-key", server.api_key]
    runner = CliRunner()
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "- agent_run weather-agent" in result.output
    assert result.output.count("(model call, ") == 3
    result = runner.invoke(main, [*args, "--scorer-input"])
    data = json.loads(result.output)
    assert data["output"][0]["content"] == SCENARIO["turn1"]["final_text"]
    assert [s["step_type"] for s in data["trajectory"]["steps"]] == [
        "model_generation",
        "tool_call",
        "model_generation",
        "tool_call",
        "model_generation",
    ]
    missing = runner.invoke(main, ["trace", "show", "0" * 32, *args[3:]])
    assert missing.exit_code == 1 and "no spans stored for trace" in missing.output
