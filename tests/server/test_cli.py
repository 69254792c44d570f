"""``tracescore sql``, ``export`` and ``serve`` errors (tracescore.cli._server_commands)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner
from ingest.otlp_payloads import traces_request
from server_process import ServerProcess, free_port

from tracescore.cli import main
from tracescore.ingest import decode_traces_protobuf
from tracescore.store import Store

from .helpers import post_otlp


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_sql_formats_through_the_server(server: ServerProcess, project: str) -> None:
    post_otlp(server, traces_request(3).SerializeToString(), project=project)
    query = "SELECT name, project FROM spans WHERE project = ? ORDER BY name"
    code, out, _ = _run("sql", query, "--param", project, "--url", server.url)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split(" | ")[0].strip() == "name"
    assert lines[2].startswith("span-0")
    assert lines[-1] == "(3 rows)"
    code, out, _ = _run("sql", query, "--param", project, "--url", server.url, "--format", "json")
    assert json.loads(out)[0] == {"name": "span-0", "project": project}
    code, out, _ = _run("sql", query, "--param", project, "--url", server.url, "--format", "csv")
    assert list(csv.reader(io.StringIO(out)))[:2] == [["name", "project"], ["span-0", project]]
    # Times say their zone (the dashboard can show local time; the CLI shows UTC).
    code, out, _ = _run("sql", "SELECT min(start_time) AS t FROM spans WHERE project = ?",
                        "--param", project, "--url", server.url)
    assert code == 0 and out.splitlines()[-1] == "(1 row; times are UTC)"


def test_sql_errors_are_sentences(server: ServerProcess) -> None:
    code, _, err = _run("sql", "DELETE FROM spans", "--url", server.url)
    assert code == 1 and "read-only" in err and "HTTP 400" in err
    code, _, err = _run("sql", "SELECT 1", "--url", f"http://127.0.0.1:{free_port()}")
    assert code == 1 and "cannot reach a tracescore server" in err
    code, _, err = _run("sql", "SELECT 1", "--url", server.url, "--db", "x.duckdb")
    assert code == 2 and "either --url or --db" in err


def _filled_db(path: Path, spans: int = 4) -> Path:
    with Store(path) as store:
        store.write_spans_sync(decode_traces_protobuf(traces_request(spans).SerializeToString()))
    return path


def test_sql_and_export_on_a_database_file(tmp_path: Path) -> None:
    db = _filled_db(tmp_path / "file.duckdb")
    code, out, _ = _run("sql", "SELECT count(*) AS n FROM spans", "--db", str(db),
                        "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 4}]
    code, _, err = _run("sql", "SELECT * FROM read_text('/etc/hostname')", "--db", str(db))
    assert code == 1 and "cannot read or write files" in err
    target = tmp_path / "out" / "spans.parquet"
    target.parent.mkdir()
    code, _, err = _run("export", str(target), "--db", str(db), "--since", "100000d")
    assert code == 0, err
    assert pq.read_table(target).num_rows == 4
    assert "wrote 4 rows of spans (the default table; --table picks" in err
    assert str(target) in err
    code, _, err = _run("export", str(tmp_path / "none.parquet"), "--db", str(db), "--since", "1h",
                        "--table", "spans")
    assert code == 0 and pq.read_table(tmp_path / "none.parquet").num_rows == 0
    assert "wrote 0 rows of spans to" in err and "default table" not in err
    code, _, err = _run("export", str(target), "--db", str(db), "--since", "soon")
    assert code == 2 and "duration" in err


def test_export_through_the_server(server: ServerProcess, tmp_path: Path, project: str) -> None:
    post_otlp(server, traces_request(2).SerializeToString(), project=project)
    target = tmp_path / "traces.parquet"
    code, _, err = _run("export", str(target), "--table", "traces", "--url", server.url)
    assert code == 0, err
    table = pq.read_table(target)
    assert "span_count" in table.column_names and table.num_rows >= 1
    assert f"of traces to {target}" in err and f"wrote {table.num_rows} row" in err


def test_serve_config_errors_are_sentences(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[server]\nport = 1\n")
    code, _, err = _run("serve", "--config", str(config))
    assert code == 1
    assert "bad.toml" in err and "[server].port" in err
    code, _, err = _run("serve", "--config", str(tmp_path / "missing.toml"))
    assert code == 1 and "does not exist" in err


def test_config_default_prints_a_config_to_start_from(tmp_path: Path) -> None:
    import tomllib

    from tracescore.server import default_config_path, load_settings

    code, out, _ = _run("config", "default")
    assert code == 0 and out == default_config_path().read_text()
    saved = tmp_path / "mine.toml"
    saved.write_text(out.replace("http_port = 4318", "http_port = 4400"))
    document = tomllib.loads(saved.read_text())
    assert {entry["id"] for entry in document["scorers"]} >= {"no-tool-errors", "faithfulness"}
    assert load_settings(saved).http_port == 4400
