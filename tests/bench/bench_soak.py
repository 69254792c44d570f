"""Soak: the server's memory under a sustained mixed load (issue 27, item 13).

Run: ``.venv/bin/python tests/bench/bench_soak.py [--minutes 30] [--sample-seconds 15]``

Starts the scripted judge (``ScriptedLLMServer``, answering in 50 ms) and a real
``tracescore serve`` whose config has the three default code scorers, one judge scorer on the
scripted judge and a monitor on it (notifying a loopback webhook receiver), then for
``--minutes`` keeps up, all at once, from separate client processes and threads:

- ingest: agent runs through the OpenTelemetry SDK (``send_agent_traces``, about 7 spans each;
  every run is scored live by four scorers, one a judge), plus OTLP/HTTP protobuf exports of 256
  plain spans with a 1 KB attribute;
- SQL: a rotation of ``/api/sql`` queries (group-bys over spans and traces, a JSON field read,
  the newest scores, a join) every 0.5 s;
- the dashboard's reads: ``/api/traces``, one trace, its scorer input and step tree, the
  session turns, ``/api/live/scorers``, ``/api/live/monitors``, ``/metrics``, every 0.5 s.

Every ``--sample-seconds`` it samples the server's RSS (with its child processes) and prints,
per minute, the RSS, the spans stored, the scores written, the write queue and the requests
that failed; at the end the RSS at minute 1, the peak, and its slope (MB/min) over the first and
the second half and over the last third, the writer's checkpoints and planned reopens
(``duckdb_reopen_after_checkpoints``), and the row groups of the
stopped server's tables (DuckDB keeps metadata of each in memory; with its vacuum off a table
gains one per checkpoint that appended to it). Nothing is asserted; a leveled-off RSS is a slope
near 0.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server_process import start_server  # noqa: E402

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep


def judged(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade the answer.",
                  api_base=api_base, api_key="unused")
    return create_scorer("judged", "scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade: " + run.output[-1].content))
'''

CONFIG = """
[server]
grpc = false

[live]
interval_seconds = 1
settle_seconds = 2
max_wait_seconds = 60
session_settle_seconds = 30
allow_private_webhooks = true

[live.budget]
max_judge_cost_usd_per_hour = 0
max_judge_cost_usd_per_day = 0
max_judge_tokens_per_hour = 0

[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"

[[scorers]]
id = "tool-failures"
use = "tracescore.live:tool_failures_scorer"

[[scorers]]
id = "trajectory-efficiency"
use = "tracescore.live:trajectory_efficiency_scorer"
args = {{ max_steps = 20 }}

[[scorers]]
id = "judged"
use = "soakscorers.py:judged"
args = {{ api_base = "{llm}" }}

[[monitors]]
id = "judged-drop"
scorer = "judged"
aggregate = "avg"
window = "5m"
op = "lt"
threshold = 0.5
min_samples = 5
evaluate_every = "10s"
cooldown = "1m"
notify = ["{hook}/hook"]
"""

SQL = [
    "SELECT service_name, count(*), avg(duration_ms) FROM spans GROUP BY 1",
    "SELECT attributes->>'$.\"gen_ai.request.model\"' AS model, count(*) FROM spans "
    "WHERE received_at > now() - INTERVAL 5 MINUTE GROUP BY 1",
    "SELECT scorer_id, avg(score), count(*) FROM scores GROUP BY 1",
    "SELECT * FROM traces ORDER BY start_time DESC LIMIT 50",
    "SELECT t.trace_id, t.span_count, s.score FROM traces t JOIN scores s USING (trace_id) "
    "ORDER BY s.created_at DESC LIMIT 200",
    "SELECT decision, count(*) FROM scoring_decisions GROUP BY 1",
    "SELECT session_id, trace_count FROM sessions ORDER BY last_trace_at DESC LIMIT 50",
]


def agent_sender(url: str, stop_at: float, runs_per_s: float) -> None:
    """A client process: agent runs through the OpenTelemetry SDK (half in conversations)."""
    from tracescore.live import send_agent_traces

    sent = 0
    while time.monotonic() < stop_at:
        began = time.monotonic()
        runs = max(1, int(runs_per_s))
        conversation = f"soak-{sent // 40}" if sent % 80 < 40 else None
        try:
            send_agent_traces(url, count=runs, start=sent, conversation_id=conversation)
        except Exception as exc:  # noqa: BLE001 - a refused export is counted by the server
            print(f"agent sender: {exc}", file=sys.stderr)
        sent += runs
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))


def span_sender(url: str, stop_at: float, spans_per_s: int) -> None:
    """A client process: protobuf exports of 256 spans with a 1 KB attribute, retrying 503."""
    import httpx

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reliability._helpers import span_request

    with httpx.Client(timeout=60) as client:
        while time.monotonic() < stop_at:
            began = time.monotonic()
            for _ in range(max(1, spans_per_s // 256)):
                body = span_request(256, value="x" * 1024, service="soak-bulk").SerializeToString()
                for _attempt in range(10):
                    status = client.post(f"{url}/v1/traces", content=body, headers={
                        "content-type": "application/x-protobuf"}).status_code
                    if status != 503:
                        break
                    time.sleep(1)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))


def reader(url: str, stop: threading.Event, failures: list[str]) -> None:
    """SQL and dashboard reads every 0.5 s, in rotation."""
    import httpx

    index = 0
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            try:
                requests: list[tuple[str, str, Any]] = [
                    ("POST", "/api/sql", {"sql": SQL[index % len(SQL)]})]
                listed = client.get("/api/traces", params={"limit": 20})
                traces = listed.json().get("traces") or []
                if traces:
                    trace_id = traces[index % len(traces)]["trace_id"]
                    requests += [("GET", f"/api/traces/{trace_id}{tail}", None)
                                 for tail in ("", "/scorer-input", "/steps")]
                requests += [("GET", path, None) for path in (
                    "/api/live/scorers", "/api/live/monitors", "/metrics",
                    f"/api/sessions/soak-{index % 5}/turns")]
                for method, path, body in requests:
                    response = client.request(method, path, json=body)
                    if response.status_code >= 500:
                        failures.append(f"{response.request.url.path}: {response.status_code}")
            except httpx.HTTPError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
            index += 1
            stop.wait(0.5)


def rss_mb(pid: int) -> float:
    import psutil

    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares MB per minute of (minute, MB) points."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / den if den \
        else 0.0


def row_groups(db: Path) -> dict[str, int]:
    """Row groups of each table of a database no process has open, the most first."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()]
        counts = {table: conn.execute(
            "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info(?)", [table]
        ).fetchone()[0] for table in tables}
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--sample-seconds", type=float, default=15.0)
    parser.add_argument("--agent-runs-per-second", type=float, default=4.0)
    parser.add_argument("--bulk-spans-per-second", type=int, default=1024)
    parser.add_argument("--server-env", action="append", default=[],
                        help="NAME=VALUE for the server process (experiments)")
    args = parser.parse_args()
    from live.test_monitors import Receiver  # the loopback webhook receiver of the tests

    from tracescore.testing import Reply, ScriptedLLMServer

    hook = Receiver()
    with ScriptedLLMServer() as llm, tempfile.TemporaryDirectory(prefix="soak-") as folder:
        llm.set_default(lambda body: Reply(content={"score": 0.8}, delay_s=0.05))
        work = Path(folder)
        (work / "soakscorers.py").write_text(SCORERS_PY)
        config = work / "tracescore.toml"
        config.write_text(CONFIG.format(llm=llm.url, hook=hook.url))
        env = dict(item.split("=", 1) for item in args.server_env)
        server = start_server(work / "soak.duckdb", args=["--config", str(config)], env=env)
        assert server.process is not None
        pid = server.process.pid
        print(f"server pid {pid}, {args.minutes:g} minutes, {args.agent_runs_per_second:g} agent "
              f"runs/s and {args.bulk_spans_per_second} bulk spans/s, reads every 0.5 s; "
              f"load average at start {os.getloadavg()[0]:.1f}", flush=True)
        started = time.monotonic()
        stop_at = started + args.minutes * 60
        context = mp.get_context("spawn")
        senders = [
            context.Process(target=agent_sender,
                            args=(server.url, stop_at, args.agent_runs_per_second)),
            context.Process(target=span_sender,
                            args=(server.url, stop_at, args.bulk_spans_per_second)),
        ]
        for process in senders:
            process.start()
        stop = threading.Event()
        failures: list[str] = []
        readers = [threading.Thread(target=reader, args=(server.url, stop, failures),
                                    daemon=True) for _ in range(2)]
        for thread in readers:
            thread.start()
        points: list[tuple[float, float]] = []
        import httpx

        print("minute | RSS MB | spans stored | scores | judge scores | queue rows | "
              "failed reads | webhook posts", flush=True)
        next_print = 1.0
        while time.monotonic() < stop_at:
            time.sleep(args.sample_seconds)
            minute = (time.monotonic() - started) / 60
            points.append((minute, rss_mb(pid)))
            if minute >= next_print or time.monotonic() >= stop_at:
                health = httpx.get(f"{server.url}/healthz", timeout=60).json()
                counts = httpx.post(f"{server.url}/api/sql", timeout=60, json={"sql": (
                    "SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM scores), "
                    "(SELECT count(*) FROM scores WHERE scorer_id = 'judged')")}).json()["rows"][0]
                print(f"{minute:6.1f} | {points[-1][1]:6.0f} | {counts[0]:12,} | {counts[1]:6,} | "
                      f"{counts[2]:12,} | {health['writer']['pending_rows']:10,} | "
                      f"{len(failures):12} | {len(hook.posts)}", flush=True)
                next_print = float(int(minute) + 1)
        stop.set()
        for process in senders:
            process.join()
        for thread in readers:
            thread.join(60)
        duplicates = httpx.post(f"{server.url}/api/sql", timeout=120, json={"sql": (
            "SELECT count(*) FROM (SELECT trace_id, span_id, scorer_id, scorer_version, "
            "count(*) AS n FROM scores GROUP BY ALL HAVING n > 1)")}).json()["rows"][0][0]
        writer = httpx.get(f"{server.url}/healthz", timeout=60).json()["writer"]
        log = server.log()
        server.stop()
        groups = row_groups(work / "soak.duckdb")
    total = points[-1][0]
    first_half = [p for p in points if p[0] <= total / 2]
    second_half = [p for p in points if p[0] > total / 2]
    last_third = [p for p in points if p[0] > total * 2 / 3]
    at_one = next((mb for minute, mb in points if minute >= 1.0), points[0][1])
    print(json.dumps({
        "minutes": round(total, 1),
        "rss_mb_at_minute_1": round(at_one),
        "rss_mb_at_end": round(points[-1][1]),
        "rss_mb_peak": round(max(mb for _, mb in points)),
        "slope_mb_per_min_first_half": round(slope(first_half), 2),
        "slope_mb_per_min_second_half": round(slope(second_half), 2),
        "slope_mb_per_min_last_third": round(slope(last_third), 2),
        "failed_reads": len(failures),
        "duplicate_scores": duplicates,
        "tracebacks_in_log": log.count("Traceback"),
        "checkpoints": writer.get("checkpoints"),
        "longest_checkpoint_ms": writer.get("max_checkpoint_ms"),
        "planned_reopens": writer.get("refreshes"),
        "planned_reopens_put_off": writer.get("refreshes_skipped"),
        "last_reopen_ms": writer.get("last_refresh_ms"),
        "row_groups_total": sum(groups.values()),
        "row_groups_by_table": {table: n for table, n in groups.items() if n > 1},
        "load_average_at_end": round(os.getloadavg()[0], 1),
    }, indent=1))
    if failures:
        print("first failures:", failures[:5])


if __name__ == "__main__":
    main()
