"""CLI commands: ``check`` (is the config usable, does each judge answer) and ``config default``.

``tracescore check`` is what a user runs before ``serve`` when a judge scorer is set up: it
validates the config the way ``serve`` does, runs the judge start-up checks (model string →
provider, credentials present) and sends one tiny real request through each judge, then exits
non-zero with one sentence per problem.
"""

from __future__ import annotations

import asyncio
from typing import Any

import click

from ._live_commands import _file_setup

COMMANDS: list[click.Command] = []


@click.command("check")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="Config file to check instead of the embedded default (env "
                   "TRACESCORE_CONFIG).")
@click.option("--no-call", is_flag=True, default=False,
              help="Skip the one real request per judge (check only what needs no network).")
@click.option("--timeout", "timeout_s", type=float, default=30.0, show_default=True,
              help="Time limit of each judge request (seconds).")
def check_command(config: str | None, no_call: bool, timeout_s: float) -> None:
    """Validate the config and every judge scorer (one tiny real call each); exit 1 on a
    problem."""
    from tracescore.server import ConfigError, check_bind, load_settings

    try:
        settings = load_settings(config)
        check_bind(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    grpc = f", OTLP/gRPC on port {settings.grpc_port}" if settings.grpc else ""
    click.echo(f"config {settings.config_path}: OK (HTTP on {settings.host}:"
               f"{settings.http_port}{grpc}; database {settings.db})")
    live_settings, registry, paused, path = _file_setup(config)
    problems: list[str] = _price_problems(path, live_settings, registry)
    for reg in registry:
        if reg.id in paused:
            line = f"scorer {reg.id}: would start paused: {paused[reg.id]}"
            problems.append(line)
        elif not reg.enabled:
            line = f"scorer {reg.id}: off ({reg.disabled_reason})"
        else:
            line = f"scorer {reg.id}: OK" + (" (judge)" if reg.uses_judge else " (code)")
        click.echo(line)
    if not live_settings.enabled:
        click.echo("live scoring is off ([live] enabled = false)")
    _check_labels(settings, registry)
    if not no_call:
        problems += _probe(registry, paused, timeout_s)
    if problems:
        raise click.ClickException(
            f"{len(problems)} problem(s) found (above); fix them and run tracescore check "
            "again")
    click.echo("everything checked is usable")


def _price_problems(path: Any, live_settings: Any, registry: Any) -> list[str]:
    """A USD budget over a judge with no known price (``serve`` refuses it), as a problem."""
    from tracescore.live import ConfigError, Pricing, check_judge_prices, parse_pricing
    from tracescore.server import read_config

    _, document = read_config(str(path))
    try:
        check_judge_prices(registry, live_settings, Pricing(parse_pricing(
            document.get("pricing"), source=str(path))), source=str(path))
    except ConfigError as exc:
        click.echo(f"judge prices: {exc}")
        return [str(exc)]
    return []


def _check_labels(settings: Any, registry: Any) -> None:
    """``[labels]`` and ``[[canaries]]`` (as ``tracescore serve`` reads them)."""
    from tracescore.labels import InvalidLabel, parse_labels_config

    try:
        _, canaries = parse_labels_config(settings.config, source=str(settings.config_path),
                                          scorer_ids=[reg.id for reg in registry])
    except InvalidLabel as exc:
        raise click.ClickException(str(exc)) from None
    for canary in canaries:
        click.echo(f"canary of {canary.scorer}: dataset {canary.dataset} every {canary.every}")


def _probe(registry: Any, paused: dict[str, str], timeout_s: float) -> list[str]:
    from tracescore.live import probe_judges

    problems = []
    for probe in asyncio.run(probe_judges(registry, timeout_s=timeout_s, skip=paused)):
        who = ", ".join(probe.scorer_ids)
        where = f" at {probe.api_base}" if probe.api_base else ""
        line = (f"judge {probe.model}{where} ({who}): "
                f"{'OK, ' if probe.ok else 'FAILED: '}{probe.message} "
                f"({probe.duration_ms:.0f} ms)")
        click.echo(line)
        if not probe.ok:
            problems.append(line)
    return problems


COMMANDS.append(check_command)


@click.group("config")
def config_group() -> None:
    """The config file: print the embedded default to start your own from."""


@config_group.command("default")
def config_default_command() -> None:
    """Print the embedded default config (save it, edit it, pass it with --config)."""
    from tracescore.server import default_config_path

    click.echo(default_config_path().read_text(encoding="utf-8"), nl=False)


COMMANDS.append(config_group)

__all__ = ["COMMANDS"]
