"""``TraceRouter``: a stand-in for the OpenTelemetry Collector's ``loadbalancing`` exporter.

No Collector binary installs here, so cluster tests route with this: an OTLP/HTTP (protobuf)
server on a free 127.0.0.1 port that splits each request by trace id over the nodes with a
consistent hash ring (``routing_key: traceID``), sends one body per node (the spans of that
node's traces, under their resource and scope), and answers after every node answered: 200
when all did with 2xx, else the worst answer (a client retries a 503 with its ``Retry-After``).
``duplicate_share`` sends that share of requests a second time to other nodes (each node's
body also goes to the node added after it): what a retry after a lost answer, or a ring that
changed meanwhile, does in production. Nodes can be added
while it runs (``add_node``); only the traces whose ring position falls to the new node move.

    with TraceRouter([node1.url, node2.url]) as router:
        exporter = OTLPSpanExporter(endpoint=f"{router.url}/v1/traces")
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import zlib
from bisect import bisect
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VIRTUAL_NODES = 64
"""Points per node on the hash ring."""


def _point(key: bytes) -> int:
    return int.from_bytes(hashlib.sha1(key).digest()[:8], "big")


class HashRing:
    """Consistent hashing of trace ids onto node URLs."""

    def __init__(self, nodes: Sequence[str] = ()) -> None:
        self._points: list[int] = []
        self._owners: list[str] = []
        self.nodes: list[str] = []
        for node in nodes:
            self.add(node)

    def add(self, node: str) -> None:
        """Put ``node`` on the ring (``VIRTUAL_NODES`` points)."""
        if node in self.nodes:
            return
        self.nodes.append(node)
        pairs = list(zip(self._points, self._owners, strict=True))
        pairs += [(_point(f"{node}#{i}".encode()), node) for i in range(VIRTUAL_NODES)]
        pairs.sort()
        self._points = [p for p, _ in pairs]
        self._owners = [o for _, o in pairs]

    def owner(self, trace_id: bytes) -> str:
        """The node of a trace id (its 16 bytes)."""
        if not self._points:
            raise RuntimeError("the ring has no nodes")
        index = bisect(self._points, _point(trace_id)) % len(self._points)
        return self._owners[index]

    def after(self, node: str) -> str:
        """Another node than ``node`` (the next one added after it), for duplicates."""
        if len(self.nodes) < 2:
            return node
        return self.nodes[(self.nodes.index(node) + 1) % len(self.nodes)]


class TraceRouter:
    """See the module docstring. ``stats`` counts requests, bodies sent per node and
    duplicates."""

    def __init__(self, nodes: Sequence[str], *, duplicate_share: float = 0.0,
                 timeout_s: float = 30.0) -> None:
        if not 0.0 <= duplicate_share <= 1.0:
            raise ValueError("duplicate_share must be between 0 and 1")
        self.ring = HashRing([n.rstrip("/") for n in nodes])
        self.duplicate_share = duplicate_share
        self.timeout_s = timeout_s
        self.stats: dict[str, int] = {"requests": 0, "duplicates": 0, "failed": 0}
        self.sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._duplicate_debt = 0.0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (``/v1/traces`` and ``/v1/logs`` below it)."""
        assert self._server is not None, "start() the router first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_node(self, url: str) -> None:
        """Route to one more node from the next request on."""
        with self._lock:
            self.ring.add(url.rstrip("/"))

    def start(self) -> TraceRouter:
        """Listen on a free loopback port in a thread."""
        import httpx

        self._client = httpx.Client(timeout=self.timeout_s)
        router = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # an error body is a second send: no ACK wait

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                status, headers, answer = router._route(self.path, dict(self.headers), body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="trace-router", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the client."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> TraceRouter:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- routing --------------------------------------------------------------------------

    def _route(self, path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, dict[str, str], bytes]:
        kind = "traces" if path.rstrip("/").endswith("/v1/traces") else (
            "logs" if path.rstrip("/").endswith("/v1/logs") else None)
        if kind is None:
            return 404, {}, b"only /v1/traces and /v1/logs are routed"
        if "protobuf" not in headers.get("Content-Type", headers.get("content-type", "")):
            return 415, {}, b"the router takes OTLP/HTTP protobuf only"
        encoding = headers.get("Content-Encoding", headers.get("content-encoding", ""))
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        with self._lock:
            self.stats["requests"] += 1
            parts = _split(kind, body, self.ring)
            sends = list(parts.items())
            self._duplicate_debt += self.duplicate_share
            if parts and self._duplicate_debt >= 1.0:
                self._duplicate_debt -= 1.0
                sends += [(self.ring.after(node), payload) for node, payload in parts.items()]
                self.stats["duplicates"] += 1
        forward = {k: v for k, v in headers.items()
                   if k.lower() in ("authorization", "x-tracescore-project")}
        forward["Content-Type"] = "application/x-protobuf"
        results: list[tuple[int, dict[str, str], bytes]] = [(200, {}, b"")] * len(sends)

        def send(index: int, node: str, payload: bytes) -> None:
            try:
                response = self._client.post(f"{node}/v1/{kind}", content=payload,
                                             headers=forward)
                retry = response.headers.get("Retry-After")
                results[index] = (response.status_code, {"Retry-After": retry} if retry else {},
                                  response.content)
            except Exception as exc:  # noqa: BLE001 - a node that does not answer: 503
                results[index] = (503, {"Retry-After": "1"}, str(exc).encode())
            with self._lock:
                self.sent[node] = self.sent.get(node, 0) + 1

        threads = [threading.Thread(target=send, args=(i, node, payload))
                   for i, (node, payload) in enumerate(sends)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        worst = max(results, key=lambda r: (r[0] >= 300, r[0]))
        if worst[0] >= 300:
            with self._lock:
                self.stats["failed"] += 1
            return worst
        return 200, {"Content-Type": "application/x-protobuf"}, b""


def _split(kind: str, body: bytes, ring: HashRing) -> dict[str, bytes]:
    """One serialized request per node, holding the records of the traces it owns."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    Request: Any
    if kind == "traces":
        Request = ExportTraceServiceRequest
        outer, inner, items = "resource_spans", "scope_spans", "spans"
    else:
        Request = ExportLogsServiceRequest
        outer, inner, items = "resource_logs", "scope_logs", "log_records"
    request = Request()
    request.ParseFromString(body)
    out: dict[str, Any] = {}
    fallback = ring.nodes[0]
    for resource in getattr(request, outer):
        for scope in getattr(resource, inner):
            for item in getattr(scope, items):
                node = ring.owner(item.trace_id) if item.trace_id else fallback
                target = out.get(node)
                if target is None:
                    target = out[node] = {}
                key = (id(resource), id(scope))
                if key not in target:
                    new_resource = getattr(target.setdefault("__request__", Request()),
                                           outer).add()
                    new_resource.resource.CopyFrom(resource.resource)
                    new_resource.schema_url = resource.schema_url
                    new_scope = getattr(new_resource, inner).add()
                    new_scope.scope.CopyFrom(scope.scope)
                    new_scope.schema_url = scope.schema_url
                    target[key] = new_scope
                getattr(target[key], items).add().CopyFrom(item)
    return {node: parts["__request__"].SerializeToString() for node, parts in out.items()}


__all__ = ["HashRing", "TraceRouter", "VIRTUAL_NODES"]
