"""Live scoring: score new traces as they settle, once per scorer version, within a budget.

The scheduler (APScheduler) decides *when* and *what*: it selects settled traces × registered
scorers, applies filters and deterministic sampling, enforces budgets and retries, and records
every decision. Loading a trace, running a scorer and writing rows are calls into
``tracescore.traces``, ``tracescore.scoring`` and ``tracescore.store``.
"""

from ._attention import scorer_attention, short_text
from ._backfill import backfill, scorer_summary
from ._budget import BudgetGuard, BudgetUsage, over_budget_reason
from ._config import (
    TARGETS,
    BudgetSettings,
    LiveSettings,
    ScorerEntry,
    parse_live_settings,
    parse_scorer_entries,
)
from ._coordination import LiveCoordination, LocalCoordination
from ._defaults import (
    answer_relevancy_scorer,
    faithfulness_scorer,
    hallucination_scorer,
    tool_failures_scorer,
    trajectory_efficiency_scorer,
)
from ._demo import send_agent_traces
from ._errors import ConfigError
from ._judging import JudgeCalls, check_judge_prices, unpriced_judges
from ._monitors import MonitorEntry, Monitors, load_monitors, parse_monitor_entries
from ._preflight import JudgeProbe, check_judges, probe_judges, start_paused
from ._pricing import ModelPrice, Pricing, parse_pricing
from ._registry import RegisteredScorer, Registry, build_scorer, scorer_version, uses_judge
from ._rescore import rescore
from ._retry import RetryDecision, RetryPolicy
from ._rows import PairKey, score_id_for
from ._sampling import is_sampled, sample_fraction
from ._scheduler import LiveScheduler
from ._segments import SpendPacer, paced_factor
from ._selection import INTERNAL_MARKER
from ._setup import check_filters, load_live_config
from ._shared import SharedCoordination
from ._stats import LiveStats
from ._totals import (
    AGENT_TOKEN_KINDS,
    DURATION_BUCKETS_S,
    AgentSpendStats,
    TotalsMaintainer,
    price_calls,
)
from ._trust import JudgeTrust
from ._webhooks import WebhookRefused, check_webhook_url

__all__ = [
    "AGENT_TOKEN_KINDS",
    "DURATION_BUCKETS_S",
    "INTERNAL_MARKER",
    "JudgeCalls",
    "JudgeProbe",
    "JudgeTrust",
    "TARGETS",
    "AgentSpendStats",
    "BudgetGuard",
    "BudgetSettings",
    "BudgetUsage",
    "ConfigError",
    "LiveCoordination",
    "LiveScheduler",
    "LiveSettings",
    "LiveStats",
    "LocalCoordination",
    "ModelPrice",
    "MonitorEntry",
    "Monitors",
    "PairKey",
    "Pricing",
    "RegisteredScorer",
    "Registry",
    "RetryDecision",
    "RetryPolicy",
    "ScorerEntry",
    "SharedCoordination",
    "SpendPacer",
    "TotalsMaintainer",
    "WebhookRefused",
    "answer_relevancy_scorer",
    "backfill",
    "load_monitors",
    "check_webhook_url",
    "build_scorer",
    "check_judge_prices",
    "check_judges",
    "check_filters",
    "faithfulness_scorer",
    "hallucination_scorer",
    "is_sampled",
    "load_live_config",
    "over_budget_reason",
    "paced_factor",
    "probe_judges",
    "rescore",
    "parse_live_settings",
    "parse_monitor_entries",
    "parse_pricing",
    "parse_scorer_entries",
    "price_calls",
    "sample_fraction",
    "score_id_for",
    "scorer_attention",
    "scorer_summary",
    "scorer_version",
    "send_agent_traces",
    "short_text",
    "start_paused",
    "tool_failures_scorer",
    "unpriced_judges",
    "trajectory_efficiency_scorer",
    "uses_judge",
]
