"""Rows the live scorer writes: ``scores``, ``judge_executions`` and ``scoring_decisions``.

Pure functions from a scorer outcome to plain dicts with the columns of INTERFACES.md; JSON
columns get plain Python values, times are naive UTC datetimes (the columns are ``TIMESTAMP`` in
UTC). A pydantic model in a JSON value becomes an ``orjson.Fragment`` holding its JSON text
(``model_dump_json``, in pydantic's Rust serializer: several times cheaper than a Python dump
then an encode, and the same JSON); the store's JSON encoder (orjson) writes it as it is.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import BaseModel

from tracescore.model import ScorerRunResult
from tracescore.scoring import UNPRICED, cost_source_of, step_columns
from tracescore.scoring import execution_rows as _execution_rows

_SCORE_NAMESPACE = uuid.UUID("6f1c8a52-3d0b-4f57-9a4e-2b7f0f0d5c11")
_NAMESPACE_BYTES = _SCORE_NAMESPACE.bytes


def utc_now() -> datetime:
    """Now, as the naive UTC datetime the tables store."""
    return datetime.now(UTC).replace(tzinfo=None)


@functools.lru_cache(maxsize=8192)
def score_id_for(trace_id: str, span_id: str, scorer_id: str, version: str) -> str:
    """The score id of a (trace, span, scorer, version) pair: stable, so every attempt's judge
    executions link to the one score row that ends the pair (remembered for the pairs of the
    last few ticks: a pair's rows ask for it several times)."""
    # ``str(uuid.uuid5(_SCORE_NAMESPACE, name))`` without the UUID object (a third of the cost)
    digest = bytearray(hashlib.sha1(
        _NAMESPACE_BYTES + f"{trace_id}/{span_id}/{scorer_id}/{version}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_ATOMS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """A JSON-ready copy of a value that may hold pydantic models (for orjson: models become
    fragments of their JSON text, see the module docstring)."""
    kind = type(value)
    if kind in _ATOMS:  # the common cases first, by exact type (``isinstance(.., BaseModel)``
        return value  # goes through ABCMeta: several times dearer)
    if kind is dict:
        return {k if type(k) is str else str(k): plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if isinstance(value, BaseModel):
        return orjson.Fragment(value.model_dump_json(exclude_none=True))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True, slots=True)
class PairKey:
    """What one decision is about."""

    trace_id: str
    span_id: str
    scorer_id: str
    scorer_version: str
    session_id: str | None = field(default=None, compare=False)
    """The conversation a session decision is about (None for trace pairs)."""
    rescored_as: str | None = field(default=None, compare=False)
    """The score id a rescore gave the pair (its decision row's ``score_id``); None: the pair's
    own stable id."""

    @property
    def pair(self) -> tuple[str, str, str, str]:
        """(trace id, span id, scorer id, scorer version): the decision row's key."""
        return (self.trace_id, self.span_id, self.scorer_id, self.scorer_version)

    @property
    def score_id(self) -> str:
        """The score id of this pair's current attempt: stable (uuid5 of the pair), or the one a
        rescore gave it."""
        return self.rescored_as or score_id_for(self.trace_id, self.span_id, self.scorer_id,
                                                self.scorer_version)


@dataclass(frozen=True, slots=True)
class WorkItem:
    """An open decision to act on."""

    key: PairKey
    decision: str = "pending"
    attempts: int = 0
    created_at: datetime | None = None
    """When the decision row was first written (kept when it is replaced)."""
    claim: Any = field(default=None, compare=False)
    """The cluster's hold on the pair (``tracescore.cluster.Claim``: owner, fence, lease);
    None on one node."""

    @property
    def held_before(self) -> bool:
        """True when an earlier claim of the pair existed (a node that held it may have
        stored judge executions before it stopped)."""
        return self.claim is not None and int(getattr(self.claim, "fence", 0) or 0) > 1


def rescore_id(old_score_id: str) -> str:
    """The score id of a pair's new attempt after a rescore of the attempt ``old_score_id``
    (uuid5 of it: the same rescore asked twice gives the same id)."""
    return str(uuid.uuid5(_SCORE_NAMESPACE, f"rescore/{old_score_id}"))


def decision_row(
    key: PairKey,
    decision: str,
    *,
    now: datetime,
    attempts: int = 0,
    last_error: str | None = None,
    next_attempt_at: datetime | None = None,
    score_id: str | None = None,
    created_at: datetime | None = None,
) -> dict[str, Any]:
    """A ``scoring_decisions`` row; pass the existing row's ``created_at`` when replacing it."""
    return {
        "trace_id": key.trace_id,
        "span_id": key.span_id,
        "scorer_id": key.scorer_id,
        "scorer_version": key.scorer_version,
        "decision": decision,
        "attempts": attempts,
        "last_error": last_error,
        "next_attempt_at": next_attempt_at,
        "score_id": score_id,
        "created_at": created_at or now,
        "updated_at": now,
        "session_id": key.session_id,
    }


def execution_rows(
    result: ScorerRunResult | None,
    *,
    score_id: str,
    trace_id: str,
    scorer_id: str,
    now: datetime,
) -> list[dict[str, Any]]:
    """One ``judge_executions`` row per judge execution of the run (none for code scorers)."""
    return _execution_rows(result, score_id=score_id, trace_id=trace_id, scorer_id=scorer_id,
                           now=now, to_json=plain)


@dataclass(frozen=True, slots=True)
class SpendTotals:
    """Judge usage and cost summed over executions (the current attempt's and earlier ones)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    cost: float | None = None
    executions: int = 0
    sources: frozenset[str] = frozenset()
    """The executions' ``cost_source`` values (``unpriced`` among them: no price known)."""

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> SpendTotals:
        """Sum ``judge_executions`` rows."""
        totals = cls()
        for row in rows:
            source = row.get("cost_source")
            totals = totals + cls(
                row.get("input_tokens") or 0, row.get("output_tokens") or 0,
                row.get("total_tokens") or 0, row.get("reasoning_tokens") or 0,
                row.get("cached_input_tokens") or 0, row.get("cost_amount"), 1,
                frozenset((source,)) if source else frozenset(),
            )
        return totals

    def __add__(self, other: SpendTotals) -> SpendTotals:
        """Sum two totals; cost stays None only when neither side was priced."""
        cost = None if self.cost is None and other.cost is None else (
            (self.cost or 0.0) + (other.cost or 0.0))
        return SpendTotals(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens, self.reasoning_tokens + other.reasoning_tokens,
            self.cached_input_tokens + other.cached_input_tokens, cost,
            self.executions + other.executions, self.sources | other.sources,
        )

    @property
    def cost_source(self) -> str | None:
        """The ``scores.cost_source`` of these executions (``cost_source_of``)."""
        return cost_source_of([{"cost_source": source} for source in self.sources])


def score_row(
    key: PairKey,
    *,
    project: str | None,
    scorer_name: str,
    source: str,
    status: str,
    result: ScorerRunResult | None,
    run_input: Any,
    run_output: Any,
    error: dict[str, Any] | None,
    spend: SpendTotals,
    duration_ms: float,
    now: datetime,
    metadata: dict[str, Any] | None = None,
    dump: Callable[[Any], Any] = plain,
) -> dict[str, Any]:
    """The ``scores`` row that ends a pair: success, not_scorable or failed. ``dump`` makes the
    JSON value of the run's input and output (``plain``; pairs that share a run may share the
    dump)."""
    r = result
    return {
        "score_id": key.score_id,
        "trace_id": key.trace_id,
        "span_id": None if key.session_id is not None else key.span_id,
        "project": project,
        "scorer_id": key.scorer_id,
        "scorer_name": scorer_name,
        "scorer_version": key.scorer_version,
        "source": source,
        "eval_run_id": None,
        "status": status,
        "score": r.score if r is not None and status == "success" else None,
        "reason": (r.reason if r is not None else None) or (
            r.not_scorable.reason if r is not None and r.not_scorable else None),
        "run_id": r.run_id if r is not None else key.score_id,
        "created_at": now,
        "duration_ms": duration_ms,
        **step_columns(r, to_json=plain),
        "input": dump(run_input),
        "output": dump(run_output),
        "ground_truth": None,
        "error": error,
        "metadata": metadata,
        "judge_input_tokens": spend.input_tokens if spend.executions else None,
        "judge_output_tokens": spend.output_tokens if spend.executions else None,
        "judge_total_tokens": spend.total_tokens if spend.executions else None,
        "judge_reasoning_tokens": spend.reasoning_tokens if spend.executions else None,
        "judge_cached_input_tokens": spend.cached_input_tokens if spend.executions else None,
        "judge_cost": None if spend.cost_source == UNPRICED else spend.cost,
        "session_id": key.session_id,
        "cost_source": spend.cost_source,
        "decided_by": r.decided_by if r is not None else None,
    }


def error_info(exc: BaseException, *, kind: str) -> dict[str, Any]:
    """The ``scores.error`` JSON of a failed run."""
    to_dict = getattr(exc, "to_dict", None)
    info: dict[str, Any] = to_dict() if callable(to_dict) else {
        "name": type(exc).__name__, "message": str(exc)}
    info["kind"] = kind
    return info


def short_error(exc: BaseException, limit: int = 500) -> str:
    """A one-line description for ``scoring_decisions.last_error``."""
    cause = getattr(exc, "cause", None) or exc
    text = f"{type(cause).__name__}: {cause}"
    step = getattr(exc, "failed_step", None)
    if step:
        text = f"step {step}: {text}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
