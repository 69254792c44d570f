"""Defect 1 of issue 12: 20 clients at once, each posting one span with a 15 MB attribute.

On the old code this made DuckDB fail a checkpoint with out-of-memory and invalidate the
database while /healthz kept saying ok (every export then got 500). Now the burst is absorbed
(the attribute is cut to ``max_attribute_bytes``, commits are bounded by bytes, the memory
default has room) or refused with a retryable 503: every acknowledged span is stored, the
server still ingests, health stays ok. And when DuckDB does invalidate the database (forced
here with a 128 MB limit and the attribute cap lifted), /healthz and exports say 503 and the
store reopens the file by itself.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest
from server_process import running_server

from ._helpers import PROTOBUF, burst, missing_span_ids, post_with_retries, span_ids, span_request

BIG = 15 * 1024 * 1024
CLIENTS = 20
SEQUENTIAL = 12
NO_CAP = f"max_attribute_bytes = {16 * 1024 * 1024}\n"


def _assert_still_ingests(server: object) -> None:
    after = span_request(3)
    response = httpx.post(f"{server.url}/v1/traces",  # type: ignore[attr-defined]
                          content=after.SerializeToString(), headers=PROTOBUF, timeout=60)
    assert response.status_code == 200, response.text
    assert not missing_span_ids(server, set(span_ids(after)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "config",
    [pytest.param("", id="defaults"), pytest.param(NO_CAP, id="attribute-cap-lifted")],
)
def test_twenty_fifteen_megabyte_spans_at_once_are_absorbed(tmp_path: Path, config: str) -> None:
    path = tmp_path / "burst.toml"
    path.write_text(f"[server]\n{config}")
    with running_server(tmp_path / "burst.duckdb", args=["--config", str(path)]) as server:
        outcomes = burst(
            server, lambda index: span_request(1, value=chr(97 + index % 26) * BIG), CLIENTS
        )
        statuses = [status for outcome in outcomes for status in outcome.statuses]
        assert set(statuses) <= {200, 503}, statuses
        acknowledged = {i for outcome in outcomes if outcome.acknowledged for i in outcome.ids}
        assert len(acknowledged) == CLIENTS, statuses

        health = httpx.get(f"{server.url}/healthz", timeout=30)
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
        assert health.json()["writer"]["reopens"] == 0
        assert not missing_span_ids(server, acknowledged)
        _assert_still_ingests(server)
        assert "invalidated" not in server.log()

        if not config:  # the default cap cut the value and said so
            response = httpx.post(
                f"{server.url}/api/sql",
                json={"sql": "SELECT attributes FROM spans WHERE span_id = ?",
                      "params": [sorted(acknowledged)[0]]},
                timeout=60,
            )
            attributes = orjson.loads(response.json()["rows"][0][0])
            assert len(attributes["payload"]) == 1024 * 1024
            assert attributes["tracescore.truncated_attributes"] == ["payload"]


def test_an_invalidated_database_answers_503_and_is_reopened(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    # A small WAL bound and DuckDB's vacuum on (it merges the 15 MB rows' row groups): a
    # checkpoint after the first few 15 MB commits runs out of the 128 MB (DuckDB invalidates
    # the database). With the default (vacuum off) it no longer does.
    path.write_text(f'[server]\nduckdb_memory_limit = "128MB"\ncheckpoint_wal_bytes = 16777216\n'
                    f'duckdb_vacuum = true\n{NO_CAP}')
    with running_server(tmp_path / "tiny.duckdb", args=["--config", str(path)]) as server:
        acknowledged: set[str] = set()
        statuses: list[int] = []
        for index in range(SEQUENTIAL):  # sequential: each 15 MB span is its own commit
            request = span_request(1, value=chr(97 + index) * BIG)
            outcome = post_with_retries(server, request.SerializeToString(), span_ids(request))
            statuses += outcome.statuses
            if outcome.acknowledged:
                acknowledged.update(outcome.ids)
        assert 503 in statuses and 500 not in statuses, statuses
        assert len(acknowledged) == SEQUENTIAL, statuses

        health = httpx.get(f"{server.url}/healthz", timeout=30).json()
        assert health["status"] == "ok" and health["writer"]["reopens"] >= 1, health
        assert health["ingest"]["requests"].get("http:unavailable", 0) >= 1, health
        assert not missing_span_ids(server, acknowledged)
        _assert_still_ingests(server)
        log = server.log()
        assert "DuckDB invalidated the database" in log and "reopened" in log
