"""Benchmark: live scoring throughput and lag.

1. Code scorers only (the three default ones): traces/s from "stored and settled" to "scored",
   in one process on a DuckDB temp file (tick → expand → score → write-back).
2. A judge scorer whose judge adds 200 ms per call (the scripted server): traces/s against
   ``concurrency``.
3. Scoring lag under steady ingest: a real ``tracescore serve`` receives agent traces through the
   OpenTelemetry SDK exporter at a steady rate; lag = score written − last span received, with
   ``settle_seconds`` and ``interval_seconds`` of the config below included.

Run: .venv/bin/python tests/bench/bench_live.py [traces]   (prints figures, asserts nothing)
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from tracescore.ingest import span_dicts_from_otlp  # noqa: E402
from tracescore.live import (  # noqa: E402
    LiveScheduler,
    LiveSettings,
    Registry,
    send_agent_traces,
    tool_failures_scorer,
    trajectory_efficiency_scorer,
)
from tracescore.scorers import checks  # noqa: E402
from tracescore.scoring import Judge, PromptStep, create_scorer  # noqa: E402
from tracescore.store import Store  # noqa: E402
from tracescore.testing import Reply, ScriptedLLMServer  # noqa: E402

FIXTURE = TESTS / "fixtures" / "py-openai-v2-genai-span" / "0001-traces.b64"
os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")  # litellm wants a key; the judge is local


def template() -> list[dict[str, Any]]:
    rows = span_dicts_from_otlp(base64.b64decode(FIXTURE.read_text()))
    first = rows[0]["trace_id"]
    return [r for r in rows if r["trace_id"] == first]


def clones(rows: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(count):
        trace_id = secrets.token_hex(16)
        ids = {r["span_id"]: secrets.token_hex(8) for r in rows}
        for r in rows:
            out.append({**r, "trace_id": trace_id, "span_id": ids[r["span_id"]],
                        "parent_span_id": ids.get(r["parent_span_id"] or "")})
    return out


async def score_all(live: LiveScheduler) -> int:
    ticks = 0
    while True:
        ticks += 1
        await live.tick()
        await live.drain()
        open_rows = live.store.read("SELECT count(*) AS n FROM scoring_decisions WHERE "
                                    "decision IN ('pending', 'retrying', 'over_budget')")
        if live.stats.traces_waiting == 0 and open_rows[0]["n"] == 0:
            return ticks
        if live.paused:
            raise RuntimeError(f"scorers paused: {live.paused}")


def settings(**changes: Any) -> LiveSettings:
    return LiveSettings.model_validate({"settle_seconds": 0, "batch_size": 512,
                                        "budget": {"max_judge_tokens_per_hour": 0,
                                                   "max_judge_cost_usd_per_hour": 0,
                                                   "max_judge_cost_usd_per_day": 0},
                                        **changes})


def bench_code_scorers(count: int) -> None:
    rows = template()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        store.write_spans_sync(clones(rows, count))
        registry = Registry()
        registry.register(checks.no_tool_errors(), id="no-tool-errors")
        registry.register(tool_failures_scorer())
        registry.register(trajectory_efficiency_scorer(max_steps=20))
        live = LiveScheduler(store, registry, settings(concurrency=8))
        started = time.perf_counter()
        ticks = asyncio.run(score_all(live))
        elapsed = time.perf_counter() - started
        scored = store.read("SELECT count(*) AS n FROM scores")[0]["n"]
    print(f"code scorers: {count} traces × 3 scorers ({len(rows)} spans each) in {elapsed:.2f} s"
          f" over {ticks} ticks: {count / elapsed:,.0f} traces/s, {scored / elapsed:,.0f} "
          "scores/s")


def bench_judge(count: int, concurrencies: tuple[int, ...]) -> None:
    from tracescore.scoring import load_litellm

    load_litellm()  # its import (seconds) is not part of the figures
    rows = template()
    with ScriptedLLMServer() as llm:
        llm.set_default(lambda body: Reply(content={"score": 1}, delay_s=0.2))
        judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=llm.url)
        scorer = create_scorer("judged", "200 ms judge", type="agent", judge=judge).generate_score(
            PromptStep("grade", lambda run, results: f"Grade {run.output[-1].content}"))
        for concurrency in concurrencies:
            with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.duckdb") as store:
                store.write_spans_sync(clones(rows, count))
                registry = Registry()
                registry.register(scorer)
                live = LiveScheduler(store, registry, settings(concurrency=concurrency))
                started = time.perf_counter()
                asyncio.run(score_all(live))
                elapsed = time.perf_counter() - started
            ideal = concurrency / 0.2
            print(f"judge (200 ms/call), concurrency {concurrency:>2}: {count} traces in "
                  f"{elapsed:5.2f} s = {count / elapsed:6.1f} traces/s (ideal {ideal:.0f}/s)")


def bench_lag(rate_per_s: float, duration_s: float) -> None:
    from server_process import running_server

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.toml"
        config.write_text("[live]\ninterval_seconds = 1\nsettle_seconds = 2\n[[scorers]]\n"
                          'id = "no-tool-errors"\n'
                          'use = "tracescore.scorers.checks:no_tool_errors"\n'
                          '[[scorers]]\nid = "tool-failures"\n'
                          'use = "tracescore.live:tool_failures_scorer"\n')
        with running_server(Path(tmp) / "lag.duckdb", args=["--config", str(config),
                                                             "--no-grpc"]) as server:
            sent = 0
            gauge: list[float] = []
            stop = threading.Event()

            def scrape() -> None:
                import httpx

                while not stop.wait(0.5):
                    for line in httpx.get(f"{server.url}/metrics").text.splitlines():
                        if line.startswith("tracescore_scoring_lag_seconds "):
                            gauge.append(float(line.split()[1]))

            watcher = threading.Thread(target=scrape, daemon=True)
            watcher.start()
            started = time.monotonic()
            while time.monotonic() - started < duration_s:
                batch_started = time.monotonic()
                send_agent_traces(server.url, count=max(1, int(rate_per_s)), start=sent)
                sent += max(1, int(rate_per_s))
                time.sleep(max(0.0, 1.0 - (time.monotonic() - batch_started)))
            deadline = time.monotonic() + 60
            query = ("SELECT count(*) FILTER (WHERE decision IN ('pending', 'retrying')) AS "
                     "open, count(*) AS n FROM scoring_decisions")
            with server.client() as client:
                while time.monotonic() < deadline:
                    open_n, total = client.post("/api/sql", json={"sql": query}).json()["rows"][0]
                    if open_n == 0 and total >= 2 * sent:
                        break
                    time.sleep(0.5)
                lag_sql = ("WITH last AS (SELECT trace_id, max(received_at) AS received FROM "
                           "spans GROUP BY 1) SELECT date_diff('millisecond', l.received, "
                           "s.created_at) / 1000.0 FROM scores s JOIN last l USING (trace_id)")
                lags = sorted(r[0] for r in client.post("/api/sql", json={"sql": lag_sql})
                              .json()["rows"])
            stop.set()
    q = statistics.quantiles(lags, n=100)
    print(f"lag under steady ingest ({rate_per_s:g} agent traces/s for {duration_s:g} s, "
          f"settle 2 s, tick 1 s, {len(lags)} scores): p50 {q[49]:.2f} s, p95 {q[94]:.2f} s, "
          f"max {lags[-1]:.2f} s; scoring_lag_seconds gauge max {max(gauge, default=0):.2f} s")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    bench_code_scorers(count)
    bench_judge(64, (1, 4, 8, 16, 32))
    bench_lag(rate_per_s=20, duration_s=20)


if __name__ == "__main__":
    main()
