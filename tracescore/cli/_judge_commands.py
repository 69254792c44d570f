"""CLI commands about running judges: rescore (a new attempt for failed or chosen pairs) and
judge-standin (a scripted OpenAI-compatible judge on loopback, to try judges without a key).

Everything heavy is imported inside the command bodies.
"""

from __future__ import annotations

from typing import Any

import click

from ._live_commands import _config_option, _get, _pick, outcome_lines, run_on_file
from ._server_commands import DEFAULT_URL, _db_option, _key_option, _url_option

COMMANDS: list[click.Command] = []


@click.command("rescore")
@click.option("--scorer", "scorer_id", required=True, help="The id of the scorer.")
@click.option("--failed", is_flag=True, default=False,
              help="Only the pairs whose decision is failed.")
@click.option("--since", default=None,
              help="Only pairs decided at or after this: a duration back from now (2h, 7d) or "
                   "an ISO time.")
@click.option("--trace", "traces", multiple=True,
              help="Only pairs of this trace (a full id or a unique prefix of 8+ hex digits); "
                   "repeat for several.")
@click.option("--dry-run", is_flag=True, default=False,
              help="Only count the pairs and estimate judge tokens and cost.")
@_url_option
@_db_option
@_config_option
@_key_option
def rescore_command(scorer_id: str, failed: bool, since: str | None, traces: tuple[str, ...],
                    dry_run: bool, url: str | None, db: str | None, config: str | None,
                    api_key: str | None) -> None:
    """Give a scorer's failed or chosen pairs a new attempt, exactly once (the old decisions,
    scores and judge executions are kept as history)."""
    _pick(url, db)
    if not (failed or since or traces):
        raise click.UsageError("say which pairs to rescore: --failed, --since T or --trace ID")
    if db:
        report = _rescore_file(db, config, scorer_id, failed, since, list(traces), dry_run)
    else:
        body = {"scorer": scorer_id, "failed": failed, "since": since, "trace": list(traces),
                "dry_run": dry_run}
        report = _get(url or DEFAULT_URL, api_key, "/api/live/rescore", body=body,
                      timeout_s=None)
    click.echo(describe_rescore(report))


def _rescore_file(db: str, config: str | None, scorer_id: str, failed: bool,
                  since: str | None, traces: list[str], dry_run: bool) -> dict[str, Any]:
    from tracescore.live import rescore
    from tracescore.server import parse_since, resolve_trace_id

    try:
        since_at = parse_since(since) if since else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None

    async def work(live: Any) -> dict[str, Any]:
        trace_ids = [resolve_trace_id(live.store.read, text) for text in traces]
        return await rescore(live, scorer_id, failed=failed, since=since_at,
                             trace_ids=trace_ids, dry_run=dry_run)

    return run_on_file(db, config, work)


def describe_rescore(report: dict[str, Any]) -> str:
    """A few lines for people about a rescore report."""
    from tracescore.model import counted

    picked = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(report["picked"].items()))
    head = (f"{counted(report['pairs'], 'pair')} of {report['scorer']} (version "
            f"{report['version']}) picked" + (f": {picked}" if picked else ""))
    return "\n".join([head, *outcome_lines(report, dry="dry run: nothing was rescored")])


COMMANDS.append(rescore_command)

STANDIN_MODEL = "openai/gpt-4o-mini"
"""The model name to use with the stand-in: litellm routes it to the stand-in's address and
prices its (fixed) usage, so budgets and costs behave as with a real judge."""


@click.command("judge-standin")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1 (0: a free one).")
@click.option("--latency-ms", type=click.IntRange(min=0), default=0, show_default=True,
              help="Hold every answer back this long (a slow judge).")
def judge_standin_command(port: int, latency_ms: int) -> None:
    """Serve a stand-in LLM judge on 127.0.0.1: an OpenAI-compatible server whose answers fit
    each scorer's output schema (no key, no model; not real judgements). Prints the
    environment to point tracescore at it; Ctrl-C stops it."""
    import time

    from tracescore.testing import standin_server

    server = standin_server(port=port, latency_s=latency_ms / 1000.0)
    try:
        server.start()
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc}") from None
    click.echo(f"export TRACESCORE_JUDGE_API_BASE={server.url}")
    click.echo(f"export TRACESCORE_JUDGE_MODEL={STANDIN_MODEL}")
    click.echo("export OPENAI_API_KEY=unused")
    click.echo(f"judge stand-in listening on {server.url} (answers fit each scorer's schema; "
               "they are not judgements); Ctrl-C stops it", err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        click.echo(f"judge stand-in answered {server.answered} request(s)", err=True)


COMMANDS.append(judge_standin_command)
