"""Defect 1 of issue 12: 20 clients at once, each posting one span with a 15 MB attribute.

On the old code this made DuckDB fail a commit with out-of-memory and invalidate the database
while /healthz kept saying ok. Now the burst is absorbed (the attribute is cut to
``max_attribute_bytes``, commits are bounded by bytes) or refused with a retryable 503: every
acknowledged span is stored, the server still ingests, and health stays ok.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from server_process import running_server

from ._helpers import PROTOBUF, burst, span_ids, span_request, stored_span_ids

BIG = 15 * 1024 * 1024
CLIENTS = 20


def test_twenty_fifteen_megabyte_spans_at_once_are_absorbed(tmp_path: Path) -> None:
    with running_server(tmp_path / "burst.duckdb") as server:
        outcomes = burst(
            server, lambda index: span_request(1, value=chr(97 + index % 26) * BIG), CLIENTS
        )
        statuses = [status for outcome in outcomes for status in outcome.statuses]
        assert set(statuses) <= {200, 503}, statuses
        acknowledged = {i for outcome in outcomes if outcome.acknowledged for i in outcome.ids}
        assert len(acknowledged) == CLIENTS, statuses

        health = httpx.get(f"{server.url}/healthz", timeout=30)
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
        assert acknowledged <= stored_span_ids(server)

        after = span_request(3)
        response = httpx.post(f"{server.url}/v1/traces", content=after.SerializeToString(),
                              headers=PROTOBUF, timeout=30)
        assert response.status_code == 200, response.text
        assert set(span_ids(after)) <= stored_span_ids(server)
        assert "invalidated" not in server.log()
