"""CLI commands: scorers, backfill, demo.

Each talks to a running server (``--url``, default http://127.0.0.1:4318) or works on a
database file no server holds (``--db``, with the registry of ``--config`` or the embedded
default). Everything heavy is imported inside the command bodies.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from ._demo_notes import failing_judge, judge_explanations
from ._server_commands import (
    DEFAULT_URL,
    _client,
    _db_option,
    _key_option,
    _server_error,
    _unreachable,
    _url_option,
    format_rows,
)

COMMANDS: list[click.Command] = []

_config_option = click.option(
    "--config", "config", type=click.Path(dir_okay=False), default=None,
    help="The config whose [[scorers]] to use: with --db the registry itself (default: the "
         "embedded default); with --url it names the scorers and is compared with the "
         "server's registry.")

SCORER_COLUMNS = ("id", "state", "scored", "failed", "not_scorable", "pending", "retrying",
                  "sampled_out", "filtered_out", "over_budget", "avg_score", "judge_tokens",
                  "judge_cost_usd", "cache_hits", "saved_usd", "judge_calls", "last_error",
                  "agreement")


def _pick(url: str | None, db: str | None) -> None:
    if url and db:
        raise click.UsageError("give either --url or --db, not both")


def _file_setup(config: str | None) -> tuple[Any, Any, dict[str, str], Path]:
    """Live settings, registry, start-up pauses and path of ``config`` (or the default)."""
    from tracescore.live import ConfigError as LiveConfigError
    from tracescore.live import check_judges, load_live_config
    from tracescore.server import ConfigError, read_config

    try:
        path, document = read_config(config or os.environ.get("TRACESCORE_CONFIG") or None)
        settings, registry = load_live_config(
            document, source=str(path), base_dir=path.resolve().parent,
            judge_model=os.environ.get("TRACESCORE_JUDGE_MODEL") or None,
            judge_api_base=os.environ.get("TRACESCORE_JUDGE_API_BASE") or None)
        paused = check_judges(registry, source=str(path), warn=False)
    except (ConfigError, LiveConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    return settings, registry, paused, path


def _offline(db: str, config: str | None, *, read_only: bool) -> tuple[Any, Any]:
    """An idle scheduler over ``db`` with the registry of ``config``, and its store."""
    from tracescore.live import LiveScheduler, start_paused
    from tracescore.store import Store, StoreError

    settings, registry, paused, _ = _file_setup(config)
    try:
        store = Store(db, read_only=read_only).open()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    live = LiveScheduler(store, registry, settings)
    start_paused(live, paused)
    return live, store


def registry_differences(server_rows: list[dict[str, Any]], registry: Any,
                         path: Path) -> list[str]:
    """Sentences on how the server's scorers differ from the registry of config ``path``."""
    on_server = {row["id"]: row for row in server_rows}
    notes = []
    for reg in registry:
        row = on_server.get(reg.id)
        if row is None:
            notes.append(f"{reg.id}: in {path} but not on the server (restart the server "
                         f"with --config {path} to run it)")
        elif row.get("version") != reg.version:
            notes.append(f"{reg.id}: the server runs version {str(row.get('version'))[:8]}, "
                         f"{path} defines version {reg.version[:8]}")
    in_file = {reg.id for reg in registry}
    notes += [f"{sid}: on the server but not in {path}" for sid in on_server
              if sid not in in_file]
    return notes


def _get(url: str, api_key: str | None, path: str, *, body: Any = None,
         timeout_s: float | None = 60.0) -> Any:
    import httpx

    try:
        with _client(url, api_key, timeout_s) as client:  # type: ignore[arg-type]
            response = (client.post(path, json=body) if body is not None
                        else client.get(path))
    except httpx.HTTPError as exc:
        raise _unreachable(url, exc) from None
    if response.status_code != 200:
        raise _server_error(response)
    return response.json()


_table_json_option = click.option(
    "--format", "output_format", type=click.Choice(["table", "json"]), default="table",
    show_default=True, help="Output format.")


@click.command("scorers")
@_url_option
@_db_option
@_config_option
@_key_option
@_table_json_option
def scorers_command(url: str | None, db: str | None, config: str | None, api_key: str | None,
                    output_format: str) -> None:
    """Each registered scorer: state (and why), decision counts, retrying pairs, the last error,
    average score, judge tokens and cost."""
    import json

    _pick(url, db)
    differences: list[str] = []
    if db:
        from tracescore.labels import with_agreement
        from tracescore.live import scorer_attention, scorer_summary

        live, store = _offline(db, config, read_only=True)
        try:
            status = live.status()
            for row in status:
                if row["state"] == "running":
                    row["state"] = "configured"
            rows = with_agreement(store.read, scorer_attention(
                store.read, scorer_summary(store.read, status)))
        finally:
            store.close()
    else:
        rows = _get(url or DEFAULT_URL, api_key, "/api/live/scorers")["scorers"]
        if config:
            _, registry, _, path = _file_setup(config)
            differences = registry_differences(rows, registry, path)
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2, default=str))
        for line in differences:
            click.echo(line, err=True)
        return
    table = [[_value(row, name) for name in SCORER_COLUMNS] for row in rows]
    click.echo(format_rows(list(SCORER_COLUMNS), table, "table"), nl=False)
    for row in rows:
        if row.get("note"):
            click.echo(f"{row['id']}: {row['state']}: {row['note']}")
    if differences:
        click.echo("the running server's registry differs from the config file:")
        for line in differences:
            click.echo(f"  {line}")


def _value(row: dict[str, Any], name: str) -> Any:
    from tracescore.live import short_text

    if name == "judge_tokens":
        return (row.get("judge_input_tokens") or 0) + (row.get("judge_output_tokens") or 0)
    if name == "last_error":
        return short_text(row.get("last_error"))
    if name == "judge_cost_usd" and row.get("judge_unpriced"):
        cost = row.get("judge_cost_usd")
        return "unpriced" if not cost else f"{cost:.6f} + unpriced"
    if name in ("cache_hits", "saved_usd"):
        value = row.get("judge_cache_hits" if name == "cache_hits" else "judge_saved_usd")
        return f"{value:.6f}" if isinstance(value, float) else value or 0
    if name == "judge_calls":
        calls, oldest = row.get("judge_calls_in_flight") or 0, row.get("oldest_judge_call_seconds")
        return f"{calls} (oldest {oldest:.0f} s)" if calls and oldest is not None else calls
    if name == "agreement":
        from tracescore.labels import describe

        return describe(row.get("agreement"))
    value = row.get(name)
    if isinstance(value, float):
        return f"{value:.4g}" if name != "judge_cost_usd" else f"{value:.6f}"
    return value


COMMANDS.append(scorers_command)


@click.command("backfill")
@click.option("--scorer", "scorer_id", required=True, help="The id of the scorer to run.")
@click.option("--since", default="24h", show_default=True,
              help="Traces that started after this: a duration (24h, 7d) or an ISO time.")
@click.option("--until", default=None, help="Traces that started before this (default: now).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N traces.")
@click.option("--dry-run", is_flag=True, default=False,
              help="Only count the pairs and estimate judge tokens and cost.")
@_url_option
@_db_option
@_config_option
@_key_option
def backfill_command(scorer_id: str, since: str, until: str | None, limit: int | None,
                     dry_run: bool, url: str | None, db: str | None, config: str | None,
                     api_key: str | None) -> None:
    """Score past traces with one scorer (source 'backfill'), through the live path."""
    _pick(url, db)
    if db:
        report = _backfill_file(db, config, scorer_id, since, until, limit, dry_run)
    else:
        if config:
            _check_server_has(url or DEFAULT_URL, api_key, config, scorer_id)
        body = {"scorer": scorer_id, "since": since, "until": until, "limit": limit,
                "dry_run": dry_run}
        report = _get(url or DEFAULT_URL, api_key, "/api/live/backfill", body=body,
                      timeout_s=None)
    click.echo(describe_backfill(report))


def _backfill_file(db: str, config: str | None, scorer_id: str, since: str,
                   until: str | None, limit: int | None, dry_run: bool) -> dict[str, Any]:
    from tracescore.live import backfill
    from tracescore.server import parse_since

    try:
        since_at = parse_since(since) if since else None
        until_at = parse_since(until) if until else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since/--until") from None
    return run_on_file(db, config, lambda live: backfill(
        live, scorer_id, since=since_at, until=until_at, limit=limit, dry_run=dry_run))


def run_on_file(db: str, config: str | None,
                work: Callable[[Any], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """``work(live)`` on an idle scheduler over database file ``db`` (``--db``): prepared
    first, stopped after (the judge cache's answers are written before the store closes); the
    project's errors become one sentence."""
    from tracescore.model import TracescoreError

    live, store = _offline(db, config, read_only=False)

    async def run() -> dict[str, Any]:
        await live.prepare()
        try:
            return await work(live)
        finally:
            await live.stop()

    try:
        return asyncio.run(run())
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


def _check_server_has(url: str, api_key: str | None, config: str, scorer_id: str) -> None:
    """With --url and --config: refuse a scorer only the file has; warn when versions differ."""
    _, registry, _, path = _file_setup(config)
    rows = _get(url, api_key, "/api/live/scorers")["scorers"]
    on_server = {row["id"]: row for row in rows}
    mine = registry.get(scorer_id)
    if scorer_id not in on_server and mine is not None:
        raise click.ClickException(
            f"scorer {scorer_id!r} is in {path} but the server at {url} does not have it; "
            f"restart the server with --config {path}, or stop it and run backfill with --db "
            "and --config")
    if scorer_id not in on_server:
        known = ", ".join(sorted({*on_server, *(reg.id for reg in registry)})) or "none"
        raise click.ClickException(
            f"scorer {scorer_id!r} is neither in {path} nor on the server at {url}; the "
            f"scorers are: {known}")
    if mine is not None and on_server[scorer_id].get("version") != mine.version:
        click.echo(f"note: the server runs {scorer_id} version "
                   f"{str(on_server[scorer_id].get('version'))[:8]}, {path} defines version "
                   f"{mine.version[:8]}; backfilling with the server's", err=True)


def describe_backfill(report: dict[str, Any]) -> str:
    """A few lines for people about a backfill report."""
    who = f"{report['scorer']} (version {report['version']})"
    if "sessions" in report:  # a target = "session" scorer: quiet conversations, not traces
        lines = [f"{report['sessions']} quiet session state(s) not yet decided by {who}"]
    else:
        not_settled = report.get("not_settled") or 0
        lines = [f"{report['traces']} settled trace(s) not yet decided by {who}"
                 + (f"; {not_settled} still in progress" if not_settled else "")]
    if report["dry_run"]:
        skipped = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.items()
                            if k in ("sampled_out", "filtered_out", "failed") and n)
        lines.append(f"{report['pairs']} pair(s) to score" + (f" ({skipped})" if skipped else ""))
    return "\n".join(lines + outcome_lines(report, dry="dry run: nothing was scored"))


def outcome_lines(report: dict[str, Any], *, dry: str) -> list[str]:
    """The end of a backfill or rescore report for people: the judge-spend estimate and
    ``dry`` for a dry run, else each decision's count."""
    if not report["dry_run"]:
        return [", ".join(f"{k.replace('_', ' ')}: {n}" for k, n in
                          sorted(report["decisions"].items())) or "nothing to do"]
    tokens, cost = report["estimated_judge_tokens"], report["estimated_judge_cost_usd"]
    if tokens is None:
        return [f"judge spend: unknown ({report['estimate_basis']})", dry]
    return [f"estimated judge tokens {tokens}, cost ${cost:.4f} ({report['estimate_basis']})",
            dry]


COMMANDS.append(backfill_command)


@click.command("demo")
@_url_option
@_key_option
@click.option("--traces", "count", type=click.IntRange(1, 1000), default=6, show_default=True,
              help="How many agent runs to send.")
@click.option("--timeout", "timeout_s", type=float, default=90.0, show_default=True,
              help="How long to wait for the scores (seconds).")
@click.option("--keep-running", is_flag=True, default=False,
              help="Keep the demo server up afterwards (Ctrl-C stops it).")
def demo_command(url: str | None, api_key: str | None, count: int, timeout_s: float,
                 keep_running: bool) -> None:
    """Send a few agent traces through the OpenTelemetry SDK and print their live scores.

    Starts a server on a temporary database (or uses --url), sends the traces, waits for live
    scoring and prints the score table. Judge scorers join in when TRACESCORE_JUDGE_MODEL is set.
    """
    from tracescore.live import send_agent_traces

    server: subprocess.Popen[bytes] | None = None
    workdir = tempfile.TemporaryDirectory(prefix="tracescore-demo-")
    try:
        if url is None:
            url, server = _start_demo_server(Path(workdir.name))
            click.echo(f"started a demo server on {url} (database in {workdir.name})", err=True)
        try:
            ids = send_agent_traces(url, count=count, api_key=api_key)
        except RuntimeError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"sent {len(ids)} agent traces through the OpenTelemetry SDK; "
                   "waiting for live scoring…", err=True)
        _wait_for_scores(url, api_key, ids, timeout_s)
        listed = ", ".join(f"'{t}'" for t in ids)
        answer = _get(url, api_key, "/api/sql", body={"sql": (
            "SELECT substr(trace_id, 1, 8) AS trace, scorer_id, status, round(score, 3) AS score,"
            " judge_total_tokens AS judge_tokens, round(judge_cost, 6) AS judge_cost, reason "
            f"FROM scores WHERE trace_id IN ({listed}) ORDER BY trace_id, scorer_id")})
        click.echo(format_rows(answer["columns"], answer["rows"], "table"), nl=False)
        click.echo("trace ids are shortened to 8 digits; any unique prefix works, e.g. "
                   f"`tracescore trace show {ids[0][:8]} --url {url}`", err=True)
        if keep_running and server is not None:
            click.echo(f"the demo server keeps running on {url}; Ctrl-C stops it", err=True)
            server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None and server.poll() is None:
            server.terminate()
            server.wait(30)
        workdir.cleanup()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_demo_server(workdir: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """``tracescore serve`` on a temp database with quick settling, and its URL."""
    import httpx

    from tracescore.server import default_config_path

    text = default_config_path().read_text(encoding="utf-8")
    text = re.sub(r"(?m)^settle_seconds = .*$", "settle_seconds = 1", text)
    text = re.sub(r"(?m)^interval_seconds = .*$", "interval_seconds = 0.5", text)
    config = workdir / "demo.toml"
    config.write_text(text, encoding="utf-8")
    port = _free_port()
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", "serve", "--config", str(config),
         "--db", str(workdir / "demo.duckdb"), "--http-port", str(port), "--no-grpc"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise click.ClickException(
                "the demo server did not start:\n" + (workdir / "server.log").read_text())
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return url, process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.terminate()
    raise click.ClickException("the demo server did not answer within 60 s")


def _wait_for_scores(url: str, api_key: str | None, ids: list[str], timeout_s: float) -> None:
    """Wait until every trace is decided by every running scorer and nothing is open; stop
    early when what is still open waits only on judges that keep failing, and say why each
    judge scorer that did not score did not (paused, no judge model, failing)."""
    listed = ", ".join(f"'{t}'" for t in ids)
    sql = ("SELECT count(DISTINCT trace_id || '/' || scorer_id) AS decided, "
           "count(*) FILTER (WHERE decision IN ('pending', 'retrying', 'over_budget')) AS open "
           f"FROM scoring_decisions WHERE trace_id IN ({listed})")
    scorers = _get(url, api_key, "/api/live/scorers")["scorers"]
    running = [s["id"] for s in scorers if s["state"] == "running"]
    deadline = time.monotonic() + timeout_s
    failing: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        decided, still_open = _get(url, api_key, "/api/sql", body={"sql": sql})["rows"][0]
        if decided >= len(ids) * len(running) and still_open == 0:
            break
        if decided >= len(ids) * len(running):
            scorers = _get(url, api_key, "/api/live/scorers")["scorers"]
            waiting = [s for s in scorers if s.get("pending")]
            failing = [s for s in waiting if failing_judge(s)]
            if waiting and len(failing) == len(waiting):
                break  # only judges that keep failing are left: no point waiting them out
        time.sleep(0.5)
    else:
        click.echo(f"scoring did not finish within {timeout_s:g} s; showing what is there",
                   err=True)
    for line in judge_explanations(scorers, failing):
        click.echo(line, err=True)


COMMANDS.append(demo_command)
