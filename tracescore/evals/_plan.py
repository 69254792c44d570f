"""Validation and normalisation of ``run_evals`` arguments into a plan, before anything runs.

Every scorer form (a flat list with ``{"scorer", "threshold"}`` entries, ``AgentScorerConfig``,
``WorkflowScorerConfig``, plain dicts with the same keys), the gates, and each item's
``turns`` become ``Assertion`` records; bad input raises ``EvalValidationError`` naming the
item, key or scorer and the fix.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import ValidationError

from ._errors import EvalValidationError
from ._models import AgentScorerConfig, EvalItem, EvalTurn, WorkflowScorerConfig

TargetKind = Literal["agent", "workflow"]
ItemMode = Literal["single", "inputs", "turns"]
Group = tuple[str, ...]
"""Where a scorer's results nest in ``scores``: () flat, ("agent",), ("steps", step_id), …"""

_EPSILON = 1e-9
logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Threshold:
    """Inclusive bounds a scorer's average must fall within."""

    min: float
    max: float
    given: float | dict[str, float]

    def passes(self, average: float) -> bool:
        """True when ``min <= average <= max`` (with float tolerance)."""
        return self.min - _EPSILON <= average <= self.max + _EPSILON


@dataclass(frozen=True, slots=True)
class Assertion:
    """One scorer in the plan: where its results go and how they are judged."""

    scorer: Any
    id: str
    group: Group
    is_gate: bool
    threshold: Threshold | None
    wants_trajectory: bool

    @property
    def group_label(self) -> str | None:
        """``agent``, ``trajectory``, ``steps.<id>``…; None for flat scorers and gates."""
        return ".".join(self.group) if self.group else None


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """One turn of a ``turns`` item (or of an ``inputs`` item, with no assertions)."""

    input: Any
    gates: tuple[Assertion, ...]
    scorers: tuple[Assertion, ...]
    ground_truth: Any


@dataclass(frozen=True, slots=True)
class ItemPlan:
    """One validated data item."""

    index: int
    original: Any
    item: EvalItem
    mode: ItemMode
    turns: tuple[TurnPlan, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything ``run_evals`` will do, validated."""

    target_kind: TargetKind
    gates: tuple[Assertion, ...]
    scorers: tuple[Assertion, ...]
    items: tuple[ItemPlan, ...]
    config_form: Literal["agent", "workflow"] | None

    @property
    def has_turns(self) -> bool:
        """True when some item has ``turns``."""
        return any(p.mode == "turns" for p in self.items)

    @property
    def has_verdict_inputs(self) -> bool:
        """True when any gate or threshold is configured (top-level or per turn)."""
        if self.gates or any(a.threshold for a in self.scorers):
            return True
        return any(
            t.gates or any(a.threshold for a in t.scorers) for p in self.items for t in p.turns
        )


def is_scorer(value: Any) -> bool:
    """True for anything shaped like a tracescore ``Scorer`` (an ``id`` and a ``run``)."""
    return (
        not isinstance(value, (Mapping, str, bytes))
        and callable(getattr(value, "run", None))
        and isinstance(getattr(value, "id", None), str)
        and bool(getattr(value, "id", ""))
    )


def parse_threshold(value: Any, where: str) -> Threshold:
    """A number (inclusive minimum) or ``{"min", "max"}``, every bound within [0, 1]."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"min", "max"})
        if unknown:
            raise EvalValidationError(
                f"{where}: threshold has unknown key(s) {unknown}; use a number (the minimum) "
                "or {'min': ..., 'max': ...}"
            )
        if not value:
            raise EvalValidationError(f"{where}: threshold {{}} sets no bound; give 'min' or 'max'")
        low = _bound(value.get("min", 0.0), where, "min")
        high = _bound(value.get("max", 1.0), where, "max")
        if low > high:
            raise EvalValidationError(
                f"{where}: threshold min {low} is greater than max {high}; min must be <= max"
            )
        return Threshold(low, high, {k: float(v) for k, v in value.items()})
    low = _bound(value, where, "threshold")
    return Threshold(low, 1.0, low)


def _bound(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise EvalValidationError(
            f"{where}: {name} must be a number between 0 and 1, got {value!r}"
        )
    if not 0.0 <= float(value) <= 1.0:
        raise EvalValidationError(
            f"{where}: {name} {value} is out of range; thresholds must be within [0, 1]"
        )
    return float(value)


def _assertion(
    entry: Any, where: str, *, group: Group, is_gate: bool, trajectory_group: bool = False
) -> Assertion:
    threshold: Threshold | None = None
    if isinstance(entry, Mapping):
        if "scorer" not in entry:
            raise EvalValidationError(
                f"{where}: a scorer entry dict needs a 'scorer' key, e.g. "
                "{'scorer': my_scorer, 'threshold': 0.7}"
            )
        unknown = sorted(set(entry) - {"scorer", "threshold"})
        if unknown:
            raise EvalValidationError(
                f"{where}: unknown key(s) {unknown} in scorer entry; use 'scorer' and 'threshold'"
            )
        scorer = entry["scorer"]
        if entry.get("threshold") is not None:
            if is_gate:
                raise EvalValidationError(
                    f"{where}: gates take no threshold (a gate must average 1.0); move it to "
                    "scorers=[{'scorer': ..., 'threshold': ...}] to track a minimum instead"
                )
            threshold = parse_threshold(entry["threshold"], f"{where} ({_id_of(scorer)})")
    else:
        scorer = entry
    if not is_scorer(scorer):
        raise EvalValidationError(
            f"{where}: expected a scorer built with create_scorer (or a "
            f"{{'scorer': ..., 'threshold': ...}} entry), got {type(scorer).__name__}"
        )
    wants_trajectory = trajectory_group or getattr(scorer, "type", None) == "trajectory"
    return Assertion(scorer, scorer.id, group, is_gate, threshold, wants_trajectory)


def _id_of(scorer: Any) -> str:
    value = getattr(scorer, "id", None)
    return value if isinstance(value, str) else type(scorer).__name__


def _assertions(
    entries: Any, where: str, *, group: Group, is_gate: bool, trajectory_group: bool = False
) -> tuple[Assertion, ...]:
    if entries is None:
        return ()
    if is_scorer(entries) or isinstance(entries, Mapping) and "scorer" in entries:
        entries = [entries]
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Iterable):
        raise EvalValidationError(
            f"{where}: expected a list of scorers, got {type(entries).__name__}"
        )
    out = tuple(
        _assertion(e, f"{where}[{i}]", group=group, is_gate=is_gate,
                   trajectory_group=trajectory_group)
        for i, e in enumerate(entries)
    )
    # Two scorers with one id (two checks.includes(...), say) are both kept: the later ones
    # are keyed "<id>#2", "<id>#3", … so neither result hides the other.
    seen: dict[str, int] = {}
    renamed = []
    for a in out:
        seen[a.id] = seen.get(a.id, 0) + 1
        if seen[a.id] > 1:
            key = f"{a.id}#{seen[a.id]}"
            logger.warning("%s: two scorers share the id %r; the later one is reported as %r "
                           "(give it its own id to choose the name)", where, a.id, key)
            a = replace(a, id=key)
        renamed.append(a)
    out = tuple(renamed)
    return out


def _scorer_config(scorers: Any, kind: TargetKind) -> tuple[
    tuple[Assertion, ...], Literal["agent", "workflow"] | None
]:
    if scorers is None:
        return (), None
    if isinstance(scorers, Mapping) and "scorer" not in scorers:
        keys = set(scorers)
        agent_keys, workflow_keys = {"agent", "trajectory"}, {"workflow", "steps", "trajectory"}
        if keys <= agent_keys and (kind == "agent" or "agent" in keys):
            scorers = AgentScorerConfig.model_validate(dict(scorers))
        elif keys <= workflow_keys:
            scorers = WorkflowScorerConfig.model_validate(dict(scorers))
        else:
            raise EvalValidationError(
                f"scorers: unknown key(s) {sorted(keys - agent_keys - workflow_keys)}; a scorer "
                "config dict has 'agent'/'trajectory' (agents) or 'workflow'/'steps'/"
                "'trajectory' (workflows)"
            )
    if isinstance(scorers, AgentScorerConfig):
        if kind != "agent":
            raise EvalValidationError(
                "scorers: AgentScorerConfig is for agent targets, and the target is a workflow; "
                "use WorkflowScorerConfig(workflow=[...], steps={...}, trajectory=[...])"
            )
        return (
            _assertions(scorers.agent, "scorers.agent", group=("agent",), is_gate=False)
            + _assertions(scorers.trajectory, "scorers.trajectory", group=("trajectory",),
                          is_gate=False, trajectory_group=True)
        ), "agent"
    if isinstance(scorers, WorkflowScorerConfig):
        if kind != "workflow":
            raise EvalValidationError(
                "scorers: WorkflowScorerConfig is for workflow targets, and the target is an "
                "agent; use a list of scorers or AgentScorerConfig(agent=[...], trajectory=[...])"
            )
        out = _assertions(scorers.workflow, "scorers.workflow", group=("workflow",),
                          is_gate=False)
        for step_id, step_scorers in scorers.steps.items():
            out += _assertions(step_scorers, f"scorers.steps[{step_id!r}]",
                               group=("steps", step_id), is_gate=False)
        out += _assertions(scorers.trajectory, "scorers.trajectory", group=("trajectory",),
                           is_gate=False, trajectory_group=True)
        return out, "workflow"
    return _assertions(scorers, "scorers", group=(), is_gate=False), None


def _item(index: int, raw: Any, kind: TargetKind) -> ItemPlan:
    where = f"data item {index}"
    if isinstance(raw, EvalItem):
        item = raw
    elif isinstance(raw, Mapping):
        try:
            item = EvalItem.model_validate(dict(raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise EvalValidationError(f"{where}: {problems}") from None
    else:
        raise EvalValidationError(
            f"{where}: expected a dict or EvalItem with 'input', 'inputs' or 'turns', "
            f"got {type(raw).__name__}"
        )
    given = item.given_input_keys()
    if len(given) != 1:
        has = f"it has {' and '.join(repr(k) for k in given)}" if given else "it has none"
        raise EvalValidationError(
            f"{where}: give exactly one of 'input', 'inputs' or 'turns' ({has})"
        )
    mode: ItemMode = "single" if given[0] == "input" else given[0]  # type: ignore[assignment]
    if mode != "single" and kind == "workflow":
        raise EvalValidationError(
            f"{where}: {given[0]!r} (multi-turn) works with agent targets only, and the target "
            "is a workflow; give each workflow item a single 'input'"
        )
    turns: tuple[TurnPlan, ...] = ()
    if mode == "inputs":
        if not item.inputs:
            raise EvalValidationError(
                f"{where}: 'inputs' must be a non-empty list of turn inputs"
            )
        turns = tuple(TurnPlan(value, (), (), item.ground_truth) for value in item.inputs)
    elif mode == "turns":
        if not item.turns:
            raise EvalValidationError(f"{where}: 'turns' must be a non-empty list of turns")
        turns = tuple(_turn(t, f"{where}, turn {i}", item) for i, t in enumerate(item.turns))
    return ItemPlan(index, raw, item, mode, turns)


def _turn(turn: EvalTurn, where: str, item: EvalItem) -> TurnPlan:
    own = "ground_truth" in turn.model_fields_set
    return TurnPlan(
        turn.input,
        _assertions(turn.gates, f"{where}, gates", group=(), is_gate=True),
        _assertions(turn.scorers, f"{where}, scorers", group=(), is_gate=False),
        turn.ground_truth if own else item.ground_truth,
    )


def build_plan(kind: TargetKind, data: Any, scorers: Any, gates: Any) -> Plan:
    """Validate every argument and return the plan; raise ``EvalValidationError`` if unusable."""
    if data is None or isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise EvalValidationError(
            f"data must be a list of items (dicts or EvalItem), got {type(data).__name__}"
        )
    items_raw = list(data) if not isinstance(data, Sequence) else data
    if len(items_raw) == 0:
        raise EvalValidationError("data is empty; pass at least one item, e.g. [{'input': '...'}]")
    top_scorers, config_form = _scorer_config(scorers, kind)
    top_gates = _assertions(gates, "gates", group=(), is_gate=True)
    items = tuple(_item(i, raw, kind) for i, raw in enumerate(items_raw))
    has_turn_assertions = any(t.gates or t.scorers for p in items for t in p.turns)
    if not top_scorers and not top_gates and not has_turn_assertions:
        raise EvalValidationError(
            "no scorers, no gates and no per-turn assertions were given; at least one scorer "
            "must be provided (scorers=[...], gates=[...], or 'gates'/'scorers' in turns)"
        )
    return Plan(kind, top_gates, top_scorers, items, config_form)
