"""docs/evals.md documents every dataset/experiment table column, every datasets/experiments CLI
option and run_evals parameter, and its end-to-end example runs as written."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click

from tracescore.cli import main
from tracescore.evals import run_evals
from tracescore.store import TABLES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "evals.md").read_text()


def test_every_dataset_and_experiment_column_is_documented() -> None:
    missing = []
    for table in ("datasets", "dataset_items", "experiments", "experiment_results"):
        row = next((ln for ln in DOC.splitlines() if ln.startswith(f"| `{table}` |")), None)
        if row is None:
            missing.append(table)
            continue
        missing += [f"{table}.{name}" for name, _ in TABLES[table] if f"`{name}`" not in row]
    assert "`experiment_id` (a `scores` column)" in DOC
    assert missing == []


def test_every_datasets_and_experiments_option_is_documented() -> None:
    missing = []
    for group in ("datasets", "experiments"):
        command = main.commands[group]
        assert isinstance(command, click.Group)
        for name, sub in command.commands.items():
            row = next((ln for ln in DOC.splitlines()
                        if ln.startswith(f"| `tracescore {group} {name}")), None)
            if row is None:
                missing.append(f"{group} {name}")
                continue
            missing += [f"{group} {name} {p.opts[0]}" for p in sub.params
                        if isinstance(p, click.Option) and p.name != "help"
                        and not any(f"`{opt}`" in row for opt in p.opts)]
    assert missing == []


def test_every_run_evals_parameter_is_in_the_signature_block() -> None:
    block = DOC.split("## Signature", 1)[1].split("```", 2)[1]
    names = [n for n in inspect.signature(run_evals).parameters]
    assert [n for n in names if not re.search(rf"^\s*{n}[=,]", block, re.M)] == []


def test_end_to_end_example_runs() -> None:
    block = re.search(r"```python\n# datasets example\n(.*?)```", DOC, re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(block.group(1), namespace)  # noqa: S102 - our own documentation
    assert namespace["gate"].exit_code == 1  # type: ignore[attr-defined]
