"""Run a real ``tracescore serve`` subprocess for tests (server, live and dashboard tests).

Usage::

    from server_process import running_server

    def test_something(tmp_path):
        with running_server(tmp_path / "db.duckdb") as server:
            httpx.post(f"{server.url}/api/sql", json={"sql": "select 1"})
            server.grpc_target        # "127.0.0.1:PORT" for OTLP/gRPC exporters

``start_server`` picks two free loopback ports, starts ``python -m tracescore.cli serve`` with
``--db``, ``--http-port`` and ``--grpc-port`` (plus ``args``), and waits until ``/healthz``
answers (the store and gRPC are up then). ``ServerProcess.stop()`` sends SIGTERM (clean
shutdown), ``kill()`` sends SIGKILL (a crash), ``restart()`` starts again on the same database
and ports. The server's output is in ``server.log_path``; it is printed when startup fails.
``tests/`` is on ``sys.path`` (tests/conftest.py lives there), so ``import server_process``
works from every test directory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now and that this process has not handed out
    before: the probe socket is closed before the caller binds, so two calls in a row (a
    server's HTTP and gRPC ports) could otherwise get the same port, and the server would fail
    to start with "Address already in use" (seen once in CI)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@dataclass
class ServerProcess:
    """A running ``tracescore serve`` subprocess."""

    db: Path
    http_port: int
    grpc_port: int
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    api_key: str | None = None
    log_path: Path = field(init=False)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.log_path = self.db.parent / f"server-{self.http_port}.log"

    @property
    def url(self) -> str:
        """Base URL of OTLP/HTTP and the API, e.g. ``http://127.0.0.1:43121``."""
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        """``host:port`` of OTLP/gRPC."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def headers(self) -> dict[str, str]:
        """Authorization header for ``api_key`` (empty without one)."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client on ``url`` carrying the API key."""
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=30, **kwargs)

    def start(self, timeout_s: float = 60.0) -> ServerProcess:
        """Start the process and wait for /healthz."""
        command = [
            sys.executable, "-m", "tracescore.cli", "serve",
            "--db", str(self.db),
            "--http-port", str(self.http_port),
            "--grpc-port", str(self.grpc_port),
            *self.args,
        ]
        env = {**os.environ, **self.env}
        self.db.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.db.parent, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_ready(timeout_s)
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"tracescore serve exited with {self.process.returncode}:\n{self.log()}"
                )
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(
            f"tracescore serve did not answer /healthz in {timeout_s} s:\n{self.log()}"
        )

    def log(self) -> str:
        """Everything the server printed so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM and wait (a clean shutdown); returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self) -> None:
        """SIGKILL (``kill -9``): the process gets no chance to flush anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, timeout_s: float = 60.0) -> ServerProcess:
        """Stop if running, then start again on the same database and ports."""
        self.stop()
        return self.start(timeout_s)


def sql(server: ServerProcess, query: str, params: list[Any] | None = None) -> list[list[Any]]:
    """Rows of a query through the server's /api/sql (asserting it succeeded and was not cut
    at the server's row limit)."""
    response = httpx.post(
        f"{server.url}/api/sql",
        json={"sql": query, "params": params or []},
        headers=server.headers,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert not answer["truncated"], (
        f"/api/sql cut the answer ({answer['truncated_reason']}): count or filter in SQL "
        "instead of reading every row")
    rows: list[list[Any]] = answer["rows"]
    return rows


def peak_rss_growth(pid: int, during: Callable[[], T]) -> tuple[T, int]:
    """Run ``during()`` while sampling process ``pid``'s RSS every 2 ms: (its result, the peak
    RSS above the RSS before, in bytes)."""
    import threading

    import psutil

    process = psutil.Process(pid)
    before = peak = process.memory_info().rss
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, process.memory_info().rss)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = during()
    finally:
        done.set()
        watcher.join(10)
    return result, peak - before


def start_server(
    db: Path,
    *,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    api_key: str | None = None,
    timeout_s: float = 60.0,
) -> ServerProcess:
    """Start ``tracescore serve`` on ``db`` with free ports; ``api_key`` adds ``--api-key``."""
    extra = list(args)
    if api_key:
        extra += ["--api-key", api_key]
    server = ServerProcess(
        db=Path(db),
        http_port=free_port(),
        grpc_port=free_port(),
        args=tuple(extra),
        env=dict(env or {}),
        api_key=api_key,
    )
    return server.start(timeout_s)


@contextlib.contextmanager
def running_server(
    db: Path,
    *,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    api_key: str | None = None,
    timeout_s: float = 60.0,
) -> Iterator[ServerProcess]:
    """``start_server`` as a context manager that stops the server afterwards."""
    server = start_server(db, args=args, env=env, api_key=api_key, timeout_s=timeout_s)
    try:
        yield server
    finally:
        server.stop()


__all__ = ["ServerProcess", "free_port", "peak_rss_growth", "running_server", "start_server"]
