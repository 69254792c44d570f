"""A scripted OpenAI-compatible chat server on loopback, for tests, demos and examples.

It answers ``POST /v1/chat/completions`` (and ``/chat/completions``) over real HTTP from a queue
of scripted replies or a function of the request, with real status codes, ``Retry-After``
headers, usage figures, delays and malformed bodies. Every request is recorded. litellm reaches
it as ``openai/<name>`` with ``api_base=server.url``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer.

    ``content`` may be a string or any JSON value (serialised as the message content).
    ``delay_s`` holds the reply back that long (a slow or hung judge; ``stop()`` ends the wait).
    ``status`` other than 200 sends ``error_body`` (or an OpenAI-style error) with ``headers``.
    ``raw_body`` sends those bytes as the whole response body (for malformed answers).
    ``model`` is the reply's ``model`` (default: the one asked for) and ``system_fingerprint``
    its ``system_fingerprint`` (left out when None).
    ``logprobs`` is sent as the choice's ``logprobs.content``: a list of
    ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}`` (see ``token_logprobs``).
    """

    content: Any = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 5
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    delay_s: float = 0.0
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    raw_body: bytes | None = None
    error_body: Any = None
    model: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    system_fingerprint: str | None = None


def token_logprobs(
    tokens: list[str], alternatives: dict[int, dict[str, float]] | None = None
) -> list[dict[str, Any]]:
    """Token log-probabilities for ``Reply(logprobs=...)``.

    ``tokens`` are the reply's tokens in order (each sent with logprob 0, i.e. certain, unless
    ``alternatives`` says otherwise); ``alternatives[i]`` maps candidate tokens at position ``i``
    to their log-probabilities; the token sent is given the one its own entry says.
    """
    entries = []
    for i, token in enumerate(tokens):
        top = dict((alternatives or {}).get(i, {}))
        top.setdefault(token, 0.0)
        entries.append({
            "token": token,
            "logprob": top[token],
            "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                             for t, lp in sorted(top.items(), key=lambda kv: -kv[1])],
        })
    return entries


def error(
    status: int, message: str = "scripted error", *, retry_after: float | None = None
) -> Reply:
    """A scripted HTTP error, optionally with ``Retry-After`` (seconds)."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(status=status, headers=headers, error_body={"error": {"message": message,
                 "type": "scripted", "code": str(status)}})


Responder = Callable[[dict[str, Any]], "Reply | str | dict[str, Any] | list[Any]"]


class ScriptedLLMServer:
    """An OpenAI-compatible server answering from a script; use as a context manager."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0,
                 latency_s: float = 0.0, keep_requests: bool = True) -> None:
        self.latency_s = latency_s
        self.keep_requests = keep_requests
        """Record each request in ``requests`` (off for a long-running stand-in)."""
        self.answered = 0
        """Chat requests received."""
        """Added to every reply's ``delay_s`` (a slow judge; ``tracescore judge-standin
        --latency-ms``)."""
        self._stopping = threading.Event()
        self._queue: deque[Reply | Responder] = deque()
        self._default: Responder | None = None
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    models = [{"id": "scripted", "object": "model"}]
                    self._send(200, {"object": "list", "data": models})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.answered += 1
                    if server.keep_requests:
                        server.requests.append(body)
                        server.request_headers.append(
                            {k.lower(): v for k, v in self.headers.items()})
                reply = server._next_reply(body)
                if reply.delay_s or server.latency_s:
                    # A wait that ``stop()`` ends: a hung judge does not outlive the server.
                    server._stopping.wait(reply.delay_s + server.latency_s)
                if reply.raw_body is not None:
                    self._send_bytes(reply.status, reply.raw_body, reply.headers)
                    return
                if reply.status != 200:
                    self._send(reply.status, reply.error_body or {"error": {"message": "error"}},
                               reply.headers)
                    return
                self._send(200, server._completion(body, reply), reply.headers)

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
                self._send_bytes(status, json.dumps(payload).encode(), headers)

            def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(ThreadingHTTPServer):
            # The default listen backlog (5) resets connections once a few dozen judge calls
            # arrive at once, which the caller then sees as transient errors and retries.
            request_queue_size = 1024

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A caller killed mid-request (a node's kill -9 in the cluster tests) resets
                # its connection: nothing went wrong here, so no traceback on stderr.
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                    super().handle_error(request, client_address)

        self._httpd = Server((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to use as ``api_base`` (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        """Start serving in a background thread."""
        self._stopping.clear()
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (replies still waiting out a delay are sent)."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Reply | Responder | str | dict[str, Any] | list[Any]) -> None:
        """Queue replies, answered in order; a plain value is the message content."""
        with self._lock:
            for r in replies:
                self._queue.append(r if isinstance(r, Reply) or callable(r) else Reply(content=r))

    def set_default(self, responder: Responder | None) -> None:
        """Answer with ``responder(request)`` whenever the queue is empty."""
        self._default = responder

    def reset(self) -> None:
        """Forget queued replies, the default responder and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.request_headers.clear()
        self._default = None

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            if self._default is None:
                return error(500, "the scripted server has no reply queued")
            item = self._default
        if isinstance(item, Reply):
            return item
        produced = item(body)
        return produced if isinstance(produced, Reply) else Reply(content=produced)

    @staticmethod
    def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish = reply.finish_reason or "stop"
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": tc.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {
                        "name": tc["name"],
                        "arguments": tc["arguments"]
                        if isinstance(tc.get("arguments"), str)
                        else json.dumps(tc.get("arguments", {})),
                    },
                }
                for tc in reply.tool_calls
            ]
            finish = reply.finish_reason or "tool_calls"
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "scripted"),
            **({"system_fingerprint": reply.system_fingerprint}
               if reply.system_fingerprint is not None else {}),
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         **({"logprobs": {"content": reply.logprobs}}
                            if reply.logprobs is not None else {})}],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
                "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
            },
        }
