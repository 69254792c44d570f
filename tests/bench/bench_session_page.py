"""The session page of a long conversation (issue 27, item 11), in headless Chromium.

Run: ``.venv/bin/python tests/bench/bench_session_page.py [--turns 1500] [--rounds 3]``

Starts a real ``tracescore serve`` (live scoring off), sends one conversation of ``--turns``
agent runs through the OpenTelemetry SDK, waits until every turn has joined its session, then
prints:

- the page: from navigation to every turn rendered (``.turn`` elements = turns), per round;
- the API alone: ``GET /api/sessions/{id}/turns?limit=500``, each page, per round;
- the baseline, the old page's way in the same browser: one ``GET
  /api/traces/{id}/scorer-input`` per turn, in sequence (measured on ``--baseline-turns`` turns
  and scaled to all of them; the old page also stopped at 500).

Nothing is asserted. Needs Debian's Chromium at /usr/bin/chromium and Playwright.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server_process import running_server, sql  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
CONFIG = "[live]\nenabled = false\nsettle_seconds = 0.2\nmax_wait_seconds = 5\n"
SESSION = "conv-bench"

OLD_WAY = """async ([ids]) => {
  const started = performance.now();
  for (const id of ids) {
    const r = await fetch("api/traces/" + id + "/scorer-input");
    await r.json();
  }
  return performance.now() - started;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-turns", type=int, default=100)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: needs Playwright (pip install playwright)")
        return
    if not Path(CHROMIUM).exists():
        print(f"skipped: needs Chromium at {CHROMIUM} (apt-get install chromium)")
        return

    with tempfile.TemporaryDirectory(prefix="bench-session-") as folder:
        config = Path(folder) / "tracescore.toml"
        config.write_text(CONFIG)
        with running_server(Path(folder) / "bench.duckdb",
                            args=["--config", str(config), "--no-grpc"]) as server:
            sent = time.perf_counter()
            from tracescore.live import send_agent_traces

            for start in range(0, args.turns, 50):  # the SDK's span queue holds ~50 turns
                send_agent_traces(server.url, count=min(50, args.turns - start), start=start,
                                  conversation_id=SESSION)
            while sql(server, "SELECT count(*) FROM traces WHERE session_id = ?",
                      [SESSION]) != [[args.turns]]:
                time.sleep(0.5)
            print(f"{args.turns} turns sent and in their session in "
                  f"{time.perf_counter() - sent:.1f} s")
            ids = [r[0] for r in sql(server, "SELECT trace_id FROM traces WHERE session_id = ? "
                                             "ORDER BY start_time LIMIT ?",
                                     [SESSION, args.baseline_turns])]
            api: list[float] = []
            for _ in range(args.rounds):
                for offset in range(0, args.turns, 500):
                    began = time.perf_counter()
                    response = httpx.get(f"{server.url}/api/sessions/{SESSION}/turns",
                                         params={"limit": 500, "offset": offset}, timeout=120)
                    response.raise_for_status()
                    api.append(time.perf_counter() - began)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                     args=CHROMIUM_ARGS)
                page_s: list[float] = []
                for _ in range(args.rounds):
                    context = browser.new_context(viewport={"width": 1400, "height": 900})
                    page = context.new_page()
                    page.goto(f"{server.url}/#/overview")
                    page.wait_for_selector("main[data-rendered]", state="attached")
                    began = time.perf_counter()
                    page.goto(f"{server.url}/#/sessions/{SESSION}")
                    page.wait_for_function(
                        f"document.querySelectorAll('.session-chat .turn').length >= {args.turns}",
                        timeout=300_000)
                    page_s.append(time.perf_counter() - began)
                    context.close()
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"{server.url}/#/overview")
                page.wait_for_selector("main[data-rendered]", state="attached")
                old_ms = page.evaluate(OLD_WAY, [ids])
                context.close()
                browser.close()
    pages = (args.turns + 499) // 500
    print(f"session page, navigation to all {args.turns} turns rendered: "
          + ", ".join(f"{s:.2f}" for s in page_s)
          + f" s (median {statistics.median(page_s):.2f} s; {pages} requests of 500 turns)")
    print(f"GET /api/sessions/{{id}}/turns?limit=500: median {statistics.median(api):.3f} s, "
          f"max {max(api):.3f} s per page")
    per_turn = old_ms / 1000 / max(len(ids), 1)
    print(f"baseline, one scorer-input request per turn in sequence (the old page): "
          f"{per_turn * 1000:.1f} ms per turn over {len(ids)} turns, so "
          f"{per_turn * args.turns:.1f} s for {args.turns} turns "
          f"({per_turn * min(args.turns, 500):.1f} s for the 500 the old page showed)")


if __name__ == "__main__":
    main()
