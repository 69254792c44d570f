"""docs/server.md documents every config key, table column and CLI option of this room."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tracescore.cli._server_commands import COMMANDS
from tracescore.server import SERVER_KEYS
from tracescore.store import TABLES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()


@pytest.mark.parametrize("key", sorted(SERVER_KEYS))
def test_config_keys(key: str) -> None:
    assert f"`{key}`" in DOC


@pytest.mark.parametrize(
    ("table", "column"), [(t, c) for t, columns in TABLES.items() for c, _ in columns]
)
def test_table_columns(table: str, column: str) -> None:
    assert f"### `{table}`" in DOC
    assert f"`{column}`" in DOC


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (command.name, opt)
        for command in COMMANDS
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
    ],
)
def test_cli_options(command: str, option: str) -> None:
    assert f"tracescore {command}" in DOC
    assert option in DOC
