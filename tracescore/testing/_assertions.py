"""pytest helpers for ``run_evals`` results, with failure messages that say what to look at.

Each helper raises ``AssertionError`` naming the failing scorer, its average and the items that
pulled it down (index, input, score, reason), and any items that errored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_BAR_EPSILON = 1e-9
_SHOW_ITEMS = 5


def _short(value: Any, limit: int = 60, *, quote: bool = True) -> str:
    text = repr(value) if quote or not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _numbers(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], float]]:
    """(path, average) for every average in a (possibly nested) ``scores`` dict."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict):
                yield from _numbers(value, (*path, key))
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                yield (*path, key), float(value)


def _item_runs(result: Any, scorer_id: str, *, gate: bool | None = None,
               turn: int | None = None) -> Iterator[tuple[Any, Any]]:
    """(item, ScorerRunResult) for every run of ``scorer_id`` over the items."""

    def walk(node: Any) -> Iterator[Any]:
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key == scorer_id and not isinstance(value, dict):
                yield value
            elif isinstance(value, dict):
                yield from walk(value)

    for item in result.items:
        if turn is None:
            scopes = [(item.scorer_results, item.gate_results)]
        else:
            scopes = [(t.scorer_results, t.gate_results)
                      for t in item.turn_results or [] if t.index == turn]
        sources: list[Any] = []
        for scorer_results, gate_results in scopes:
            if gate in (None, False):
                sources.append(scorer_results)
            if gate in (None, True):
                sources.append(gate_results)
        for source in sources:
            for run in walk(source):
                yield item, run


def _pulled_down(result: Any, scorer_id: str, bar: float, *, gate: bool | None = None,
                 turn: int | None = None, above: float | None = None) -> str:
    low = []
    for item, run in _item_runs(result, scorer_id, gate=gate, turn=turn):
        score = getattr(run, "score", None)
        if score is None:
            continue
        if score < bar - _BAR_EPSILON or (above is not None and score > above + _BAR_EPSILON):
            low.append((score, item, run))
    if not low:
        return ""
    low.sort(key=lambda entry: (entry[0], entry[1].index))
    lines = [
        f"    item {item.index} (input {_short(item.input)}): score {score:.3f}"
        + (f" — {_short(run.reason, 100, quote=False)}" if getattr(run, "reason", None) else "")
        for score, item, run in low[:_SHOW_ITEMS]
    ]
    more = f"\n    … and {len(low) - _SHOW_ITEMS} more" if len(low) > _SHOW_ITEMS else ""
    return "\n  items that pulled it down:\n" + "\n".join(lines) + more


def _errored(result: Any) -> str:
    bad = [item for item in result.items if item.error]
    if not bad:
        return ""
    lines = [
        f"    item {item.index} (input {_short(item.input)}): "
        f"{_short(item.error, 120, quote=False)}"
        for item in bad[:_SHOW_ITEMS]
    ]
    more = f"\n    … and {len(bad) - _SHOW_ITEMS} more" if len(bad) > _SHOW_ITEMS else ""
    return f"\n  {len(bad)} item(s) errored:\n" + "\n".join(lines) + more


def _gate_failures(result: Any) -> list[str]:
    out = []
    for g in result.gate_results or []:
        if not g.passed:
            out.append(f"gate {g.id!r} averaged {g.score:.3f} (must be 1.0)"
                       + _pulled_down(result, g.id, 1.0, gate=True))
    for t in result.turn_results or []:
        for g in t.gate_results:
            if not g.passed:
                out.append(f"turn {t.index} gate {g.id!r} averaged {g.score:.3f} (must be 1.0)"
                           + _pulled_down(result, g.id, 1.0, gate=True, turn=t.index))
    return out


def _bounds(threshold: Any) -> tuple[float, float]:
    if isinstance(threshold, dict):
        return float(threshold.get("min", 0.0)), float(threshold.get("max", 1.0))
    return float(threshold), 1.0


def _threshold_failures(result: Any) -> list[str]:
    out = []
    rows = [(None, r) for r in result.threshold_results or []]
    rows += [(t.index, r) for t in result.turn_results or [] for r in t.threshold_results]
    for turn, r in rows:
        if r.passed:
            continue
        low, high = _bounds(r.threshold)
        where = f"turn {turn} " if turn is not None else ""
        group = f" in {r.group}" if getattr(r, "group", None) else ""
        out.append(
            f"{where}scorer {r.id!r}{group} averaged {r.average_score:.3f}, outside threshold "
            f"{r.threshold!r}"
            + _pulled_down(result, r.id, low, gate=False, turn=turn, above=high)
        )
    return out


def assert_verdict(result: Any, expected: str | None) -> None:
    """Assert ``result.verdict == expected`` (``passed``, ``scored``, ``failed`` or None)."""
    if result.verdict == expected:
        return
    reasons = _gate_failures(result) + _threshold_failures(result)
    detail = "".join(f"\n  {r}" for r in reasons) + _errored(result)
    if not detail and result.verdict is None:
        detail = "\n  (no gate or threshold produced a number)"
    raise AssertionError(f"expected verdict {expected!r}, got {result.verdict!r}{detail}")


def assert_score_above(result: Any, scorer_id: str, minimum: float, *,
                       group: str | None = None) -> None:
    """Assert the scorer's average is at least ``minimum`` (inclusive, like thresholds).

    ``group`` picks the config key when the id appears more than once (``agent``,
    ``trajectory``, ``workflow`` or ``steps.<step_id>``).
    """
    found = [(path, value) for path, value in _numbers(result.scores) if path[-1] == scorer_id]
    if group is not None:
        found = [(p, v) for p, v in found if ".".join(p[:-1]) == group]
    if not found:
        known = sorted({".".join(p) for p, _ in _numbers(result.scores)})
        ns = result.summary.not_scorable.get(scorer_id)
        why = (f"it was not scorable on {ns} run(s)" if ns else
               "it is not among the scorers, or it never produced a number")
        raise AssertionError(
            f"scorer {scorer_id!r} has no average score ({why}); scores: {known}"
            + _errored(result)
        )
    if len(found) > 1:
        raise AssertionError(
            f"scorer {scorer_id!r} appears under {[ '.'.join(p[:-1]) for p, _ in found]}; "
            "pass group=... to pick one"
        )
    path, average = found[0]
    if average >= minimum - _BAR_EPSILON:
        return
    raise AssertionError(
        f"scorer {'.'.join(path)!r} averaged {average:.3f}, below {minimum}"
        + _pulled_down(result, scorer_id, minimum, gate=False) + _errored(result)
    )


def assert_passes_gates(result: Any) -> None:
    """Assert every gate (top-level and per turn) averaged 1.0 and no item errored."""
    failures = _gate_failures(result)
    errored = _errored(result)
    if not failures and not errored:
        return
    raise AssertionError(
        "gates did not pass:" + "".join(f"\n  {f}" for f in failures) + errored
    )


def assert_passes_thresholds(result: Any) -> None:
    """Assert every scorer with a threshold (top-level and per turn) met it, no item errored."""
    failures = _threshold_failures(result)
    errored = _errored(result)
    if not failures and not errored:
        return
    raise AssertionError(
        "thresholds were missed:" + "".join(f"\n  {f}" for f in failures) + errored
    )
