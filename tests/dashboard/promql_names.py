"""Find the metric names a PromQL expression (or a Grafana dashboard) reads.

A small tokenizer, enough for dashboard checks: it drops strings, label matchers, range and
subquery brackets and grouping label lists, then keeps identifiers that are not functions,
keywords or Grafana variables. Unbalanced brackets raise ``ValueError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "bool",
        "offset",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "inf",
        "nan",
        "atan2",
        "start",
        "end",
    }
)
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(\s*[^()]*\)")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_TOKEN = re.compile(
    r"(?P<var>\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)|(?P<num>\d[\w.]*)|"
    r"(?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)|(?P<other>.)",
    re.S,
)
_LABEL_VALUES = re.compile(
    r"^\s*label_values\(\s*(?:([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?\s*,)?\s*"
    r"([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$"
)


def _check_balanced(expr: str) -> None:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for ch in expr:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                raise ValueError(f"unbalanced {ch!r} in PromQL: {expr}")
    if stack:
        raise ValueError(f"unclosed {stack[-1]!r} in PromQL: {expr}")


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects; ``ValueError`` when it does not parse."""
    text = _STRING.sub('""', expr)
    _check_balanced(text)
    text = re.sub(r"\{[^{}]*\}", " ", text)  # label matchers
    text = re.sub(r"\[[^\[\]]*\]", " ", text)  # ranges and subqueries
    text = _GROUPING.sub(" ", text)
    names: set[str] = set()
    tokens = list(_TOKEN.finditer(text))
    for i, tok in enumerate(tokens):
        ident = tok.group("ident")
        if not ident or ident.lower() in KEYWORDS:
            continue
        rest = tokens[i + 1 :]
        following = next((t.group(0) for t in rest if not t.group(0).isspace()), "")
        if following == "(":
            continue  # a function or aggregation
        names.add(ident)
    if not names and not re.search(r"\d", text):
        raise ValueError(f"no metric selected by PromQL: {expr}")
    return names


def template_metric_names(query: str) -> set[str]:
    """Metric names in a Grafana Prometheus variable query (``label_values(metric, label)``)."""
    m = _LABEL_VALUES.match(query)
    if m:
        return {m.group(1)} if m.group(1) else set()
    if query.strip().startswith(("label_names(", "metrics(", "query_result(")):
        inner = query.strip()[query.index("(") + 1 : -1]
        return metric_names(inner) if inner.strip() else set()
    return metric_names(query)


def dashboard_queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and query variable of a dashboard."""

    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for p in items:
            yield p
            yield from panels(p.get("panels") or [])

    for panel in panels(dashboard.get("panels") or []):
        for target in panel.get("targets") or []:
            if target.get("expr"):
                yield f"panel {panel.get('title')!r} target {target.get('refId')}", target["expr"]
    for var in (dashboard.get("templating") or {}).get("list") or []:
        if var.get("type") == "query":
            q = var.get("query")
            yield f"variable {var.get('name')!r}", q.get("query") if isinstance(q, dict) else q


def load_dashboard(path: Path) -> dict[str, Any]:
    """Read a Grafana dashboard JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


def exported_metric_names(exposition: str) -> set[str]:
    """Metric family and sample names in Prometheus text exposition (``GET /metrics``)."""
    names: set[str] = set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = (line.split() + [""])[:4]
            names.add(name)
            if kind == "counter" and not name.endswith("_total"):
                names.add(name + "_total")  # OpenMetrics names the family without "_total"
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names
