"""dashboards/grafana/tracescore.json queries only metrics (and labels) the server exports."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess

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
        names = (
            template_metric_names(query) if where.startswith("variable") else metric_names(query)
        )
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
        '# HELP x_total spans\n# TYPE x_total counter\nx_total{project="a"} 1.0\n'
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


def _sample_labels(exposition: str) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = {}
    for line in exposition.splitlines():
        if line and not line.startswith("#"):
            name, _, rest = line.partition("{")
            found = (
                set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', rest.split("}")[0]))
                if rest
                else set()
            )
            labels.setdefault(name.split()[0], set()).update(found)
    return labels


def _used_labels(expr: str) -> set[str]:
    used: set[str] = set()
    for block in re.findall(r"\{([^}]*)\}", expr):
        used |= set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", block))
    for block in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        used |= {label.strip() for label in block.split(",") if label.strip()}
    return used


def test_every_queried_metric_is_exported_by_a_running_server(seeded_server: ServerProcess) -> None:
    response = httpx.get(f"{seeded_server.url}/metrics", headers=seeded_server.headers, timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    exported = exported_metric_names(response.text)
    queried = _queried_names()
    missing = {where: names - exported for where, names in queried.items() if names - exported}
    assert missing == {}
    # Every metric the server exports is on the dashboard (the samples' helper series aside).
    # (A histogram's family name is never queried itself: its _bucket/_sum/_count series are.)
    families = {n for n in exported if n.startswith("tracescore_") and not n.endswith("_created")
                and n + "_bucket" not in exported}
    assert families <= set().union(*queried.values())
    # Labels grouped or matched on exist on the metric, wherever the server has samples of it.
    samples = _sample_labels(response.text)
    checked = 0
    for where, names in queried.items():
        if names and all(n in samples for n in names):
            have = set().union(*(samples[n] for n in names))
            expr = where.split(": ", 1)[1]
            assert _used_labels(expr) <= have, where
            checked += _used_labels(expr) != set()
    assert (
        checked >= 5
    )  # received by project, requests by transport/status, scores by scorer/status


def test_a_fresh_server_has_a_series_for_every_queried_metric(
    empty_server: ServerProcess,
) -> None:
    """No traffic yet: every metric the dashboard queries already has samples (at 0), so panels
    show 0 instead of "No data" and alert rules can be written."""
    response = httpx.get(f"{empty_server.url}/metrics", timeout=30)
    assert response.status_code == 200
    samples = _sample_labels(response.text)
    queried = set().union(*_queried_names().values())
    assert sorted(queried - set(samples)) == []
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
              for line in response.text.splitlines() if line and not line.startswith("#")}
    # Each registered scorer × status, each reason, each transport: present and 0.
    for series in ('tracescore_scores_total{scorer_id="no-tool-errors",status="success"}',
                   'tracescore_scores_total{scorer_id="tool-failures",status="failed"}',
                   'tracescore_judge_tokens_total{kind="input",scorer_id="no-tool-errors"}',
                   'tracescore_judge_cost_usd_total{scorer_id="trajectory-efficiency"}',
                   'tracescore_spans_rejected_total{reason="decode_error"}',
                   'tracescore_ingest_requests_total{status="ok",transport="grpc"}',
                   'tracescore_ingest_requests_total{status="ok",transport="http"}',
                   'tracescore_spans_received_total{project="default"}'):
        assert values.get(series) == 0.0, series
