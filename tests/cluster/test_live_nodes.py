"""Live scoring on a cluster: real ``tracescore serve`` nodes on one PostgreSQL and one lake, fed
through the ``TraceRouter`` by the OpenTelemetry SDK, scoring with a code scorer and a judge
(the scripted OpenAI-compatible server of this process, slower than a lease, so every judge
call outlives its first lease and must be renewed). Each pair is decided and scored once
across the nodes: when every request is duplicated to a second node, when a node joins, and
when a node holding leases is killed with -9 (another node scores its pairs once the leases
end; the judge is called at most once more per pair it held)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from server_process import ServerProcess, sql, start_server

from tracescore.live import send_agent_traces
from tracescore.testing import PostgresServer, Reply, ScriptedLLMServer, TraceRouter

from .test_nodes import eventually as wait_for

JUDGE_DELAY_S = 2.5
LEASE_S = 2
SCORERS = ("no-tool-errors", "graded")
FINAL = ("scored", "not_scorable", "failed")

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep


def judge(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade the answer.",
                  api_base=api_base, model_settings={"temperature": 0.0})
    return create_scorer("graded", "a scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "graded: " + run.output[-1].content))
'''

CONFIG = """
[live]
interval_seconds = 0.5
settle_seconds = 0.5
max_wait_seconds = 10
retry_base_seconds = 0

[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"

[[scorers]]
id = "graded"
use = "myscorers.py:judge"
args = {{ api_base = "{judge}" }}
judge_cache = false

[[scorers]]
id = "cached"
use = "myscorers.py:judge"
args = {{ api_base = "{judge}" }}
judge_cache = true
filter = "service_name = 'cache-agent'"

[[monitors]]
id = "graded-low"
scorer = "graded"
threshold = 0.9
min_samples = 1
evaluate_every = "1s"

[cluster]
node_id = "{node_id}"
postgres = "{dsn}"
data_path = "{lake}"
flush_interval_seconds = 0.5
lease_seconds = {lease}
"""


@dataclass
class LiveCluster:
    dsn: str
    root: Path
    judge: ScriptedLLMServer
    nodes: dict[str, ServerProcess] = field(default_factory=dict)

    def start_node(self, node_id: str) -> ServerProcess:
        config = self.root / f"{node_id}.toml"
        config.write_text(CONFIG.format(judge=self.judge.url, node_id=node_id, dsn=self.dsn,
                                        lake=self.root / "lake", lease=LEASE_S))
        server = start_server(self.root / node_id / "node.duckdb",
                              args=["--config", str(config), "--no-grpc"], timeout_s=120,
                              env={"OPENAI_API_KEY": "sk-test-scripted"})
        self.nodes[node_id] = server
        return server

    def pg(self, query: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.dsn) as conn:
            return conn.execute(query, params or []).fetchall()  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cluster(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[LiveCluster]:
    root = tmp_path_factory.mktemp("live-cluster")
    (root / "myscorers.py").write_text(SCORERS_PY)
    with ScriptedLLMServer(keep_requests=False) as judge:
        judge.set_default(lambda body: Reply(content={"score": 0.75}, prompt_tokens=100,
                                             completion_tokens=10, delay_s=JUDGE_DELAY_S))
        made = LiveCluster(postgres.create_database("live"), root, judge)
        try:
            for node_id in ("node-1", "node-2"):
                made.start_node(node_id)
            yield made
        finally:
            for node in made.nodes.values():
                node.stop()


def eventually(check: Callable[[], Any], *, timeout_s: float = 90.0) -> Any:
    """``test_nodes.eventually``, with this module's longer default wait."""
    return wait_for(check, timeout_s=timeout_s)


def scored_once(cluster: LiveCluster, ids: list[str]) -> dict[str, Any]:
    """Wait until every trace has a final decision per scorer, then what was stored of them:
    decisions and scores per (trace, scorer), and the judge executions."""
    def done() -> bool:
        [(final, open_)] = cluster.pg(
            "SELECT count(*) FILTER (WHERE decision = ANY(%s)), count(*) FILTER (WHERE decision "
            "IN ('pending', 'retrying', 'over_budget')) FROM tracescore.scoring_decisions "
            "WHERE trace_id = ANY(%s) AND scorer_id = ANY(%s)", [list(FINAL), ids, list(SCORERS)])
        return final >= len(ids) * len(SCORERS) and open_ == 0

    eventually(done, timeout_s=120)
    mine = "trace_id = ANY(%s) AND scorer_id = ANY(%s)"
    decisions = cluster.pg("SELECT trace_id, scorer_id, decision, score_id, fence FROM "
                           f"tracescore.scoring_decisions WHERE {mine}", [ids, list(SCORERS)])
    scores = cluster.pg("SELECT trace_id, scorer_id, score_id, status FROM tracescore.scores "
                        f"WHERE {mine}", [ids, list(SCORERS)])
    executions = cluster.pg("SELECT score_id, status FROM tracescore.judge_executions "
                            f"WHERE {mine}", [ids, list(SCORERS)])
    return {"decisions": decisions, "scores": scores, "executions": executions}


def assert_once(found: dict[str, Any], ids: list[str]) -> None:
    expected = sorted((t, s) for t in ids for s in SCORERS)
    assert sorted((t, s) for t, s, *_ in found["decisions"]) == expected, "one decision each"
    assert {d for _, _, d, _, _ in found["decisions"]} == {"scored"}
    assert sorted((t, s) for t, s, _, _ in found["scores"]) == expected, "one score each"
    linked = {(t, s): score_id for t, s, _, score_id, _ in found["decisions"]}
    assert all(linked[(t, s)] == score_id for t, s, score_id, _ in found["scores"])


def scores_counted(node: ServerProcess) -> float:
    """The node's own count of scores it wrote (``/metrics``)."""
    text = httpx.get(f"{node.url}/metrics", timeout=10).text
    return sum(float(v) for v in re.findall(
        r'^tracescore_scores_total\{[^}]*status="success"[^}]*\} (\S+)$', text, re.M))


def test_a_request_sent_to_two_nodes_is_scored_once(cluster: LiveCluster) -> None:
    nodes = [cluster.nodes["node-1"].url, cluster.nodes["node-2"].url]
    asked = cluster.judge.answered
    with TraceRouter(nodes, duplicate_share=1.0) as router:
        ids = send_agent_traces(router.url, count=6, seed=31, service_name="dup-agent")
        assert router.stats["duplicates"] >= 1
    found = scored_once(cluster, ids)
    assert_once(found, ids)
    [(both,)] = cluster.pg("SELECT count(*) FROM tracescore.traces WHERE trace_id = ANY(%s) "
                           "AND cardinality(nodes) = 2", [ids])
    assert both == len(ids), "every trace reached both nodes"
    assert len(found["executions"]) == len(ids), "the judge ran once per judge pair"
    assert cluster.judge.answered - asked == len(ids)


def test_each_judge_execution_is_sent_to_postgresql_once(cluster: LiveCluster) -> None:
    # A BEFORE INSERT row trigger sees every row an INSERT proposes, one that ON CONFLICT DO
    # NOTHING then skips included: a row sent both as it arrived and with its pair's
    # completion shows up twice.
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.proposed (execution_id text, "
                     "trace_id text)")
        conn.execute("CREATE OR REPLACE FUNCTION public.propose() RETURNS trigger LANGUAGE "
                     "plpgsql AS $$ BEGIN INSERT INTO public.proposed VALUES "
                     "(NEW.execution_id, NEW.trace_id); RETURN NEW; END $$")
        conn.execute("CREATE OR REPLACE TRIGGER proposed BEFORE INSERT ON "
                     "tracescore.judge_executions FOR EACH ROW EXECUTE FUNCTION "
                     "public.propose()")
    try:
        with TraceRouter([cluster.nodes["node-1"].url, cluster.nodes["node-2"].url]) as router:
            ids = send_agent_traces(router.url, count=8, seed=36, service_name="once-agent")
        found = scored_once(cluster, ids)
        assert_once(found, ids)
        assert len(found["executions"]) == len(ids)
        sent = cluster.pg("SELECT execution_id, count(*) FROM public.proposed WHERE "
                          "trace_id = ANY(%s) GROUP BY 1", [ids])
        assert len(sent) == len(ids) and {n for _, n in sent} == {1}, sent
    finally:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("DROP TRIGGER proposed ON tracescore.judge_executions")


def test_every_node_reads_every_nodes_traces_scores_and_one_monitor_event(
        cluster: LiveCluster) -> None:
    node1, node2 = cluster.nodes["node-1"], cluster.nodes["node-2"]
    with TraceRouter([node1.url, node2.url]) as router:
        ids = send_agent_traces(router.url, count=8, seed=34, service_name="read-agent")
        assert router.sent.get(node1.url, 0) > 0 and router.sent.get(node2.url, 0) > 0
    assert_once(scored_once(cluster, ids), ids)
    for node in (node1, node2):
        listed = httpx.get(f"{node.url}/api/traces", params={"limit": 1000}, timeout=30).json()
        assert set(ids) <= {t["trace_id"] for t in listed["traces"]}, "the traces list"
        scorers = {s["id"]: s for s in httpx.get(f"{node.url}/api/live/scorers",
                                                 timeout=30).json()["scorers"]}
        [(judged,)] = cluster.pg("SELECT count(*) FROM tracescore.scores WHERE "
                                 "scorer_id = 'graded' AND status = 'success'")
        assert scorers["graded"]["scored"] == judged, "the scorers page counts every node's"
        [[shown]] = sql(node, "SELECT count(*) FROM scores WHERE list_contains(?, trace_id)",
                        [ids])
        assert shown == len(ids) * len(SCORERS)
    # The monitor (graded scores average 0.75 < 0.9) is evaluated by one node: one event.
    events = eventually(lambda: cluster.pg("SELECT monitor_id, state FROM "
                                           "tracescore.monitor_events"), timeout_s=30)
    time.sleep(2)  # every node ticked a few more times: still one event
    assert cluster.pg("SELECT monitor_id, state FROM tracescore.monitor_events") == events
    assert events == [("graded-low", "breached")]


def test_the_judge_cache_is_shared_by_the_nodes(cluster: LiveCluster) -> None:
    node1, node2 = cluster.nodes["node-1"], cluster.nodes["node-2"]
    first = send_agent_traces(node1.url, count=3, seed=35, service_name="cache-agent")
    eventually(lambda: cluster.pg("SELECT count(*) FROM tracescore.scores WHERE scorer_id = "
                                  "'cached' AND trace_id = ANY(%s)", [first])[0][0] == 3)
    asked = cluster.judge.answered
    again = send_agent_traces(node2.url, count=3, seed=35, service_name="cache-agent")
    eventually(lambda: cluster.pg("SELECT count(*) FROM tracescore.scores WHERE scorer_id = "
                                  "'cached' AND trace_id = ANY(%s)", [again])[0][0] == 3)
    cached = cluster.pg("SELECT bool_and(cached) FROM tracescore.judge_executions WHERE "
                        "scorer_id = 'cached' AND trace_id = ANY(%s)", [again])
    assert cached == [(True,)], "node-2 got node-1's answers from PostgreSQL's judge_cache"
    eventually(lambda: cluster.pg("SELECT count(*) FROM tracescore.scores WHERE scorer_id = "
                                  "'graded' AND trace_id = ANY(%s)", [again])[0][0] == 3)
    assert cluster.judge.answered - asked == 3, "only the uncached scorer called the judge"


def test_a_node_that_joins_scores_its_share_once(cluster: LiveCluster) -> None:
    node3 = cluster.nodes.get("node-3") or cluster.start_node("node-3")
    with TraceRouter([cluster.nodes["node-1"].url, cluster.nodes["node-2"].url]) as router:
        router.add_node(node3.url)
        ids = send_agent_traces(router.url, count=24, seed=32, service_name="join-agent")
        assert router.sent.get(node3.url, 0) > 0
    assert_once(scored_once(cluster, ids), ids)
    assert scores_counted(node3) > 0, "the new node scored the traces it received"


def test_a_node_killed_holding_leases_loses_its_pairs_to_another_node_once(
        cluster: LiveCluster) -> None:
    node2 = cluster.nodes["node-2"]
    urls = [n.url for n in cluster.nodes.values()]
    asked = cluster.judge.answered
    with TraceRouter(urls) as router:
        ids = send_agent_traces(router.url, count=24, seed=33, service_name="kill-agent")
        assert router.sent.get(node2.url, 0) > 0

    def held_by_node2() -> list[tuple[Any, ...]]:
        return cluster.pg(
            "SELECT trace_id, span_id, scorer_id, fence FROM tracescore.scoring_decisions "
            "WHERE owner = 'node-2' AND lease_until > (now() AT TIME ZONE 'UTC') "
            "AND trace_id = ANY(%s)", [ids])

    held = eventually(held_by_node2, timeout_s=90)
    node2.kill()  # kill -9 while its judge calls are out and its leases run
    pairs = [(t, s, i) for t, s, i, _ in held]
    fences = {(t, s, i): f for t, s, i, f in held}

    def taken_over() -> bool:
        rows = cluster.pg(
            "SELECT trace_id, span_id, scorer_id, fence, decision FROM "
            "tracescore.scoring_decisions WHERE (trace_id, span_id, scorer_id) IN "
            "(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))",
            [[p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs]])
        return len(rows) == len(pairs) and all(
            f > fences[(t, s, i)] or d in FINAL for t, s, i, f, d in rows)

    eventually(taken_over, timeout_s=60)  # claimed again by a live node after the lease
    node2.start(timeout_s=120)  # its traces not yet decided are decided after the restart
    found = scored_once(cluster, ids)
    assert_once(found, ids)
    fence_now = {(t, s): f for t, s, _, _, f in found["decisions"]}
    assert all(fence_now[(t, i)] > fences[(t, s, i)] for t, s, i in pairs), (
        "each pair node-2 held was claimed again (a new fence) and scored by another node")
    judge_pairs = len(ids)
    calls = cluster.judge.answered - asked
    assert calls <= judge_pairs + len(held), (calls, judge_pairs, len(held))
    [(twice,)] = cluster.pg("SELECT count(*) FROM (SELECT trace_id, scorer_id FROM "
                            "tracescore.scores WHERE trace_id = ANY(%s) GROUP BY 1, 2 "
                            "HAVING count(*) > 1) x", [ids])
    assert twice == 0
