"""Benchmark: does the cost stay flat as the database grows? (issue 17)

For each background size N (``--spans 0 1000000``; 0 always runs first as the reference), a
database of N realistic background spans is built fast with one DuckDB ``INSERT … SELECT``
(six spans per trace, ~400 B of GenAI attributes, received 30 days ago: outside the live
lookback; their ``traces`` rows too), then measured:

1. ingest over OTLP/HTTP into a real ``tracescore serve`` (``bench_ingest``'s bodies: 512
   spans per request, 1 client process × 4 exporters): spans/s, p50/p99 request latency, the
   writer's checkpoints and duplicate retries;
2. live scoring with the three default code scorers in process (6-span traces): traces/s;
3. live scoring with a judge answering in 200 ms at concurrency 8 and 32: share of ideal;
4. the traces list's first page and its count from the ``traces`` table, in process.

Sizes are interleaved (``--rounds``: each round measures every size once) and each figure is
printed as the median over rounds with its ratio to N = 0. Nothing is asserted.

Run: .venv/bin/python tests/bench/bench_scale.py --spans 0 1000000 [--seconds 10] [--rounds 3]
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
from pathlib import Path

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
INSERT OR REPLACE INTO traces (trace_id, project, service_name, root_span_id, root_span_name,
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
    step = 1_000_002  # a multiple of 6: no trace is cut between two statements
    for offset in range(0, spans, step):
        conn.execute(BACKGROUND_SQL, [offset, min(spans, offset + step)])
    if spans:
        conn.execute(TRACES_SQL)
    conn.execute("CHECKPOINT")
    conn.close()
    return time.perf_counter() - started


def ingest(db: Path, seconds: float) -> dict[str, float]:
    """OTLP/HTTP ingest into a real server on ``db``: spans/s and latency quantiles."""
    import httpx
    from server_process import start_server

    config = db.parent / "bench.toml"
    config.write_text("[server]\nmax_body_bytes = 67108864\n")
    server = start_server(db, args=["--config", str(config), "--no-grpc"])
    context = mp.get_context("spawn")
    results = context.Queue()
    start_at = time.time() + 3.0
    process = context.Process(target=bench_ingest.client,
                              args=(server.url, seconds, 0, 4, results, start_at))
    process.start()
    acknowledged, refused, latencies = results.get()
    process.join()
    writer = httpx.get(f"{server.url}/healthz").json()["writer"]
    server.stop()
    latencies.sort()
    return {"spans_per_s": acknowledged / seconds, "refused": refused,
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
            "checkpoints": float(writer.get("checkpoints", 0)),
            "duplicate_retries": float(writer.get("duplicate_retries", 0))}


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
    """Share of ideal (concurrency / 200 ms) reached with the scripted 200 ms judge."""
    from tracescore.live import LiveScheduler, Registry
    from tracescore.scoring import Judge, PromptStep, create_scorer, load_litellm
    from tracescore.testing import Reply, ScriptedLLMServer

    load_litellm()
    rows = bench_live.template()
    with ScriptedLLMServer() as llm, Store(db) as store:
        llm.set_default(lambda body: Reply(content={"score": 1}, delay_s=0.2))
        judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=llm.url)
        scorer = create_scorer(f"judged-{concurrency}", "200 ms judge", type="agent",
                               judge=judge).generate_score(
            PromptStep("grade", lambda run, results: f"Grade {run.output[-1].content}"))
        store.write_spans_sync(bench_live.clones(rows, traces))
        registry = Registry()
        registry.register(scorer)
        live = LiveScheduler(store, registry, bench_live.settings(concurrency=concurrency))
        started = time.perf_counter()
        asyncio.run(bench_live.score_all(live))
        rate = traces / (time.perf_counter() - started)
    return rate / (concurrency / 0.2)


def traces_page(db: Path) -> float:
    """ms for the traces list's first page (and the total count), median of 5."""
    with Store(db) as store:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            store.read("SELECT * FROM traces ORDER BY start_time DESC LIMIT 50")
            store.read("SELECT count(*) FROM traces")
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(work: Path, template: Path, tag: str, args: argparse.Namespace) -> dict[str, float]:
    """Every figure once, each on a fresh copy of the background database ``template``."""

    def fresh(name: str) -> Path:
        target = work / f"{name}-{tag}" / "db.duckdb"
        target.parent.mkdir()
        shutil.copyfile(template, target)
        return target

    figures: dict[str, float] = {}
    got = ingest(fresh("ingest"), args.seconds)
    figures.update({f"ingest {k}": v for k, v in got.items()})
    figures["live code traces/s"] = live_code(fresh("code"), args.traces)
    for concurrency in (8, 32):
        figures[f"judge share of ideal @{concurrency}"] = live_judge(
            fresh(f"judge{concurrency}"), args.judge_traces, concurrency)
    figures["traces page ms"] = traces_page(fresh("page"))
    for path in work.glob(f"*-{tag}"):
        shutil.rmtree(path, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, nargs="+", default=[0, 1_000_000])
    parser.add_argument("--seconds", type=float, default=10.0, help="ingest time per size")
    parser.add_argument("--traces", type=int, default=1000, help="traces for code scorers")
    parser.add_argument("--judge-traces", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds; each measures every size once, sizes interleaved")
    args = parser.parse_args()
    sizes = [0, *[n for n in args.spans if n]]
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    templates = {}
    for n in sizes:
        templates[n] = work / f"bg-{n}.duckdb"
        built = build_background(templates[n], n)
        print(f"built N = {n:,} background spans in {built:.1f} s "
              f"({templates[n].stat().st_size / 2**20:,.0f} MB)", flush=True)
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for round_ in range(args.rounds):
        for n in sizes:
            runs[n].append(measure(work, templates[n], f"{n}-{round_}", args))
            print(f"round {round_ + 1}, N = {n:,}: done", flush=True)
    base = {name: statistics.median(run[name] for run in runs[0]) for name in runs[0][0]}
    for n in sizes:
        print(f"== N = {n:,} background spans (medians of {args.rounds} interleaved rounds)")
        for name in runs[n][0]:
            value = statistics.median(run[name] for run in runs[n])
            ratio = f"{value / base[name]:.2f}× N=0" if base[name] else "-"
            print(f"  {name:<34} {value:>12,.2f}   ({ratio})", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; "
          "compare ratios within one run")


if __name__ == "__main__":
    main()
