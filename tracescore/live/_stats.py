"""Counters and gauges of the live scorer, read by ``GET /metrics`` and ``tracescore scorers``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class LiveStats:
    """What the live scorer did since the process started (plain values; no Prometheus here)."""

    scores_total: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(scorer id, status) → final score rows written."""
    judge_tokens_total: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(scorer id, "input" | "output") → judge tokens spent, failed attempts included."""
    judge_cost_usd_total: dict[str, float] = field(default_factory=dict)
    """scorer id → judge cost in USD, failed attempts included."""
    judge_cache_hits_total: Counter[str] = field(default_factory=Counter)
    """scorer id → judge answers taken from the judge-call cache."""
    judge_saved_usd_total: dict[str, float] = field(default_factory=dict)
    """scorer id → what the cached answers cost when they were first asked (USD)."""
    decisions_total: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(scorer id, decision) → decision rows written."""
    traces_waiting: int = 0
    """Ready traces with at least one scorer still to run."""
    scoring_lag_seconds: float = 0.0
    """Age of the oldest ready trace still waiting for a scorer."""
    ticks: int = 0
    scans: int = 0
    """Ticks that read the spans received since the last scan (a tick with no new span reads
    none)."""
    tick_errors: int = 0
    last_tick_at: datetime | None = None
    last_tick_error: str | None = None

    def record_spend(self, scorer_id: str, rows: list[dict[str, Any]]) -> None:
        """Count the tokens and cost of judge execution rows."""
        for row in rows:
            self.judge_tokens_total[(scorer_id, "input")] += int(row.get("input_tokens") or 0)
            self.judge_tokens_total[(scorer_id, "output")] += int(row.get("output_tokens") or 0)
            if row.get("cost_amount") is not None:
                cost = self.judge_cost_usd_total.get(scorer_id, 0.0) + float(row["cost_amount"])
                self.judge_cost_usd_total[scorer_id] = cost
            if row.get("cached"):
                self.judge_cache_hits_total[scorer_id] += 1
                saved = self.judge_saved_usd_total.get(scorer_id, 0.0)
                self.judge_saved_usd_total[scorer_id] = saved + float(row.get("saved_cost") or 0)
