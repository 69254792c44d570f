"""``PostgresServer``: a throwaway PostgreSQL on a free loopback port, for cluster tests.

It runs the PostgreSQL binaries of the machine (``/usr/lib/postgresql/<version>/bin``, or
``initdb`` on ``PATH``; Debian's ``postgresql`` package): ``initdb`` into a temporary
directory, ``pg_ctl start`` on 127.0.0.1 only, trust authentication for user ``tracescore``.
As root the server runs as the ``postgres`` user (``su``), as any other user directly. It is
stopped and its directory removed on ``stop()``, on leaving the ``with`` block, or at exit.
``fsync`` is off: the data is thrown away, so durability only costs time here.

    with PostgresServer() as pg:
        dsn = pg.create_database("node_test")   # "host=127.0.0.1 port=… dbname=node_test …"
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

USER = "tracescore"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries here (install Debian's ``postgresql`` package)."""


def find_bin_dir() -> Path:
    """The directory of ``initdb`` and ``pg_ctl``: the newest ``/usr/lib/postgresql/*/bin``,
    else ``PATH``; raises ``PostgresUnavailable`` naming what to install."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit()
                        else 0)
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise PostgresUnavailable(
        "no PostgreSQL binaries (initdb, pg_ctl) found in /usr/lib/postgresql/*/bin or on "
        "PATH; install them: apt-get install postgresql")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """A PostgreSQL server for tests (see the module docstring)."""

    def __init__(self, *, bin_dir: str | os.PathLike[str] | None = None,
                 port: int | None = None, settings: dict[str, str] | None = None) -> None:
        """``settings``: more server settings (``-c name=value``), e.g.
        ``{"shared_preload_libraries": "pg_stat_statements"}`` for a benchmark."""
        self.bin_dir = Path(bin_dir) if bin_dir is not None else None
        self.port = port or 0
        self.settings = dict(settings or {})
        self.dir: Path | None = None
        self._as_postgres = os.geteuid() == 0 if hasattr(os, "geteuid") else False

    @property
    def data_dir(self) -> Path:
        """The cluster's data directory."""
        assert self.dir is not None, "start() the server first"
        return self.dir / "data"

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq connection string for ``dbname`` on this server."""
        return f"host=127.0.0.1 port={self.port} user={USER} dbname={dbname}"

    def _run(self, argv: list[str], timeout_s: float = 120) -> None:
        if self._as_postgres:
            command = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(argv)]
        else:
            command = argv
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stdout}"
                               f"{done.stderr}")

    def start(self) -> PostgresServer:
        """initdb, start on a free loopback port, wait until it accepts connections."""
        bin_dir = self.bin_dir or find_bin_dir()
        self.dir = Path(tempfile.mkdtemp(prefix="tracescore-pg-"))
        if self._as_postgres:
            shutil.chown(self.dir, "postgres")
        self.port = self.port or _free_port()
        self._run([str(bin_dir / "initdb"), "-D", str(self.data_dir), "-U", USER,
                   "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"])
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                   "-c max_connections=200")
        for name, value in self.settings.items():
            options += f" -c {shlex.quote(f'{name}={value}')}"
        self._run([str(bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-o", options,
                   "-l", str(self.dir / "server.log"), "-w", "-t", "60", "start"])
        self._bin = bin_dir
        atexit.register(self.stop)
        self._wait()
        return self

    def _wait(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.05)
        raise RuntimeError(f"PostgreSQL did not listen on port {self.port}: {self.log()}")

    def log(self) -> str:
        """The server's log so far."""
        if self.dir is None:
            return ""
        try:
            return (self.dir / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def execute(self, sql: str, dbname: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement (autocommit) and return its rows (needs psycopg)."""
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            cur = conn.execute(sql)
            return list(cur.fetchall()) if cur.description else []

    def create_database(self, name: str) -> str:
        """Create database ``name`` (dropping one of that name) and return its dsn."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name {name!r}: use letters, digits and '_'")
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        """Stop the server now and remove its directory (idempotent)."""
        if self.dir is None:
            return
        with contextlib.suppress(Exception):
            self._run([str(self._bin / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate",
                       "-w", "stop"], timeout_s=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


__all__ = ["PostgresServer", "PostgresUnavailable", "find_bin_dir"]
