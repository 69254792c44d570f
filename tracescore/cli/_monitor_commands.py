"""CLI command: ``tracescore monitors`` — each monitor's state, last value and last event.

Against a running server (``--url``: ``GET /api/live/monitors``, the scheduler's own view) or a
database file no server holds (``--db``, with the ``[[monitors]]`` of ``--config`` or the
embedded default; the state is the one the last ``monitor_events`` row recorded).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import click

from ._live_commands import _config_option, _get, _offline, _pick, _table_json_option
from ._server_commands import DEFAULT_URL, _db_option, _key_option, _url_option, format_rows

COMMANDS: list[click.Command] = []

MONITOR_COLUMNS = ("id", "scorer", "rule", "state", "value", "samples", "last_event",
                   "last_error", "last_failed_delivery")


def _offline_monitors(db: str, config: str | None) -> list[dict[str, Any]]:
    from tracescore.live import ConfigError as LiveConfigError
    from tracescore.live import Monitors, parse_monitor_entries
    from tracescore.server import ConfigError, read_config

    live, store = _offline(db, config, read_only=True)
    try:
        try:
            path, document = read_config(config or os.environ.get("TRACESCORE_CONFIG") or None)
            entries = parse_monitor_entries(
                document.get("monitors"), source=str(path),
                scorer_ids=[reg.id for reg in live.registry],
                allow_private_webhooks=live.settings.allow_private_webhooks)
        except (ConfigError, LiveConfigError) as exc:
            raise click.ClickException(str(exc)) from None
        live.monitors = Monitors(entries)
        asyncio.run(live.monitors.restore(live))
        status: list[dict[str, Any]] = live.monitors.status()
        return status
    finally:
        store.close()


def _row(monitor: dict[str, Any]) -> list[Any]:
    from tracescore.live import short_text

    event = monitor.get("last_event") or {}
    last = f"{event['state']} at {event['at']}" if event else None
    rule = (f"{monitor['aggregate']} over {monitor['window']} {monitor['op']} "
            f"{monitor['threshold']:g}")
    value = monitor.get("value")
    failed = monitor.get("last_failed_delivery")
    delivery = f"{failed['at']}: {short_text(failed['error'])}" if failed else None
    return [monitor["id"], monitor["scorer"], rule, monitor["state"],
            None if value is None else round(float(value), 4), monitor.get("samples"), last,
            monitor.get("last_error"), delivery]


@click.command("monitors")
@_url_option
@_db_option
@_config_option
@_key_option
@_table_json_option
def monitors_command(url: str | None, db: str | None, config: str | None, api_key: str | None,
                     output_format: str) -> None:
    """Each monitor: its rule, state (ok or breached), last value and samples, last event and
    the last failed webhook delivery."""
    _pick(url, db)
    if db:
        monitors = _offline_monitors(db, config)
    else:
        monitors = _get(url or DEFAULT_URL, api_key, "/api/live/monitors")["monitors"]
    if output_format == "json":
        click.echo(json.dumps(monitors, indent=2))
        return
    if not monitors:
        click.echo("no monitors are configured ([[monitors]] in the config file)")
        return
    click.echo(format_rows(list(MONITOR_COLUMNS), [_row(m) for m in monitors], "table"),
               nl=False)


COMMANDS.append(monitors_command)
