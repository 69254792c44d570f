"""Listening sockets and the database, taken before anything says "ready".

``serve`` binds the HTTP socket itself (uvicorn then serves on it), checks that the gRPC port is
free, and opens the store before the app starts, so the everyday start-up problems are one
sentence each (``ServeError``) instead of a traceback, and nothing is logged as ready before
every listener is bound:

- ``port 4318 is in use; pass --http-port or stop the other server``
- ``data/tracescore.duckdb is open in another process (pid 1234); stop it, or pass --db``
- ``data/tracescore.duckdb is damaged and cannot be opened (…). Restore it from a backup; …``
"""

from __future__ import annotations

import errno
import re
import socket
from typing import TYPE_CHECKING, Any

from ._errors import ServeError

if TYPE_CHECKING:
    from tracescore.store import Store


def _explain_bind(exc: OSError, host: str, port: int, flag: str, what: str) -> ServeError:
    if exc.errno == errno.EADDRINUSE:
        return ServeError(f"port {port} is in use; pass {flag} or stop the other server")
    if exc.errno == errno.EACCES:
        return ServeError(f"cannot listen on {host}:{port} ({what}): permission denied; pass "
                          f"{flag} with a port above 1023")
    if exc.errno in (errno.EADDRNOTAVAIL, socket.EAI_NONAME):
        return ServeError(f"cannot listen on {host}: it is not an address of this machine; "
                          "check --host")
    return ServeError(f"cannot listen on {host}:{port} ({what}): {exc.strerror or exc}")


def _address(host: str, port: int) -> tuple[int, Any]:
    """The socket family and address uvicorn itself would bind (IPv6 when the host has a
    colon, so ``localhost`` stays on 127.0.0.1)."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    return family, (bare, port)


def bind_socket(host: str, port: int, *, flag: str = "--http-port",
                what: str = "OTLP/HTTP") -> socket.socket:
    """A TCP socket bound to ``host:port`` (not yet listening); ``ServeError`` if it cannot be."""
    family, address = _address(host, port)
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says so (proto 0 does not), and without it every reply on a kept-alive
    # connection waited ~40 ms for the client's delayed ACK (headers and body are two sends).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except socket.gaierror as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host!r}: {exc.strerror}; check --host") from None
    except OSError as exc:
        sock.close()
        raise _explain_bind(exc, host, port, flag, what) from None
    sock.set_inheritable(True)
    return sock


def check_port_free(host: str, port: int, *, flag: str, what: str) -> None:
    """``ServeError`` when ``host:port`` cannot be bound right now (port 0 always can)."""
    if port:
        bind_socket(host, port, flag=flag, what=what).close()


_PID = re.compile(r"\(PID (\d+)\)", re.IGNORECASE)


def open_database(store: Store, db: str) -> None:
    """Open ``store``; a file locked by another process is one sentence naming its pid."""
    from tracescore.store import DamagedWal, DatabaseDamaged, StoreError

    try:
        store.open()
    except (DatabaseDamaged, DamagedWal) as exc:  # one sentence with the advice that fits
        raise ServeError(str(exc)) from None
    except StoreError as exc:
        text = f"{exc} {exc.__cause__ or ''}"
        if re.search(r"\block", text, re.IGNORECASE):
            pid = _PID.search(text)
            who = f" (pid {pid.group(1)})" if pid else ""
            raise ServeError(f"{db} is open in another process{who}; stop it, or pass --db "
                             "with another file") from None
        raise ServeError(str(exc)) from None


__all__ = ["bind_socket", "check_port_free", "open_database"]
