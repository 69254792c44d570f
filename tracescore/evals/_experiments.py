"""Recording a ``run_evals`` run as an experiment: which data it ran (a dataset version), what
changed (metadata), and one ``experiment_results`` row per scorer run, for comparisons.

The ``experiments`` row is written when the run starts (``status = 'running'``) and replaced when
it ends (``completed`` or ``failed``, with counts and the verdict). An item whose target failed
gets a result row per scorer with a NULL score and the error, so comparisons count it as an
error, never as a zero.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_core import to_jsonable_python

from tracescore.model import NAME_RULE, name_problem

from ._errors import EvalValidationError
from ._execute import ItemOutcome
from ._plan import Plan


@dataclass(frozen=True, slots=True)
class DataSource:
    """What ``run_evals`` runs over: items, and the dataset version they came from (if any)."""

    items: Any
    dataset_id: str | None = None
    dataset_version: int | None = None
    dataset_ref: str | None = None


def _is_dataset(data: Any) -> bool:
    return (not isinstance(data, (Mapping, str, bytes, list, tuple))
            and isinstance(getattr(data, "dataset_id", None), str)
            and isinstance(getattr(data, "version", None), int)
            and isinstance(getattr(data, "items", None), list))


async def resolve_data(data: Any, store: Any, *, api_key: str | None) -> DataSource:
    """Items from ``data``: a list as given, a ``Dataset``, or ``"name"``/``"name@N"`` read
    from ``store``."""
    if isinstance(data, str):
        if store is None:
            raise EvalValidationError(
                f"data must be a list of items or a Dataset; data={data!r} could name a "
                "dataset only with store= (a database path or a server URL) to read it from"
            )
        from tracescore.datasets import get_dataset

        data = await asyncio.to_thread(get_dataset, store, data, api_key=api_key)
    if _is_dataset(data):
        return DataSource(items=list(data.items), dataset_id=data.dataset_id,
                          dataset_version=data.version, dataset_ref=f"{data.name}@{data.version}")
    return DataSource(items=data)


def git_commit() -> str | None:
    """The checked-out commit (``GITHUB_SHA``/``CI_COMMIT_SHA`` first), or None outside git."""
    for name in ("GITHUB_SHA", "CI_COMMIT_SHA"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _now() -> datetime:
    return datetime.now(UTC)


def item_id_of(outcome: ItemOutcome) -> str:
    """The dataset item's id, else the item's position in ``data``."""
    original = outcome.plan.original
    value = original.get("item_id") if isinstance(original, Mapping) else getattr(
        original, "item_id", None)
    return str(value) if value else str(outcome.plan.index)


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=repr)


@dataclass(slots=True)
class ExperimentRecorder:
    """Collects one experiment's rows and writes them through the run's ``ScoreSink``."""

    sink: Any
    name: str
    plan: Plan
    source: DataSource
    target_name: str | None
    metadata: dict[str, Any]
    experiment_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: datetime = field(default_factory=_now)
    results: list[dict[str, Any]] = field(default_factory=list)
    repeats: dict[tuple[str, str], int] = field(default_factory=dict)
    """Results kept so far per (item, scorer): the next one's ``repetition``."""

    @classmethod
    def build(cls, sink: Any, name: str, plan: Plan, source: DataSource, *,
              target_name: str | None, target: Any, target_options: Mapping[str, Any],
              eval_run_id: str, user_metadata: Mapping[str, Any] | None) -> ExperimentRecorder:
        """A recorder whose metadata says what ran: commit, model, thresholds, the user's dict."""
        from tracescore.scorers import LOWER_IS_BETTER

        problem = name_problem(name)
        if problem is not None:
            raise EvalValidationError(f"experiment={name!r:.80} is not a valid name: {problem} "
                                      f"(a name is {NAME_RULE})")
        if user_metadata is not None and not isinstance(user_metadata, Mapping):
            raise EvalValidationError("experiment_metadata must be a dict")
        model = target_options.get("model") or getattr(target, "model", None)
        assertions = [*plan.gates, *plan.scorers]
        metadata: dict[str, Any] = {
            "git_commit": git_commit(),
            "model": model if isinstance(model, str) else None,
            "eval_run_id": eval_run_id,
            "dataset": source.dataset_ref,
            "thresholds": {a.id: {"min": a.threshold.min, "max": a.threshold.max}
                           for a in assertions if a.threshold is not None},
            "gates": [a.id for a in plan.gates],
            "lower_is_better": sorted({a.id for a in assertions
                                       if getattr(a.scorer, "id", a.id) in LOWER_IS_BETTER}),
            **_jsonable(dict(user_metadata or {})),
        }
        return cls(sink=sink, name=name, plan=plan, source=source, target_name=target_name,
                   metadata=metadata)

    def row(self, *, status: str, finished_at: datetime | None = None,
            item_count: int | None = None, error_count: int | None = None,
            verdict: str | None = None) -> dict[str, Any]:
        """The ``experiments`` row as it stands."""
        return {
            "experiment_id": self.experiment_id, "name": self.name,
            "dataset_id": self.source.dataset_id, "dataset_version": self.source.dataset_version,
            "created_at": self.created_at, "finished_at": finished_at, "status": status,
            "target_name": self.target_name, "metadata": self.metadata,
            "item_count": item_count, "error_count": error_count, "verdict": verdict,
        }

    async def begin(self) -> None:
        """Write the row with ``status = 'running'``."""
        await self.sink.write_experiment(self.row(status="running"), [])

    def add(self, outcome: ItemOutcome) -> None:
        """Keep the result rows of one finished item."""
        item_id = item_id_of(outcome)
        seen: set[str] = set()
        for run in outcome.runs:
            seen.add(run.assertion.id)
            result = run.result
            self.results.append({
                "experiment_id": self.experiment_id, "item_id": item_id,
                "scorer_id": run.assertion.id, "score": run.score,
                "repetition": self._repetition(item_id, run.assertion.id),
                "reason": result.reason if result is not None else None,
                "error": (f"{type(run.error).__name__}: {run.error}"
                          if run.error is not None else None),
                "not_scorable": run.not_scorable, "output": _jsonable(run.output),
                "trace_id": run.trace_id, "span_id": run.span_id,
                "duration_ms": run.duration_ms,
                "judge_cost_usd": result.judge_cost() if result is not None else None,
                "agent_cost_usd": None,
            })
        error = outcome.result.error
        if error is None:
            return
        for assertion in (*self.plan.gates, *self.plan.scorers):
            if assertion.id not in seen:
                self.results.append({
                    "experiment_id": self.experiment_id, "item_id": item_id,
                    "scorer_id": assertion.id, "score": None, "error": error,
                    "repetition": self._repetition(item_id, assertion.id),
                    "not_scorable": False, "output": _jsonable(outcome.result.output),
                    "trace_id": outcome.result.trace_id,
                })

    def _repetition(self, item_id: str, scorer_id: str) -> int:
        """0 for an (item, scorer)'s first result, then 1, 2, ... (a scorer run per turn, an
        item listed twice): with the experiment, the key of a result."""
        key = (item_id, scorer_id)
        self.repeats[key] = self.repeats.get(key, -1) + 1
        return self.repeats[key]

    async def finish(self, *, status: str, item_count: int, error_count: int,
                     verdict: str | None) -> None:
        """Replace the row with the outcome and append every result row."""
        row = self.row(status=status, finished_at=_now(), item_count=item_count,
                       error_count=error_count, verdict=verdict)
        await self.sink.write_experiment(row, self.results)


__all__ = ["DataSource", "ExperimentRecorder", "git_commit", "item_id_of", "resolve_data"]
