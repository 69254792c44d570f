"""The agent's own spend: model_calls rows and traces totals, on the captured fixtures and on
small traces (a reported cost, an unknown model, [pricing] overrides, a late span, an upgrade).

Expected costs are computed here from litellm's local cost map (never hard-coded numbers).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tracescore.live import ConfigError, Pricing, TotalsMaintainer, parse_pricing
from tracescore.live._rows import utc_now
from tracescore.live._totals import yield_pause
from tracescore.store import SCHEMA_VERSION, Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INDEX: dict[str, Any] = json.loads((FIXTURES / "INDEX.json").read_text())
SHARED = sorted(f for f in INDEX if not (FIXTURES / f / "CLIENT.json").exists())
"""The four shared captures: OTel GenAI, OpenInference, the AI SDK, Mastra."""


def fixture_rows(folder: str) -> list[dict[str, Any]]:
    """Span rows of a capture, decoded by the real ingest decoder."""
    from tracescore.ingest import span_dicts_from_otlp

    rows: list[dict[str, Any]] = []
    for path in sorted((FIXTURES / folder).glob("[0-9][0-9][0-9][0-9]-traces.b64")):
        meta = json.loads(path.with_name(path.name.replace(".b64", ".meta.json")).read_text())
        rows.extend(span_dicts_from_otlp(base64.b64decode(path.read_text()),
                                         content_type=meta.get("content_type")
                                         or "application/x-protobuf"))
    return rows


def litellm_rates(model: str) -> tuple[float, float]:
    """(input, output) USD per token of ``model`` in litellm's local cost map."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    entry = litellm.model_cost[model]
    return float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "agent-cost.duckdb", sql_timeout_s=10) as opened:
        yield opened


def maintainer(store: Store, pricing: Pricing | None = None, *, ahead_s: float = 3600,
               started_ago_s: float = 3600) -> TotalsMaintainer:
    """A maintainer whose clock runs ``ahead_s`` ahead (every stored trace is ready) and which
    started ``started_ago_s`` ago (the traces count in its metrics)."""
    shift = timedelta(seconds=ahead_s)
    m = TotalsMaintainer(store, pricing=pricing, batch_size=7, _clock=lambda: utc_now() + shift)
    m._started_at = utc_now() - timedelta(seconds=started_ago_s)
    return m


async def drain(m: TotalsMaintainer) -> int:
    total = 0
    while True:
        done = await m.run_once()
        total += done
        if done == 0:
            return total


BASE_NS = 1_700_000_000_000_000_000


def span(name: str, span_id: str, *, trace_id: str, parent: str | None = None,
         start_ms: float = 0, end_ms: float = 100, attributes: dict[str, Any] | None = None,
         resource: dict[str, Any] | None = None) -> dict[str, Any]:
    start, end = BASE_NS + int(start_ms * 1e6), BASE_NS + int(end_ms * 1e6)
    return {
        "trace_id": trace_id, "span_id": span_id, "parent_span_id": parent,
        "project": "default", "service_name": "svc", "name": name, "kind": "CLIENT",
        "start_time_ns": start, "end_time_ns": end, "duration_ms": (end - start) / 1e6,
        "status_code": "UNSET", "status_message": None, "attributes": attributes or {},
        "resource_attributes": resource or {"service.name": "svc"}, "events": [],
        "links": [], "scope_name": "test", "scope_version": None,
    }


def chat(span_id: str, *, trace_id: str, model: str, tokens: tuple[int, int],
         parent: str | None = None, start_ms: float = 10, **extra: Any) -> dict[str, Any]:
    """A GenAI chat span (one model call) with usage."""
    attrs = {
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai",
        "gen_ai.request.model": model, "gen_ai.usage.input_tokens": tokens[0],
        "gen_ai.usage.output_tokens": tokens[1], **extra,
    }
    return span(f"chat {model}", span_id, trace_id=trace_id, parent=parent, start_ms=start_ms,
                end_ms=start_ms + 50, attributes=attrs)


def agent(span_id: str, *, trace_id: str, name: str = "helper") -> dict[str, Any]:
    return span(f"invoke_agent {name}", span_id, trace_id=trace_id, end_ms=500, attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
        "gen_ai.conversation.id": "conv-7",
    })


# -- the shared fixtures ---------------------------------------------------------------------


@pytest.mark.parametrize("folder", SHARED)
async def test_fixture_calls_carry_the_reported_tokens_and_litellm_cost(
    store: Store, folder: str
) -> None:
    rows = fixture_rows(folder)
    store.write_spans_sync(rows)
    await drain(maintainer(store))

    calls = store.read("SELECT * FROM model_calls ORDER BY started_at")
    from tracescore.traces import Trace

    reported: Counter[tuple[Any, Any]] = Counter()
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_trace.setdefault(row["trace_id"], []).append(row)
    for trace_rows in by_trace.values():
        trace = Trace.from_rows(trace_rows)
        for step in (s for root in trace.steps for s in root.walk() if s.is_model_call):
            usage = step.usage or {}
            reported[(usage.get("input_tokens"), usage.get("output_tokens"))] += 1
    stored = Counter((c["input_tokens"], c["output_tokens"]) for c in calls)
    assert stored == reported
    assert len(calls) >= 4  # turn1 (3 calls) + turn2 (1)

    in_rate, out_rate = litellm_rates("gpt-4o-mini")
    for call in calls:
        assert "gpt-4o-mini" in call["model"]
        assert call["cost_source"] == "litellm"
        assert not call["cached_input_tokens"] and not call["reasoning_tokens"]
        expected = call["input_tokens"] * in_rate + call["output_tokens"] * out_rate
        assert call["cost_usd"] == pytest.approx(expected, rel=1e-9)

    totals = store.read("SELECT * FROM traces WHERE model_call_count > 0")
    assert totals, "every capture has traces with model calls"
    for trace in totals:
        mine = [c for c in calls if c["trace_id"] == trace["trace_id"]]
        assert trace["model_call_count"] == len(mine)
        assert trace["input_tokens"] == sum(c["input_tokens"] for c in mine)
        assert trace["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in mine))
        assert trace["models"] and all("gpt-4o-mini" in m for m in trace["models"])
        assert trace["totals_received_at"] == trace["last_received_at"]
    # turn1: the agent asked for two tools
    assert max(t["tool_call_count"] for t in totals) == 2
    assert any(t["session_id"] for t in totals if t["agent_name"])


async def test_traces_row_exists_before_the_trace_is_ready(store: Store) -> None:
    trace_id = "a" * 32
    store.write_spans_sync([agent("1" * 16, trace_id=trace_id),
                            chat("2" * 16, trace_id=trace_id, parent="1" * 16,
                                 model="gpt-4o-mini", tokens=(100, 10))])
    m = TotalsMaintainer(store, settle_s=3600, max_wait_s=7200)
    assert await m.run_once() == 0  # not settled: nothing computed yet
    row = store.read("SELECT * FROM traces WHERE trace_id = ?", [trace_id])[0]
    assert row["span_count"] == 2 and row["root_span_name"] == "invoke_agent helper"
    assert row["model_call_count"] is None and row["totals_received_at"] is None


# -- cost sources ----------------------------------------------------------------------------


async def test_a_cost_the_span_reports_wins_over_the_computed_one(store: Store) -> None:
    trace_id = "b" * 32
    store.write_spans_sync([
        agent("1" * 16, trace_id=trace_id),
        chat("2" * 16, trace_id=trace_id, parent="1" * 16, model="gpt-4o-mini",
             tokens=(1000, 100), **{"gen_ai.usage.cost": 0.5}),
        chat("3" * 16, trace_id=trace_id, parent="1" * 16, model="gpt-4o-mini",
             tokens=(1000, 100), start_ms=100),
    ])
    await drain(maintainer(store))
    calls = {c["span_id"]: c for c in store.read("SELECT * FROM model_calls")}
    in_rate, out_rate = litellm_rates("gpt-4o-mini")
    assert calls["2" * 16]["cost_source"] == "reported"
    assert calls["2" * 16]["cost_usd"] == 0.5
    assert calls["3" * 16]["cost_source"] == "litellm"
    assert calls["3" * 16]["cost_usd"] == pytest.approx(1000 * in_rate + 100 * out_rate)
    trace = store.read("SELECT * FROM traces WHERE trace_id = ?", [trace_id])[0]
    assert trace["cost_usd"] == pytest.approx(0.5 + 1000 * in_rate + 100 * out_rate)
    assert trace["agent_name"] == "helper" and trace["session_id"] == "conv-7"
    assert calls["2" * 16]["agent_name"] == "helper"


async def test_an_unknown_model_has_no_cost_and_counts_as_unpriced(store: Store) -> None:
    trace_id = "c" * 32
    store.write_spans_sync([chat("4" * 16, trace_id=trace_id, model="acme-llm-9000",
                                 tokens=(50, 5))])
    m = maintainer(store)
    await drain(m)
    call = store.read("SELECT * FROM model_calls")[0]
    assert call["cost_usd"] is None and call["cost_source"] is None
    assert call["input_tokens"] == 50
    trace = store.read("SELECT * FROM traces")[0]
    assert trace["cost_usd"] is None and trace["unpriced_call_count"] == 1
    assert m.stats.unpriced_calls_total[("default", "acme-llm-9000")] == 1
    assert m.stats.tokens_total[("default", "acme-llm-9000", "input")] == 50


async def test_pricing_overrides_add_and_replace_prices(store: Store) -> None:
    pricing = Pricing(parse_pricing({
        "acme-llm-9000": {"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6},
        "gpt-4o-mini": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6,
                        "cache_read_input_token_cost": 1e-7},
    }, source="test.toml"))
    trace_id = "d" * 32
    store.write_spans_sync([
        agent("1" * 16, trace_id=trace_id),
        chat("5" * 16, trace_id=trace_id, parent="1" * 16, model="acme-llm-9000",
             tokens=(50, 5)),
        chat("6" * 16, trace_id=trace_id, parent="1" * 16, model="gpt-4o-mini",
             tokens=(300, 20), start_ms=100,
             **{"gen_ai.usage.cache_read.input_tokens": 200}),
    ])
    await drain(maintainer(store, pricing))
    calls = {c["span_id"]: c for c in store.read("SELECT * FROM model_calls")}
    assert calls["5" * 16]["cost_source"] == "config"
    assert calls["5" * 16]["cost_usd"] == pytest.approx(50 * 2e-6 + 5 * 8e-6)
    assert calls["6" * 16]["cached_input_tokens"] == 200
    assert calls["6" * 16]["cost_usd"] == pytest.approx(100 * 1e-6 + 200 * 1e-7 + 20 * 1e-6)


def test_a_bad_pricing_entry_is_a_sentence_naming_it() -> None:
    with pytest.raises(ConfigError, match=r'\[pricing."m"\].*output_cost_per_token'):
        parse_pricing({"m": {"input_cost_per_token": 1e-6}}, source="x.toml")
    with pytest.raises(ConfigError, match="unknown key input_price"):
        parse_pricing({"m": {"input_price": 1}}, source="x.toml")
    with pytest.raises(ConfigError, match="must be a number"):
        parse_pricing({"m": {"input_cost_per_token": "cheap", "output_cost_per_token": 0}},
                      source="x.toml")


def test_lookup_strips_provider_prefix_and_date() -> None:
    pricing = Pricing()
    plain = pricing.price("gpt-4o-mini")
    assert plain is not None and plain[1] == "litellm"
    assert pricing.price("openai/gpt-4o-mini") == plain
    assert pricing.price("GPT-4o-mini-2099-01-01") == plain
    assert pricing.price("no-such-model-anywhere") is None


# -- late spans and upgrades -----------------------------------------------------------------


async def test_a_late_span_recomputes_the_trace_totals(store: Store) -> None:
    trace_id = "e" * 32
    store.write_spans_sync([agent("1" * 16, trace_id=trace_id),
                            chat("7" * 16, trace_id=trace_id, parent="1" * 16,
                                 model="gpt-4o-mini", tokens=(100, 10))])
    m = maintainer(store)
    assert await drain(m) == 1
    first = store.read("SELECT * FROM traces")[0]
    assert first["model_call_count"] == 1 and first["input_tokens"] == 100

    store.write_spans_sync([chat("8" * 16, trace_id=trace_id, parent="1" * 16,
                                 model="gpt-4o-mini", tokens=(200, 20), start_ms=200)])
    stale = store.read("SELECT last_received_at > totals_received_at AS stale FROM traces")[0]
    assert stale["stale"]
    assert await drain(m) == 1
    after = store.read("SELECT * FROM traces")[0]
    assert after["model_call_count"] == 2 and after["input_tokens"] == 300
    assert after["span_count"] == 3
    assert len(store.read("SELECT * FROM model_calls")) == 2
    # the counters count the replaced call once
    assert m.stats.tokens_total[("default", "gpt-4o-mini", "input")] == 300


async def test_a_resent_span_is_counted_once_after_the_recompute(store: Store) -> None:
    trace_id = "f" * 32
    rows = [agent("1" * 16, trace_id=trace_id),
            chat("9" * 16, trace_id=trace_id, parent="1" * 16, model="gpt-4o-mini",
                 tokens=(10, 1))]
    store.write_spans_sync(rows)
    store.write_spans_sync(rows[1:])  # a client retry
    assert store.read("SELECT span_count FROM traces")[0]["span_count"] == 3
    await drain(maintainer(store))
    assert store.read("SELECT span_count FROM traces")[0]["span_count"] == 2


def _arrived(store: Store, trace_id: str, ago_s: float) -> None:
    """Make a stored trace look as if its spans arrived ``ago_s`` seconds ago."""
    at = utc_now() - timedelta(seconds=ago_s)

    def backdate(conn: Any) -> None:
        conn.execute("UPDATE spans SET received_at = ? WHERE trace_id = ?", [at, trace_id])
        conn.execute("UPDATE traces SET first_received_at = ?, last_received_at = ? "
                     "WHERE trace_id = ?", [at, at, trace_id])

    store.write_sync(backdate)


async def test_a_trace_that_waits_out_max_wait_is_computed_after_the_maintainer_caught_up(
    store: Store,
) -> None:
    # No root span: ready only once max_wait has passed since its first span (200 s ago).
    trace_id = "1a" * 16
    store.write_spans_sync([chat("2" * 16, trace_id=trace_id, parent="f" * 16,
                                 model="gpt-4o-mini", tokens=(5, 1))])
    _arrived(store, trace_id, ago_s=200)
    clock = [utc_now()]
    m = TotalsMaintainer(store, settle_s=10, max_wait_s=300, _clock=lambda: clock[0])
    assert await m.run_once() == 0  # caught up: later queries look back from this pass only
    clock[0] += timedelta(seconds=101)
    assert await m.run_once() == 1
    assert store.read("SELECT model_call_count FROM traces")[0]["model_call_count"] == 1


async def test_a_fresh_maintainer_computes_stale_traces_of_any_age(store: Store) -> None:
    trace_id = "2b" * 16
    store.write_spans_sync([agent("1" * 16, trace_id=trace_id),
                            chat("2" * 16, trace_id=trace_id, parent="1" * 16,
                                 model="gpt-4o-mini", tokens=(5, 1))])
    _arrived(store, trace_id, ago_s=30 * 86400)  # a month old, never computed
    assert await drain(maintainer(store)) == 1


def _downgrade_to_v1(path: Path) -> None:
    """Make the database look like one written before schema version 2 (traces a view, no
    model_calls)."""
    import duckdb

    from tracescore.store._schema import TRACES_VIEW

    conn = duckdb.connect(str(path))
    try:
        conn.execute("DROP TABLE traces")
        conn.execute("DROP TABLE model_calls")
        conn.execute(TRACES_VIEW)
        conn.execute("DELETE FROM schema_version WHERE version > 1")
    finally:
        conn.close()


async def test_the_migration_backfills_an_old_database(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    rows = [r for folder in SHARED for r in fixture_rows(folder)]
    with Store(path) as fresh:
        fresh.write_spans_sync(rows)
        await drain(maintainer(fresh))
        expected = fresh.read("SELECT * EXCLUDE (totals_received_at, first_received_at, "
                              "last_received_at) FROM traces ORDER BY trace_id")
        expected_calls = fresh.read("SELECT * FROM model_calls ORDER BY trace_id, span_id")
    _downgrade_to_v1(path)

    with Store(path) as upgraded:
        assert upgraded.read("SELECT max(version) AS v FROM schema_version")[0]["v"] == (
            SCHEMA_VERSION)  # 2 (traces table, model_calls) and every later migration
        pending = upgraded.read("SELECT count(*) AS n FROM traces WHERE "
                                "totals_received_at IS NULL")[0]["n"]
        assert pending == len(expected)
        assert upgraded.read("SELECT count(*) AS n FROM model_calls")[0]["n"] == 0
        m = maintainer(upgraded, started_ago_s=-3600)  # started after every trace arrived
        assert await drain(m) == len(expected)
        got = upgraded.read("SELECT * EXCLUDE (totals_received_at, first_received_at, "
                            "last_received_at) FROM traces ORDER BY trace_id")
        assert got == expected
        assert upgraded.read("SELECT * FROM model_calls ORDER BY trace_id, span_id") == (
            expected_calls)
        assert not m.stats.tokens_total  # the backfill is not counted as new spend


# -- ingest comes first ----------------------------------------------------------------------


def test_yield_pause_leaves_the_rest_of_the_wall_time() -> None:
    assert yield_pause(2.0, 0.25) == pytest.approx(6.0)  # 2 s of 8: a quarter
    assert yield_pause(2.0, 0.5) == pytest.approx(2.0)
    assert yield_pause(2.0, 1.0) == 0.0
    assert yield_pause(0.0, 0.25) == 0.0


def test_a_busy_share_outside_0_to_1_is_refused(store: Store) -> None:
    for share in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="busy_share"):
            TotalsMaintainer(store, busy_share=share)


def test_the_maintainer_pauses_only_while_ingest_outpaces_it(store: Store) -> None:
    m = TotalsMaintainer(store, busy_share=0.25)
    before = m._spans_received()
    assert m.pause_after(2.0, before, 100) == 0.0  # a quiet server: the backlog drains at once
    store.write_spans_sync([chat(f"{n:016x}", trace_id="3c" * 16, model="gpt-4o-mini",
                                 tokens=(5, 1)) for n in range(3)])
    assert m.pause_after(2.0, before, 3) == 0.0  # it keeps up with the traffic: no pause
    assert m.pause_after(2.0, before, 2) == pytest.approx(6.0)  # 3 arrived, 2 computed
    assert TotalsMaintainer(store, busy_share=1.0).pause_after(2.0, before, 2) == 0.0


async def test_a_backlog_on_a_quiet_server_drains_without_pauses(store: Store) -> None:
    for index in range(5):
        trace_id = f"{index:02x}" * 16
        store.write_spans_sync([agent("1" * 16, trace_id=trace_id),
                                chat("2" * 16, trace_id=trace_id, parent="1" * 16,
                                     model="gpt-4o-mini", tokens=(5, 1))])
        _arrived(store, trace_id, ago_s=3600)
    slept: list[float] = []
    drained = asyncio.Event()

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        drained.set()
        await asyncio.sleep(0)

    m = TotalsMaintainer(store, batch_size=2, interval_s=7.0, _sleep=sleep)
    await m.start()
    await asyncio.wait_for(drained.wait(), timeout=30)
    await m.stop()
    # three passes (2 + 2 + 1 traces); the only wait is the interval after the short one
    assert slept == [7.0]
    assert store.read("SELECT count(*) AS n FROM traces WHERE totals_received_at IS NULL")[0][
        "n"] == 0


async def test_traces_pending_counts_a_backlog_until_a_pass_catches_up(store: Store) -> None:
    for index in range(10):
        trace_id = f"{index + 0x40:02x}" * 16
        store.write_spans_sync([chat("2" * 16, trace_id=trace_id, model="gpt-4o-mini",
                                     tokens=(5, 1))])
    m = maintainer(store)  # batch_size 7
    assert await m.run_once() == 7
    assert m.stats.traces_pending == 3  # a full batch: the rest is counted
    assert await m.run_once() == 3
    assert m.stats.traces_pending == 0
