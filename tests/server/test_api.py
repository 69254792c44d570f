"""The JSON API of a real server: /api/sql guard, /api/traces, /api/scores, /api/export, errors."""

from __future__ import annotations

import io
import os

import httpx
import pyarrow.parquet as pq
import pytest
from ingest.otlp_payloads import traces_request
from server_process import ServerProcess

from .helpers import assert_error_shape, post_otlp, sql


@pytest.mark.parametrize(
    ("statement", "fragment"),
    [
        ("DELETE FROM spans", "read-only"),
        ("INSERT INTO scores (score_id) VALUES ('x')", "read-only"),
        ("DROP TABLE spans", "read-only"),
        ("SELECT * FROM read_csv('/etc/passwd')", "cannot read or write files"),
        ("SELECT * FROM read_parquet('/tmp/x.parquet')", "cannot read or write files"),
        ("COPY spans TO '/tmp/leak.csv'", "COPY cannot run here"),
        ("ATTACH '/tmp/other.duckdb'", "ATTACH cannot run here"),
        ("INSTALL httpfs", "INSTALL and LOAD"),
        ("SELECT 1; SELECT 2", "exactly one statement"),
        ("SELECT * FROM no_such_table", "no_such_table"),
        ("SELECT count(*) FROM range(100000000) a, range(100000000) b "
         "WHERE a.range + b.range = -1", "stopped"),
    ],
)
def test_sql_guard(server: ServerProcess, statement: str, fragment: str) -> None:
    response = httpx.post(f"{server.url}/api/sql", json={"sql": statement}, timeout=60)
    assert fragment in assert_error_shape(response, 400)
    assert sql(server, "SELECT 1 AS one") == [[1]]  # still serving


def test_sql_answer_shape_row_cap_and_params(server: ServerProcess) -> None:
    response = httpx.post(
        f"{server.url}/api/sql",
        json={"sql": "SELECT range AS n, now()::TIMESTAMP AS t FROM range(?)", "params": [500]},
    )
    body = response.json()
    assert body["columns"] == ["n", "t"]
    assert len(body["rows"]) == 100  # sql_row_limit of the test config
    assert body["truncated"] is True
    assert isinstance(body["rows"][0][1], str)
    assert body["types"] == ["BIGINT", "TIMESTAMP"]


def test_sql_request_validation(server: ServerProcess) -> None:
    assert "sql" in assert_error_shape(httpx.post(f"{server.url}/api/sql", json={}), 400)
    response = httpx.post(f"{server.url}/api/sql", content=b"not json",
                          headers={"content-type": "application/json"})
    assert_error_shape(response, 400)


def test_traces_list_and_tree(server: ServerProcess, project: str) -> None:
    trace_id = os.urandom(16)
    request = traces_request(4, trace_id=trace_id, service="tree-svc")
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[3].parent_span_id = spans[1].span_id  # a grandchild
    spans[2].status.code = 2
    assert post_otlp(server, request.SerializeToString(), project=project).status_code == 200

    listed = httpx.get(f"{server.url}/api/traces", params={"project": project}).json()
    assert [t["trace_id"] for t in listed["traces"]] == [trace_id.hex()]
    summary = listed["traces"][0]
    assert (summary["span_count"], summary["error_count"], summary["service_name"]) == (
        4, 1, "tree-svc")
    assert summary["root_span_name"] == "span-0"
    assert httpx.get(f"{server.url}/api/traces",
                     params={"project": project, "service": "other"}).json()["traces"] == []
    assert httpx.get(f"{server.url}/api/traces",
                     params={"project": project, "since": "2h"}).json()["traces"] == []
    assert len(httpx.get(f"{server.url}/api/traces",
                         params={"project": project, "since": "2023-01-01T00:00:00Z"}
                         ).json()["traces"]) == 1

    detail = httpx.get(f"{server.url}/api/traces/{trace_id.hex().upper()}").json()
    assert detail["trace_id"] == trace_id.hex()
    (root,) = detail["spans"]
    assert root["name"] == "span-0"
    assert sorted(child["name"] for child in root["children"]) == ["span-1", "span-2"]
    child = next(c for c in root["children"] if c["name"] == "span-1")
    assert [g["name"] for g in child["children"]] == ["span-3"]
    assert root["attributes"] == {"payload": "x" * 16, "index": 0}


def test_traces_errors(server: ServerProcess) -> None:
    assert "no spans" in assert_error_shape(
        httpx.get(f"{server.url}/api/traces/{'ab' * 16}"), 404)
    assert "32 hex" in assert_error_shape(httpx.get(f"{server.url}/api/traces/xyz"), 400)
    assert "duration" in assert_error_shape(
        httpx.get(f"{server.url}/api/traces", params={"since": "yesterday"}), 400)
    assert_error_shape(httpx.get(f"{server.url}/api/traces", params={"limit": 0}), 400)


def test_post_scores(server: ServerProcess) -> None:
    score_id = os.urandom(8).hex()
    payload = {
        "scores": [{"score_id": score_id, "trace_id": "a" * 32, "scorer_id": "api-test",
                    "source": "eval", "status": "success", "score": 0.5,
                    "input": {"q": "hi"}, "created_at": "2026-01-02T03:04:05Z"}],
        "judge_executions": [{"score_id": score_id, "step": "analyze", "input_tokens": 11,
                              "cost_amount": 0.001}],
    }
    response = httpx.post(f"{server.url}/api/scores", json=payload)
    assert response.status_code == 200, response.text
    assert response.json()["written"]["scores"] == 1
    rows = sql(server, "SELECT s.score, s.input, s.created_at, j.input_tokens FROM scores s "
                       "JOIN judge_executions j USING (score_id) WHERE score_id = ?", [score_id])
    assert rows == [[0.5, '{"q":"hi"}', "2026-01-02T03:04:05", 11]]
    bad = httpx.post(f"{server.url}/api/scores", json={"scores": [{"scroe": 1}]})
    assert "unknown columns" in assert_error_shape(bad, 400)


def test_export_parquet(server: ServerProcess, project: str) -> None:
    post_otlp(server, traces_request(3).SerializeToString(), project=project)
    response = httpx.get(f"{server.url}/api/export", params={"table": "spans", "since": "100000d"})
    assert response.status_code == 200
    table = pq.read_table(io.BytesIO(response.content))
    projects = table.column("project").to_pylist()
    assert projects.count(project) == 3
    assert "attributes" in table.column_names
    assert "one of" in assert_error_shape(
        httpx.get(f"{server.url}/api/export", params={"table": "secrets"}), 400)


def test_healthz(server: ServerProcess) -> None:
    body = httpx.get(f"{server.url}/healthz").json()
    assert body["status"] == "ok"
    assert body["grpc_port"] == server.grpc_port
    assert body["writer"]["commits"] >= 0
