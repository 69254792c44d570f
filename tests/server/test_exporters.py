"""The real OpenTelemetry SDK exporters (OTLP HTTP/protobuf and gRPC, gzip on and off)."""

from __future__ import annotations

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk.trace.export import SpanExportResult
from server_process import ServerProcess

from .helpers import sql
from .otel_sdk import agent_spans, genai_log_records


def _http(server: ServerProcess, gzip: bool, project: str) -> HttpSpans:
    return HttpSpans(
        endpoint=f"{server.url}/v1/traces",
        compression=Compression.Gzip if gzip else Compression.NoCompression,
        headers={"x-tracescore-project": project, **server.headers},
        timeout=10,
    )


def _grpc(server: ServerProcess, gzip: bool, project: str) -> GrpcSpans:
    headers = {"x-tracescore-project": project}
    if server.api_key:
        headers["authorization"] = f"Bearer {server.api_key}"
    return GrpcSpans(
        endpoint=server.grpc_target,
        insecure=True,
        compression=grpc.Compression.Gzip if gzip else grpc.Compression.NoCompression,
        headers=headers,
        timeout=10,
    )


@pytest.mark.parametrize("transport", ["http", "grpc"])
@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
def test_sdk_exporter_spans_are_stored(
    server: ServerProcess, project: str, transport: str, gzip: bool
) -> None:
    spans = agent_spans(f"svc-{transport}", tool_calls=2)
    exporter = (_http if transport == "http" else _grpc)(server, gzip, project)
    try:
        assert exporter.export(spans) == SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()
    rows = sql(
        server,
        "SELECT name, kind, service_name, scope_name, parent_span_id IS NULL AS root, "
        "attributes, events FROM spans WHERE project = ? ORDER BY start_time",
        [project],
    )
    assert len(rows) == len(spans) == 5
    assert rows[0][0] == "invoke_agent weather" and rows[0][4] is True
    assert {row[2] for row in rows} == {f"svc-{transport}"}
    assert {row[3] for row in rows} == {"tests.agent"}
    chat = next(row for row in rows if row[0] == "chat gpt-4o-mini")
    assert '"gen_ai.usage.input_tokens":100' in chat[5]
    assert '"gen_ai.response.finish_reasons":["tool_calls"]' in chat[5]
    tool = next(row for row in rows if row[0] == "execute_tool get_weather")
    assert '"tool.result"' in tool[6] and '"city":"Paris"' in tool[6]


def test_sdk_resource_project(server: ServerProcess, project: str) -> None:
    spans = agent_spans("svc-resource", tool_calls=1, project=project)
    exporter = HttpSpans(endpoint=f"{server.url}/v1/traces", timeout=10)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert sql(server, "SELECT count(*) FROM spans WHERE project = ?", [project]) == [[3]]


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_sdk_log_exporter_genai_events(server: ServerProcess, transport: str) -> None:
    from opentelemetry.sdk._logs.export import LogRecordExportResult

    records, trace_id = genai_log_records(f"logs-{transport}")
    if transport == "http":
        exporter = HttpLogs(endpoint=f"{server.url}/v1/logs", compression=Compression.Gzip,
                            timeout=10)
    else:
        exporter = GrpcLogs(endpoint=server.grpc_target, insecure=True,
                            compression=grpc.Compression.Gzip, timeout=10)
    try:
        assert exporter.export(records) == LogRecordExportResult.SUCCESS
    finally:
        exporter.shutdown()
    rows = sql(server, "SELECT event_name, body, span_id IS NOT NULL FROM logs "
                       "WHERE trace_id = ? ORDER BY coalesce(log_time, observed_time)",
               [trace_id])
    assert [row[0] for row in rows] == ["gen_ai.user.message", "gen_ai.choice"]
    assert '"content":"Weather in Paris?"' in rows[0][1]
    assert rows[0][2] is True


def test_grpc_bad_body_is_invalid_argument(server: ServerProcess) -> None:
    channel = grpc.insecure_channel(server.grpc_target)
    export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
    with pytest.raises(grpc.RpcError) as caught:
        export(b"\x0a\xff\xff\xff", timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid OTLP/protobuf" in caught.value.details()
    assert export(b"", timeout=10) == b""  # an empty export is fine
    channel.close()


def test_grpc_size_limit_counts_decompressed_bytes(server: ServerProcess) -> None:
    from ingest.otlp_payloads import traces_request

    # ~6 MiB of zeros: a few KiB gzip-compressed, over the server's 4 MiB max_body_bytes
    body = traces_request(1, attribute_size=6 * 1024 * 1024).SerializeToString()
    channel = grpc.insecure_channel(server.grpc_target)
    export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
    with pytest.raises(grpc.RpcError) as caught:
        export(body, timeout=30, compression=grpc.Compression.Gzip)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert export(traces_request(2).SerializeToString(), timeout=10) == b""  # still serving
    channel.close()
