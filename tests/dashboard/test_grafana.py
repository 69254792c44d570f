"""The Grafana dashboard (dashboards/grafana/tracescore.json) queries only metrics the server exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from .promql_names import (
    dashboard_queries,
    exported_metric_names,
    load_dashboard,
    metric_names,
    template_metric_names,
)

DASHBOARD = Path(__file__).parents[2] / "dashboards" / "grafana" / "tracescore.json"


def _queried_names() -> dict[str, set[str]]:
    dashboard = load_dashboard(DASHBOARD)
    out: dict[str, set[str]] = {}
    for where, query in dashboard_queries(dashboard):
        names = template_metric_names(query) if where.startswith("variable") else metric_names(query)
        out[f"{where}: {query}"] = names
    return out


def test_extractor_finds_selectors_and_skips_functions_labels_and_keywords() -> None:
    expr = (
        'sum by (scorer_id) (rate(a_total{status="x(", project=~"$project"}[$__rate_interval] '
        "offset 5m)) / on (scorer_id) group_left (kind) b_seconds > bool 0.5 unless c"
    )
    assert metric_names(expr) == {"a_total", "b_seconds", "c"}
    assert template_metric_names("label_values(tracescore_scores_total, scorer_id)") == {
        "tracescore_scores_total"
    }
    with pytest.raises(ValueError):
        metric_names("sum(rate(a_total[5m])")


def test_exposition_parser_reads_type_lines_and_samples() -> None:
    text = (
        "# HELP x_total spans\n# TYPE x_total counter\nx_total{project=\"a\"} 1.0\n"
        "# TYPE y gauge\ny 0.0\n# TYPE z counter\n"
    )
    assert exported_metric_names(text) == {"x_total", "y", "z", "z_total"}


def test_dashboard_is_valid_grafana_json_with_a_prometheus_datasource_variable() -> None:
    dashboard = load_dashboard(DASHBOARD)
    assert dashboard["uid"] == "tracescore" and dashboard["title"] == "tracescore"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = set()
    for panel in dashboard["panels"]:
        assert panel["id"] not in ids
        ids.add(panel["id"])
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"], panel["title"]


def test_every_expression_parses_and_selects_a_tracescore_metric() -> None:
    queried = _queried_names()
    assert len(queried) >= 15
    for where, names in queried.items():
        assert names, where
        assert all(n.startswith("tracescore_") for n in names), where
