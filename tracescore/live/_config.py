"""Settings of the live scorer: the ``[live]``, ``[live.budget]`` and ``[[scorers]]`` tables.

The server parses the TOML file; these models validate the live parts of it and turn pydantic's
errors into one ``ConfigError`` sentence naming the file, the table or entry, and the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._errors import ConfigError
from ._totals import BUSY_SHARE

Target = Literal[
    "trace",
    "agent_run",
    "workflow_run",
    "workflow_step",
    "tool_call",
    "mcp_tool_call",
    "model_generation",
    "session",
]
TARGETS: tuple[str, ...] = get_args(Target)
"""Values of a scorer entry's ``target``: the whole trace, every span of one step kind, or the
whole conversation (``session``, scored when it goes quiet)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BudgetSettings(_Strict):
    """``[live.budget]``: caps on judge spend over sliding windows (0 = no cap)."""

    max_judge_cost_usd_per_hour: float | None = Field(default=5.0, ge=0)
    """Judge cost (USD) of the last 60 minutes above which judge scorers wait as over_budget."""
    max_judge_cost_usd_per_day: float | None = Field(default=50.0, ge=0)
    """Judge cost (USD) of the last 24 hours above which judge scorers wait."""
    max_judge_tokens_per_hour: int | None = Field(default=2_000_000, ge=0)
    """Judge tokens (input + output) of the last 60 minutes above which judge scorers wait."""


class LiveSettings(_Strict):
    """``[live]``: when and how fast new traces are scored."""

    enabled: bool = True
    """Run the live scorer inside ``tracescore serve``."""
    interval_seconds: float = Field(default=2.0, gt=0)
    """How often the scheduler looks for ready traces."""
    settle_seconds: float = Field(default=10.0, ge=0)
    """A trace whose root span has ended is ready once no span arrived for this long."""
    session_settle_seconds: float = Field(default=300.0, ge=0)
    """A session (conversation) is quiet, and its ``target = "session"`` scorers run, once no
    trace of it arrived for this long."""
    max_wait_seconds: float = Field(default=300.0, gt=0)
    """A trace is ready this long after its first span arrived, root or not."""
    totals_busy_share: float = Field(default=BUSY_SHARE, gt=0, le=1)
    """While spans arrive faster than the totals maintainer (model calls and ``traces`` totals)
    computes them, the largest share of wall time it spends on the backlog: ingest comes first
    (1: no limit)."""
    lookback_seconds: float = Field(default=3600.0, ge=0)
    """A scorer version seen for the first time scores traces that arrived this far back."""
    concurrency: int = Field(default=8, ge=1, le=1024)
    """Scorer runs in flight at once."""
    batch_size: int = Field(default=256, ge=1, le=100_000)
    """Pairs (trace span, scorer) queued for workers per scheduler tick at most (code scorers'
    pairs are scored in the tick and not queued: with only those, traces per tick)."""
    max_attempts: int = Field(default=3, ge=1)
    """Attempts a non-transient failure may spend before the decision is ``failed``."""
    retry_base_seconds: float = Field(default=30.0, ge=0)
    """Backoff after a non-transient failure, doubling per attempt spent."""
    transient_retry_max_seconds: float = Field(default=300.0, gt=0)
    """Ceiling of the backoff after rate limits and transient judge errors."""
    transient_retry_deadline_seconds: float = Field(default=3600.0, gt=0)
    """A rate limit or transient error (5xx, timeout, malformed answer) this long after the
    pair's first failed judge call (as stored, so restarts do not reset it) ends the pair
    ``failed`` with the last error."""
    judge_model: str | None = None
    """litellm model of the default LLM scorers (``TRACESCORE_JUDGE_MODEL`` overrides)."""
    judge_api_base: str | None = None
    """Base URL of the judge's provider (``TRACESCORE_JUDGE_API_BASE`` overrides)."""
    allow_private_webhooks: bool = False
    """Monitors' ``notify`` URLs may reach private, loopback and other non-public addresses
    (link-local and cloud metadata addresses stay refused)."""
    budget: BudgetSettings = BudgetSettings()
    judge_timeout_seconds: float = Field(default=60.0, gt=0)
    """Longest wait for one judge request; past it the attempt fails with a sentence naming
    this setting (``[[scorers]] judge_timeout_seconds`` sets one scorer's)."""
    judge_cache_max_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    """Size of the ``judge_cache`` table's answers (JSON bytes) at most; the oldest go first
    (0: no judge-call cache)."""
    judge_cache_max_age_seconds: float = Field(default=30 * 24 * 3600.0, gt=0)
    """Cached judge answers older than this are not used (and are deleted)."""

    @field_validator("judge_model", "judge_api_base")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None


class SampleSegment(_Strict):
    """One ``[[scorers]] sample`` entry: the traces a SQL predicate matches, and their rate."""

    where: str = Field(min_length=1)
    """A SQL predicate over the ``traces`` table."""
    rate: float = Field(ge=0, le=1)
    """Fraction of the matching traces to score (by trace-id hash, like ``sample_rate``)."""

    @field_validator("where")
    @classmethod
    def _where_is_one_predicate(cls, value: str) -> str:
        checked = one_predicate(value)
        if checked is None:
            raise ValueError("must be a SQL predicate over the traces table")
        return checked


class ScorerEntry(_Strict):
    """One ``[[scorers]]`` entry: which scorer, on what, how often."""

    use: str = Field(min_length=1)
    """A prebuilt scorer id (``"faithfulness-scorer"``, see ``tracescore.scorers.CATALOGUE``),
    ``"module.path:attr"`` or ``"path/to/file.py:attr"``: a Scorer, or a factory of one."""
    id: str | None = Field(default=None, min_length=1, pattern=r"^[A-Za-z0-9_.:\-]+$")
    """The id written to ``scores.scorer_id``; defaults to the scorer's own id."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for a factory (an error when ``use`` names a Scorer)."""
    target: Target = "trace"
    """``trace`` (the outermost agent run, else the root span), a span kind, or ``session``."""
    sample_rate: float = Field(default=1.0, ge=0, le=1)
    """Fraction of traces to score, chosen by a hash of the trace id (stable)."""
    filter: str | None = None
    """A SQL predicate over the ``traces`` view; only matching traces are scored."""
    enabled: bool = True
    """False keeps the entry listed but never runs it."""
    needs_judge: bool = False
    """Enabled only when a judge model is configured; the factory then gets ``model=`` and
    ``api_base=`` (unless ``args`` sets them)."""
    sample: list[SampleSegment] = Field(default_factory=list)
    """Sample rates per segment: the first entry whose ``where`` matches a trace gives its rate;
    a trace no entry matches is sampled at ``sample_rate``."""
    daily_spend_target_usd: float | None = Field(default=None, gt=0)
    """Judge spend (USD) this scorer aims at per UTC day: its sample rates are scaled down as
    the day's spend accrues (never up)."""
    judge_cache: bool | None = None
    """Cache this scorer's judge answers: true (every judge), false (never); unset: judges with
    ``temperature = 0``."""
    judge_cache_epoch: int = Field(default=0, ge=0)
    """Part of the cache key: raise it to ask afresh (older answers are not used)."""
    judge_timeout_seconds: float | None = Field(default=None, gt=0)
    """This scorer's judge timeout (default ``[live] judge_timeout_seconds``)."""
    alignment: str | None = None
    """An alignment file written by ``tracescore align``: the scorer runs as that aligned
    version (its judge's instructions and examples), scored afresh under the version's id."""

    @field_validator("filter")
    @classmethod
    def _filter_is_one_predicate(cls, value: str | None) -> str | None:
        return one_predicate(value)


def one_predicate(value: str | None) -> str | None:
    """A ``filter`` key's value: one SQL predicate (stripped), None when blank; ValueError when
    it holds a ``;`` (a second statement)."""
    if value is None or not value.strip():
        return None
    if ";" in value:
        raise ValueError("must be one SQL predicate, without ';'")
    return value.strip()


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(entry)"
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown key (check its spelling)"
    return f"key {key!r}: {message}"


def parse_live_settings(
    live: Mapping[str, Any] | None, *, source: str = "the config file"
) -> LiveSettings:
    """Validate the ``[live]`` table (with ``[live.budget]``) or raise ``ConfigError``."""
    try:
        return LiveSettings.model_validate(dict(live or {}))
    except ValidationError as exc:
        raise ConfigError(f"[live] in {source}: {_describe(exc)}") from None


def parse_scorer_entries(
    entries: Sequence[Mapping[str, Any]] | None, *, source: str = "the config file"
) -> list[ScorerEntry]:
    """Validate the ``[[scorers]]`` entries or raise ``ConfigError`` naming the entry and key.

    Entries are numbered from 1 in messages (``[[scorers]] entry #2 (id 'x')``).
    """
    parsed: list[ScorerEntry] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(entries or (), start=1):
        label = _entry_label(index, raw)
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{label} in {source}: must be a table, got {type(raw).__name__}")
        try:
            entry = ScorerEntry.model_validate(dict(raw))
        except ValidationError as exc:
            raise ConfigError(f"{label} in {source}: {_describe(exc)}") from None
        if entry.id is not None:
            if entry.id in seen:
                raise ConfigError(
                    f"{label} in {source}: key 'id': {entry.id!r} is already used by "
                    f"[[scorers]] entry #{seen[entry.id]}; give each entry its own id"
                )
            seen[entry.id] = index
        parsed.append(entry)
    return parsed


def _entry_label(index: int, raw: Any) -> str:
    entry_id = raw.get("id") if isinstance(raw, Mapping) else None
    return f"[[scorers]] entry #{index}" + (f" (id {entry_id!r})" if entry_id else "")
