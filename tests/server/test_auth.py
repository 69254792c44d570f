"""API keys on OTLP/HTTP, OTLP/gRPC and the API; refusing to bind openly without them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from ingest.otlp_payloads import traces_request
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk.trace.export import SpanExportResult
from server_process import ServerProcess, running_server

from .helpers import assert_error_shape
from .otel_sdk import agent_spans

KEY = "test-key-123"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server started with --api-key."""
    root = tmp_path_factory.mktemp("auth")
    with running_server(root / "auth.duckdb", api_key=KEY) as server:
        yield server


def _count(server: ServerProcess) -> int:
    response = httpx.post(f"{server.url}/api/sql", json={"sql": "SELECT count(*) FROM spans"},
                          headers=server.headers)
    assert response.status_code == 200
    return int(response.json()["rows"][0][0])


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic " + KEY, KEY])
def test_http_without_the_key_is_401(secured: ServerProcess, header: str | None) -> None:
    before = _count(secured)
    headers = {"content-type": "application/x-protobuf"}
    if header:
        headers["authorization"] = header
    body = traces_request(2).SerializeToString()
    response = httpx.post(f"{secured.url}/v1/traces", content=body, headers=headers)
    assert_error_shape(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert_error_shape(httpx.post(f"{secured.url}/api/sql", json={"sql": "SELECT 1"},
                                  headers=headers), 401)
    assert_error_shape(httpx.get(f"{secured.url}/api/traces", headers=headers), 401)
    assert _count(secured) == before


def test_http_with_the_key(secured: ServerProcess) -> None:
    before = _count(secured)
    exporter = HttpSpans(endpoint=f"{secured.url}/v1/traces", headers=secured.headers, timeout=10)
    assert exporter.export(agent_spans("auth-http", tool_calls=1)) == SpanExportResult.SUCCESS
    unauthorized = HttpSpans(endpoint=f"{secured.url}/v1/traces", timeout=10)
    assert unauthorized.export(agent_spans("auth-http")) == SpanExportResult.FAILURE
    assert _count(secured) == before + 3


def test_grpc_needs_the_key(secured: ServerProcess) -> None:
    before = _count(secured)
    good = GrpcSpans(endpoint=secured.grpc_target, insecure=True, timeout=10,
                     headers={"authorization": f"Bearer {KEY}"})
    assert good.export(agent_spans("auth-grpc", tool_calls=1)) == SpanExportResult.SUCCESS
    channel = grpc.insecure_channel(secured.grpc_target)
    export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
    with pytest.raises(grpc.RpcError) as caught:
        export(traces_request(2).SerializeToString(), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as caught:
        export(traces_request(2).SerializeToString(), timeout=10,
               metadata=(("authorization", "Bearer nope"),))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    channel.close()
    assert _count(secured) == before + 3


def test_healthz_stays_open(secured: ServerProcess) -> None:
    assert httpx.get(f"{secured.url}/healthz").status_code == 200


def test_api_keys_from_the_environment(tmp_path: Path) -> None:
    env = {"TRACESCORE_API_KEYS": "env-key-1,env-key-2"}
    with running_server(tmp_path / "env.duckdb", env=env) as server:
        body = traces_request(1).SerializeToString()
        headers = {"content-type": "application/x-protobuf"}
        assert httpx.post(f"{server.url}/v1/traces", content=body,
                          headers=headers).status_code == 401
        headers["authorization"] = "Bearer env-key-2"
        assert httpx.post(f"{server.url}/v1/traces", content=body,
                          headers=headers).status_code == 200


def test_open_host_without_keys_refuses_to_start(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--host", "0.0.0.0",
         "--db", str(tmp_path / "x.duckdb")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0
    assert "--insecure" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.duckdb").exists()
