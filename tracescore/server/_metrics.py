"""``GET /metrics``: Prometheus text from the ingest counters, the writer and the live scorer.

``mount_metrics(app)`` adds the route. Values are read at scrape time from ``app.state``
(``ingest_stats``, ``store.stats()``, ``live.stats``) by a collector on a registry of this app,
so nothing is global and a scrape costs no database query. The names are the ones the Grafana
dashboard queries:

- ``tracescore_spans_received_total{project}``, ``tracescore_spans_rejected_total{reason}``,
  ``tracescore_ingest_requests_total{transport,status}`` (counters)
- ``tracescore_write_queue_depth`` (gauge: rows waiting for the writer)
- ``tracescore_sql_statements_running``, ``tracescore_sql_statements_waiting`` (gauges: user
  SQL statements holding one of the ``sql_max_concurrent`` slots, and waiting for one)
- ``tracescore_traces_waiting``, ``tracescore_scoring_lag_seconds`` (gauges)
- ``tracescore_scores_total{scorer_id,status}``, ``tracescore_judge_tokens_total{scorer_id,kind}``,
  ``tracescore_judge_cost_usd_total{scorer_id}``, ``tracescore_judge_cache_hits_total{scorer_id}``,
  ``tracescore_judge_saved_usd_total{scorer_id}`` (counters, since the process started)
- ``tracescore_judge_calls_in_flight{scorer_id}`` (gauge: judge requests waiting for an answer)
- ``tracescore_agent_tokens_total{project,model,kind}`` (kind: input, output, cached,
  reasoning), ``tracescore_agent_cost_usd_total{project,model}``,
  ``tracescore_agent_unpriced_calls_total{project,model}`` (counters: the agent's own model
  calls, of traces first received since the process started, counted when the trace is ready)
- ``tracescore_model_call_duration_seconds{model}`` (histogram of those calls)
- ``tracescore_agent_traces_pending`` (gauge: traces whose totals wait while the totals
  maintainer works through a backlog; 0 once it has caught up)
- ``tracescore_judge_agreement_kappa{scorer_id,scorer_version,schema}`` with ``_low`` and
  ``_high`` (its interval) and ``tracescore_judge_agreement_labels`` (gauges: each judge
  version's agreement with people, as of the live scorer's last refresh)

Every labelled series whose labels are known up front is exported as 0 from the first scrape
(as Prometheus' instrumentation guidance recommends), so panels and alert rules see a series on
a fresh server: each running scorer × score status, each scorer × token kind, each scorer's
cost, each rejection reason, each transport × request outcome, and the ``default`` project.
The agent-spend series are labelled by the models seen; before the first call they are one
zero series per token kind with no ``model`` label.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from fastapi import FastAPI, Request
from starlette.responses import Response

from ._labels_api import agreement_families

SCORE_STATUSES = ("success", "failed", "not_scorable")
TOKEN_KINDS = ("input", "output")
REJECT_REASONS = ("invalid_id", "invalid_record", "decode_error", "too_large", "queue_full",
                  "unavailable")
REQUEST_OUTCOMES = ("ok", "partial", "bad_request", "too_large", "unsupported", "unauthorized",
                    "queue_full", "unavailable", "error")
DEFAULT_PROJECT = "default"


def _with_zeros(counts: Mapping[Any, float], keys: Iterable[Any]) -> list[tuple[Any, float]]:
    """``counts`` with every one of ``keys`` present (0 when it has not moved), sorted."""
    merged: dict[Any, float] = dict.fromkeys(keys, 0)
    merged.update(counts)
    return sorted(merged.items())


def _scorer_ids(state: Any) -> list[str]:
    """Ids of the scorers the running live scheduler schedules (none when it is off)."""
    live = getattr(state, "live", None)
    if live is None:
        return []
    return [reg.id for reg in live.registry.enabled()]


class _AppCollector:
    """Builds the metric families from ``app.state`` on each scrape."""

    def __init__(self, app: FastAPI) -> None:
        self._app = app

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        state = self._app.state
        ingest = getattr(state, "ingest_stats", None)
        received = CounterMetricFamily("tracescore_spans_received", "Spans accepted (committed)",
                                       labels=["project"])
        rejected = CounterMetricFamily("tracescore_spans_rejected", "Spans or records rejected",
                                       labels=["reason"])
        requests = CounterMetricFamily("tracescore_ingest_requests", "OTLP export requests",
                                       labels=["transport", "status"])
        if ingest is not None:
            settings = getattr(state, "settings", None)
            transports = ("http", "grpc") if getattr(settings, "grpc", True) else ("http",)
            for project, n in _with_zeros(ingest.spans_received, [DEFAULT_PROJECT]):
                received.add_metric([project], n)
            for reason, n in _with_zeros(ingest.rejected, REJECT_REASONS):
                rejected.add_metric([reason], n)
            known = [(t, o) for t in transports for o in REQUEST_OUTCOMES]
            for (transport, outcome), n in _with_zeros(ingest.requests, known):
                requests.add_metric([transport, outcome], n)
        yield from (received, rejected, requests)

        store = getattr(state, "store", None)
        depth = store.stats().pending_rows if store is not None and store.is_open else 0
        yield GaugeMetricFamily("tracescore_write_queue_depth", "Rows waiting for the writer",
                                value=depth)
        slots = getattr(store, "sql_slots", None)
        yield GaugeMetricFamily("tracescore_sql_statements_running",
                                "User SQL statements running (at most sql_max_concurrent)",
                                value=slots.running if slots is not None else 0)
        yield GaugeMetricFamily("tracescore_sql_statements_waiting",
                                "User SQL statements waiting for a free slot",
                                value=slots.waiting if slots is not None else 0)

        live = getattr(state, "live", None)
        stats = live.stats if live is not None else None
        yield GaugeMetricFamily("tracescore_traces_waiting",
                                "Settled traces with a scorer still to run",
                                value=stats.traces_waiting if stats else 0)
        yield GaugeMetricFamily("tracescore_scoring_lag_seconds",
                                "Age of the oldest ready trace still waiting for a scorer",
                                value=stats.scoring_lag_seconds if stats else 0.0)
        scores = CounterMetricFamily("tracescore_scores", "Score rows written by live scoring",
                                     labels=["scorer_id", "status"])
        tokens = CounterMetricFamily("tracescore_judge_tokens", "Judge tokens spent",
                                     labels=["scorer_id", "kind"])
        cost = CounterMetricFamily("tracescore_judge_cost_usd", "Judge cost in USD",
                                   labels=["scorer_id"])
        if stats is not None:
            ids = _scorer_ids(state)
            for (scorer_id, status), n in _with_zeros(
                    stats.scores_total, [(i, s) for i in ids for s in SCORE_STATUSES]):
                scores.add_metric([scorer_id, status], n)
            for (scorer_id, kind), n in _with_zeros(
                    stats.judge_tokens_total, [(i, k) for i in ids for k in TOKEN_KINDS]):
                tokens.add_metric([scorer_id, kind], n)
            for scorer_id, amount in _with_zeros(stats.judge_cost_usd_total, ids):
                cost.add_metric([scorer_id], amount)
        yield from (scores, tokens, cost)
        yield from _judge_cache_families(live, _scorer_ids(state))
        yield from _monitor_families(live)
        yield from agreement_families(live)
        yield from _agent_families(getattr(state, "totals", None))


def _judge_cache_families(live: Any, ids: list[str]) -> Iterator[Any]:
    """Judge-call cache hits and the money they saved (counters), and the judge requests in
    flight (gauge), per running scorer."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    hits = CounterMetricFamily("tracescore_judge_cache_hits",
                               "Judge answers taken from the judge-call cache",
                               labels=["scorer_id"])
    saved = CounterMetricFamily("tracescore_judge_saved_usd",
                                "What cached judge answers cost when first asked (USD)",
                                labels=["scorer_id"])
    inflight = GaugeMetricFamily("tracescore_judge_calls_in_flight",
                                 "Judge requests sent and not yet answered",
                                 labels=["scorer_id"])
    if live is not None:
        stats = live.stats
        for scorer_id, n in _with_zeros(stats.judge_cache_hits_total, ids):
            hits.add_metric([scorer_id], n)
        for scorer_id, amount in _with_zeros(stats.judge_saved_usd_total, ids):
            saved.add_metric([scorer_id], amount)
        for scorer_id in ids:
            inflight.add_metric([scorer_id], live.judge_calls.status(scorer_id)[0])
    yield from (hits, saved, inflight)


def _monitor_families(live: Any) -> Iterator[Any]:
    """``tracescore_monitor_state`` (1 = breached) and ``tracescore_monitor_value`` per
    monitor, every configured monitor from the first scrape (value NaN until evaluated); not
    exported at all without ``[[monitors]]`` (they are for alert rules, not dashboard panels)."""
    from prometheus_client.core import GaugeMetricFamily

    rows = live.monitors.status() if live is not None else []
    if not rows:
        return

    state = GaugeMetricFamily("tracescore_monitor_state", "1 while a monitor is breached",
                              labels=["monitor"])
    value = GaugeMetricFamily("tracescore_monitor_value",
                              "A monitor's last aggregate value (NaN before its first)",
                              labels=["monitor"])
    for row in rows:
        state.add_metric([row["id"]], 1.0 if row["state"] == "breached" else 0.0)
        value.add_metric([row["id"]], float("nan") if row["value"] is None else row["value"])
    yield from (state, value)


def _agent_families(totals: Any) -> Iterator[Any]:
    """The agent-spend families from the totals maintainer's ``AgentSpendStats``."""
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
    )

    from tracescore.live import AGENT_TOKEN_KINDS, DURATION_BUCKETS_S

    stats = totals.stats if totals is not None else None
    tokens = CounterMetricFamily("tracescore_agent_tokens", "Tokens of the agent's model calls",
                                 labels=["project", "model", "kind"])
    cost = CounterMetricFamily("tracescore_agent_cost_usd",
                               "Cost of the agent's model calls in USD",
                               labels=["project", "model"])
    unpriced = CounterMetricFamily("tracescore_agent_unpriced_calls",
                                   "Agent model calls with tokens but no known price",
                                   labels=["project", "model"])
    duration = HistogramMetricFamily("tracescore_model_call_duration_seconds",
                                     "Duration of the agent's model calls", labels=["model"])
    if stats is None or not stats.tokens_total:
        # No agent call counted yet: one zero series per kind (no model label) for the panels.
        for kind, _ in AGENT_TOKEN_KINDS:
            tokens.add_metric(["default", "", kind], 0)
        cost.add_metric(["default", ""], 0.0)
        unpriced.add_metric(["default", ""], 0)
        duration.add_metric([""], [*((f"{b:g}", 0) for b in DURATION_BUCKETS_S), ("+Inf", 0)],
                            sum_value=0.0)
    if stats is not None:
        for (project, model, kind), n in sorted(stats.tokens_total.items()):
            tokens.add_metric([project, model, kind], n)
        for (project, model), amount in sorted(stats.cost_usd_total.items()):
            cost.add_metric([project, model], amount)
        for (project, model), n in sorted(stats.unpriced_calls_total.items()):
            unpriced.add_metric([project, model], n)
        for model, counts in sorted(stats.duration_buckets.items()):
            bounds = [*(f"{b:g}" for b in DURATION_BUCKETS_S), "+Inf"]
            duration.add_metric([model], list(zip(bounds, counts, strict=True)),
                                sum_value=stats.duration_sum_s.get(model, 0.0))
    pending = GaugeMetricFamily("tracescore_agent_traces_pending",
                                "Traces whose totals wait while the totals maintainer works "
                                "through a backlog (0 once caught up)",
                                value=stats.traces_pending if stats is not None else 0)
    yield from (tokens, cost, unpriced, duration, pending)


def mount_metrics(app: FastAPI) -> None:
    """Serve ``GET /metrics`` (Prometheus text format) for this app."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_AppCollector(app))
    app.state.metrics_registry = registry

    async def metrics(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.add_route("/metrics", metrics, methods=["GET"], include_in_schema=False)


__all__ = ["mount_metrics"]
