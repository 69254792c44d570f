"""Everyday start-up problems of ``tracescore serve`` are one sentence and exit code 2, and
nothing is logged as ready before every listener is bound."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_process import free_port, running_server


def serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracescore.cli", "serve", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program is listening on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def _one_sentence(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "ready" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("Error:")]
    return line


def test_http_port_in_use(tmp_path: Path, taken_port: int) -> None:
    result = serve("--db", "t.duckdb", "--http-port", str(taken_port), "--no-grpc", cwd=tmp_path)
    assert _one_sentence(result) == (
        f"Error: port {taken_port} is in use; pass --http-port or stop the other server")


def test_grpc_port_in_use(tmp_path: Path, taken_port: int) -> None:
    result = serve("--db", "t.duckdb", "--http-port", str(free_port()), "--grpc-port",
                   str(taken_port), cwd=tmp_path)
    assert _one_sentence(result) == (
        f"Error: port {taken_port} is in use; pass --grpc-port or stop the other server")
    assert not (tmp_path / "t.duckdb").exists()  # checked before the database is opened


def test_database_held_by_another_server(tmp_path: Path) -> None:
    db = tmp_path / "shared.duckdb"
    with running_server(db, args=["--no-grpc"]) as first:
        assert first.process is not None
        result = serve("--db", str(db), "--http-port", str(free_port()), "--no-grpc",
                       cwd=tmp_path)
        line = _one_sentence(result)
        assert line == (f"Error: {db} is open in another process (pid {first.process.pid}); "
                        "stop it, or pass --db with another file")
        assert "ready" in first.log()  # the first server still runs


def test_ready_comes_after_the_listeners_and_a_config_says_it_replaces_the_defaults(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('[[scorers]]\nid = "a"\nuse = "tracescore.scorers.checks:no_tool_errors"\n'
                      '[[scorers]]\nid = "b"\nuse = "tracescore.scorers.checks:no_tool_errors"\n')
    with running_server(tmp_path / "ok.duckdb", args=["--config", str(config)]) as server:
        log = server.log()
    ready = log.index("tracescore ready")
    assert ("tracescore ready: OTLP/HTTP, API and dashboard on "
            f"http://127.0.0.1:{server.http_port}, OTLP/gRPC on port {server.grpc_port}") in log
    assert log.index("OTLP/gRPC listening") < ready
    assert log.index("opened") < ready
    assert f"2 scorers from {config}; the embedded defaults are not used" in log
    with running_server(tmp_path / "default.duckdb") as server:
        assert "embedded defaults are not used" not in server.log()


def test_litellm_stays_at_warning_unless_debug() -> None:
    import logging

    from tracescore.server._serve import CHATTY_LOGGERS, configure_logging

    saved = {name: logging.getLogger(name).level for name in CHATTY_LOGGERS}
    try:
        configure_logging("info")
        assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.WARNING
        configure_logging("debug")
        assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.DEBUG
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
