"""Acknowledge only what is committed: kill -9 after the 200s loses nothing; clean shutdown."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import psutil
from ingest.otlp_payloads import traces_request
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from server_process import start_server

from .helpers import sql
from .otel_sdk import agent_spans


def test_kill_9_loses_no_acknowledged_span(db_dir: Path) -> None:
    config = db_dir / "workers.toml"
    config.write_text("[server]\ndecode_workers = 1\n")  # large bodies go through a worker
    server = start_server(db_dir / "durable.duckdb", args=["--config", str(config)])
    try:
        acknowledged: set[str] = set()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            for index in range(20):
                # every fifth request is ~300 KB, decoded in the worker process
                request = traces_request(300, attribute_size=1000) if index % 5 == 0 \
                    else traces_request(50)
                response = client.post(
                    "/v1/traces",
                    content=request.SerializeToString(),
                    headers={"content-type": "application/x-protobuf"},
                )
                assert response.status_code == 200
                acknowledged.update(
                    span.span_id.hex() for span in request.resource_spans[0].scope_spans[0].spans
                )
        spans = agent_spans("durable-grpc", tool_calls=3)
        exporter = OTLPSpanExporter(endpoint=server.grpc_target, insecure=True, timeout=10)
        assert exporter.export(spans) == SpanExportResult.SUCCESS
        exporter.shutdown()
        acknowledged.update(format(span.context.span_id, "016x") for span in spans)

        assert server.process is not None
        workers = psutil.Process(server.process.pid).children(recursive=True)
        assert workers, "the decode worker should be running"
        server.kill()  # SIGKILL right after the last acknowledgement
        _, alive = psutil.wait_procs(workers, timeout=30)
        assert alive == [], "decode workers outlived the killed server"
        server.start()
        stored = {row[0] for row in sql(server, "SELECT span_id FROM spans")}
        assert acknowledged <= stored
        assert len(stored) == len(acknowledged) == 16 * 50 + 4 * 300 + 7
    finally:
        server.kill()


def test_sigterm_shuts_down_cleanly_and_keeps_data(db_dir: Path) -> None:
    server = start_server(db_dir / "clean.duckdb")
    try:
        body = traces_request(5).SerializeToString()
        response = httpx.post(f"{server.url}/v1/traces", content=body,
                              headers={"content-type": "application/x-protobuf"})
        assert response.status_code == 200
        # uvicorn re-raises SIGTERM after its clean shutdown, so the exit is by that signal
        assert server.stop() in (0, -signal.SIGTERM)
        assert "database closed" in server.log()
        server.start()
        assert sql(server, "SELECT count(*) FROM spans") == [[5]]
    finally:
        server.stop()
