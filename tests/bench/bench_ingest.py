"""Ingest benchmark: OTLP/HTTP protobuf into a real ``tracescore serve``, acknowledged after commit.

Run: ``.venv/bin/python tests/bench/bench_ingest.py [--seconds 20] [--clients 4] [--inflight 4]``

Separate load-generator processes (``--clients``), each running ``--inflight`` concurrent
exporters, send realistic export requests (512 spans of about 1.2 KB with GenAI attributes, 16
traces per request, fresh ids every request) back to back over keep-alive connections; each
exporter waits for its answer before sending again, as an OTLP exporter does. The script prints
the sustained spans/s the server acknowledged (overall, before the first traces settle and
after, when the totals maintainer works alongside), p50/p99 request latency, the server's peak
RSS and CPU per span, the same work done in one process without HTTP (``in_process``: decode →
Arrow → DuckDB group commit, with the time split between them: the ceiling), and what the
totals maintainer computes alone over those traces (``totals_rate``). Nothing is asserted.
``--totals-busy-share S`` runs the server with ``[live] totals_busy_share = S`` (1: the
maintainer never yields to ingest), for an A/B of that policy; ``--skip-in-process`` stops after
the HTTP part.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

SPANS_PER_REQUEST = 512
TRACES_PER_REQUEST = 16


def build_body(seed: int) -> tuple[bytes, list[bytes]]:
    """A serialized ExportTraceServiceRequest and the placeholder trace ids inside it."""
    import random

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    rng = random.Random(seed)
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    for key, value in (("service.name", "bench-agent"), ("service.version", "1.4.2"),
                       ("telemetry.sdk.language", "python"), ("deployment.environment", "prod")):
        attr = resource_spans.resource.attributes.add()
        attr.key, attr.value.string_value = key, value
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "opentelemetry.instrumentation.openai"
    scope_spans.scope.version = "2.4"
    placeholders = [bytes([0xAB, index]) + rng.randbytes(14) for index in range(TRACES_PER_REQUEST)]
    per_trace = SPANS_PER_REQUEST // TRACES_PER_REQUEST
    start = 1_790_000_000_000_000_000
    for trace_index, trace_id in enumerate(placeholders):
        root = rng.randbytes(8)
        for index in range(per_trace):
            span = scope_spans.spans.add()
            span.trace_id = trace_id
            span.span_id = root if index == 0 else rng.randbytes(8)
            if index:
                span.parent_span_id = root
            kind = "invoke_agent" if index == 0 else ("chat" if index % 2 else "execute_tool")
            span.name = f"{kind} weather-agent" if index == 0 else f"{kind} gpt-4o-mini"
            span.kind = 1 if index == 0 else 3
            span.start_time_unix_nano = start + trace_index * 10**9 + index * 10**6
            span.end_time_unix_nano = span.start_time_unix_nano + 250_000_000
            attributes: list[tuple[str, Any]] = [
                ("gen_ai.operation.name", kind),
                ("gen_ai.system", "openai"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("gen_ai.response.model", "gpt-4o-mini-2024-07-18"),
                ("gen_ai.response.id", f"chatcmpl-{rng.randbytes(12).hex()}"),
                ("gen_ai.usage.input_tokens", rng.randint(100, 4000)),
                ("gen_ai.usage.output_tokens", rng.randint(10, 800)),
                ("gen_ai.request.temperature", 0.2),
                ("gen_ai.input.messages",
                 '[{"role":"user","parts":[{"type":"text","content":"What is the weather in '
                 + "Paris " * 45 + '?"}]}]'),
                ("gen_ai.output.messages",
                 '[{"role":"assistant","parts":[{"type":"text","content":"'
                 + "It is cloudy. " * 20 + '"}],"finish_reason":"stop"}]'),
            ]
            for key, value in attributes:
                attr = span.attributes.add()
                attr.key = key
                if isinstance(value, str):
                    attr.value.string_value = value
                elif isinstance(value, int):
                    attr.value.int_value = value
                else:
                    attr.value.double_value = value
    return request.SerializeToString(), placeholders


def _offsets(body: bytes, placeholders: list[bytes]) -> list[list[int]]:
    offsets = []
    for placeholder in placeholders:
        found, start = [], body.find(placeholder)
        while start >= 0:
            found.append(start)
            start = body.find(placeholder, start + 1)
        offsets.append(found)
    return offsets


_OFFSETS: dict[int, list[list[int]]] = {}


def fresh(body: bytes, placeholders: list[bytes]) -> bytes:
    """The body with new random trace ids (so every request stores new spans); cheap, so the
    load generators leave the CPU to the server."""
    offsets = _OFFSETS.get(id(body))
    if offsets is None:
        offsets = _OFFSETS[id(body)] = _offsets(body, placeholders)
    out = bytearray(body)
    for found in offsets:
        new_id = os.urandom(16)
        for start in found:
            out[start : start + 16] = new_id
    return bytes(out)


def client(
    url: str, seconds: float, seed: int, inflight: int, results: Any, start_at: float
) -> None:
    """One load-generator process: ``inflight`` exporters posting back to back until the
    deadline (each waits for its answer, like an OTLP exporter); report latencies."""
    import asyncio

    import httpx

    body, placeholders = build_body(seed)
    latencies: list[float] = []
    counts = {"acknowledged": 0, "refused": 0}

    async def exporter(http: httpx.AsyncClient, deadline: float) -> None:
        while time.time() < deadline:
            payload = fresh(body, placeholders)
            began = time.perf_counter()
            response = await http.post(f"{url}/v1/traces", content=payload,
                                       headers={"content-type": "application/x-protobuf"})
            elapsed = time.perf_counter() - began
            if response.status_code == 200:
                counts["acknowledged"] += SPANS_PER_REQUEST
                latencies.append(elapsed)
            else:
                counts["refused"] += 1
                await asyncio.sleep(float(response.headers.get("retry-after", "0.2")))

    async def run() -> None:
        limits = httpx.Limits(max_connections=inflight)
        async with httpx.AsyncClient(timeout=120, limits=limits) as http:
            while time.time() < start_at:
                await asyncio.sleep(0.01)
            deadline = time.time() + seconds
            await asyncio.gather(*(exporter(http, deadline) for _ in range(inflight)))

    asyncio.run(run())
    results.put((counts["acknowledged"], counts["refused"], latencies))


def _tree(pid: int) -> list[Any]:
    import psutil

    process = psutil.Process(pid)
    return [process, *process.children(recursive=True)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, its threads and its children (decode workers)."""
    import psutil

    total = 0.0
    for process in _tree(pid):
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def main_thread_seconds(pid: int) -> float:
    """CPU time of the server's main thread (the event loop: HTTP handling and the decoding
    of small bodies; larger ones decode in threads)."""
    import psutil

    for thread in psutil.Process(pid).threads():
        if thread.id == pid:
            return float(thread.user_time + thread.system_time)
    return 0.0


def watch_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """Sample the server's RSS until ``stop``."""
    import psutil

    while not stop.is_set():
        try:
            peak[0] = max(peak[0], sum(p.memory_info().rss for p in _tree(pid)))
        except psutil.Error:
            pass
        time.sleep(0.1)


def sample_inserted(url: str, stop: threading.Event, samples: list[tuple[float, int]]) -> None:
    """Append (monotonic time, the writer's inserted spans) from ``/healthz`` every 0.5 s."""
    import httpx

    with httpx.Client(timeout=10) as http:
        while not stop.is_set():
            writer = http.get(f"{url}/healthz").json()["writer"]
            samples.append((time.monotonic(), int(writer["spans_inserted"])))
            stop.wait(0.5)


def rate_between(samples: list[tuple[float, int]], start_s: float, end_s: float) -> float:
    """Inserted spans/s between ``start_s`` and ``end_s`` after the first sample (0: too few)."""
    if not samples:
        return 0.0
    origin = samples[0][0]
    inside = [(t - origin, n) for t, n in samples if start_s <= t - origin <= end_s]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return 0.0
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def bench_http(
    seconds: float, clients: int, inflight: int, decode_workers: int, duckdb_memory: str,
    totals_busy_share: float | None = None,
) -> None:
    """Start a server, drive it from ``clients`` processes for ``seconds``, print figures."""
    from server_process import start_server

    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    config = work / "bench.toml"
    live = "" if totals_busy_share is None else f"[live]\ntotals_busy_share = {totals_busy_share}\n"
    config.write_text(
        f"[server]\nmax_body_bytes = 67108864\ndecode_workers = {decode_workers}\n"
        f'duckdb_memory_limit = "{duckdb_memory}"\n{live}'
    )
    server = start_server(work / "bench.duckdb", args=["--config", str(config), "--no-grpc"])
    assert server.process is not None
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=watch_rss, args=(server.process.pid, stop, peak))
    watcher.start()
    context = mp.get_context("spawn")
    results = context.Queue()
    start_at = time.time() + 3.0  # let every process build its bodies first
    processes = [
        context.Process(
            target=client, args=(server.url, seconds, seed, inflight, results, start_at)
        )
        for seed in range(clients)
    ]
    for process in processes:
        process.start()
    while time.time() < start_at:
        time.sleep(0.01)
    cpu_before = cpu_seconds(server.process.pid)
    loop_before = main_thread_seconds(server.process.pid)
    samples: list[tuple[float, int]] = []
    sampler = threading.Thread(target=sample_inserted, args=(server.url, stop, samples))
    sampler.start()
    collected = [results.get() for _ in processes]
    server_cpu = cpu_seconds(server.process.pid) - cpu_before
    loop_cpu = main_thread_seconds(server.process.pid) - loop_before
    for process in processes:
        process.join()
    stop.set()
    watcher.join()
    sampler.join()
    import httpx

    stored = httpx.post(f"{server.url}/api/sql",
                        json={"sql": "SELECT count(*) FROM spans"}).json()["rows"][0][0]
    health = httpx.get(f"{server.url}/healthz").json()
    server.stop()
    shutil.rmtree(work, ignore_errors=True)  # the run's database (hundreds of MB)
    acknowledged = sum(item[0] for item in collected)
    refused = sum(item[1] for item in collected)
    latencies = sorted(lat for item in collected for lat in item[2])
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    print(f"HTTP/protobuf, {clients} client processes x {inflight} concurrent exporters, "
          f"{decode_workers} decode workers, {seconds:g} s, "
          f"{SPANS_PER_REQUEST} spans (~{len(build_body(0)[0]) // SPANS_PER_REQUEST} B each) "
          "per request, ack after commit:")
    print(f"  sustained            {acknowledged / seconds:>10,.0f} spans/s "
          f"({acknowledged:,} acknowledged, {stored:,} stored, {refused} requests refused 503)")
    if latencies:
        p50 = statistics.median(latencies)
        print(f"  request latency      p50 {p50 * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms   "
              f"p99/p50 {p99 / p50:.2f}×   ({len(latencies)} requests)")
    from tracescore.live import LiveSettings

    settle = LiveSettings().settle_seconds  # the first traces become ready this long after the
    # start; from then on the totals maintainer works alongside ingest
    early, late = rate_between(samples, 0, settle), rate_between(samples, settle + 1, seconds)
    if early and late:
        print(f"    first {settle:g} s        {early:>10,.0f} spans/s (no trace has settled yet)")
        print(f"    after that         {late:>10,.0f} spans/s (the totals maintainer computes "
              "the settled traces' model calls and totals meanwhile)")
    print(f"  server peak RSS      {peak[0] / 2**20:>10,.0f} MB (with its decode workers)")
    if acknowledged:
        print(f"  server CPU           {server_cpu / acknowledged * 1e6:>10.1f} µs per span "
              f"(all threads and workers; {server_cpu / seconds:.2f} cores busy on average)")
        print(f"    of which           {loop_cpu / acknowledged * 1e6:>10.1f} µs in the event loop "
              "thread (HTTP, small bodies' decode); the rest is decode threads (bodies of "
              "128 KiB or more: decode + Arrow), the writer (DuckDB) and workers")
    print(f"  group commits        {health['writer']['commits']:>10,} "
          f"(~{acknowledged / max(1, health['writer']['commits']):,.0f} spans each)")


def in_process(
    db: Path, seconds: float, *, inflight: int = 8, reference: bool = False
) -> dict[str, float]:
    """Decode + store write of ``bench_ingest``'s 512-span bodies in this process, no HTTP.

    The main thread decodes (fresh trace ids every body) straight to the Arrow table with the
    columnar decoder, as the server's decode thread does for such a body (``reference``: the
    reference decoder, then ``arrow_span_table``, the path before the columnar decoder, timed
    as decode + Arrow build) and submits, keeping ``inflight`` batches
    waiting for their commit, as concurrent requests do; each batch is acknowledged after its
    commit. ``db`` may hold a background database (``bench_scale``). Prints and returns
    spans/s and where the time went, in µs per span: decode and Arrow build (main thread,
    wall), and the writer thread's concatenation, INSERT, ``traces`` maintenance, COMMIT and
    checkpoints.
    """
    import dataclasses

    from tracescore.ingest import decode_spans_arrow, decode_traces_protobuf
    from tracescore.store import Store, arrow_span_table

    body, placeholders = build_body(99)
    decode_s = arrow_s = 0.0
    sent = 0
    with Store(db, max_pending_rows=10**7) as store:
        before = dataclasses.replace(store.stats())
        futures: collections.deque[Any] = collections.deque()
        began = time.perf_counter()
        cpu_began = time.process_time()
        while time.perf_counter() - began < seconds:
            payload = fresh(body, placeholders)
            t0 = time.perf_counter()
            if reference:
                batch = decode_traces_protobuf(payload)
                t1 = time.perf_counter()
                table = arrow_span_table(batch)
            else:  # as the server's decode thread does for a large body (columnar decoder)
                table = decode_spans_arrow(payload, "protobuf", None).arrow_table
                t1 = time.perf_counter()
            decode_s += t1 - t0
            arrow_s += time.perf_counter() - t1
            futures.append(store.submit_spans(table))
            sent += SPANS_PER_REQUEST
            while len(futures) > inflight:
                futures.popleft().result()
        for future in futures:
            future.result()
        elapsed = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        after = store.stats()
        stored = store.read("SELECT count(*) AS n FROM spans")[0]["n"]

    def per_span(name: str) -> float:
        return (getattr(after, name) - getattr(before, name)) * 1000 / sent

    figures = {
        "spans_per_s": sent / elapsed,
        "decode_us": decode_s * 1e6 / sent,
        "arrow_us": arrow_s * 1e6 / sent,
        "concat_us": per_span("arrow_ms"),
        "insert_us": per_span("insert_ms"),
        "traces_us": per_span("traces_ms"),
        "commit_us": per_span("commit_ms"),
        "checkpoint_us": per_span("checkpoint_ms"),
        "cpu_us": cpu * 1e6 / sent,
        "commits": float(after.commits - before.commits),
        "checkpoints": float(after.checkpoints - before.checkpoints),
        "max_checkpoint_ms": after.max_checkpoint_ms,
    }
    writer_us = sum(figures[name] for name in
                    ("concat_us", "insert_us", "traces_us", "commit_us", "checkpoint_us"))
    decoder = "reference decoder" if reference else "columnar decoder"
    print(f"In process (no HTTP), {SPANS_PER_REQUEST}-span bodies, {decoder}, {inflight} in "
          f"flight, {seconds:g} s:")
    print(f"  decode+insert        {figures['spans_per_s']:>10,.0f} spans/s "
          f"({sent:,} acknowledged after commit, {stored:,} stored; "
          f"{figures['cpu_us']:.1f} µs CPU per span, both threads)")
    print(f"  main thread          decode {figures['decode_us']:.1f} + Arrow build "
          f"{figures['arrow_us']:.1f} µs/span (wall)")
    print(f"  writer thread        concat {figures['concat_us']:.1f} + INSERT "
          f"{figures['insert_us']:.1f} + traces {figures['traces_us']:.1f} + COMMIT "
          f"{figures['commit_us']:.1f} + checkpoints {figures['checkpoint_us']:.1f} = "
          f"{writer_us:.1f} µs/span (wall); {figures['commits']:.0f} commits, "
          f"{figures['checkpoints']:.0f} checkpoints (longest "
          f"{figures['max_checkpoint_ms']:.0f} ms)")
    return figures


def totals_rate(db: Path, batches: int = 20) -> float:
    """Traces/s the totals maintainer computes (alone, in this process) over ``batches`` full
    batches of the traces ``in_process`` stored in ``db`` (32-span traces); prints it."""
    import asyncio

    from tracescore.live import TotalsMaintainer
    from tracescore.server import tune_gc
    from tracescore.store import Store

    tune_gc()  # as in the server
    with Store(db) as store:
        maintainer = TotalsMaintainer(store, settle_s=0, max_wait_s=0)

        async def run() -> int:
            done = 0
            for _ in range(batches):
                computed = await maintainer.run_once()
                done += computed
                if computed < maintainer.batch_size:
                    break
            return done

        started = time.perf_counter()
        done = asyncio.run(run())
        elapsed = time.perf_counter() - started
    per_trace = SPANS_PER_REQUEST // TRACES_PER_REQUEST
    print(f"Totals maintainer alone (model calls and totals of the traces stored above, "
          f"{per_trace} spans each): {done:,} traces in {elapsed:.2f} s = {done / elapsed:,.0f} "
          f"traces/s ({elapsed / max(1, done * per_trace) * 1e6:.1f} µs per span)")
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--inflight", type=int, default=4,
                        help="concurrent exporters (requests in flight) per client process")
    parser.add_argument("--decode-workers", type=int, default=0)
    parser.add_argument("--duckdb-memory", default="256MB", help="the server's duckdb_memory_limit")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-in-process", action="store_true")
    parser.add_argument("--totals-busy-share", type=float, default=None,
                        help="the server's [live] totals_busy_share (default: the server's)")
    parser.add_argument("--compare-decoders", type=int, default=0, metavar="ROUNDS",
                        help="also run in_process with the reference decoder, interleaved with "
                             "the columnar one for ROUNDS rounds, and print the medians' ratio")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if not args.skip_http:
        bench_http(args.seconds, args.clients, args.inflight, args.decode_workers,
                   args.duckdb_memory, args.totals_busy_share)
    if args.skip_in_process:
        return
    work = Path(tempfile.mkdtemp(prefix="bench-in-process-"))
    try:
        run_in_process(work, min(args.seconds, 10.0), args.compare_decoders)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_in_process(work: Path, seconds: float, compare_decoders: int) -> None:
    """The in-process part of ``main`` (its databases in ``work``)."""
    if not compare_decoders:
        in_process(work / "in-process.duckdb", seconds)
        totals_rate(work / "in-process.duckdb")
        return
    rates: dict[bool, list[float]] = {True: [], False: []}
    for round_index in range(compare_decoders):
        for reference in (True, False):
            db = work / f"in-process-{round_index}-{int(reference)}.duckdb"
            rates[reference].append(in_process(db, seconds, reference=reference)["spans_per_s"])
    columnar, old = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"in process, medians of {compare_decoders} interleaved rounds: columnar "
          f"{columnar:,.0f} spans/s, reference {old:,.0f} spans/s ({columnar / old:.2f}x); "
          f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
