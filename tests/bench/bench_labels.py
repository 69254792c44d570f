"""Labels: what keeping ``judge_agreement`` costs, and how long one label takes in the browser.

Run: ``.venv/bin/python tests/bench/bench_labels.py [--labels 100000] [--items 100]
[--part agreement|browser|all]``. Nothing is asserted; it prints figures.

agreement: a store holding N labelled traces (one boolean label each, 2 judge versions scoring
every trace, rows generated in DuckDB SQL): boolean labels with scores of 0 or 1, with
continuous scores, and numeric labels with continuous scores (ρ and MAE: the bootstrap's worst
case, every pair distinct), timed ``AgreementKeeper.refresh`` passes: a full
recompute with 1,000 / 200 / 0 bootstrap resamples, a pass when nothing changed (what every
live tick pays), and a pass after one new label (a recompute of that schema).

browser: a real ``tracescore serve`` with N question/answer traces (sent through the
OpenTelemetry SDK), a judge's score on each and a queue over them; headless Chromium labels the
whole queue with the keyboard only, and per item it times: ``n`` pressed → the next item drawn
with its conversation (load), the value key pressed → "saved" shown with the judge revealed
(save), and the two together (a label, end to end, without a person's thinking time).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def fill(store: Any, labels: int, *, case: str) -> None:
    """``labels`` labels on as many traces, and two versions' scores of each: boolean labels
    with scores 0 or 1, boolean labels with scores in a thousand steps of 0..1, or numeric
    labels 1..5 with such scores (every (label, score) pair nearly distinct)."""
    from tracescore.labels import create_schema

    numeric = case == "numeric"
    create_schema(store, {"name": "correct", "kind": "numeric" if numeric else "boolean",
                          "scorer_id": "judge",
                          **({"min_value": 1, "max_value": 5} if numeric else {})})
    score = DISCRETE if case == "boolean" else CONTINUOUS
    value = "(1 + i % 5)::VARCHAR" if numeric else \
        "CASE WHEN i % 2 = 1 THEN 'true' ELSE 'false' END"
    number = "(1 + i % 5)::DOUBLE" if numeric else "(i % 2)::DOUBLE"

    def write(conn: Any) -> None:
        conn.execute(f"""
            INSERT INTO scores (score_id, trace_id, span_id, scorer_id, scorer_version, source,
                                status, score, created_at)
            SELECT 'v' || v || '-' || i, lpad(to_hex(i), 32, '0'), lpad(to_hex(i), 16, '0'),
                   'judge', 'v' || v, 'live', 'success',
                   {score},
                   TIMESTAMP '2026-12-01' + to_seconds(i)
            FROM range({labels}) r(i), (VALUES (1), (2)) s(v)""")
        conn.execute(f"""
            INSERT INTO labels (label_id, target_type, trace_id, schema_name, value, annotator,
                                created_at, numeric_value)
            SELECT 'l' || i, 'trace', lpad(to_hex(i), 32, '0'), 'correct',
                   {value}, 'ann-' || (i % 5), TIMESTAMP '2026-12-02' + to_seconds(i),
                   {number}
            FROM range({labels}) r(i)""")

    store.write_sync(write)


DISCRETE = "CASE WHEN hash(i, v) % 10 < 8 THEN (i % 2)::DOUBLE ELSE 1 - (i % 2) END"
CONTINUOUS = ("least(1.0, greatest(0.0, (i % 2) * 0.5 + 0.25 + ((hash(i, v) % 1000) / 1000.0 "
              "- 0.5) * 0.6))")


def timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return (time.perf_counter() - started) * 1000.0, result


CASES = {"boolean": "boolean labels, scores 0 or 1",
         "continuous": "boolean labels, continuous scores",
         "numeric": "numeric labels 1..5, continuous scores"}


def bench_agreement(labels: int, *, case: str) -> None:
    from tracescore.labels import AgreementKeeper, add
    from tracescore.store import Store

    with tempfile.TemporaryDirectory(prefix="bench-labels-") as folder:
        with Store(Path(folder) / "labels.duckdb") as store:
            fill_ms, _ = timed(lambda: fill(store, labels, case=case))
            print(f"agreement over {labels:,} labelled traces × 2 judge versions, {CASES[case]} "
                  f"(filled in {fill_ms / 1000:.1f} s)")
            for resamples in (1000, 200, 0):
                keeper = AgreementKeeper(resamples=resamples, seed=0)
                ms, report = timed(lambda k=keeper: k.refresh(store, force=True))
                kappa = report.rows[0]["kappa"]
                print(f"  full recompute, {resamples:>4} resamples: {ms:8.0f} ms "
                      f"({len(report.rows)} rows, κ v1 {kappa:.3f})")
            keeper = AgreementKeeper(resamples=1000, seed=0)
            keeper.refresh(store, force=True)
            quiet = [timed(lambda: keeper.refresh(store))[0] for _ in range(5)]
            print(f"  pass with nothing changed:     {statistics.median(quiet):8.1f} ms "
                  f"(median of 5; what each live tick pays)")
            add(store, [{"trace_id": f"{7:032x}", "schema": "correct",
                         "value": 3 if case == "numeric" else False, "annotator": "bench"}])
            ms, report = timed(lambda: keeper.refresh(store))
            print(f"  pass after one new label:      {ms:8.0f} ms "
                  f"(recomputed {report.schemas_recomputed}, 1,000 resamples)")


def bench_browser(items: int) -> None:
    from labels.helpers import qa_pairs, send_qa_traces
    from playwright.sync_api import sync_playwright
    from server_process import running_server

    chromium_args = ["--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run"]
    names = [f"item-{i:03d}" for i in range(items)]
    with tempfile.TemporaryDirectory(prefix="bench-review-") as folder:
        with running_server(Path(folder) / "review.duckdb", args=["--no-grpc"]) as server:
            ids = send_qa_traces(server.url, qa_pairs(names))
            scores = [{"trace_id": t, "span_id": "0" * 16, "scorer_id": "qa-judge",
                       "scorer_version": "v1", "status": "success", "score": float(i % 2),
                       "reason": f"judged {names[i]}"} for i, t in enumerate(ids)]
            with server.client() as client:
                client.post("/api/scores", json={"scores": scores}).raise_for_status()
                client.post("/api/label-schemas", json={
                    "name": "correct", "kind": "boolean",
                    "scorer_id": "qa-judge"}).raise_for_status()
                client.post("/api/queues", json={"name": "bench", "schemas": ["correct"],
                                                 "order": "oldest",
                                                 "size": items}).raise_for_status()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                     args=chromium_args)
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                context.add_init_script("localStorage.setItem('tracescore.annotator', 'bench')")
                page = context.new_page()
                loads, saves = [], []
                started = time.perf_counter()
                page.goto(f"{server.url}/#/review/bench")
                page.wait_for_selector("#review-item .review-target[data-loaded]")
                first_ms = (time.perf_counter() - started) * 1000.0
                key = page.locator("#review-item").get_attribute("data-key")
                for index in range(items):
                    t0 = time.perf_counter()
                    page.keyboard.press("1" if index % 2 else "2")
                    page.wait_for_selector("#review-status.saved")
                    t1 = time.perf_counter()
                    page.keyboard.press("n")
                    page.wait_for_selector(
                        f"#review-done, #review-item:not([data-key='{key}']) "
                        ".review-target[data-loaded]")
                    t2 = time.perf_counter()
                    saves.append((t1 - t0) * 1000.0)
                    loads.append((t2 - t1) * 1000.0)
                    if page.locator("#review-done").count():
                        break
                    key = page.locator("#review-item").get_attribute("data-key")
                total_s = time.perf_counter() - started
                browser.close()
            with server.client() as client:
                done = client.get("/api/queues/bench").json()["done"]
    per_label = [a + b for a, b in zip(loads, saves, strict=True)]

    def show(name: str, values: list[float]) -> str:
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        return (f"  {name:<22} median {statistics.median(values):6.0f} ms, p90 {p90:6.0f} ms, "
                f"max {max(values):6.0f} ms")

    print(f"review page, {items} traces labelled with the keyboard only ({done} labels stored; "
          f"first item drawn {first_ms:.0f} ms after opening the page)")
    print(show("load next item", loads[:-1] or loads))
    print(show("save a label", saves))
    print(show("label, end to end", per_label[:-1] or per_label))
    print(f"  whole queue: {total_s:.1f} s for {len(saves)} labels "
          f"({total_s / max(len(saves), 1) * 1000:.0f} ms a label)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--part", choices=["agreement", "browser", "all"], default="all")
    args = parser.parse_args()
    if args.part in ("agreement", "all"):
        for case in CASES:
            bench_agreement(args.labels, case=case)
    if args.part in ("browser", "all"):
        bench_browser(args.items)


if __name__ == "__main__":
    main()
