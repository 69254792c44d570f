"""CLI command: ``tracescore cost``, the agent's spend grouped by model, service, agent or day.

A thin wrapper over one SQL statement on ``model_calls`` (``cost_sql``), run on a server or a
database file like ``tracescore sql``.
"""

from __future__ import annotations

from typing import Any

import click

from ._server_commands import _db_option, _key_option, _url_option, format_rows, run_sql

COMMANDS: list[click.Command] = []

GROUPS = {
    "model": "coalesce(model, '(unknown)')",
    "service": "coalesce(service_name, '(none)')",
    "agent": "coalesce(agent_name, '(no agent)')",
    "project": "coalesce(project, '(none)')",
    "day": "CAST(started_at AS DATE)",
}
"""``--by`` choices → the grouping expression over ``model_calls``."""


def cost_sql(by: str) -> str:
    """The statement ``tracescore cost --by BY`` runs (parameter: the start of the window)."""
    key = GROUPS[by]
    order = "1" if by == "day" else "cost_usd DESC NULLS LAST, 1"
    return f"""SELECT {key} AS {by},
       count(*) AS calls,
       count(DISTINCT trace_id) AS traces,
       sum(input_tokens) AS input_tokens,
       sum(output_tokens) AS output_tokens,
       sum(total_tokens) AS total_tokens,
       round(sum(cost_usd), 6) AS cost_usd,
       count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls
FROM model_calls
WHERE started_at >= ?::TIMESTAMP
GROUP BY 1
ORDER BY {order}"""


@click.command("cost")
@click.option("--since", default="7d", show_default=True,
              help="Window start: a duration back from now (24h, 7d, 30m) or an ISO-8601 time.")
@click.option("--by", "by", type=click.Choice(sorted(GROUPS)), default="model",
              show_default=True, help="Group the agent's model calls by this.")
@_url_option
@_db_option
@_key_option
@click.option("--format", "output_format", type=click.Choice(["table", "json", "csv"]),
              default="table", show_default=True, help="Output format.")
@click.option("--timeout", "timeout_s", type=float, default=60.0, show_default=True,
              help="HTTP timeout in seconds.")
def cost_command(
    since: str,
    by: str,
    url: str | None,
    db: str | None,
    api_key: str | None,
    output_format: str,
    timeout_s: float,
) -> None:
    """What the agent's own model calls cost: calls, tokens and USD per model, service,
    agent, project or day (unpriced calls counted; see [pricing])."""
    from tracescore.server import parse_since

    try:
        start = parse_since(since)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    columns, rows, _, _ = run_sql(cost_sql(by), [start.isoformat()], url=url, db=db,
                                  api_key=api_key, timeout_s=timeout_s)
    click.echo(format_rows(columns, rows, output_format), nl=False)
    if output_format == "table":
        click.echo(_total_line(columns, rows))


def _total_line(columns: list[str], rows: list[list[Any]]) -> str:
    index = columns.index("cost_usd")
    calls = columns.index("calls")
    cost = sum(float(row[index]) for row in rows if row[index] is not None)
    count = sum(int(row[calls]) for row in rows)
    return f"total: {count} model calls, ${cost:.6f}"


COMMANDS.append(cost_command)
