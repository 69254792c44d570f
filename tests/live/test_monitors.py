"""Monitors (tracescore.live._monitors): a monitor on a dropping scorer breaches, recovers, POSTs
each event to a loopback webhook receiver, and records a POST that failed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tracescore.live import (
    ConfigError,
    LiveScheduler,
    Monitors,
    Registry,
    parse_monitor_entries,
)
from tracescore.scoring import create_scorer

from .conftest import fast_settings


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST; ``/fail`` answers 500."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.posts.append((self.path, json.loads(body)))
                self.send_response(500 if self.path == "/fail" else 200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A running loopback webhook receiver."""
    running = Receiver()
    yield running
    running.close()


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(tzinfo=None)

    def __call__(self) -> datetime:
        return self.now


def add_scores(store: Any, clock: Clock, values: list[float], *, status: str = "success") -> None:
    """Scripted ``scores`` rows of the scorer ``quality``, created just before ``clock.now``."""
    import uuid

    at = clock.now - timedelta(seconds=1)
    store.write_scores_sync([
        {"score_id": str(uuid.uuid4()), "trace_id": uuid.uuid4().hex, "scorer_id": "quality",
         "scorer_version": "v1", "source": "live", "status": status,
         "score": value if status == "success" else None, "project": "default",
         "created_at": at}
        for value in values])


def monitored(store: Any, clock: Clock, *entries: dict[str, Any]) -> LiveScheduler:
    registry = Registry()
    registry.register(create_scorer("quality", "q").generate_score(lambda run, r: 1.0))
    monitors = Monitors(parse_monitor_entries(list(entries), scorer_ids=["quality"],
                                              allow_private_webhooks=True),
                        allow_private_webhooks=True, _retry_base_s=0.01)
    return LiveScheduler(store, registry, fast_settings(), monitors=monitors, _clock=clock)


def events(store: Any) -> list[dict[str, Any]]:
    return store.read("SELECT * FROM monitor_events ORDER BY created_at, monitor_id")


async def test_breach_and_recovery_post_to_the_webhook(store: Any, receiver: Receiver) -> None:
    clock = Clock()
    live = monitored(store, clock, {
        "id": "quality-drop", "scorer": "quality", "aggregate": "avg", "window": "1h",
        "op": "lt", "threshold": 0.5, "min_samples": 5, "evaluate_every": "60s",
        "notify": [receiver.url + "/hook"]})
    add_scores(store, clock, [0.9] * 4)
    await live.tick()
    [status] = live.monitors.status()
    assert (status["state"], status["value"], status["samples"]) == ("ok", None, 4)  # too few

    add_scores(store, clock, [0.9] * 6)
    clock.now += timedelta(seconds=61)
    await live.tick()
    assert live.monitors.status()[0]["value"] == pytest.approx(0.9)
    assert events(store) == []

    add_scores(store, clock, [0.1] * 30)
    await live.tick()
    assert events(store) == []  # evaluated at most once per evaluate_every
    clock.now += timedelta(seconds=61)
    await live.tick()
    await live.monitors.drain()
    [breach] = events(store)
    assert (breach["monitor_id"], breach["state"], breach["samples"]) == (
        "quality-drop", "breached", 40)
    assert breach["value"] == pytest.approx((10 * 0.9 + 30 * 0.1) / 40)
    assert breach["threshold"] == 0.5 and breach["error"] is None
    assert breach["notified_at"] is not None
    assert breach["window_end"] - breach["window_start"] == timedelta(hours=1)
    [(path, payload)] = receiver.posts
    assert path == "/hook"
    assert payload["state"] == "breached" and payload["monitor_id"] == "quality-drop"
    assert "quality-drop breached" in payload["text"] and "0.3" in payload["text"]
    assert live.monitors.status()[0]["state"] == "breached"

    add_scores(store, clock, [1.0] * 60)
    clock.now += timedelta(seconds=61)
    await live.tick()
    await live.monitors.drain()
    assert [e["state"] for e in events(store)] == ["breached", "recovered"]
    assert [p["state"] for _, p in receiver.posts] == ["breached", "recovered"]

    # a restarted scheduler knows the state from the last event (no second recovery)
    again = monitored(store, clock, {
        "id": "quality-drop", "scorer": "quality", "threshold": 0.5, "min_samples": 5})
    await again.tick()
    assert again.monitors.status()[0]["state"] == "ok"
    assert len(events(store)) == 2


async def test_a_failed_post_is_recorded_and_the_loop_goes_on(
        store: Any, receiver: Receiver) -> None:
    clock = Clock()
    live = monitored(store, clock, {
        "id": "failures", "scorer": "quality", "aggregate": "failed_rate", "op": "gt",
        "threshold": 0.2, "min_samples": 3, "notify": [receiver.url + "/fail"]})
    add_scores(store, clock, [1.0] * 3)
    add_scores(store, clock, [0.0] * 2, status="failed")
    await live.tick()
    await live.monitors.drain()
    [event] = events(store)
    assert event["state"] == "breached" and event["value"] == pytest.approx(0.4)
    assert event["notified_at"] is None
    assert event["error"] == "webhook #1 (127.0.0.1): HTTP 500 after 3 attempt(s)"
    assert [p for p, _ in receiver.posts] == ["/fail"] * 3
    assert live.stats.tick_errors == 0
    failed = live.monitors.status()[0]["last_failed_delivery"]
    assert failed["error"] == "webhook #1 (127.0.0.1): HTTP 500 after 3 attempt(s)"
    again = monitored(store, clock, {  # a restart reads the failed delivery back
        "id": "failures", "scorer": "quality", "aggregate": "failed_rate", "op": "gt",
        "threshold": 0.2, "min_samples": 3})
    await again.monitors.restore(again)
    assert again.monitors.status()[0]["last_failed_delivery"] == failed
    from tracescore.cli._monitor_commands import MONITOR_COLUMNS, _row

    row = dict(zip(MONITOR_COLUMNS, _row(again.monitors.status()[0]), strict=True))
    assert row["last_failed_delivery"] == failed["at"] + ": " + failed["error"]


async def test_pass_rate_and_cooldown(store: Any) -> None:
    clock = Clock()
    live = monitored(store, clock, {
        "id": "pass", "scorer": "quality", "aggregate": "pass_rate", "pass_threshold": 0.7,
        "window": "10m", "op": "lt", "threshold": 0.5, "min_samples": 1,
        "evaluate_every": "1s", "cooldown": "30m"})
    add_scores(store, clock, [0.6, 0.8])  # one passes of two: 0.5, not below 0.5
    await live.tick()
    assert live.monitors.status()[0]["value"] == 0.5 and events(store) == []
    add_scores(store, clock, [0.1])
    clock.now += timedelta(seconds=2)
    await live.tick()
    add_scores(store, clock, [0.9] * 5)
    clock.now += timedelta(seconds=2)
    await live.tick()
    add_scores(store, clock, [0.0] * 20)
    clock.now += timedelta(seconds=2)
    await live.tick()  # breached again within the cooldown: no new event
    assert [e["state"] for e in events(store)] == ["breached", "recovered"]


def test_bad_entries_are_sentences() -> None:
    with pytest.raises(ConfigError, match=r"\[\[monitors\]\] entry #1 \(id 'm'\) in the config "
                                          r"file: key 'scorer': no scorer 'nope'"):
        parse_monitor_entries([{"id": "m", "scorer": "nope", "threshold": 1}],
                              scorer_ids=["quality"])
    with pytest.raises(ConfigError, match="key 'window': .*not a duration"):
        parse_monitor_entries([{"id": "m", "scorer": "q", "threshold": 1, "window": "soon"}])
    with pytest.raises(ConfigError, match="key 'agg': unknown key"):
        parse_monitor_entries([{"id": "m", "scorer": "q", "threshold": 1, "agg": "avg"}])
