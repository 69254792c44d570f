"""CLI commands: serve, sql, export.

Everything heavy (the server, DuckDB, httpx) is imported inside the command bodies so
``tracescore --help`` stays fast. User errors are ``click.ClickException`` sentences.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import click

COMMANDS: list[click.Command] = []

DEFAULT_URL = "http://127.0.0.1:4318"

_url_option = click.option(
    "--url",
    envvar="TRACESCORE_URL",
    default=None,
    help=f"A running tracescore server (default {DEFAULT_URL}; env TRACESCORE_URL).",
)
_db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="Open a database file directly instead (only when no server holds it).",
)
_key_option = click.option(
    "--api-key",
    envvar="TRACESCORE_API_KEY",
    default=None,
    help="Bearer token for a server with API keys (env TRACESCORE_API_KEY).",
)


@click.command("serve")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="Config file to use instead of the embedded default (env TRACESCORE_CONFIG).")
@click.option("--db", default=None, help="DuckDB database file [server.db].")
@click.option("--host", default=None, help="Interface to bind [server.host, 127.0.0.1].")
@click.option("--http-port", type=int, default=None,
              help="OTLP/HTTP, API and dashboard port [server.http_port, 4318].")
@click.option("--grpc-port", type=int, default=None,
              help="OTLP/gRPC port [server.grpc_port, 4317].")
@click.option("--no-grpc", is_flag=True, default=False, help="Do not serve OTLP/gRPC.")
@click.option("--api-key", "api_keys", multiple=True,
              help="Accept this bearer token (repeatable) [server.api_keys].")
@click.option("--insecure", is_flag=True, default=False,
              help="Allow a non-loopback --host without API keys.")
@click.option("--log-level", default=None,
              type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
              help="Server log level [server.log_level, info].")
@click.option("--discard-damaged-wal", is_flag=True, default=False,
              help="Start even when the database's write-ahead log cannot be replayed: open "
                   "without it (or without its damaged part); a copy is kept beside it.")
def serve_command(
    config: str | None,
    db: str | None,
    host: str | None,
    http_port: int | None,
    grpc_port: int | None,
    no_grpc: bool,
    api_keys: tuple[str, ...],
    insecure: bool,
    log_level: str | None,
    discard_damaged_wal: bool,
) -> None:
    """Receive OTLP traces and logs (HTTP and gRPC), store them in DuckDB, serve the API."""
    from tracescore.server import ConfigError, ServeError, check_bind, load_settings, serve

    try:
        settings = load_settings(
            config,
            db=db,
            host=host,
            http_port=http_port,
            grpc_port=grpc_port,
            grpc=False if no_grpc else None,
            api_keys=api_keys or None,
            insecure=True if insecure else None,
            log_level=log_level,
        )
        check_bind(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        serve(settings, discard_damaged_wal=discard_damaged_wal)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    except ServeError as exc:
        raise CannotStart(str(exc)) from None
    except OSError as exc:
        raise CannotStart(f"cannot start the server: {exc}") from None


class CannotStart(click.ClickException):
    """The server cannot start (a port in use, the database held elsewhere): exit code 2."""

    exit_code = 2


COMMANDS.append(serve_command)


def _client(url: str, api_key: str | None, timeout_s: float) -> Any:
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout_s)


def _server_error(response: Any) -> click.ClickException:
    try:
        message = response.json()["error"]["message"]
    except Exception:
        message = response.text[:500] or response.reason_phrase
    return click.ClickException(f"{message} (HTTP {response.status_code})")


def _unreachable(url: str, exc: Exception) -> click.ClickException:
    return click.ClickException(
        f"cannot reach a tracescore server at {url} ({exc}); start one with `tracescore "
        "serve`, or read a database file with --db"
    )


@click.command("sql")
@click.argument("sql")
@_url_option
@_db_option
@_key_option
@click.option("--format", "output_format", type=click.Choice(["table", "json", "csv"]),
              default="table", show_default=True, help="Output format.")
@click.option("--param", "params", multiple=True, help="A value for a ? placeholder (repeatable).")
@click.option("--timeout", "timeout_s", type=float, default=60.0, show_default=True,
              help="HTTP timeout in seconds (the server's own query limit still applies).")
def sql_command(
    sql: str,
    url: str | None,
    db: str | None,
    api_key: str | None,
    output_format: str,
    params: tuple[str, ...],
    timeout_s: float,
) -> None:
    """Run one read-only SQL statement against a server (--url) or a database file (--db)."""
    columns, rows, truncated, reason = run_sql(sql, list(params), url=url, db=db,
                                               api_key=api_key, timeout_s=timeout_s)
    click.echo(format_rows(columns, rows, output_format), nl=False)
    if truncated:
        click.echo(f"(truncated at {len(rows)} rows: {reason or 'a limit was reached'})",
                   err=True)


def run_sql(
    sql: str,
    params: list[Any],
    *,
    url: str | None,
    db: str | None,
    api_key: str | None,
    timeout_s: float,
) -> tuple[list[str], list[list[Any]], bool, str | None]:
    """Run a read-only statement on a server (``url``, default local) or a database file
    (``db``): (columns, rows, truncated, truncated reason); errors are ``ClickException``."""
    if url and db:
        raise click.UsageError("give either --url or --db, not both")
    if db:
        from tracescore.store import Store, StoreError

        try:
            with Store(db, read_only=True) as store:
                result = store.query(sql, params or None)
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
        columns, rows, truncated = result.columns, result.rows, result.truncated
        reason = result.truncated_reason
    else:
        import httpx

        base = url or DEFAULT_URL
        try:
            with _client(base, api_key, timeout_s) as client:
                response = client.post("/api/sql", json={"sql": sql, "params": params})
        except httpx.HTTPError as exc:
            raise _unreachable(base, exc) from None
        if response.status_code != 200:
            raise _server_error(response)
        answer = response.json()
        columns, rows, truncated = answer["columns"], answer["rows"], answer["truncated"]
        reason = answer.get("truncated_reason")
    return columns, rows, bool(truncated), reason


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def format_rows(columns: list[str], rows: list[list[Any]], output_format: str) -> str:
    """Rows as an aligned text table, JSON (a list of objects) or CSV."""
    if output_format == "json":
        return json.dumps([dict(zip(columns, row, strict=True)) for row in rows],
                          ensure_ascii=False, indent=2) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
        return buffer.getvalue()
    cells = [[_cell(v).replace("\n", "\\n") for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [min(max(w, len(v)), 60) for w, v in zip(widths, row, strict=True)]

    def line(values: list[str]) -> str:
        parts = [
            (v if len(v) <= w else v[: w - 1] + "…").ljust(w)
            for v, w in zip(values, widths, strict=True)
        ]
        return " | ".join(parts).rstrip()

    out = [line(columns), "-+-".join("-" * w for w in widths)]
    out.extend(line(row) for row in cells)
    zone = "; times are UTC" if any(_TIMESTAMP.match(v) for row in cells for v in row) else ""
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''}{zone})")
    return "\n".join(out) + "\n"


# A stored time as the API sends it (naive UTC, ISO 8601): the table says which zone it is in.
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$")


COMMANDS.append(sql_command)


@click.command("export")
@click.argument("output", type=click.Path(dir_okay=False, writable=True))
@click.option("--table", default="spans", show_default=True,
              type=click.Choice(["spans", "logs", "traces", "model_calls", "scores",
                                 "judge_executions", "scoring_decisions"]),
              help="What to export.")
@click.option("--since", default=None,
              help="Only rows newer than this: a duration (24h, 30m, 7d) or an ISO-8601 time.")
@_url_option
@_db_option
@_key_option
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True,
              help="HTTP timeout in seconds.")
def export_command(
    output: str,
    table: str,
    since: str | None,
    url: str | None,
    db: str | None,
    api_key: str | None,
    timeout_s: float,
) -> None:
    """Write a table to OUTPUT as Parquet (DuckDB COPY), through a server or from --db."""
    if url and db:
        raise click.UsageError("give either --url or --db, not both")
    target = Path(output)
    if db:
        _export_from_file(db, table, since, target)
    else:
        _export_from_server(url or DEFAULT_URL, api_key, table, since, target, timeout_s)
    import pyarrow.parquet as pq

    rows = pq.read_metadata(target).num_rows
    source = click.get_current_context().get_parameter_source("table")
    hint = (" (the default table; --table picks logs, traces, scores, judge_executions or "
            "scoring_decisions)" if source == click.core.ParameterSource.DEFAULT else "")
    click.echo(f"wrote {rows} row{'' if rows == 1 else 's'} of {table}{hint} to {target}",
               err=True)


def _export_from_file(db: str, table: str, since: str | None, target: Path) -> None:
    from tracescore.server import parse_since
    from tracescore.server._api import export_sql
    from tracescore.store import Store, StoreError

    try:
        since_at = parse_since(since) if since else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    sql, params = export_sql(table, since_at)
    try:
        with Store(db, read_only=True, external_access=True) as store:
            produced = store.export_parquet(sql, params)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    import shutil

    shutil.move(str(produced), str(target))


def _export_from_server(
    url: str, api_key: str | None, table: str, since: str | None, target: Path, timeout_s: float
) -> None:
    import httpx

    query = {"table": table, **({"since": since} if since else {})}
    partial = target.with_name(target.name + ".part")
    try:
        with _client(url, api_key, timeout_s) as client, client.stream(
            "GET", "/api/export", params=query
        ) as response:
            if response.status_code != 200:
                response.read()
                raise _server_error(response)
            with partial.open("wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        partial.unlink(missing_ok=True)
        raise _unreachable(url, exc) from None
    partial.replace(target)


COMMANDS.append(export_command)

__all__ = ["COMMANDS", "format_rows"]
