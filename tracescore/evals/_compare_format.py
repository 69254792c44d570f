"""A comparison as text: a terminal table, or markdown that fits a pull-request comment."""

from __future__ import annotations

from typing import Any

from ._compare_models import ExperimentComparison, ScorerComparison


def _num(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _short(value: Any, limit: int = 80) -> str:
    if isinstance(value, list):
        texts = [m.get("content", "") for m in value if isinstance(m, dict) and m.get("content")]
        value = " / ".join(texts) if texts else value
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scorer_cells(s: ScorerComparison) -> list[str]:
    arrow = "↓" if s.lower_is_better else "↑"
    return [f"{s.scorer_id} {arrow}", _num(s.baseline_avg), _num(s.candidate_avg),
            _num(s.delta, signed=True), _pct(s.baseline_pass_rate), _pct(s.candidate_pass_rate),
            f"{s.baseline_errors}/{s.candidate_errors}",
            "REGRESSED" if s.regressed else "ok"]


_HEADERS = ["scorer", "baseline", "candidate", "delta", "pass (b)", "pass (c)", "errors b/c",
            ""]


def _title(c: ExperimentComparison) -> str:
    return (f"{c.candidate.name} ({c.candidate.experiment_id[:8]}) vs baseline "
            f"{c.baseline.name} ({c.baseline.experiment_id[:8]}), threshold {c.threshold:g}")


def format_table(c: ExperimentComparison) -> str:
    """Aligned columns for a terminal."""
    rows = [_HEADERS, *(_scorer_cells(s) for s in c.scorers.values())]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADERS))]
    lines = [_title(c), ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    if c.items:
        lines += ["", "items that got worse (largest drop first):"]
        for item in c.items:
            for d in item.drops:
                change = "error" if d.drop is None else f"-{d.drop:.3f}"
                lines.append(f"  {item.item_id}  {d.scorer_id}: {_num(d.baseline_score)} → "
                             f"{_num(d.candidate_score)} ({change})")
            lines.append(f"    baseline:  {_short(item.baseline_output)}")
            lines.append(f"    candidate: {_short(item.candidate_output)}")
    lines += ["", "REGRESSED: " + ", ".join(c.regressed_scorers) if c.regressed
              else "no regression"]
    return "\n".join(lines)


def format_markdown(c: ExperimentComparison, *, max_items: int = 20) -> str:
    """A markdown summary for a pull-request comment."""
    verdict = (f"❌ **Regressed:** {', '.join(f'`{s}`' for s in c.regressed_scorers)}"
               if c.regressed else "✅ **No regression**")
    lines = [f"### Experiment comparison: `{c.candidate.name}` vs `{c.baseline.name}`", "",
             verdict, "", "| " + " | ".join(h or "status" for h in _HEADERS) + " |",
             "|" + "---|" * len(_HEADERS)]
    for s in c.scorers.values():
        cells = _scorer_cells(s)
        cells[-1] = "❌ regressed" if s.regressed else "✅"
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    if c.items:
        lines += ["", f"<details><summary>{len(c.items)} item(s) got worse</summary>", "",
                  "| item | scorer | baseline | candidate | candidate output |",
                  "|---|---|---|---|---|"]
        for item in c.items[:max_items]:
            for d in item.drops:
                out = _short(item.candidate_output, 60).replace("|", "\\|")
                lines.append(f"| `{item.item_id}` | `{d.scorer_id}` | "
                             f"{_num(d.baseline_score)} | "
                             f"{'error' if d.candidate_score is None else _num(d.candidate_score)}"
                             f" | {out} |")
        lines += ["", "</details>"]
    lines += ["", f"<sub>threshold {c.threshold:g} · baseline `{c.baseline.experiment_id}` · "
                  f"candidate `{c.candidate.experiment_id}`</sub>"]
    return "\n".join(lines)


__all__ = ["format_markdown", "format_table"]
