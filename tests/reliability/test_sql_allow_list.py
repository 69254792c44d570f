"""Issue 27 defects 1 and 2: the SQL guard admits functions by an allow-list.

Through a real ``tracescore serve`` process. On the old code ``SELECT * FROM enable_logging(...,
storage='file', storage_path='/nonexistent/logs')`` passed the guard and DuckDB's log writer
ended the process with SIGABRT; ``checkpoint()``, ``enable_profiling()`` and the other
statements-as-functions ran; ``pg_settings`` (and ``DESCRIBE``/``SUMMARIZE`` of it) showed every
setting with the database and temp paths, and ``POST /api/datasets/items-from-traces`` echoed
them. Now every one is a 400 with a sentence, the process stays up, and what an analyst needs
(``range``, ``unnest``, ``json_each``, ``generate_series``, ``information_schema``) still runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, running_server

KEY = "allow-list-key-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server with a key, its database in a directory whose name must never leak."""
    root = tmp_path_factory.mktemp("allow-list-secret-dir")
    with running_server(root / "allowed.duckdb", api_key=KEY) as running:
        yield running


def ask(server: ServerProcess, sql: str) -> httpx.Response:
    with server.client() as client:
        return client.post("/api/sql", json={"sql": sql})


def assert_alive(server: ServerProcess) -> None:
    assert server.process is not None and server.process.poll() is None, server.log()[-2000:]
    assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200


def assert_refused(server: ServerProcess, response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    assert str(Path(server.db).parent) not in response.text
    assert "allow-list-secret-dir" not in response.text
    message: str = response.json()["error"]["message"]
    assert "cannot run here" in message
    return message


ABORTING = (
    "SELECT * FROM enable_logging(level='INFO', storage='file', "
    "storage_path='/nonexistent/logs')"
)


def test_the_statement_that_aborted_the_process_is_refused(server: ServerProcess) -> None:
    message = assert_refused(server, ask(server, ABORTING))
    assert message.startswith("enable_logging() cannot run here")
    assert_alive(server)
    # and the logging it would have switched on stays off: a query still answers normally
    response = ask(server, "SELECT count(*) FROM spans")
    assert response.status_code == 200 and response.json()["rows"] == [[0]]


SIDE_EFFECTS = [
    "SELECT * FROM checkpoint()",
    "FROM force_checkpoint()",
    "SELECT * FROM enable_logging()",
    "SELECT * FROM disable_logging()",
    "SELECT * FROM truncate_duckdb_logs()",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM disable_profiling()",
    "SELECT * FROM main.checkpoint()",
    'SELECT * FROM "Enable_Logging"()',
    "WITH x AS (SELECT * FROM checkpoint()) SELECT * FROM x",
    "SELECT (SELECT count(*) FROM enable_profiling()) AS n",
    "SELECT * FROM query('SELECT * FROM checkpoint()')",
    "SELECT nextval('s')",
    "SELECT setseed(0.5)",
    "SELECT write_log('x')",
    "SELECT sleep_ms(1)",
    "SELECT pg_sleep(1)",
    "SELECT get_block_size('allowed')",
    "SELECT * FROM duckdb_logs_parsed('x')",
    "SELECT * FROM duckdb_profiling_settings()",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM parquet_metadata('/tmp/x.parquet')",
]


@pytest.mark.parametrize("sql", SIDE_EFFECTS)
def test_side_effect_functions_are_refused(server: ServerProcess, sql: str) -> None:
    assert_refused(server, ask(server, sql))


SETTINGS = [
    "SELECT * FROM pg_catalog.pg_settings",
    "SELECT * FROM pg_settings",
    "SELECT setting FROM pg_settings WHERE name = 'temp_directory'",
    "SUMMARIZE pg_settings",
    "SUMMARIZE pg_catalog.pg_settings",
    "DESCRIBE pg_settings",
    "DESCRIBE pg_catalog.pg_settings",
    "SUMMARIZE SELECT * FROM pg_settings",
    "SELECT * FROM system.pg_catalog.pg_settings",
    "SELECT * FROM query_table('pg_settings')",
    "SELECT * FROM pg_catalog.pg_database",
    "SELECT * FROM sqlite_master",
]


@pytest.mark.parametrize("sql", SETTINGS)
def test_settings_views_are_refused(server: ServerProcess, sql: str) -> None:
    message = assert_refused(server, ask(server, sql))
    assert "reveals the server's" in message


def test_items_from_traces_does_not_echo_settings(server: ServerProcess) -> None:
    with server.client() as client:
        for sql in ("SELECT setting AS trace_id FROM pg_settings",
                    "SELECT value AS trace_id FROM duckdb_settings()",
                    "SELECT current_database() || '/x' AS trace_id"):
            response = client.post("/api/datasets/items-from-traces", json={"sql": sql})
            assert response.status_code == 400, response.text
            assert str(Path(server.db).parent) not in response.text
            assert "allow-list-secret-dir" not in response.text
            assert "tmp" not in response.json()["error"]["message"]
    assert_alive(server)


ADMITTED = [
    ("SELECT * FROM range(3)", [[0], [1], [2]]),
    ("SELECT * FROM generate_series(1, 2)", [[1], [2]]),
    ("SELECT unnest([1, 2]) AS x", [[1], [2]]),
    ("SELECT * FROM unnest([3])", [[3]]),
    ("""SELECT key, value FROM json_each('{"a": 1}')""", [["a", "1"]]),
    ("SELECT count(*) > 0 FROM json_tree('[1, [2]]')", [[True]]),
    ("SELECT json_extract_string('{\"a\": \"b\"}', '$.a')", [["b"]]),
    ("SELECT regexp_split_to_table('a,b', ',') AS x", [["a"], ["b"]]),
    ("SELECT count(*) > 5 FROM information_schema.columns WHERE table_name = 'spans'",
     [[True]]),
    ("SELECT count(*) FROM information_schema.tables WHERE table_name = 'scores'", [[1]]),
    ("SELECT length(uuid()::VARCHAR), random() < 1", [[36, True]]),
    ("SELECT row_number() OVER () AS n FROM range(2)", [[1], [2]]),
    ("SELECT list_transform([1, 2], lambda x: x * 2) AS l", [[[2, 4]]]),
]


@pytest.mark.parametrize(("sql", "rows"), ADMITTED)
def test_what_an_analyst_needs_still_runs(server: ServerProcess, sql: str,
                                          rows: list[list[object]]) -> None:
    response = ask(server, sql)
    assert response.status_code == 200, (sql, response.text)
    assert response.json()["rows"] == rows
