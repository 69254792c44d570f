"""Turning ready traces into decisions: internal, filtered out, sampled out, or pending per
target span.

Given the ready traces, the scorers, what is already decided and which traces match each
filter, ``classify`` says per (trace, scorer) what happens without touching the database; the
traces left to score are then loaded once each and their target spans listed by ``expand``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._registry import RegisteredScorer
from ._rows import PairKey, decision_row, short_error
from ._sampling import is_sampled
from ._selection import OpenTrace
from ._transform import target_span_ids

if TYPE_CHECKING:
    from ._inline import InlinePair

WHOLE_TRACE = ""
"""``scoring_decisions.span_id`` of a decision about the whole trace (sampled or filtered out)."""


@dataclass
class Expansion:
    """The outcome of looking at a batch of ready traces."""

    decisions: list[dict[str, Any]] = field(default_factory=list)
    pending: list[tuple[PairKey, RegisteredScorer]] = field(default_factory=list)
    """Pairs with a ``pending`` row in ``decisions``, for workers."""
    to_load: dict[str, list[RegisteredScorer]] = field(default_factory=dict)
    inline: list[tuple[PairKey, RegisteredScorer]] = field(default_factory=list)
    """Pairs of inline scorers, to score where they were found (no ``pending`` row)."""
    finished: list[InlinePair] = field(default_factory=list)
    """The inline pairs once scored, with their rows (``_inline``)."""


def classify(
    traces: Sequence[OpenTrace],
    scorers: Sequence[RegisteredScorer],
    *,
    decided: Collection[tuple[str, str, str]],
    matches: Mapping[str, Collection[str]],
    horizons: Mapping[tuple[str, str], datetime],
    now: datetime,
    rates: Mapping[str, Mapping[str, tuple[float, str]]] | None = None,
) -> Expansion:
    """Decide what can be decided without loading the traces.

    ``decided`` holds (trace id, scorer id, version) already decided; ``matches`` the trace ids
    matching each filtered scorer's filter; ``horizons`` the earliest first arrival each version
    scores (a missing horizon means no limit); ``rates`` per scorer id and trace id the sample
    rate and why (segments, pacing: ``_segments``), else the scorer's ``sample_rate``.
    """
    out = Expansion()
    for trace in traces:
        for reg in scorers:
            if (trace.trace_id, reg.id, reg.version) in decided:
                continue
            horizon = horizons.get((reg.id, reg.version))
            if horizon is not None and trace.first_received < horizon:
                continue
            whole = PairKey(trace.trace_id, WHOLE_TRACE, reg.id, reg.version)
            if trace.internal:
                out.decisions.append(decision_row(
                    whole, "filtered_out", now=now,
                    last_error="tracescore's own trace (attribute tracescore.internal)"))
            elif reg.filter is not None and trace.trace_id not in matches.get(reg.id, ()):
                out.decisions.append(decision_row(
                    whole, "filtered_out", now=now, last_error=f"filter: {reg.filter}"))
            elif not is_sampled(trace.trace_id, (chosen := _rate(rates, reg, trace.trace_id))[0]):
                out.decisions.append(decision_row(
                    whole, "sampled_out", now=now, last_error=chosen[1]))
            else:
                out.to_load.setdefault(trace.trace_id, []).append(reg)
    return out


def _rate(rates: Mapping[str, Mapping[str, tuple[float, str]]] | None, reg: RegisteredScorer,
          trace_id: str) -> tuple[float, str]:
    found = rates.get(reg.id, {}).get(trace_id) if rates else None
    return found or (reg.sample_rate, f"sample_rate {reg.sample_rate:g}")


def expand(
    out: Expansion,
    trace_id: str,
    load: Callable[[str], Any],
    *,
    now: datetime,
    inline: Callable[[RegisteredScorer], bool] | None = None,
) -> Any:
    """Load one trace and add a pending decision per target span of each scorer waiting on it
    (for a scorer ``inline`` says yes to, the pair goes to ``out.inline`` without a row).

    Runs in a worker thread. Returns the loaded trace (None when it could not be loaded, in
    which case the pairs are recorded as failed).
    """
    scorers = out.to_load.get(trace_id, [])
    try:
        trace = load(trace_id)
    except Exception as exc:  # noqa: BLE001 - one bad trace never stops the loop
        for reg in scorers:
            out.decisions.append(decision_row(
                PairKey(trace_id, WHOLE_TRACE, reg.id, reg.version), "failed", now=now,
                last_error=f"could not load the trace: {short_error(exc)}"))
        return None
    for reg in scorers:
        whole = PairKey(trace_id, WHOLE_TRACE, reg.id, reg.version)
        try:
            span_ids = target_span_ids(trace, reg.target, getattr(reg.scorer, "type", None))
        except Exception as exc:  # noqa: BLE001
            out.decisions.append(decision_row(
                whole, "failed", now=now,
                last_error=f"could not find the {reg.target} spans: {short_error(exc)}"))
            continue
        if not span_ids:
            what = "agent_run" if reg.target == "trace" and getattr(
                reg.scorer, "type", None) == "agent" else reg.target
            out.decisions.append(decision_row(
                whole, "filtered_out", now=now, last_error=f"no {what} span in the trace"))
            continue
        runs_inline = inline is not None and inline(reg)
        for span_id in span_ids:
            key = PairKey(trace_id, span_id, reg.id, reg.version)
            if runs_inline:
                out.inline.append((key, reg))
                continue
            out.decisions.append(decision_row(key, "pending", now=now, score_id=key.score_id))
            out.pending.append((key, reg))
    return trace
