"""Issue 12 defect 8 (second half): /api/sql must not reveal the server's paths or settings.

Through a real ``tracescore serve`` process: ``duckdb_databases()`` and ``duckdb_settings()``
used to answer with the database file's absolute path and the temp directory. Now every
function or view that reveals paths, settings or internals is refused with a sentence, however
it is spelled or hidden (subquery, CTE, view form, quoted, ``query('...')``), while schema
introspection keeps working and every write/file/extension/settings statement stays refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, running_server

KEY = "guard-key-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server (with a key, as a deployed one would run)."""
    root = tmp_path_factory.mktemp("guard-secret-dir")
    with running_server(root / "guarded.duckdb", api_key=KEY) as running:
        yield running


def ask(server: ServerProcess, sql: str) -> httpx.Response:
    with server.client() as client:
        return client.post("/api/sql", json={"sql": sql})


def refusal(server: ServerProcess, sql: str) -> str:
    """The 400 sentence for ``sql``, checked to leak no path of the server."""
    response = ask(server, sql)
    assert response.status_code == 400, (sql, response.text)
    message: str = response.json()["error"]["message"]
    assert str(Path(server.db).parent) not in response.text
    assert "guard-secret-dir" not in response.text
    return message


REVEALING = [
    "SELECT * FROM duckdb_databases()",
    "SELECT path FROM duckdb_databases() WHERE path IS NOT NULL",
    "SELECT * FROM duckdb_settings()",
    "SELECT value FROM duckdb_settings() WHERE name = 'temp_directory'",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM duckdb_temporary_files()",
    "SELECT * FROM duckdb_memory()",
    "SELECT * FROM duckdb_variables()",
    "FROM duckdb_logs",
    "SELECT current_setting('temp_directory')",
    "SELECT current_setting('extension_directory') AS d",
    "FROM pragma_database_list",
    "SELECT * FROM pragma_database_size()",
    "SELECT * FROM pragma_user_agent()",
    "FROM duckdb_databases",
    "FROM system.main.duckdb_databases",
    'SELECT * FROM "DUCKDB_SETTINGS"()',
    "SELECT * FROM main.Duckdb_Databases()",
    "SELECT (SELECT path FROM duckdb_databases() LIMIT 1) AS p",
    "WITH d AS (SELECT * FROM duckdb_databases()) SELECT * FROM d",
    "SELECT * FROM spans, LATERAL (SELECT current_setting('threads')) LIMIT 1",
    "SELECT 1 ORDER BY current_setting('memory_limit')",
    "SELECT * FROM spans WHERE name IN (SELECT name FROM duckdb_settings())",
    "SELECT * FROM query('SELECT * FROM duckdb_databases()')",
    "SELECT * FROM query_table('duckdb_settings')",
    "SELECT * FROM query_table('duckdb_' || 'settings')",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
    "SHOW duckdb_settings",
    "SUMMARIZE SELECT * FROM duckdb_settings()",
]


@pytest.mark.parametrize("sql", REVEALING)
def test_functions_revealing_paths_or_settings_are_refused(server: ServerProcess,
                                                           sql: str) -> None:
    message = refusal(server, sql)
    assert "cannot run here" in message


def test_the_refusal_names_the_function_and_the_way_out(server: ServerProcess) -> None:
    message = refusal(server, "SELECT path FROM duckdb_databases()")
    assert message.startswith("duckdb_databases() cannot run here")
    assert "duckdb_tables()" in message and "DESCRIBE" in message


@pytest.mark.parametrize("sql", [
    "SELECT table_name FROM duckdb_tables() WHERE table_name = 'spans'",
    "SELECT count(*) > 5 FROM duckdb_columns() WHERE table_name = 'spans'",
    "SELECT count(*) > 0 FROM duckdb_views()",
    "SELECT count(*) > 0 FROM duckdb_schemas()",
    "SELECT count(*) > 0 FROM duckdb_functions()",
    "SELECT count(*) > 0 FROM duckdb_types()",
    "SELECT count(*) >= 0 FROM duckdb_indexes()",
    "SELECT count(*) > 0 FROM information_schema.columns WHERE table_name = 'scores'",
    "SELECT count(*) > 0 FROM pragma_table_info('spans')",
    "SELECT * FROM query('SELECT 1 AS one')",
    "SELECT count(*) >= 0 FROM query_table('spans')",
    "SELECT 'duckdb_settings() is only text here' AS s",
    "DESCRIBE spans",
    "SHOW TABLES",
    "SHOW DATABASES",
])
def test_schema_introspection_still_works(server: ServerProcess, sql: str) -> None:
    response = ask(server, sql)
    assert response.status_code == 200, (sql, response.text)
    assert response.json()["rows"]
    assert str(Path(server.db).parent) not in response.text


@pytest.mark.parametrize(("sql", "words"), [
    ("-- just a comment", "only a comment"),
    ("/* a block comment */", "only a comment"),
    (";", "no statement"),
    ("   ", "empty"),
    ("SELECT 1; SELECT 2", "holds 2 statements"),
])
def test_refusals_read_as_sentences(server: ServerProcess, sql: str, words: str) -> None:
    message = refusal(server, sql)
    assert words in message
    assert "got 0" not in message and "send" in message


@pytest.mark.parametrize("sql", [
    "DELETE FROM spans",
    "INSERT INTO scores (score_id) VALUES ('x')",
    "CREATE TABLE t AS SELECT 1",
    "COPY spans TO '/tmp/leak.csv'",
    "ATTACH '/tmp/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET threads = 1",
    "RESET threads",
    "PRAGMA database_list",
    "CALL duckdb_settings()",
    "EXPORT DATABASE '/tmp/x'",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM glob('/*')",
])
def test_writes_files_extensions_and_settings_stay_refused(server: ServerProcess,
                                                           sql: str) -> None:
    refusal(server, sql)
    assert ask(server, "SELECT count(*) FROM spans").status_code == 200
