"""README: its two opening commands, its example, and every CLI option, config key and column."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import click

from tracescore.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_opens_with_the_two_commands() -> None:
    first_block = README.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make serve", "make test"]


def _python_block(marker: str) -> str:
    [block] = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if marker in b]
    return str(block)


def test_library_example_runs() -> None:
    namespace: dict[str, Any] = {}
    exec(_python_block("run_evals"), namespace)  # noqa: S102 - our own documentation
    assert namespace["result"].verdict == "passed"


def test_judge_without_a_paid_key_example_runs(capsys: Any) -> None:
    namespace: dict[str, Any] = {}
    exec(_python_block("ScriptedLLMServer"), namespace)  # noqa: S102 - our own documentation
    result = namespace["result"]
    assert result.score == 0.8
    [execution] = result.judge["generate_score"].executions
    assert execution.usage.total_tokens > 0
    assert capsys.readouterr().out.strip() == "0.8"


def _commands(cmd: click.Command, path: list[str]) -> list[tuple[str, click.Command]]:
    if isinstance(cmd, click.Group):
        found = []
        for name, sub in cmd.commands.items():
            found += _commands(sub, [*path, name])
        return found
    return [(" ".join(path), cmd)]


def test_every_cli_option_is_documented() -> None:
    missing = []
    for name, cmd in _commands(main, ["tracescore"]):
        row = next(
            (line for line in README.splitlines() if f"`{name}" in line and "|" in line), None)
        if row is None:
            missing.append(name)
            continue
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                if not any(f"`{opt}`" in row or f"`{opt} " in row for opt in param.opts):
                    missing.append(f"{name} {param.opts[0]}")
    assert missing == []


def test_every_config_key_is_documented() -> None:
    config = tomllib.loads((ROOT / "config" / "tracescore.toml").read_text())
    keys = set(config["server"]) | {k for k, v in config["live"].items() if not isinstance(v, dict)}
    keys |= set(config["live"]["budget"])
    keys |= {k for entry in config["scorers"] for k in entry}
    keys |= {"target", "sample_rate", "filter", "enabled"}  # [[scorers]] keys the default omits
    missing = sorted(k for k in keys if f"| `{k}` |" not in README)
    assert missing == []


def test_every_table_column_is_documented(tmp_path: Path) -> None:
    from tracescore.store import Store

    with Store(tmp_path / "readme.duckdb") as store:
        rows = store.read(
            "select table_name, column_name from information_schema.columns "
            "where table_schema = 'main'"
        )
    tables: dict[str, list[str]] = {}
    for row in rows:
        tables.setdefault(row["table_name"], []).append(row["column_name"])
    missing = []
    for table, columns in tables.items():
        line = next((ln for ln in README.splitlines() if ln.startswith(f"| `{table}`")), None)
        if line is None:
            missing.append(table)
            continue
        missing += [f"{table}.{c}" for c in columns if f"`{c}`" not in line]
    assert missing == []
