"""The ``tracescore`` command: serve, sql, export, trace, cost, scorers, backfill, demo, check,
config, datasets, experiments, labels, queues, agreement, align.

Each topic's commands live in their own module and list themselves in ``COMMANDS``; those modules
import only click at the top and everything heavy inside the command body, so
``tracescore --help`` stays fast. User errors are ``click.ClickException`` sentences.
"""

from __future__ import annotations

import click

from . import (
    _align_commands,
    _check_commands,
    _cost,
    _dataset_commands,
    _judge_commands,
    _label_commands,
    _live_commands,
    _monitor_commands,
    _server_commands,
    _trace_commands,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tracescore")
def main() -> None:
    """tracescore: store agent traces from OpenTelemetry, score them, query scores with SQL."""


for _module in (_server_commands, _trace_commands, _cost, _live_commands, _monitor_commands,
                _check_commands, _dataset_commands, _judge_commands, _label_commands,
                _align_commands):
    for _command in _module.COMMANDS:
        main.add_command(_command)

__all__ = ["main"]
