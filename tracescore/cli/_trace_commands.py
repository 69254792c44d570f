"""CLI commands: trace show (the step tree, then each model call's tokens and cost)."""

from __future__ import annotations

import json
from typing import Any

import click

COMMANDS: list[click.Command] = []

DEFAULT_URL = "http://127.0.0.1:4318"


@click.group("trace")
def trace_group() -> None:
    """Look at stored traces the way scorers see them."""


@trace_group.command("show")
@click.argument("trace_id")
@click.option(
    "--url",
    envvar="TRACESCORE_URL",
    default=None,
    help=f"A running tracescore server (default {DEFAULT_URL}; env TRACESCORE_URL).",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="Read a tracescore database file directly (read only) instead of a server.",
)
@click.option(
    "--api-key",
    envvar="TRACESCORE_API_KEY",
    default=None,
    help="Bearer token for a server with API keys (env TRACESCORE_API_KEY).",
)
@click.option("--span-id", default=None, help="Target span for --scorer-input (default: the run).")
@click.option(
    "--scorer-input",
    "show_scorer_input",
    is_flag=True,
    help="Print what a scorer would see (input, output, trajectory) as JSON.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the normalized step tree as JSON.")
@click.option(
    "--explain",
    "show_explain",
    is_flag=True,
    help="Per span: the adapter that claimed it, the step it became (or why it was dropped) "
    "and why; and why the default target was chosen (with --json: as JSON).",
)
@click.option("--timeout", "timeout_s", default=10.0, show_default=True, help="HTTP timeout (s).")
def show(
    trace_id: str,
    url: str | None,
    db: str | None,
    api_key: str | None,
    span_id: str | None,
    show_scorer_input: bool,
    as_json: bool,
    show_explain: bool,
    timeout_s: float,
) -> None:
    """Print the normalized step tree of TRACE_ID (agent runs, model calls, tool calls, ...)."""
    from tracescore.server import TraceIdError, check_trace_ref
    from tracescore.traces import (
        SpanNotFound,
        Trace,
        TraceNotFound,
        explain,
        render_explain,
        render_tree,
        scorer_input,
    )

    try:
        trace_id = check_trace_ref(trace_id)  # 32 hex digits, or a unique prefix of 8+
    except TraceIdError as exc:
        raise click.BadParameter(str(exc), param_hint="TRACE_ID") from None
    if db is not None and url is not None:
        raise click.UsageError("give either --url or --db, not both")
    if db is not None:
        trace = _trace_from_db(db, trace_id)
    else:
        rows, logs = _rows_from_server(url or DEFAULT_URL, trace_id, timeout_s, api_key)
        if not rows:
            raise click.ClickException(
                f"no spans stored for trace {trace_id}; check the id (32 hex digits, or a "
                "unique prefix of 8+) or wait until the trace has been ingested"
            )
        trace = Trace.from_rows(rows, logs=logs, trace_id=str(rows[0]["trace_id"]))
    if show_scorer_input:
        try:
            data = scorer_input(trace, span_id)
        except (SpanNotFound, TraceNotFound) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    elif show_explain:
        if as_json:
            click.echo(json.dumps(explain(trace), indent=2, ensure_ascii=False, default=str))
        else:
            click.echo(render_explain(trace))
    elif as_json:
        from tracescore.server._dashboard import step_to_dict  # with inputs, outputs, messages

        steps = [step_to_dict(step) for step in trace.steps]
        click.echo(json.dumps({"trace_id": trace.trace_id, "steps": steps}, indent=2, default=str))
    else:
        click.echo(render_tree(trace))
        click.echo(spend_table(trace))


def spend_table(trace: Any) -> str:
    """The trace's model calls (model, tokens, cost) and its total, priced from litellm's local
    cost map (a cost the span reports wins)."""
    from tracescore.live import Pricing, price_calls
    from tracescore.traces import trace_spend

    calls = price_calls(trace_spend(trace), Pricing())
    if not calls:
        return "model calls: none"
    lines = ["model calls:"]
    total_in = total_out = 0
    total_cost = 0.0
    unpriced = 0
    for call in calls:
        cost = call["cost_usd"]
        total_in += call["input_tokens"] or 0
        total_out += call["output_tokens"] or 0
        if cost is None:
            unpriced += 1
        else:
            total_cost += cost
        shown = f"${cost:.6f} ({call['cost_source']})" if cost is not None else "cost unknown"
        lines.append(
            f"  {call['span_id']}  {call['model'] or '(unknown model)'}  "
            f"in {_tokens(call['input_tokens'])}  out {_tokens(call['output_tokens'])}  {shown}"
        )
    tail = f", {unpriced} unpriced" if unpriced else ""
    lines.append(f"total: {len(calls)} model calls, {total_in} input + {total_out} output "
                 f"tokens, ${total_cost:.6f}{tail}")
    return "\n".join(lines)


def _tokens(value: Any) -> str:
    return "?" if value is None else str(value)


def _trace_from_db(path: str, trace_id: str) -> Any:
    import os

    from tracescore.traces import TraceNotFound, load_trace

    if not os.path.exists(path):
        raise click.ClickException(f"no database file at {path}; pass the file `serve --db` uses")
    from tracescore.store import Store

    try:
        store = Store(path, read_only=True)
        store.open()
    except Exception as exc:  # noqa: BLE001 - report any open failure as a sentence
        raise click.ClickException(
            f"cannot open {path} read-only ({exc}); if a server is using it, use --url instead"
        ) from None
    from tracescore.server import TraceIdError, resolve_trace_id

    try:
        return load_trace(store, resolve_trace_id(store.read, trace_id))
    except (TraceNotFound, TraceIdError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


def _rows_from_server(
    url: str, trace_id: str, timeout_s: float, api_key: str | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Span rows (and log rows) of a trace from a running server.

    Reads ``GET /api/traces/{id}`` (``{"spans": [...], "logs": [...]}``, spans flat or nested by
    ``children``); when the server has no such route, runs
    ``select * from spans where trace_id = ?`` through ``POST /api/sql``.
    """
    import httpx

    base = url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(timeout=timeout_s, headers=headers) as client:
            response = client.get(f"{base}/api/traces/{trace_id}")
            if response.status_code == 200:
                body = response.json()
                rows = _flatten(body)
                if rows:
                    logs = body.get("logs") if isinstance(body, dict) else None
                    if not isinstance(logs, list):
                        logs = _logs_via_sql(client, base, trace_id)
                    return rows, logs
            elif response.status_code not in (404, 405):
                raise click.ClickException(_http_error(response))
            rows = _sql(client, base, "select * from spans where trace_id = ?", trace_id)
            return rows, _logs_via_sql(client, base, trace_id)
    except httpx.HTTPError as exc:
        raise click.ClickException(
            f"cannot reach a tracescore server at {base} ({exc}); start one with "
            "`tracescore serve`, or read a database file with --db"
        ) from None


def _sql(client: Any, base: str, sql: str, trace_id: str) -> list[dict[str, Any]]:
    response = client.post(f"{base}/api/sql", json={"sql": sql, "params": [trace_id]})
    if response.status_code != 200:
        raise click.ClickException(_http_error(response))
    body = response.json()
    columns = body.get("columns") or []
    return [dict(zip(columns, row, strict=False)) for row in body.get("rows") or []]


def _logs_via_sql(client: Any, base: str, trace_id: str) -> list[dict[str, Any]]:
    try:
        return _sql(client, base, "select * from logs where trace_id = ?", trace_id)
    except click.ClickException:
        return []


def _flatten(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, dict):
        for key in ("spans", "rows", "roots", "tree"):
            if key in body:
                return _flatten(body[key])
        return _flatten([body]) if "span_id" in body else []
    out: list[dict[str, Any]] = []
    stack = list(reversed(body)) if isinstance(body, list) else []
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        out.append({k: v for k, v in node.items() if k != "children"})
        stack.extend(reversed(node.get("children") or []))
    return out


def _http_error(response: Any) -> str:
    try:
        detail = response.json()
        if isinstance(detail, dict):
            error = detail.get("error")
            detail = (
                error.get("message") if isinstance(error, dict) else detail.get("detail", detail)
            )
    except ValueError:
        detail = response.text[:200]
    return f"the server answered {response.status_code}: {detail}"


COMMANDS.append(trace_group)
