"""CLI commands: trace show."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
