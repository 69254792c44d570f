"""Real ``tracescore serve`` processes in cluster mode on loopback, fed through the
``TraceRouter`` by the OpenTelemetry SDK's exporter: what each node received is visible to SQL
and the trace view on every node after a flush; a request sent to two nodes reads as one trace;
a node killed with -9 and restarted flushes nothing twice; a node that joins is read by all."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, sql, start_server

from tracescore.testing import PostgresServer, TraceRouter

FLUSH_S = 0.5


@dataclass
class Cluster:
    dsn: str
    lake: Path
    root: Path
    nodes: list[ServerProcess]

    def start_node(self, node_id: str) -> ServerProcess:
        config = self.root / f"{node_id}.toml"
        config.write_text(
            "[live]\nenabled = false\ninterval_seconds = 0.5\nsettle_seconds = 0.5\n"
            "max_wait_seconds = 2\n\n"
            f'[cluster]\nnode_id = "{node_id}"\npostgres = "{self.dsn}"\n'
            f'data_path = "{self.lake}"\nflush_interval_seconds = {FLUSH_S}\n')
        server = start_server(self.root / node_id / "node.duckdb",
                              args=["--config", str(config)], timeout_s=120)
        self.nodes.append(server)
        return server


@pytest.fixture(scope="module")
def cluster(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("cluster")
    made = Cluster(postgres.create_database("nodes"), root / "lake", root, [])
    try:
        made.start_node("node-1")
        made.start_node("node-2")
        yield made
    finally:
        for node in made.nodes:
            node.stop()


def send_traces(url: str, count: int, *, spans: int = 3, name: str = "agent") -> list[str]:
    """Send ``count`` traces of ``spans`` spans through the OTel SDK's OTLP/HTTP exporter."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(
        OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=30), max_export_batch_size=64))
    tracer = provider.get_tracer("cluster-test")
    ids = []
    for i in range(count):
        with tracer.start_as_current_span(f"{name}-run-{i}") as root:
            ids.append(f"{root.get_span_context().trace_id:032x}")
            for j in range(spans - 1):
                with tracer.start_as_current_span(f"step-{j}"):
                    pass
    assert provider.force_flush(30_000)
    provider.shutdown()
    return ids


def eventually(check: Callable[[], Any], *, timeout_s: float = 30.0) -> Any:
    """Poll ``check`` until it returns a truthy value (returned) or fail with its last value."""
    deadline = time.monotonic() + timeout_s
    value = None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not reached in {timeout_s} s; last value {value!r}")


def count_spans(node: ServerProcess, ids: list[str]) -> int:
    [[n]] = sql(node, "SELECT count(*) FROM spans WHERE list_contains(?, trace_id)", [ids])
    return int(n)


def test_spans_each_node_received_are_read_on_every_node(cluster: Cluster) -> None:
    node1, node2 = cluster.nodes[:2]
    with TraceRouter([node1.url, node2.url]) as router:
        ids = send_traces(router.url, 24)
        assert set(router.sent) == {node1.url, node2.url}, "both nodes got traces"
    for node in (node1, node2):
        eventually(lambda node=node: count_spans(node, ids) == 72)
        [[distinct]] = sql(node, "SELECT count(DISTINCT span_id) FROM spans "
                                 "WHERE list_contains(?, trace_id)", [ids])
        assert distinct == 72
    by_node = dict(sql(node1, "SELECT node_id, count(DISTINCT trace_id) FROM spans "
                              "WHERE list_contains(?, trace_id) GROUP BY 1", [ids]))
    assert set(by_node) == {"node-1", "node-2"} and sum(by_node.values()) == 24
    split = eventually(lambda: sql(node2, "SELECT count(*), count(*) FILTER (WHERE len(nodes) "
                                          "> 1) FROM traces WHERE list_contains(?, trace_id)",
                                   [ids])[0] if sql(node2, "SELECT count(*) FROM traces WHERE "
                                                           "list_contains(?, trace_id)",
                                                    [ids])[0][0] == 24 else None)
    assert split == [24, 0], "routing by trace id: each trace on one node"
    # The trace view of a trace node-1 received, asked on node-2 (read from the lake).
    [[on_node1]] = sql(node1, "SELECT min(trace_id) FROM spans WHERE node_id = 'node-1' "
                              "AND list_contains(?, trace_id)", [ids])
    trace = httpx.get(f"{node2.url}/api/traces/{on_node1}", timeout=30).json()
    assert len(trace["spans"]) == 1 and len(trace["spans"][0]["children"]) == 2


def test_a_request_sent_to_two_nodes_reads_as_one_trace(cluster: Cluster) -> None:
    node1, node2 = cluster.nodes[:2]
    with TraceRouter([node1.url, node2.url], duplicate_share=1.0) as router:
        ids = send_traces(router.url, 4, name="dup")
        assert router.stats["duplicates"] >= 1
    eventually(lambda: count_spans(node1, ids) == 24)  # every span stored by both nodes
    for node in (node1, node2):
        for trace_id in ids:
            trace = httpx.get(f"{node.url}/api/traces/{trace_id}", timeout=30).json()
            assert len(trace["spans"]) == 1 and len(trace["spans"][0]["children"]) == 2
    [[both]] = eventually(lambda: sql(node1, "SELECT count(*) FROM traces WHERE "
                                             "list_contains(?, trace_id) AND len(nodes) = 2",
                                      [ids]) if sql(node1, "SELECT count(*) FROM traces WHERE "
                                                           "list_contains(?, trace_id) AND "
                                                           "len(nodes) = 2", [ids])[0][0] == 4
                          else None)
    assert both == 4


def test_a_node_killed_with_9_and_restarted_flushes_nothing_twice(cluster: Cluster) -> None:
    node1, node2 = cluster.nodes[:2]
    with TraceRouter([node1.url, node2.url]) as router:
        before = send_traces(router.url, 10, name="before-kill")
    eventually(lambda: count_spans(node1, before) == 30)
    node2.kill()
    node2.start(timeout_s=120)
    status = httpx.get(f"{node2.url}/api/cluster", timeout=10).json()
    assert status["node_id"] == "node-2" and status["flush"]["flush_no"] >= 1
    with TraceRouter([node1.url, node2.url]) as router:
        after = send_traces(router.url, 10, name="after-kill")
    for node in (node1, node2):
        eventually(lambda node=node: count_spans(node, before + after) == 60)
    assert sql(node1, "SELECT node_id, flush_no, count(*) FROM lake.flushes "
                      "GROUP BY ALL HAVING count(*) > 1") == []
    [[spans, distinct]] = sql(node1, "SELECT count(*), count(DISTINCT (node_id, span_id)) "
                                     "FROM lake.spans")
    assert spans == distinct, "no span copied twice by one node"


def test_a_node_that_joins_is_read_by_every_node(cluster: Cluster) -> None:
    node1, node2 = cluster.nodes[:2]
    node3 = cluster.start_node("node-3")
    with TraceRouter([node1.url, node2.url]) as router:
        router.add_node(node3.url)
        ids = send_traces(router.url, 30, name="joined")
        assert router.sent.get(node3.url, 0) > 0
    for node in (node1, node2, node3):
        eventually(lambda node=node: count_spans(node, ids) == 90)
    status = httpx.get(f"{node3.url}/api/cluster", timeout=10).json()
    assert status["flusher"]["flushes"] >= 1 and status["flusher"]["failures"] == 0
