"""docs/live.md documents every live setting, scorer-entry key, CLI option, metric and decision."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tracescore.cli._live_commands import COMMANDS
from tracescore.live import BudgetSettings, LiveSettings, MonitorEntry, ScorerEntry

DOC = (Path(__file__).resolve().parents[2] / "docs" / "live.md").read_text()
KEYS = sorted({*LiveSettings.model_fields, *BudgetSettings.model_fields,
               *ScorerEntry.model_fields} - {"budget"})
METRICS = ("tracescore_spans_received_total", "tracescore_spans_rejected_total",
           "tracescore_ingest_requests_total", "tracescore_write_queue_depth",
           "tracescore_traces_waiting", "tracescore_scores_total",
           "tracescore_judge_tokens_total", "tracescore_judge_cost_usd_total",
           "tracescore_scoring_lag_seconds")
DECISIONS = ("scored", "sampled_out", "filtered_out", "not_scorable", "failed", "pending",
             "retrying", "over_budget")


@pytest.mark.parametrize("key", KEYS)
def test_config_keys(key: str) -> None:
    assert f"`{key}`" in DOC or f"`[live] {key}`" in DOC or f"`[live.budget] {key}`" in DOC


@pytest.mark.parametrize(
    ("command", "option"),
    [(c.name, o) for c in COMMANDS for p in c.params if isinstance(p, click.Option)
     for o in p.opts],
)
def test_cli_options(command: str, option: str) -> None:
    assert f"tracescore {command}" in DOC and option in DOC


@pytest.mark.parametrize("name", [*METRICS, *DECISIONS])
def test_metrics_and_decisions(name: str) -> None:
    assert f"`{name}" in DOC


MONITOR_KEYS = sorted(MonitorEntry.model_fields)


@pytest.mark.parametrize("key", MONITOR_KEYS)
def test_monitor_keys(key: str) -> None:
    section = DOC.split("## Monitors", 1)[1].split("\n## ", 1)[0]
    assert f"| `{key}` |" in section


@pytest.mark.parametrize("name", ["tracescore_monitor_state", "tracescore_monitor_value",
                                  "GET /api/live/monitors", "session_settle_seconds"])
def test_session_and_monitor_surface(name: str) -> None:
    assert f"`{name}" in DOC


def test_monitors_command_options() -> None:
    from tracescore.cli._monitor_commands import COMMANDS as MONITOR_COMMANDS

    [command] = MONITOR_COMMANDS
    assert f"tracescore {command.name}" in DOC
    for param in command.params:
        if isinstance(param, click.Option):
            assert all(opt in DOC for opt in param.opts), param.opts


def test_the_session_judge_config_registers() -> None:
    import tomllib

    from tracescore.live import load_live_config

    [block] = [b for b in DOC.split("```toml\n")[1:] if "multi-turn-judge-scorer" in b]
    document = tomllib.loads(block.split("```", 1)[0])
    _, registry = load_live_config(document, judge_model="openai/gpt-4o-mini")
    [reg] = list(registry)
    assert (reg.id, reg.target, reg.uses_judge) == ("multi-turn-judge-scorer", "session", True)
