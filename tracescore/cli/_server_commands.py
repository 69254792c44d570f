"""CLI commands: serve, sql, export."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
