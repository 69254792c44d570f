"""What ``tracescore demo`` says about judge scorers that did not score, rather than waiting
out its timeout: paused (no credentials, an authentication error), disabled (no judge model),
over budget, or failing (every open pair retrying after an error)."""

from __future__ import annotations

from typing import Any


def failing_judge(row: dict[str, Any]) -> bool:
    """A scorer whose open pairs all wait for a retry after an error (not in flight)."""
    error = str(row.get("last_error") or "")
    return bool(row.get("retrying")) and row.get("retrying") == row.get("pending") and bool(
        error) and not error.startswith("in flight")


def judge_explanations(scorers: list[dict[str, Any]],
                       failing: list[dict[str, Any]]) -> list[str]:
    """One sentence per judge scorer that did not score: paused (why), disabled (why),
    failing (its last error)."""
    lines = []
    for row in scorers:
        if not row.get("uses_judge"):
            continue
        if row["state"] in ("paused", "disabled", "over_budget"):
            lines.append(f"judge scorer {row['id']} did not score: {row['state']}: "
                         f"{row.get('note') or ''}".rstrip(": "))
    for row in failing:
        lines.append(f"judge scorer {row['id']} did not score: it is failing and retrying: "
                     f"{row.get('last_error')}")
    return lines


__all__ = ["failing_judge", "judge_explanations"]
