"""Defect 3 of issue 12: SQL answers are bounded in bytes and time, and do not stall the server.

On the old code ``sql_row_limit`` capped rows, not bytes, and ``sql_timeout_seconds`` covered
DuckDB but not fetching, converting and serializing the answer: a 200 MB answer grew the server
by about 1 GB, and a 2-million-row answer with a 1 s limit took 80 s and 2.7 GB. Now the rows
stop at ``sql_max_bytes`` with ``"truncated": true`` and the reason, the time limit covers the
whole request, and the work runs off the event loop. ``tracescore sql --db`` is bounded too.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, peak_rss_growth, running_server

from tracescore.store import Store

from ._helpers import answers_during

MAX_BYTES = 4 * 1024 * 1024
WIDE = "SELECT repeat('x', 1000) AS v FROM range(200000)"  # a 200 MB answer unbounded
SLOW_TO_CONVERT = (
    "SELECT range AS a, now() AS t, {'a': range, 'b': 'text'} AS s, [range, range] AS l "
    "FROM range(2000000)"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with a 4 MiB answer cap and no practical row cap."""
    root = tmp_path_factory.mktemp("sql-limits")
    config = root / "sql.toml"
    config.write_text(
        f"[server]\nsql_max_bytes = {MAX_BYTES}\nsql_row_limit = 10000000\n"
    )
    with running_server(root / "sql.duckdb", args=["--config", str(config)]) as s:
        yield s


def _post_sql(server: ServerProcess, sql: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/sql", json={"sql": sql}, timeout=300)


def test_answer_stops_at_sql_max_bytes_and_memory_stays_bounded(server: ServerProcess) -> None:
    assert server.process is not None
    response, growth = peak_rss_growth(server.process.pid, lambda: _post_sql(server, WIDE))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["truncated"] is True
    assert "sql_max_bytes" in answer["truncated_reason"]
    assert 0 < len(answer["rows"]) < 200_000
    assert len(response.content) <= MAX_BYTES + 1024
    # unbounded, the server grew by about five times the 200 MB answer
    assert growth < 100 * 1024 * 1024, growth // 2**20


def test_row_limit_truncation_says_so(tmp_path: Path) -> None:
    config = tmp_path / "rows.toml"
    config.write_text("[server]\nsql_row_limit = 100\n")
    with running_server(tmp_path / "rows.duckdb", args=["--config", str(config)]) as server:
        answer = _post_sql(server, "SELECT * FROM range(1000)").json()
        assert len(answer["rows"]) == 100 and answer["truncated"] is True
        assert "sql_row_limit" in answer["truncated_reason"]
        whole = _post_sql(server, "SELECT * FROM range(100)").json()
        assert len(whole["rows"]) == 100 and whole["truncated"] is False
        assert whole["truncated_reason"] is None


def test_time_limit_covers_building_the_answer_and_health_keeps_answering(
    tmp_path: Path,
) -> None:
    config = tmp_path / "slow.toml"  # no byte cap in the way: only the time limit stops it
    config.write_text(
        "[server]\nsql_max_bytes = 1000000000\nsql_timeout_seconds = 1.0\n"
        "sql_row_limit = 10000000\n"
    )
    with running_server(tmp_path / "slow.duckdb", args=["--config", str(config)]) as server:

        def query() -> tuple[httpx.Response, float]:
            started = time.perf_counter()
            response = _post_sql(server, SLOW_TO_CONVERT)
            return response, time.perf_counter() - started

        health_answers, (response, query_s) = answers_during(f"{server.url}/healthz", query)
    # DuckDB produces these rows in well under a second; converting all of them (~170 MB of
    # JSON) takes many seconds: the limit has to stop the conversion
    assert response.status_code == 400, response.text[:300]
    assert "longer than 1 s" in response.json()["error"]["message"]
    # Converted on the event loop (the old code), /healthz could not answer at all while the
    # query ran; off the loop it answers every poll (~50 times a second when the machine is
    # free). A count, not a duration: it holds on a loaded machine too.
    assert health_answers >= 3, (health_answers, query_s)


def test_sql_cli_on_a_database_file_is_bounded(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    Store(db).open().close()
    result = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "sql",
         "SELECT repeat('x', 10000) AS v FROM range(10000)", "--db", str(db), "--format", "csv"],
        capture_output=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "sql_max_bytes" in result.stderr.decode()
    rows = result.stdout.count(b"\n") - 1
    assert 0 < rows < 10_000
    assert len(result.stdout) <= Store(db).sql_max_bytes + 64 * 1024
