"""Building ``ScorerRun`` and ``ScorerRunResult`` objects on the hot path of ``Scorer.run``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from tracescore.model import ScorerRun, new_run_id

_M = TypeVar("_M", bound=BaseModel)


def construct(cls: type[_M], values: dict[str, Any]) -> _M:
    """Build a pydantic model from trusted values holding every field, without validation.

    pydantic's ``model_construct`` costs ~10 µs for ScorerRunResult (alias handling); this is
    the part of it we need, and a test checks the outcome equals a validated model.
    """
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def make_run(
    run: ScorerRun | Mapping[str, Any] | None,
    input: Any,  # noqa: A002
    output: Any,
    run_id: str | None,
    request_context: Mapping[str, Any] | None,
    ground_truth: Any,
    expected_trajectory: Any,
) -> ScorerRun:
    if request_context is not None and not isinstance(request_context, Mapping):
        raise TypeError(f"request_context must be a dict, got {type(request_context).__name__}")
    if run is None:
        return construct(ScorerRun, {
            "run_id": run_id or new_run_id(),
            "input": input,
            "output": output,
            "ground_truth": ground_truth,
            "expected_trajectory": expected_trajectory,
            "request_context": dict(request_context) if request_context is not None else None,
            "trace_id": None,
            "span_id": None,
        })
    if isinstance(run, ScorerRun):
        base = run
    elif isinstance(run, Mapping):
        base = ScorerRun.model_validate(run)
    else:
        raise TypeError(
            "scorer.run() takes the run's fields as keywords (input=..., output=...) or a "
            f"ScorerRun / dict as its only positional argument, got {type(run).__name__}"
        )
    updates = {k: v for k, v in (("input", input), ("output", output), ("run_id", run_id),
                                 ("request_context", request_context),
                                 ("ground_truth", ground_truth),
                                 ("expected_trajectory", expected_trajectory)) if v is not None}
    return base.model_copy(update=updates) if updates else base


_RUN_FIELDS: dict[str, str] = {
    **{name: name for name in ScorerRun.model_fields},
    **{f.alias: name for name, f in ScorerRun.model_fields.items() if f.alias},
}


def coerce_prepared(prepared: Any, original: ScorerRun) -> ScorerRun:
    if prepared is None:
        return original
    if isinstance(prepared, ScorerRun):
        return prepared
    if isinstance(prepared, Mapping):
        unknown = [k for k in prepared if k not in _RUN_FIELDS]
        if unknown:
            raise TypeError(f"prepare_run returned unknown ScorerRun fields {unknown}")
        return original.model_copy(update={_RUN_FIELDS[k]: v for k, v in prepared.items()})
    raise TypeError(f"prepare_run must return a ScorerRun, a dict or None, got "
                    f"{type(prepared).__name__}")
