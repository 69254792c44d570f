"""CLI commands: scorers, backfill, demo."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
