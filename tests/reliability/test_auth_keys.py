"""Issue 12 defect 2: an empty API key must stop start-up, never switch authentication off.

Each case starts a real ``tracescore serve`` process. A bad key has to make it exit at once
with one sentence naming where the key came from; on the old code the process started (and a
request with no Authorization header matched the empty key), so these tests time out there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import httpx
import pytest
from ingest.otlp_payloads import traces_request
from server_process import free_port, running_server

START_TIMEOUT_S = 60
LONG_KEY = "k" * 8 + "0123456789abcdef"


def serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    """Run ``tracescore serve`` expecting it to refuse to start (it must exit by itself)."""
    command = [sys.executable, "-m", "tracescore.cli", "serve", "--db",
               str(tmp_path / "keys.duckdb"), "--http-port", str(free_port()),
               "--grpc-port", str(free_port()), *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, **(env or {})}, timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"tracescore serve started with {args} {env}; it must refuse"
                             ) from exc


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one-line error of a refused start (no traceback)."""
    assert result.returncode != 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, result.stdout
    return lines[-1]


@pytest.mark.parametrize("key", ["", "   "])
def test_an_empty_key_flag_stops_start_up(tmp_path: Path, key: str) -> None:
    message = refused(serve(tmp_path, "--api-key", key))
    assert "--api-key" in message and "empty" in message


def test_an_empty_key_beside_a_good_one_stops_start_up(tmp_path: Path) -> None:
    message = refused(serve(tmp_path, "--api-key", LONG_KEY, "--api-key", ""))
    assert "--api-key" in message and "empty" in message
    assert LONG_KEY not in message  # keys are never echoed into logs


def test_an_empty_key_cannot_open_a_public_host(tmp_path: Path) -> None:
    message = refused(serve(tmp_path, "--host", "0.0.0.0", "--api-key", ""))
    assert "empty" in message


@pytest.mark.parametrize("value", ['[""]', '["  "]', f'["{LONG_KEY}", ""]', '""'])
def test_an_empty_key_in_the_config_file_stops_start_up(tmp_path: Path, value: str) -> None:
    config = tmp_path / "keys.toml"
    config.write_text(f"[server]\napi_keys = {value}\n")
    message = refused(serve(tmp_path, "--config", str(config)))
    assert str(config) in message and "[server].api_keys" in message


@pytest.mark.parametrize("value", ["", " ", ",", " , "])
def test_an_environment_variable_without_a_key_stops_start_up(tmp_path: Path,
                                                              value: str) -> None:
    message = refused(serve(tmp_path, env={"TRACESCORE_API_KEYS": value}))
    assert "TRACESCORE_API_KEYS" in message


def test_a_short_key_is_warned_about_and_a_long_one_is_not(tmp_path: Path) -> None:
    with running_server(tmp_path / "short.duckdb", api_key="short-key-1") as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        assert httpx.get(f"{server.url}/metrics", headers=server.headers).status_code == 200
    warnings = [line for line in server.log().splitlines() if "WARNING" in line]
    assert any("shorter than 16 characters" in line for line in warnings), server.log()
    assert not any("short-key-1" in line for line in server.log().splitlines())
    with running_server(tmp_path / "long.duckdb", api_key=LONG_KEY) as server:
        assert httpx.get(f"{server.url}/metrics", headers=server.headers).status_code == 200
    assert "shorter than" not in server.log()


def test_no_header_gets_nothing_when_keys_are_set(tmp_path: Path) -> None:
    """What the empty key let through before: SQL, OTLP/HTTP, /metrics and gRPC Export."""
    with running_server(tmp_path / "nokey.duckdb", api_key=LONG_KEY) as server:
        body = traces_request(2).SerializeToString()
        assert httpx.post(f"{server.url}/api/sql", json={"sql": "SELECT 1"}).status_code == 401
        assert httpx.post(f"{server.url}/v1/traces", content=body, headers={
            "content-type": "application/x-protobuf"}).status_code == 401
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        with grpc.insecure_channel(server.grpc_target) as channel:
            export = channel.unary_unary(
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
            with pytest.raises(grpc.RpcError) as caught:
                export(body, timeout=10)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with server.client() as client:
            rows = client.post("/api/sql", json={"sql": "SELECT count(*) FROM spans"})
        assert rows.json()["rows"] == [[0]]
