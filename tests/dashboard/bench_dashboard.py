"""Benchmark: dashboard page loads on 100,000 traces (1 million spans, 300,000 scores).

Run: ``.venv/bin/python tests/dashboard/bench_dashboard.py [--traces N]``. It builds a database
with the store's schema (rows generated in DuckDB SQL: 10 spans per trace over 30 days, three
scores per trace, two judge executions per judge score, a decision per score), starts a real
``tracescore serve`` on it (live scoring off), loads every page in headless Chromium with the
range set to "all time", and prints per page the time until it rendered and the network went
idle, with the slowest ``/api/sql`` request. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server_process import running_server  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ATTRIBUTES = (
    '{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-4o-mini",'
    '"gen_ai.usage.input_tokens":189,"gen_ai.usage.output_tokens":12,'
    '"gen_ai.input.messages":"[{\\"role\\":\\"user\\",\\"parts\\":[{\\"content\\":'
    '\\"What is the weather in Paris right now, in Fahrenheit?\\",\\"type\\":\\"text\\"}]}]"}'
)
SCORERS = "['no-tool-errors', 'answer-relevancy', 'trajectory-efficiency']"


def build(db: Path, traces: int) -> None:
    """Create the schema through the Store, then fill it with generated rows."""
    import duckdb

    from tracescore.store import Store

    with Store(db):
        pass
    step_s = max(1, 30 * 86400 // traces)
    t0 = "TIMESTAMP '2026-11-29 12:00:00'"
    start = f"{t0} - INTERVAL (i * {step_s}) SECOND"
    con = duckdb.connect(str(db))
    con.execute(f"""
        INSERT INTO spans
        SELECT md5(i::VARCHAR), substr(md5(i::VARCHAR || '-' || j::VARCHAR), 1, 16),
          CASE WHEN j = 0 THEN NULL ELSE substr(md5(i::VARCHAR || '-0'), 1, 16) END,
          'proj-' || (i % 3)::VARCHAR, 'svc-' || (i % 5)::VARCHAR,
          CASE WHEN j = 0 THEN 'invoke_agent weather-agent' WHEN j % 2 = 1
               THEN 'chat gpt-4o-mini' ELSE 'execute_tool get_weather' END,
          'INTERNAL',
          CAST({start} + INTERVAL (j * 10) MILLISECOND AS TIMESTAMP_NS),
          CAST({start} + INTERVAL (CASE WHEN j = 0 THEN 200 ELSE j * 10 + 8 END) MILLISECOND
               AS TIMESTAMP_NS),
          CASE WHEN j = 0 THEN 200 ELSE 8 END,
          CASE WHEN i % 50 = 0 AND j = 3 THEN 'ERROR' ELSE 'UNSET' END, NULL,
          '{ATTRIBUTES}', '{{"service.name":"svc"}}', '[]', '[]', 'bench', '1.0', {start}
        FROM range({traces}) t(i), range(10) s(j)
    """)
    # The writer keeps traces and the totals maintainer model_calls; rows inserted in SQL get
    # both here: span columns from spans, one model call per chat span (150 → 20 tokens).
    from tracescore.store._traces_table import fill_from_spans_sql

    con.execute(fill_from_spans_sql())
    con.execute("""
        INSERT INTO model_calls (trace_id, span_id, project, service_name, agent_name, model,
          provider, started_at, duration_ms, input_tokens, output_tokens, total_tokens, cost_usd,
          cost_source, finish_reason, status)
        SELECT trace_id, span_id, project, service_name, 'weather-agent', 'gpt-4o-mini',
          'openai', start_time, duration_ms, 150, 20, 170, 150 * 1.5e-07 + 20 * 6e-07,
          'litellm', 'stop', 'unset'
        FROM spans WHERE name = 'chat gpt-4o-mini'
    """)
    con.execute("""
        UPDATE traces SET model_call_count = m.n, tool_call_count = 10 - 1 - m.n,
          input_tokens = m.i, output_tokens = m.o, total_tokens = m.t, cost_usd = m.c,
          unpriced_call_count = 0, models = ['gpt-4o-mini'], agent_name = 'weather-agent',
          totals_received_at = traces.last_received_at
        FROM (SELECT trace_id, count(*) AS n, sum(input_tokens) AS i, sum(output_tokens) AS o,
                     sum(total_tokens) AS t, sum(cost_usd) AS c
              FROM model_calls GROUP BY 1) m
        WHERE traces.trace_id = m.trace_id
    """)
    con.execute(f"""
        INSERT INTO scores (score_id, trace_id, span_id, project, scorer_id, scorer_name,
          scorer_version, source, status, score, reason, created_at, duration_ms,
          judge_input_tokens, judge_output_tokens, judge_total_tokens, judge_cost)
        SELECT md5(i::VARCHAR || 's' || k::VARCHAR), md5(i::VARCHAR),
          substr(md5(i::VARCHAR || '-0'), 1, 16), 'proj-' || (i % 3)::VARCHAR,
          {SCORERS}[k + 1], 'bench', 'v1', 'live',
          CASE WHEN (i + k) % 20 = 0 THEN 'failed' WHEN (i + k) % 33 = 0 THEN 'not_scorable'
               ELSE 'success' END,
          CASE WHEN (i + k) % 20 = 0 OR (i + k) % 33 = 0 THEN NULL
               ELSE ((i * 7 + k) % 100) / 100.0 END,
          'reason text', {start} + INTERVAL 15 SECOND, 5.0,
          CASE WHEN k = 1 THEN 300 END, CASE WHEN k = 1 THEN 40 END,
          CASE WHEN k = 1 THEN 340 END, CASE WHEN k = 1 THEN 0.0002 END
        FROM range({traces}) t(i), range(3) s(k)
    """)
    con.execute(f"""
        INSERT INTO scoring_decisions (trace_id, span_id, scorer_id, scorer_version, decision,
          attempts, last_error, next_attempt_at, score_id, created_at, updated_at)
        SELECT md5(i::VARCHAR), substr(md5(i::VARCHAR || '-0'), 1, 16), {SCORERS}[k + 1], 'v1',
          CASE WHEN (i + k) % 20 = 0 THEN 'failed' WHEN (i + k) % 33 = 0 THEN 'not_scorable'
               ELSE 'scored' END, 1, NULL, NULL, md5(i::VARCHAR || 's' || k::VARCHAR),
          {start}, {start}
        FROM range({traces}) t(i), range(3) s(k)
    """)
    con.execute(f"""
        INSERT INTO judge_executions (execution_id, score_id, trace_id, scorer_id, step, status,
          prompt, judge_model_id, input_tokens, output_tokens, cost_amount, created_at)
        SELECT md5(i::VARCHAR || 'x' || k::VARCHAR), md5(i::VARCHAR || 's1'), md5(i::VARCHAR),
          'answer-relevancy', ['analyze', 'generate_reason'][k + 1], 'success', 'prompt',
          'openai/gpt-4o-mini', 150, 20, 0.0001, {start}
        FROM range({traces}) t(i), range(2) s(k)
    """)
    con.close()


def measure(url: str, routes: list[str]) -> None:
    """Load each route in Chromium and print its timings."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script("localStorage.setItem('tracescore.range', 'all');")
        page = context.new_page()
        sql_ms: list[float] = []

        def finished(request: object) -> None:
            if request.url.endswith("/api/sql"):  # type: ignore[attr-defined]
                timing = request.timing  # type: ignore[attr-defined]
                sql_ms.append(timing["responseEnd"] - timing["requestStart"])

        page.on("requestfinished", finished)
        page.goto(f"{url}/#/sql")  # warm the page assets once
        page.wait_for_load_state("networkidle")
        print(f"{'page':48} {'rendered':>10} {'idle':>8} {'queries':>8} {'slowest':>9}")
        for route in routes:
            sql_ms.clear()
            begin = time.perf_counter()
            page.goto(f"{url}/#/{route}")
            page.reload()
            page.wait_for_selector("main[data-rendered]", state="attached")
            rendered = time.perf_counter() - begin
            page.wait_for_load_state("networkidle")
            idle = time.perf_counter() - begin
            slowest = max(sql_ms) if sql_ms else 0.0
            print(
                f"{route[:48]:48} {rendered * 1000:8.0f}ms {idle * 1000:6.0f}ms "
                f"{len(sql_ms):8d} {slowest:7.0f}ms"
            )
        browser.close()


def main() -> None:
    """Build, serve, measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        began = time.perf_counter()
        build(db, args.traces)
        print(
            f"built {args.traces:,} traces ({args.traces * 10:,} spans, {args.traces * 3:,} "
            f"scores) in {time.perf_counter() - began:.1f} s"
        )
        config = Path(tmp) / "tracescore.toml"
        config.write_text("[live]\nenabled = false\n")
        with running_server(db, args=["--config", str(config)]) as server:
            some_trace = "cfcd208495d565ef66e7dff9f98764da"  # md5('0'): the newest trace
            measure(
                server.url,
                [
                    "overview",
                    "traces",
                    "traces?scorer=answer-relevancy&max=0.1&status=error",
                    "traces?q=weather",
                    "traces?sort=cost&mincost=0.0001",
                    f"traces/{some_trace}",
                    f"traces/{some_trace}?tab=scores",
                    "scorers",
                    "scorers/answer-relevancy",
                    "sql?q=SELECT%20scorer_id%2C%20avg(score)%20FROM%20scores%20GROUP%20BY%201",
                ],
            )


if __name__ == "__main__":
    main()
