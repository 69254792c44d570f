"""``PgCoordination`` against a real PostgreSQL: one decision per pair whoever writes first,
disjoint claims under ``SKIP LOCKED``, leases that end, completion fenced on owner and fence
in the score's own transaction, executions kept whoever holds the pair."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest

from tracescore.cluster import PgCoordination, pg_tables
from tracescore.cluster._pg_schema import compressible_columns, compression_statements, ensure

T0 = datetime(2026, 12, 1, 12, 0, 0)  # noqa: DTZ001 - naive UTC, as the tables store
VERSION = ("relevancy", "v1")


@pytest.fixture
def coordination(pg_dsn: str) -> Iterator[tuple[PgCoordination, PgCoordination]]:
    """Two nodes' coordination on one database."""
    with psycopg.connect(pg_dsn) as conn:
        ensure(conn)
    nodes = (PgCoordination(lambda: psycopg.connect(pg_dsn)),
             PgCoordination(lambda: psycopg.connect(pg_dsn)))
    yield nodes
    for node in nodes:
        node.close()


def pending(n: int, *, created: datetime = T0) -> dict[str, Any]:
    return {"trace_id": f"{n:032x}", "span_id": f"{n:016x}", "scorer_id": VERSION[0],
            "scorer_version": VERSION[1], "decision": "pending", "attempts": 0,
            "score_id": f"score-{n}", "created_at": created, "updated_at": created}


def score(n: int, value: float) -> dict[str, Any]:
    return {"score_id": f"score-{n}", "trace_id": f"{n:032x}", "span_id": f"{n:016x}",
            "scorer_id": VERSION[0], "scorer_version": VERSION[1], "status": "success",
            "score": value, "source": "live", "input": {"q": n}, "created_at": T0}


def execution(n: int, suffix: str, cost: float, at: datetime = T0) -> dict[str, Any]:
    return {"execution_id": f"exec-{n}-{suffix}", "score_id": f"score-{n}",
            "trace_id": f"{n:032x}", "scorer_id": VERSION[0], "step": "generate_score",
            "status": "success", "cost_amount": cost, "cost_unit": "USD", "total_tokens": 100,
            "created_at": at}


def rows(pg_dsn: str, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_dsn) as conn:
        return conn.execute(sql, params or []).fetchall()  # type: ignore[arg-type]


def test_the_first_decision_of_a_pair_wins_and_only_its_score_is_written(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    scored = {**pending(2), "decision": "scored", "attempts": 1}
    assert a.record_decisions([pending(1), scored], [score(2, 0.9)]) == {
        (f"{1:032x}", f"{1:016x}", *VERSION), (f"{2:032x}", f"{2:016x}", *VERSION)}
    late = {**pending(2), "decision": "scored", "attempts": 1}
    assert b.record_decisions([late, pending(3)], [score(2, 0.1), score(3, 0.5)]) == {
        (f"{3:032x}", f"{3:016x}", *VERSION)}
    assert rows(pg_dsn, "SELECT score_id, score FROM tracescore.scores ORDER BY 1") == [
        ("score-2", 0.9), ("score-3", 0.5)], "node b's score of pair 2 is dropped"
    assert a.decided([f"{n:032x}" for n in (1, 2, 3, 4)]) == {
        (f"{n:032x}", *VERSION) for n in (1, 2, 3)}


def test_two_nodes_deciding_the_same_traces_at_once_store_each_pair_once(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    won: list[set[Any]] = [set(), set()]

    def decide(index: int, node: PgCoordination) -> None:
        for start in range(0, 200, 20):
            batch = [{**pending(n), "decision": "scored"} for n in range(start, start + 20)]
            won[index] |= node.record_decisions(batch, [score(n, index) for n in
                                                        range(start, start + 20)])

    threads = [threading.Thread(target=decide, args=(i, node))
               for i, node in enumerate(coordination)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won[0] | won[1]) == 200 and not won[0] & won[1]
    assert rows(pg_dsn, "SELECT count(*), count(DISTINCT score_id) FROM tracescore.scores") == [
        (200, 200)]
    # Each stored score is the one of the node whose decision won.
    by_node = rows(pg_dsn, "SELECT score, count(*) FROM tracescore.scores GROUP BY 1 ORDER BY 1")
    assert sum(count for _, count in by_node) == 200
    assert dict(by_node).get(0.0, 0) == len(won[0])


def test_claims_of_two_nodes_are_disjoint_and_skip_locked_rows(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    a.record_decisions([pending(n, created=T0 + timedelta(seconds=n)) for n in range(20)])
    with psycopg.connect(pg_dsn) as holder:  # another node's claim transaction, still open
        holder.execute("SELECT 1 FROM tracescore.scoring_decisions WHERE trace_id = ANY(%s) "
                       "FOR UPDATE", [[f"{n:032x}" for n in range(3)]])
        got_a = a.claim([VERSION], owner="node-a", now=T0 + timedelta(minutes=1), limit=8,
                        lease_s=30)
        got_b = b.claim([VERSION], owner="node-b", now=T0 + timedelta(minutes=1), limit=8,
                        lease_s=30)
    pairs_a = {c.pair for c in got_a}
    pairs_b = {c.pair for c in got_b}
    assert len(pairs_a) == 8 and len(pairs_b) == 8 and not pairs_a & pairs_b
    locked = {(f"{n:032x}", f"{n:016x}", *VERSION) for n in range(3)}
    assert not (pairs_a | pairs_b) & locked, "rows another transaction holds are skipped"
    assert [c.trace_id for c in got_a] == [f"{n:032x}" for n in range(3, 11)], "oldest first"
    assert {c.fence for c in got_a + got_b} == {1}
    rest = a.claim([VERSION], owner="node-a", now=T0 + timedelta(minutes=1), limit=50,
                   lease_s=30)
    assert {c.pair for c in rest} == {(f"{n:032x}", f"{n:016x}", *VERSION)
                                      for n in (0, 1, 2, 19)}, "leased pairs are not claimed"


def test_a_claim_over_versions_takes_the_oldest_due_pairs_of_all_of_them(
        coordination: tuple[PgCoordination, PgCoordination]) -> None:
    a, _ = coordination
    other = ("faithfulness", "v2")

    def at(n: int, seconds: int, version: tuple[str, str] = VERSION,
           retry_at: int | None = None) -> dict[str, Any]:
        row = {**pending(n, created=T0 + timedelta(seconds=seconds)), "scorer_id": version[0],
               "scorer_version": version[1]}
        if retry_at is not None:
            row.update(decision="retrying", attempts=1,
                       next_attempt_at=T0 + timedelta(seconds=retry_at))
        return row

    a.record_decisions([at(1, 1), at(3, 3), at(5, 5), at(10, 0, retry_at=4),
                        at(11, 0, retry_at=100), at(2, 2, other), at(6, 6, other)])
    now = T0 + timedelta(seconds=10)
    first = a.claim([VERSION, other], owner="node-a", now=now, limit=4, lease_s=300)
    assert [int(c.trace_id, 16) for c in first] == [1, 2, 3, 10], (
        "due order across both versions: a retry is due at its retry time")
    rest = a.claim([VERSION, other], owner="node-a", now=now, limit=10, lease_s=300)
    assert [int(c.trace_id, 16) for c in rest] == [5, 6], "the retry due later waits"
    [late] = a.claim([VERSION, other], owner="node-a", now=T0 + timedelta(seconds=100),
                     limit=10, lease_s=30)
    assert int(late.trace_id, 16) == 11


def test_a_lost_lease_fences_the_old_owners_completion_but_keeps_its_spend(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    a.record_decisions([pending(1)])
    [old] = a.claim([VERSION], owner="node-a", now=T0, limit=1, lease_s=30)
    a.record_executions([execution(1, "a1", 0.01, T0 + timedelta(seconds=5))])
    assert b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=20), limit=1,
                   lease_s=30) == [], "the lease still runs"
    [new] = b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=31), limit=1,
                    lease_s=30)
    assert new.fence == old.fence + 1
    assert a.renew([old], now=T0 + timedelta(seconds=32), lease_s=30) == []
    done = {"decision": "scored", "attempts": 1, "score_id": "score-1"}
    assert a.complete(old, decision=done, scores=[score(1, 0.2)],
                      executions=[execution(1, "a2", 0.02)]) is False
    assert rows(pg_dsn, "SELECT count(*) FROM tracescore.scores") == [(0,)]
    assert b.complete(new, decision=done, scores=[score(1, 0.8)],
                      executions=[execution(1, "b1", 0.03)]) is True
    assert rows(pg_dsn, "SELECT score FROM tracescore.scores") == [(0.8,)]
    assert rows(pg_dsn, "SELECT decision, attempts, owner, lease_until FROM "
                        "tracescore.scoring_decisions") == [("scored", 1, None, None)]
    assert sorted(r[0] for r in rows(pg_dsn, "SELECT execution_id FROM "
                                             "tracescore.judge_executions")) == [
        "exec-1-a1", "exec-1-a2", "exec-1-b1"], "paid-for executions are kept, fenced or not"
    assert b.claim([VERSION], owner="node-b", now=T0 + timedelta(hours=1), limit=5,
                   lease_s=30) == [], "a scored pair is not open"


def test_completions_in_one_statement_are_each_fenced_on_their_own_claim(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    a.record_decisions([pending(1), pending(2), pending(3)])
    claims = a.claim([VERSION], owner="node-a", now=T0, limit=3, lease_s=30)
    lost = next(c for c in claims if c.trace_id == f"{2:032x}")
    [taken] = b.claim_pairs([lost.pair], owner="node-b", now=T0 + timedelta(seconds=31),
                            lease_s=30)
    ends = [(claim, {"decision": "scored", "attempts": 1, "score_id": f"score-{n}"},
             [score(n, 0.5)]) for claim in claims for n in [int(claim.trace_id, 16)]]
    held = a.complete_many(ends, executions=[execution(n, "a", 0.01) for n in (1, 2, 3)])
    assert sorted(int(ends[i][0].trace_id, 16) for i in held) == [1, 3]
    assert sorted(r[0] for r in rows(pg_dsn, "SELECT score_id FROM tracescore.scores")) == [
        "score-1", "score-3"], "no score for the pair node-b took over"
    assert rows(pg_dsn, "SELECT count(*) FROM tracescore.judge_executions") == [(3,)]
    assert rows(pg_dsn, "SELECT decision, owner FROM tracescore.scoring_decisions WHERE "
                        "trace_id = %s", [taken.trace_id]) == [("pending", "node-b")]


def test_renew_release_and_retrying_pairs(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    a.record_decisions([pending(1), pending(2)])
    claims = a.claim([VERSION], owner="node-a", now=T0, limit=2, lease_s=10)
    renewed = a.renew(claims, now=T0 + timedelta(seconds=8), lease_s=10)
    assert [c.lease_until for c in renewed] == [T0 + timedelta(seconds=18)] * 2
    assert b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=12), limit=5,
                   lease_s=10) == []
    first, second = renewed
    a.release([first])
    [taken] = b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=12), limit=5,
                      lease_s=10)
    assert taken.pair == first.pair and taken.fence == 2
    retry_at = T0 + timedelta(seconds=60)
    assert a.complete(second, decision={"decision": "retrying", "attempts": 1,
                                        "last_error": "timeout", "next_attempt_at": retry_at,
                                        "score_id": "score-2"})
    early = b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=30), limit=5,
                    lease_s=100)
    assert [c.pair for c in early] == [first.pair], "pair 2 waits for its next attempt"
    [again] = b.claim([VERSION], owner="node-b", now=retry_at, limit=5, lease_s=10)
    assert (again.pair, again.decision, again.attempts) == (second.pair, "retrying", 1)


def test_spend_sums_every_nodes_executions_over_the_windows(
        coordination: tuple[PgCoordination, PgCoordination]) -> None:
    a, b = coordination
    a.record_executions([execution(1, "x", 0.5, T0 - timedelta(minutes=10))])
    b.record_executions([execution(2, "y", 0.25, T0 - timedelta(hours=3)),
                         execution(3, "z", 4.0, T0 - timedelta(days=2))])
    b.record_executions([execution(1, "x", 9.0, T0)])  # the same id again: left as it is
    spend = a.spend(T0)
    assert (spend.cost_usd_hour, spend.cost_usd_day, spend.tokens_hour) == (0.5, 0.75, 100)


def test_the_schema_follows_the_local_tables(pg_dsn: str) -> None:
    from tracescore.store import TABLES

    with psycopg.connect(pg_dsn) as conn:
        ensure(conn)
        ensure(conn)  # twice: nothing changes, nothing fails
        found = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'tracescore'").fetchall()
    columns: dict[str, set[str]] = {}
    for table, column in found:
        columns.setdefault(table, set()).add(column)
    for name, table in pg_tables().items():
        assert set(table.column_names) == columns[name], name
    for name in ("scores", "judge_executions", "scoring_decisions", "monitor_events",
                 "datasets", "dataset_items", "experiments", "experiment_results"):
        assert {c for c, _ in TABLES[name]} <= columns[name], name
    assert {"spans", "logs", "model_calls", "cluster_flushes"}.isdisjoint(columns)
    assert {"nodes", "updated_at"} <= columns["traces"]
    assert {"owner", "lease_until", "fence"} <= columns["scoring_decisions"]


def test_pairs_handed_to_a_node_are_claimed_unless_held_or_decided(
        coordination: tuple[PgCoordination, PgCoordination]) -> None:
    a, b = coordination
    a.record_decisions([pending(1), pending(2), {**pending(3), "decision": "scored"},
                        {**pending(4), "next_attempt_at": T0 + timedelta(hours=1)}])
    [held] = b.claim([VERSION], owner="node-b", now=T0, limit=1, lease_s=30)
    pairs = [(f"{n:032x}", f"{n:016x}", *VERSION) for n in (1, 2, 3, 4)]
    got = a.claim_pairs(pairs, owner="node-a", now=T0, lease_s=30)
    assert {c.pair for c in got} == set(pairs) - {held.pair} - {pairs[2]}, (
        "not the pair node-b holds nor the decided one; a pair not yet due is taken")


def test_over_budget_marks_only_due_pairs_nobody_holds(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, _ = coordination
    a.record_decisions([pending(1), pending(2),
                        {**pending(3), "next_attempt_at": T0 + timedelta(hours=1)}])
    [held] = a.claim([VERSION], owner="node-a", now=T0, limit=1, lease_s=30)
    a.mark_over_budget([VERSION], reason="over budget: cap", now=T0)
    found = dict(rows(pg_dsn, "SELECT trace_id, decision FROM tracescore.scoring_decisions"))
    other = ({f"{1:032x}", f"{2:032x}"} - {held.trace_id}).pop()
    assert found == {held.trace_id: "pending", other: "over_budget", f"{3:032x}": "pending"}, (
        "the held pair and the pair not yet due stay pending")


def test_executions_version_starts_and_open_stats(
        coordination: tuple[PgCoordination, PgCoordination]) -> None:
    a, b = coordination
    a.record_decisions([pending(1, created=T0), pending(2, created=T0 + timedelta(minutes=5)),
                        {**pending(3, created=T0 - timedelta(days=1)), "decision": "scored"}])
    b.record_executions([execution(1, "x", 0.5, T0), {**execution(1, "y", 0.25, T0),
                                                      "status": "failed", "error_code": "503"}])
    found = {r["execution_id"]: r for r in a.executions("score-1")}
    assert set(found) == {"exec-1-x", "exec-1-y"}
    assert found["exec-1-y"]["status"] == "failed" and found["exec-1-x"]["cost_amount"] == 0.5
    assert a.version_starts() == {VERSION: T0 - timedelta(days=1)}
    assert a.open_stats([VERSION]) == (2, T0)
    assert a.open_stats([("other", "v1")]) == (0, None)


def test_one_node_at_a_time_leads_a_role_until_it_stops(
        coordination: tuple[PgCoordination, PgCoordination], pg_dsn: str) -> None:
    a, b = coordination
    assert a.lead("monitors") is True
    assert a.lead("monitors") is True, "the leader keeps it"
    assert b.lead("monitors") is False
    opened: list[Any] = []

    def connect() -> Any:
        opened.append(psycopg.connect(pg_dsn))
        return opened[-1]

    c = PgCoordination(connect)
    try:
        for _ in range(5):
            assert c.lead("monitors") is False
        assert len(opened) == 1, "a node that is not the leader asks again on the session " \
            "it kept, not on a new one each tick"
    finally:
        c.close()
    assert b.lead("something-else") is True
    a.close()
    # The leader's session ends a moment after its client closed it: b asks at each tick.
    deadline = time.monotonic() + 30
    while not b.lead("monitors") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert b.lead("monitors") is True, "the role is free once its leader stopped"


def test_the_owner_of_a_split_trace_is_one_node_every_node_agrees_on() -> None:
    from tracescore.cluster import owner

    ids = [f"{n:032x}" for n in range(2000)]
    two = [owner(t, ["node-1", "node-2"]) for t in ids]
    assert two == [owner(t, ["node-2", "node-1"]) for t in ids], "order does not matter"
    assert 800 < two.count("node-1") < 1200, "spread over the nodes"
    three = [owner(t, ["node-1", "node-2", "node-3"]) for t in ids]
    moved = [t for t, x, y in zip(ids, two, three, strict=True) if x != y]
    assert all(owner(t, ["node-1", "node-2", "node-3"]) == "node-3" for t in moved), (
        "a node added only takes traces it wins")


def test_a_node_takes_another_nodes_pairs_only_once_they_waited(
        coordination: tuple[PgCoordination, PgCoordination]) -> None:
    a, b = coordination
    a.record_decisions([{**pending(1), "home": "node-a"}, {**pending(2), "home": "node-b"},
                        pending(3)])
    got = b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=5), limit=5,
                  lease_s=30, steal_after_s=30)
    assert {c.trace_id for c in got} == {f"{2:032x}", f"{3:032x}"}, (
        "its own pairs and pairs of no node; node-a's pair waits for node-a")
    [late] = b.claim([VERSION], owner="node-b", now=T0 + timedelta(seconds=31), limit=5,
                     lease_s=30, steal_after_s=30)
    assert late.trace_id == f"{1:032x}", "after waiting, any node takes it (node-a is behind)"


def test_a_node_starting_on_a_current_schema_waits_on_no_running_transaction(
        pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        ensure(conn)
    with psycopg.connect(pg_dsn) as busy:  # a node's scoring transaction, still open
        busy.execute("INSERT INTO tracescore.scores (score_id) VALUES ('open')")
        with psycopg.connect(pg_dsn) as conn:
            conn.execute("SET lock_timeout = '2s'")  # an ALTER TABLE would wait and fail
            ensure(conn)


def test_the_decision_indexes_of_an_earlier_schema_are_replaced(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        ensure(conn)
        conn.execute("DROP INDEX tracescore.decisions_due")
        conn.execute("CREATE INDEX decisions_open ON tracescore.scoring_decisions "
                     "(scorer_id, scorer_version, next_attempt_at) "
                     "WHERE decision IN ('pending', 'retrying', 'over_budget')")
        conn.execute("CREATE INDEX decisions_trace ON tracescore.scoring_decisions (trace_id)")
        conn.commit()
        ensure(conn)
        found = {row[0] for row in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'tracescore' "
            "AND tablename = 'scoring_decisions'").fetchall()}
        plan = "\n".join(row[0] for row in conn.execute(
            "EXPLAIN SELECT DISTINCT trace_id, scorer_id, scorer_version "
            "FROM tracescore.scoring_decisions WHERE trace_id = ANY(%s)",
            [["a" * 32, "b" * 32]]).fetchall())
    assert found == {"scoring_decisions_pkey", "decisions_due", "decisions_unmarked"}
    assert "scoring_decisions_pkey" in plan, "a trace's decisions are read by the key's index"


def test_long_values_are_compressed_with_lz4_and_a_current_schema_is_left_alone(
        pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        if not conn.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                            "WHERE name = 'default_toast_compression'").fetchone()[0]:
            pytest.skip("this PostgreSQL was built without lz4")
        ensure(conn)
        conn.execute("ALTER TABLE tracescore.scores ALTER COLUMN reason SET COMPRESSION pglz")
        conn.commit()
        found = compressible_columns(conn.cursor())
        assert compression_statements(found) == [
            "ALTER TABLE tracescore.scores ALTER COLUMN reason SET COMPRESSION lz4"]
        ensure(conn)
        found = compressible_columns(conn.cursor())
    by_column = {(table, column): how for table, column, how in found}
    assert set(by_column.values()) == {"l"}, "every long column lz4, the one set back too"
    assert {("scores", "input"), ("judge_executions", "prompt"),
            ("scoring_decisions", "last_error")} <= set(by_column)
    assert ("scores", "score") not in by_column, "fixed-width columns are not compressed"
    assert compression_statements(found) == []
