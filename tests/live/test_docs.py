"""docs/live.md documents every live setting, scorer-entry key, CLI option, metric and decision."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tracescore.cli._live_commands import COMMANDS
from tracescore.live import BudgetSettings, LiveSettings, ScorerEntry

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
