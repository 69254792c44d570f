"""Benchmark: does the cost stay flat as the database grows? (issue 17)

For each background size N (``--spans 0 1000000 10000000``; 0 always runs first as the
reference), a database of N realistic background spans is built fast with one DuckDB
``INSERT … SELECT`` per million (six spans per trace, ~400 B of GenAI attributes, started and
received in January 2026: outside the live lookback and the dashboard's default 24 h; their
``traces`` rows too), then measured:

1. ingest over OTLP/HTTP into a real ``tracescore serve`` (``bench_ingest``'s bodies: 512
   spans per request, 1 client process × 4 exporters and 4 processes × 4): spans/s, p50/p99
   request latency and their ratio, the writer's checkpoints and duplicate retries; and in
   process (``bench_ingest.in_process``: decode + store write, no HTTP);
2. live scoring with the three default code scorers in process (6-span traces): traces/s;
3. live scoring with a judge answering in 200 ms at concurrency 8, 32 and 64 (20 traces per
   slot, so the ideal run lasts 4 s): share of ideal (``bench_judge.judge_share``);
4. the traces list's first page as the dashboard asks for it, and every query of the
   dashboard's Overview (run one after another, their sum), for the default 24 h and for
   "all", in process;
5. once per size, outside the rounds (``--lag-seconds``, 0 skips it): a real server with the
   default ``[live]`` settings and the three code scorers receives agent runs through the
   OpenTelemetry SDK at a steady ``--lag-rate`` spans/s; the scoring lag (score written − the
   trace's last span received) at p50/p95 overall and per minute, and the server's peak RSS.

The benchmark process runs with the garbage collector as ``tracescore serve`` sets it
(``tune_gc``), so the in-process figures see what the server sees.
Sizes are interleaved (``--rounds``: each round measures every size once) and each figure is
printed as the median over rounds with its ratio to N = 0 and every round's value. The two
in-process figures (1's in process, and 2) take a few seconds each and single runs on this
machine vary by ±12 % from minute to minute whatever the size, so they run in rounds of their
own (``--quick-rounds``, default 7: each round measures every size once, back to back).
Nothing is asserted.

Run: .venv/bin/python tests/bench/bench_scale.py --spans 0 1000000 10000000 [--seconds 10]
     [--rounds 3] [--quick-rounds 7] [--lag-seconds 300] [--lag-spans 0 10000000]
     [--templates DIR (reuse built background databases)]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "bench")]

import bench_ingest  # noqa: E402
import bench_live  # noqa: E402

from tracescore.store import Store  # noqa: E402

BACKGROUND_SQL = """
INSERT INTO spans (trace_id, span_id, parent_span_id, project, service_name, name, kind,
                   start_time, end_time, duration_ms, status_code, status_message, attributes,
                   resource_attributes, events, links, scope_name, scope_version, received_at)
SELECT md5((i // 6)::VARCHAR) AS trace_id,
       substr(md5(i::VARCHAR), 1, 16) AS span_id,
       CASE WHEN i % 6 = 0 THEN NULL ELSE substr(md5((i - i % 6)::VARCHAR), 1, 16) END,
       'default', 'background-agent',
       CASE WHEN i % 6 = 0 THEN 'invoke_agent' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN i % 6 = 0 THEN 'INTERNAL' ELSE 'CLIENT' END,
       t, t + INTERVAL 800 MILLISECOND, 800.0, 'UNSET', NULL,
       '{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-4o-mini",'
       || '"gen_ai.usage.input_tokens":' || (i % 977) || ',"gen_ai.usage.output_tokens":'
       || (i % 131) || ',"gen_ai.input.messages":"[{\\"role\\":\\"user\\",\\"content\\":'
       || '\\"What is the weather in Paris on day ' || i || '?\\"}]","gen_ai.output.messages":'
       || '"[{\\"role\\":\\"assistant\\",\\"content\\":\\"Sunny, 21 degrees.\\"}]"}',
       '{"service.name":"background-agent"}', '[]', '[]', 'bench', '1', t
FROM (SELECT i, TIMESTAMP '2026-01-01' + to_microseconds(i * 1000) AS t
      FROM range(?, ?) r(i))
"""
TRACES_SQL = """
INSERT INTO traces (trace_id, project, service_name, root_span_id, root_span_name,
    start_time, end_time, duration_ms, span_count, error_count, has_root, root_ended,
    first_received_at, last_received_at, totals_received_at)
SELECT trace_id, any_value(project), any_value(service_name),
       arg_min(span_id, start_time), arg_min(name, start_time), min(start_time),
       max(end_time), 800.0, count(*), 0, true, true, min(received_at), max(received_at),
       max(received_at)
FROM spans WHERE received_at < TIMESTAMP '2026-06-01' GROUP BY trace_id
"""


def build_background(path: Path, spans: int) -> float:
    """A database of ``spans`` background spans (and their traces rows); seconds taken."""
    import duckdb

    started = time.perf_counter()
    with Store(path):
        pass  # migrations
    conn = duckdb.connect(str(path))
    conn.execute("SET enable_progress_bar = false")
    step = 1_000_002  # a multiple of 6: no trace is cut between two statements
    for offset in range(0, spans, step):
        conn.execute(BACKGROUND_SQL, [offset, min(spans, offset + step)])
    if spans:
        conn.execute(TRACES_SQL)
    conn.execute("CHECKPOINT")
    conn.close()
    return time.perf_counter() - started


def ingest(db: Path, seconds: float, processes: int = 1) -> dict[str, float]:
    """OTLP/HTTP ingest into a real server on ``db`` from ``processes`` client processes of 4
    exporters each: spans/s and latency quantiles."""
    import httpx
    from server_process import start_server

    config = db.parent / "bench.toml"
    config.write_text("[server]\nmax_body_bytes = 67108864\n")
    server = start_server(db, args=["--config", str(config), "--no-grpc"])
    context = mp.get_context("spawn")
    results = context.Queue()
    start_at = time.time() + 3.0
    clients = [context.Process(target=bench_ingest.client,
                               args=(server.url, seconds, seed, 4, results, start_at))
               for seed in range(processes)]
    for process in clients:
        process.start()
    acknowledged, refused, latencies = 0, 0, []
    for _ in clients:
        got = results.get()
        acknowledged, refused = acknowledged + got[0], refused + got[1]
        latencies.extend(got[2])
    for process in clients:
        process.join()
    writer = httpx.get(f"{server.url}/healthz").json()["writer"]
    server.stop()
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    return {"spans/s": acknowledged / seconds, "refused": refused, "p50 ms": p50,
            "p99 ms": p99, "p99/p50": p99 / p50,
            "checkpoints": float(writer.get("checkpoints", 0)),
            "longest checkpoint ms": float(writer.get("max_checkpoint_ms", 0)),
            "duplicate retries": float(writer.get("duplicate_retries", 0))}


def live_code(db: Path, traces: int) -> float:
    """traces/s of the three default code scorers on ``traces`` new 6-span traces."""
    from tracescore.live import (
        LiveScheduler,
        Registry,
        tool_failures_scorer,
        trajectory_efficiency_scorer,
    )
    from tracescore.scorers import checks

    rows = bench_live.template()
    with Store(db) as store:
        store.write_spans_sync(bench_live.clones(rows, traces))
        registry = Registry()
        registry.register(checks.no_tool_errors(), id="no-tool-errors")
        registry.register(tool_failures_scorer())
        registry.register(trajectory_efficiency_scorer(max_steps=20))
        live = LiveScheduler(store, registry, bench_live.settings(concurrency=8))
        started = time.perf_counter()
        asyncio.run(bench_live.score_all(live))
        return traces / (time.perf_counter() - started)


def live_judge(db: Path, traces: int, concurrency: int) -> float:
    """Share of ideal (concurrency / 200 ms) reached with the scripted 200 ms judge (the judge
    benchmark's measurement: its stand-in in its own process, litellm loaded first)."""
    from bench_judge import judge_share

    return float(judge_share(db, traces, concurrency))


TRACE_LIST_SQL = """
SELECT t.trace_id, t.root_span_name AS name, t.service_name, t.project, t.duration_ms,
       t.span_count AS spans, t.error_count AS errors, t.models, t.input_tokens,
       t.output_tokens, t.total_tokens, t.cost_usd, t.unpriced_call_count, t.model_call_count,
       epoch_ms(CAST(t.start_time AS TIMESTAMP)) AS start_ms
FROM traces AS t WHERE t.start_time >= CAST(? AS TIMESTAMP)
ORDER BY t.start_time DESC NULLS LAST, t.trace_id LIMIT 51 OFFSET 0
"""
"""The traces list's first page as ``_web/js/traces.js`` asks for it (no search)."""

OVERVIEW_SQL = [
    "SELECT count(*) AS n FROM (SELECT 1 FROM spans LIMIT 1) AS t",
    "SELECT least(s.lo, c.lo) AS lo, greatest(s.hi, c.hi) AS hi FROM "
    "(SELECT epoch_ms(CAST(min(start_time) AS TIMESTAMP)) AS lo, "
    "epoch_ms(CAST(max(start_time) AS TIMESTAMP)) AS hi FROM spans "
    "WHERE start_time >= CAST($since AS TIMESTAMP)) AS s, (SELECT epoch_ms(min(created_at)) AS "
    "lo, epoch_ms(max(created_at)) AS hi FROM scores "
    "WHERE created_at >= CAST($since AS TIMESTAMP)) AS c",
    "SELECT DISTINCT project FROM traces WHERE project IS NOT NULL ORDER BY 1 LIMIT 200",
    "SELECT count(*) AS traces, coalesce(sum(span_count), 0) AS spans, "
    "count(*) FILTER (WHERE error_count > 0) AS error_traces "
    "FROM traces WHERE start_time >= CAST($since AS TIMESTAMP)",
    "SELECT count(*) AS runs, avg(score) FILTER (WHERE status = 'success') AS avg_score, "
    "count(*) FILTER (WHERE status = 'failed') AS failed, sum(judge_total_tokens) AS tokens, "
    "sum(judge_cost) AS cost FROM scores WHERE created_at >= CAST($since AS TIMESTAMP)",
    "SELECT epoch_ms(time_bucket(INTERVAL '$bucket', CAST(start_time AS TIMESTAMP))) AS t, "
    "count(*) AS traces, sum(span_count) AS spans FROM traces "
    "WHERE start_time >= CAST($since AS TIMESTAMP) GROUP BY 1 ORDER BY 1 DESC LIMIT 1000",
    "SELECT scorer_id, epoch_ms(time_bucket(INTERVAL '$bucket', CAST(created_at AS TIMESTAMP)))"
    " AS t, avg(score) FILTER (WHERE status = 'success') AS avg_score, count(*) AS runs, "
    "count(*) FILTER (WHERE status = 'failed') AS failed, "
    "count(*) FILTER (WHERE status = 'not_scorable') AS not_scorable FROM scores "
    "WHERE created_at >= CAST($since AS TIMESTAMP) GROUP BY 1, 2 ORDER BY 2 DESC LIMIT 5000",
    "SELECT scorer_id, count(*) AS runs, avg(score) FILTER (WHERE status = 'success') AS "
    "avg_score, count(*) FILTER (WHERE status = 'failed') AS failed, "
    "count(*) FILTER (WHERE status = 'not_scorable') AS not_scorable, sum(judge_cost) AS cost "
    "FROM scores WHERE created_at >= CAST($since AS TIMESTAMP) GROUP BY 1 ORDER BY 1 LIMIT 200",
    "SELECT epoch_ms(date_trunc('day', created_at)) AS t, sum(judge_input_tokens) AS "
    "input_tokens, sum(judge_output_tokens) AS output_tokens, sum(judge_cost) AS cost "
    "FROM scores WHERE created_at >= CAST($since AS TIMESTAMP) GROUP BY 1 ORDER BY 1 DESC "
    "LIMIT 400",
    "SELECT epoch_ms(time_bucket(INTERVAL '$bucket', CAST(s.created_at AS TIMESTAMP))) AS t, "
    "avg(epoch(s.created_at) - epoch(CAST(t.end_time AS TIMESTAMP))) AS avg_s, "
    "max(epoch(s.created_at) - epoch(CAST(t.end_time AS TIMESTAMP))) AS max_s "
    "FROM scores AS s JOIN traces AS t ON t.trace_id = s.trace_id "
    "WHERE s.created_at >= CAST($since AS TIMESTAMP) AND s.source = 'live' "
    "GROUP BY 1 ORDER BY 1 DESC LIMIT 1000",
    "SELECT epoch_ms(date_trunc('day', CAST(started_at AS TIMESTAMP))) AS t, "
    "coalesce(model, '(unknown)') AS model, sum(cost_usd) AS cost, sum(input_tokens) AS "
    "input_tokens, sum(output_tokens) AS output_tokens FROM model_calls "
    "WHERE started_at >= CAST($since AS TIMESTAMP) GROUP BY 1, 2 ORDER BY 1 DESC, 2 LIMIT 4000",
    "SELECT trace_id, root_span_name, service_name, model_call_count, total_tokens, cost_usd, "
    "models FROM traces WHERE start_time >= CAST($since AS TIMESTAMP) AND cost_usd IS NOT NULL "
    "ORDER BY cost_usd DESC, trace_id LIMIT 10",
]
"""Every query the Overview page sends (``_web/js/overview.js``, ``agent.js``, ``core.js``, and
``app.js``'s project list, sent with every page),
with the range's start as ``$since`` and its bucket as ``$bucket``; the monitors panel and
/metrics are left out (no SQL over spans)."""

RANGES = {"24h": ("1 hour", timedelta(days=1)), "all": ("1 day", None)}


def dashboard(db: Path) -> dict[str, float]:
    """ms for the traces list's first page and for all Overview queries (run one after another),
    per range; medians of 5 after one warm-up."""
    from tracescore.live._rows import utc_now

    figures = {}
    with Store(db) as store:
        for name, (bucket, span) in RANGES.items():
            since = "1970-01-01 00:00:00" if span is None else str(utc_now() - span)
            overview = [sql.replace("$since", f"'{since}'").replace("$bucket", bucket)
                        for sql in OVERVIEW_SQL]
            for label, statements in (("traces page", [(TRACE_LIST_SQL, [since])]),
                                      ("overview", [(sql, []) for sql in overview])):
                times = []
                for _ in range(6):
                    started = time.perf_counter()
                    for sql, params in statements:
                        store.read(sql, params)
                    times.append((time.perf_counter() - started) * 1000)
                figures[f"{label} {name} ms"] = statistics.median(times[1:])
    return figures


def lag_and_rss(db: Path, seconds: float, rate: float, server_toml: str = "") -> dict[str, float]:
    """Scoring lag and server RSS under steady ingest of ``rate`` spans/s for ``seconds``
    (``server_toml``: more ``[server]`` lines, for experiments)."""
    import threading

    import httpx
    from server_process import start_server

    config = db.parent / "lag.toml"
    config.write_text(
        f"[server]\ngrpc = false\n{server_toml}\n[live]\n"  # other [live] keys: defaults
        '[[scorers]]\nid = "no-tool-errors"\nuse = "tracescore.scorers.checks:no_tool_errors"\n'
        '[[scorers]]\nid = "tool-failures"\nuse = "tracescore.live:tool_failures_scorer"\n'
        '[[scorers]]\nid = "trajectory-efficiency"\n'
        'use = "tracescore.live:trajectory_efficiency_scorer"\nargs = { max_steps = 20 }\n')
    server = start_server(db, args=["--config", str(config)])
    assert server.process is not None
    stop = threading.Event()
    peak = [0]
    watcher = threading.Thread(target=bench_ingest.watch_rss,
                               args=(server.process.pid, stop, peak), daemon=True)
    watcher.start()
    context = mp.get_context("spawn")
    sender = context.Process(target=_steady_sender, args=(server.url, seconds, rate))
    sender.start()
    sender.join()
    sent_traces = int(httpx.post(f"{server.url}/api/sql", json={
        "sql": "SELECT count(*) FROM traces WHERE service_name = 'weather-agent'"}).json()[
        "rows"][0][0])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        [[open_n, total]] = httpx.post(f"{server.url}/api/sql", json={"sql": (
            "SELECT count(*) FILTER (WHERE decision IN ('pending', 'retrying')), count(DISTINCT "
            "trace_id) FROM scoring_decisions")}).json()["rows"]
        if open_n == 0 and total >= sent_traces:
            break
        time.sleep(0.5)
    # Quantiles in SQL: /api/sql answers at most sql_row_limit (10,000) rows.
    lags = ("WITH last AS (SELECT trace_id, min(received_at) AS first, max(received_at) AS "
            "received FROM spans WHERE service_name = 'weather-agent' GROUP BY 1), "
            "lags AS (SELECT date_diff('millisecond', l.received, max(s.created_at)) / 1000.0 "
            "AS lag, date_diff('second', (SELECT min(first) FROM last), min(l.first)) // 60 AS "
            "minute FROM scores s JOIN last l USING (trace_id) GROUP BY l.trace_id, l.received) ")

    def sql(query: str) -> list[list[Any]]:
        answer = httpx.post(f"{server.url}/api/sql", json={"sql": lags + query}, timeout=120)
        return list(answer.json()["rows"])

    [[scored, p50, p95, longest]] = sql(
        "SELECT count(*), quantile_cont(lag, 0.5), quantile_cont(lag, 0.95), max(lag) FROM lags")
    per_minute = sql("SELECT minute, count(*), quantile_cont(lag, 0.95) FROM lags "
                     "GROUP BY 1 ORDER BY 1")
    [[spans]] = httpx.post(f"{server.url}/api/sql", json={
        "sql": "SELECT count(*) FROM spans WHERE service_name = 'weather-agent'"}).json()["rows"]
    stop.set()
    server.stop()
    figures = {"spans/s sent": spans / seconds, "traces sent": float(sent_traces),
               "traces scored": float(scored)}
    if scored:
        figures.update({"lag p50 s": p50, "lag p95 s": p95, "lag max s": longest})
        for minute, count, minute_p95 in per_minute:
            if count >= 20:
                figures[f"lag p95 s, minute {int(minute) + 1}"] = minute_p95
    figures["server peak RSS MB"] = peak[0] / 2**20
    return figures


def _steady_sender(url: str, seconds: float, rate: float) -> None:
    """A client process: agent runs through the OpenTelemetry SDK, about ``rate`` spans/s."""
    from tracescore.live import send_agent_traces

    per_run = 7  # spans in one demo agent run, on average (the rate reached is printed)
    sent = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        second = time.monotonic()
        runs = max(1, int(rate / per_run))
        send_agent_traces(url, count=runs, start=sent)
        sent += runs
        time.sleep(max(0.0, 1.0 - (time.monotonic() - second)))


def _fresh(work: Path, template: Path, tag: str) -> Callable[[str], Path]:
    """A function giving a fresh copy of ``template`` per measurement name; each call first
    removes the copies given before it. A copy left behind is 1.2 GB at 10 M spans that the
    kernel writes back to disk during the next measurement, beside that server's WAL fsyncs:
    only the measurement in progress keeps its copy."""
    given: list[Path] = []

    def fresh(name: str) -> Path:
        while given:
            shutil.rmtree(given.pop(), ignore_errors=True)
        target = work / f"{name}-{tag}" / "db.duckdb"
        target.parent.mkdir()
        shutil.copyfile(template, target)
        given.append(target.parent)
        return target

    return fresh


def measure(work: Path, template: Path, tag: str, args: argparse.Namespace) -> dict[str, float]:
    """The server figures once, each on a fresh copy of the background database ``template``."""
    fresh = _fresh(work, template, tag)
    figures: dict[str, float] = {}
    for processes in (1, 4):
        got = ingest(fresh(f"ingest{processes}"), args.seconds, processes)
        figures.update({f"ingest {processes}×4 {k}": v for k, v in got.items()})
    for concurrency in (8, 32, 64):
        figures[f"judge share of ideal @{concurrency}"] = live_judge(
            fresh(f"judge{concurrency}"), 20 * concurrency, concurrency)
    figures.update(dashboard(fresh("page")))
    for path in work.glob(f"*-{tag}"):
        shutil.rmtree(path, ignore_errors=True)
    return figures


def measure_in_process(work: Path, template: Path, tag: str,
                       args: argparse.Namespace) -> dict[str, float]:
    """The short in-process figures once (ingest, live code scorers), on fresh copies."""
    fresh = _fresh(work, template, tag)
    got = bench_ingest.in_process(fresh("inproc"), args.seconds)
    figures = {f"ingest in process {k}": v for k, v in got.items()}
    figures["live code traces/s"] = live_code(fresh("code"), args.traces)
    for path in work.glob(f"*-{tag}"):
        shutil.rmtree(path, ignore_errors=True)
    return figures


def _short(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"


def report(title: str, runs: dict[int, list[dict[str, float]]]) -> None:
    """Per size, each figure's median over rounds, its ratio to N = 0 and each round's value
    (in round order)."""
    base = {name: statistics.median(run[name] for run in runs[0]) for name in runs[0][0]}
    for n, rounds in runs.items():
        print(f"== N = {n:,} background spans, {title}: medians of {len(rounds)} rounds")
        for name in rounds[0]:
            value = statistics.median(run[name] for run in rounds)
            ratio = f"{value / base[name]:.2f}× N=0" if base[name] else "-"
            values = "[" + ", ".join(_short(run[name]) for run in rounds) + "]"
            print(f"  {name:<40} {value:>12,.2f}   ({ratio})   {values}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, nargs="+", default=[0, 1_000_000])
    parser.add_argument("--seconds", type=float, default=10.0, help="ingest time per size")
    parser.add_argument("--traces", type=int, default=6000, help="traces for code scorers")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds; each measures every size once, sizes interleaved")
    parser.add_argument("--quick-rounds", type=int, default=7,
                        help="rounds of the in-process figures (ingest, code scorers: a few "
                             "seconds each, and single runs here vary by ±12%%), sizes "
                             "interleaved")
    parser.add_argument("--lag-seconds", type=float, default=300.0,
                        help="steady-ingest time of the lag run per size (0: no lag run)")
    parser.add_argument("--lag-rate", type=float, default=1000.0, help="spans/s in the lag run")
    parser.add_argument("--lag-spans", type=int, nargs="*", default=None,
                        help="the sizes the lag run measures (default: every size)")
    parser.add_argument("--templates", type=Path, default=None,
                        help="a folder to keep (and reuse) the background databases in")
    args = parser.parse_args()
    from tracescore.server import tune_gc

    tune_gc()  # the in-process figures run with the collector as `tracescore serve` sets it
    sizes = [0, *[n for n in args.spans if n]]
    work = Path(tempfile.mkdtemp(prefix="bench-scale-", dir=args.templates))
    print(f"free disk where the databases go: {shutil.disk_usage(work).free / 2**30:,.0f} GB "
          "(10 M background spans take about 1.2 GB, and each measurement copies it)",
          flush=True)
    templates = {}
    for n in sizes:
        templates[n] = (args.templates or work) / f"bg-{n}.duckdb"
        if templates[n].exists():
            print(f"reusing N = {n:,} background spans from {templates[n]}", flush=True)
            continue
        built = build_background(templates[n], n)
        print(f"built N = {n:,} background spans in {built:.1f} s "
              f"({templates[n].stat().st_size / 2**20:,.0f} MB)", flush=True)
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for round_ in range(args.rounds):
        for n in sizes:
            runs[n].append(measure(work, templates[n], f"{n}-{round_}", args))
            print(f"round {round_ + 1}, N = {n:,}: done", flush=True)
    quick: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for round_ in range(args.quick_rounds):
        for n in sizes:
            quick[n].append(measure_in_process(work, templates[n], f"q{n}-{round_}", args))
        print(f"in-process round {round_ + 1}: done", flush=True)
    if args.rounds:
        report("server figures (each round's value in brackets)", runs)
    if args.quick_rounds:
        report("in-process figures (each round's value in brackets)", quick)
    if args.lag_seconds > 0:
        for n in sizes if args.lag_spans is None else [n for n in sizes if n in args.lag_spans]:
            target = work / f"lag-{n}" / "db.duckdb"
            target.parent.mkdir()
            shutil.copyfile(templates[n], target)
            got = lag_and_rss(target, args.lag_seconds, args.lag_rate)
            print(f"== lag and RSS at N = {n:,}: {args.lag_rate:g} spans/s for "
                  f"{args.lag_seconds:g} s, default [live] (settle 10 s, tick 2 s: goal p95 "
                  "≤ 13 s)")
            for name, value in got.items():
                print(f"  {name:<40} {value:>12,.2f}", flush=True)
            shutil.rmtree(target.parent, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; "
          "compare ratios within one run")


if __name__ == "__main__":
    main()
