"""Benchmark: live scoring throughput and lag.

1. Code scorers only (the three default ones): traces/s from "stored and settled" to "scored",
   in one process on a DuckDB temp file (tick → expand → score → write-back), with the garbage
   collector tuned as ``tracescore serve`` tunes it (``tune_gc``).
2. A judge scorer whose judge adds 200 ms per call (the scripted server): traces/s against
   ``concurrency``.
3. Scoring lag under steady ingest (``lag``): a real ``tracescore serve`` receives agent traces
   through the OpenTelemetry SDK exporter at a steady rate (1,000 spans/s); lag = score written −
   last span received, with ``settle_seconds`` and ``interval_seconds`` of its config included.
   ``bench_scale`` calls ``lag(db, rate_spans_per_s, seconds)`` with a background database.

Run: .venv/bin/python tests/bench/bench_live.py [traces]   (prints figures, asserts nothing)
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import secrets
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
from tracescore.server import tune_gc  # noqa: E402
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
        tune_gc()  # as ``tracescore serve`` does once it has started
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


LAG_LIVE = {"interval_seconds": "1", "settle_seconds": "2"}
"""``[live]`` values of the lag run, over the embedded default config (its three code scorers;
its judge scorers stay off without a judge model)."""
LAG_SCORERS = 3


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def lag(db: Path | None, rate_spans_per_s: float, seconds: float) -> dict[str, float]:
    """Scoring lag under steady ingest into a real ``tracescore serve`` (goal 3 of issue 17).

    ``db``: the database file the server opens (a copy of a prebuilt background database, e.g.
    ``bench_scale.build_background``; it is written to), or None for an empty temporary one.
    Agent runs go through the OpenTelemetry SDK exporter in one-second slices at about
    ``rate_spans_per_s`` spans/s for ``seconds``; the server runs the three code scorers of
    the default config with ``interval_seconds = 1`` and ``settle_seconds = 2`` (so the goal
    is p95 ≤ 2 + 1 + 1 s). Lag = score row written − the trace's last span received, over
    every score row of the run. Returns seconds: ``p50_s``, ``p95_s``, ``max_s``,
    ``p95_first_third_s`` and ``p95_last_third_s`` (by the trace's arrival: flat means these
    agree), the lag gauge's maximum, and ``spans_per_s`` sent, ``scores``, ``unscored``
    traces and the server's largest RSS (``rss_max_mb``, sampled every 0.5 s).
    """
    import httpx
    from server_process import running_server, sql

    with tempfile.TemporaryDirectory() as tmp:
        from tracescore.server import default_config_path

        text = default_config_path().read_text()
        for key, value in LAG_LIVE.items():
            text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)
        config = Path(tmp) / "lag.toml"
        config.write_text(text)
        with running_server(db or Path(tmp) / "lag.duckdb",
                            args=["--config", str(config), "--no-grpc"]) as server:
            assert server.process is not None
            pid = server.process.pid
            gauge: list[float] = []
            rss: list[float] = []
            stop = threading.Event()

            def scrape() -> None:
                while not stop.wait(0.5):
                    rss.append(_rss_mb(pid))
                    for line in httpx.get(f"{server.url}/metrics").text.splitlines():
                        if line.startswith("tracescore_scoring_lag_seconds "):
                            gauge.append(float(line.split()[1]))

            [[since]] = sql(server, "SELECT CAST(now() AS TIMESTAMP)::VARCHAR")
            probe = send_agent_traces(server.url, count=20, start=0)
            quoted = ", ".join(f"'{t}'" for t in probe)
            [[probe_spans]] = sql(server, f"SELECT count(*) FROM spans WHERE received_at >= "
                                          f"TIMESTAMP '{since}' AND trace_id IN ({quoted})")
            per_second = max(1, round(rate_spans_per_s * len(probe) / max(1, probe_spans)))
            watcher = threading.Thread(target=scrape, daemon=True)
            watcher.start()
            sent = len(probe)
            started = time.monotonic()
            while time.monotonic() - started < seconds:
                slice_started = time.monotonic()
                send_agent_traces(server.url, count=per_second, start=sent)
                sent += per_second
                time.sleep(max(0.0, 1.0 - (time.monotonic() - slice_started)))
            sending_s = time.monotonic() - started
            deadline = time.monotonic() + 60
            recent = f"received_at >= TIMESTAMP '{since}'"
            while time.monotonic() < deadline:
                [[traces, decided]] = sql(server, f"""
                    WITH t AS (SELECT DISTINCT trace_id FROM spans WHERE {recent})
                    SELECT (SELECT count(*) FROM t),
                           (SELECT count(DISTINCT trace_id) FROM scoring_decisions
                            WHERE decision IN ('scored', 'not_scorable', 'failed')
                              AND trace_id IN (SELECT trace_id FROM t))""")
                if decided >= traces:
                    break
                time.sleep(0.5)
            [[p50, p95, worst, first_p95, last_p95, scores]] = sql(server, f"""
                WITH last AS (SELECT trace_id, min(received_at) AS first,
                                     max(received_at) AS received
                              FROM spans WHERE {recent} GROUP BY 1),
                lags AS (SELECT date_diff('millisecond', l.received, s.created_at) / 1000.0
                                    AS lag,
                                ntile(3) OVER (ORDER BY l.first) AS third
                         FROM scores s JOIN last l USING (trace_id))
                SELECT quantile_cont(lag, 0.5), quantile_cont(lag, 0.95), max(lag),
                       quantile_cont(lag, 0.95) FILTER (WHERE third = 1),
                       quantile_cont(lag, 0.95) FILTER (WHERE third = 3), count(*)
                FROM lags""")
            [[spans]] = sql(server, f"SELECT count(*) FROM spans WHERE {recent}")
            stop.set()
            watcher.join()
    return {"p50_s": p50, "p95_s": p95, "max_s": worst, "p95_first_third_s": first_p95,
            "p95_last_third_s": last_p95, "gauge_max_s": max(gauge, default=0.0),
            "spans_per_s": spans / sending_s, "scores": float(scores),
            "unscored": float(traces - decided), "rss_max_mb": max(rss, default=0.0)}


def bench_lag(rate_spans_per_s: float, duration_s: float, db: Path | None = None) -> None:
    got = lag(db, rate_spans_per_s, duration_s)
    print(f"lag under steady ingest ({got['spans_per_s']:,.0f} spans/s for {duration_s:g} s, "
          f"{LAG_SCORERS} code scorers, settle 2 s, tick 1 s, {got['scores']:.0f} scores): "
          f"p50 {got['p50_s']:.2f} s, p95 {got['p95_s']:.2f} s (first third "
          f"{got['p95_first_third_s']:.2f} s, last third {got['p95_last_third_s']:.2f} s), "
          f"max {got['max_s']:.2f} s; gauge max {got['gauge_max_s']:.2f} s; "
          f"{got['unscored']:.0f} traces unscored; server RSS max {got['rss_max_mb']:.0f} MB")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    bench_code_scorers(count)
    bench_judge(64, (1, 4, 8, 16, 32))
    bench_lag(rate_spans_per_s=1000, duration_s=20)


if __name__ == "__main__":
    main()
