"""A full write queue answers 503 + Retry-After (HTTP) and RESOURCE_EXHAUSTED (gRPC), and
nothing already accepted is lost. The app runs in this process (uvicorn on a loopback port in a
thread) so the test can hold the writer busy deterministically."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import httpx
import orjson
import pytest
from ingest.otlp_payloads import span_json, traces_json, traces_request
from server_process import free_port

from tracescore.server import Settings, create_app


@pytest.fixture
def app_server(tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    """(app, http base url, grpc target) of an in-process server with a 10-row write queue."""
    import uvicorn

    settings = Settings(
        db=str(tmp_path / "bp.duckdb"),
        http_port=free_port(),
        grpc_port=free_port(),
        max_pending_spans=10,
        retry_after_seconds=3,
    )
    app = create_app(settings, lifespan_hooks=[])
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=settings.http_port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.02)
    try:
        yield app, f"http://127.0.0.1:{settings.http_port}", f"127.0.0.1:{settings.grpc_port}"
    finally:
        server.should_exit = True
        thread.join(30)


def _hold_writer(store: Any) -> threading.Event:
    entered, release = threading.Event(), threading.Event()

    def hold(conn: Any) -> None:
        entered.set()
        release.wait(30)

    threading.Thread(target=store.write_sync, args=(hold,), daemon=True).start()
    assert entered.wait(10)
    return release


def test_full_queue_is_refused_with_retry_after(app_server: tuple[Any, str, str]) -> None:
    app, url, grpc_target = app_server
    store = app.state.store
    release = _hold_writer(store)
    headers = {"content-type": "application/x-protobuf"}
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(httpx.post, f"{url}/v1/traces",
                            content=traces_request(8).SerializeToString(), headers=headers,
                            timeout=30)
        deadline = time.monotonic() + 10
        while store.stats().pending_rows < 8:
            assert time.monotonic() < deadline, "the first export never reached the queue"
            time.sleep(0.01)

        refused = httpx.post(f"{url}/v1/traces", content=traces_request(8).SerializeToString(),
                             headers=headers)
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "3"
        spans = [span_json(os.urandom(16).hex(), os.urandom(8).hex()) for _ in range(3)]
        json_refused = httpx.post(f"{url}/v1/traces", content=orjson.dumps(traces_json(*spans)),
                                  headers={"content-type": "application/json"})
        assert json_refused.status_code == 503
        assert json_refused.json()["error"]["status"] == 503

        channel = grpc.insecure_channel(grpc_target)
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as caught:
            export(traces_request(8).SerializeToString(), timeout=10)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailers = dict(caught.value.trailing_metadata() or ())
        assert b"google.rpc.RetryInfo" in trailers["grpc-status-details-bin"]
        channel.close()

        release.set()
        assert first.result(30).status_code == 200
    # nothing accepted was lost; the refused batches were not stored
    assert store.read("SELECT count(*) AS n FROM spans") == [{"n": 8}]
    ok = httpx.post(f"{url}/v1/traces", content=traces_request(8).SerializeToString(),
                    headers=headers)
    assert ok.status_code == 200
    health = httpx.get(f"{url}/healthz").json()
    assert health["ingest"]["requests"]["http:queue_full"] == 2
