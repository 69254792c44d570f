"""Defect 1 of issue 12, the byte bounds on their own: the queue and each commit count bytes.

``max_pending_bytes`` refuses exports with a retryable 503 once that much waits (one request
larger than it gets 413), and a write larger than the 32 MiB commit budget is inserted in
several transactions, answered after the last.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from server_process import running_server

from ._helpers import PROTOBUF, burst, missing_span_ids, span_ids, span_request, stored_span_ids

MIB = 1024 * 1024


def test_queue_bounded_by_bytes_refuses_with_503_then_takes_the_retries(tmp_path: Path) -> None:
    config = tmp_path / "bytes.toml"
    config.write_text(
        f"[server]\nmax_pending_bytes = {8 * MIB}\nmax_attribute_bytes = {4 * MIB}\n"
    )
    with running_server(tmp_path / "bytes.duckdb", args=["--config", str(config)]) as server:
        outcomes = burst(server, lambda index: span_request(1, value="y" * 3 * MIB), 12)
        statuses = [status for outcome in outcomes for status in outcome.statuses]
        assert all(outcome.acknowledged for outcome in outcomes), statuses
        assert set(statuses) == {200, 503}, statuses  # some waited for room, none failed
        health = httpx.get(f"{server.url}/healthz", timeout=30).json()
        assert health["ingest"]["requests"].get("http:queue_full", 0) == statuses.count(503)
        acknowledged = {i for outcome in outcomes for i in outcome.ids}
        assert not missing_span_ids(server, acknowledged)

        too_big = span_request(3, value="z" * 3 * MIB)  # ~9 MiB in one request
        response = httpx.post(f"{server.url}/v1/traces", content=too_big.SerializeToString(),
                              headers=PROTOBUF, timeout=60)
        assert response.status_code == 413
        assert b"max_pending_bytes" in response.content  # a google.rpc.Status (protobuf)
        assert not set(span_ids(too_big)) & stored_span_ids(server)


def test_a_write_over_the_commit_budget_is_split_and_fully_stored(tmp_path: Path) -> None:
    with running_server(tmp_path / "split.duckdb") as server:
        # a 1 MiB resource attribute is stored once per span: 48 spans make ~48 MiB of rows
        # from a body of ~1 MiB
        request = span_request(48)
        kv = request.resource_spans[0].resource.attributes.add()
        kv.key, kv.value.string_value = "big.resource", "r" * MIB
        response = httpx.post(f"{server.url}/v1/traces", content=request.SerializeToString(),
                              headers=PROTOBUF, timeout=120)
        assert response.status_code == 200, response.text
        health = httpx.get(f"{server.url}/healthz", timeout=30).json()
        assert health["writer"]["split_commits"] == 1
        assert health["writer"]["commits"] >= 2
        assert not missing_span_ids(server, set(span_ids(request)))
