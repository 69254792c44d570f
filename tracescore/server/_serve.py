"""Run the server: ``serve(settings)`` starts uvicorn on the app of ``create_app``.

Before uvicorn starts, ``serve`` binds the HTTP socket, checks the gRPC port and opens the
database (``_listen``), so a port in use or a database held by another process is one sentence
(``ServeError``) and nothing is logged as ready before every listener is bound.
"""

from __future__ import annotations

import logging
from typing import Any

from ._arrow_pool import use_system_arrow_pool
from ._errors import ConfigError, ServeError
from ._gc import gc_tuned
from ._malloc import limit_malloc_arenas, malloc_trimmed
from ._settings import Settings, check_bind, default_config_path

log = logging.getLogger(__name__)

CHATTY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx")
"""Loggers kept at WARNING unless the level is debug (litellm logs every call twice at INFO)."""


def configure_logging(level: str) -> None:
    """Plain ``time level logger: message`` lines on stderr; litellm and httpx stay at WARNING
    unless ``level`` is debug."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    quiet = logging.DEBUG if level.lower() == "debug" else logging.WARNING
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(quiet)


def _log_registry(app: Any, settings: Settings) -> None:
    """Say where the scorers come from when a config file replaces the embedded default."""
    setup = getattr(app.state, "live_setup", None)
    path = settings.config_path
    if setup is None or path is None or str(path) == str(default_config_path()):
        return
    count = len(setup[1])
    log.info("%d scorer%s from %s; the embedded defaults are not used (tracescore config "
             "default prints them)", count, "" if count == 1 else "s", path)


def serve(settings: Settings, *, discard_damaged_wal: bool = False,
          **create_app_kwargs: Any) -> None:
    """Run tracescore until interrupted (SIGINT/SIGTERM stop it cleanly).

    Raises ``ConfigError`` for a bad config and ``ServeError`` when a port or the database
    cannot be had (a damaged file or write-ahead log included). ``discard_damaged_wal``
    opens the database without a write-ahead log that cannot be replayed (a copy is kept).
    """
    import uvicorn

    from ._app import create_app, open_store
    from ._listen import bind_socket, check_port_free, open_database

    check_bind(settings)
    configure_logging(settings.log_level)
    limit_malloc_arenas()  # before any thread allocates (the arena cap applies to new arenas)
    use_system_arrow_pool()
    app = create_app(settings, **create_app_kwargs)
    app.state.lifespan_hooks.append(malloc_trimmed)
    app.state.lifespan_hooks.append(gc_tuned)  # last: after everything else has loaded
    _log_registry(app, settings)
    http_socket = bind_socket(settings.host, settings.http_port)
    store = None
    try:
        if settings.grpc:
            check_port_free(settings.host, settings.grpc_port, flag="--grpc-port",
                            what="OTLP/gRPC")
        store = open_store(settings, cluster=getattr(app.state, "cluster", None),
                           discard_damaged_wal=discard_damaged_wal)
        open_database(store, settings.db)
        app.state.store = store
        app.state.http_port = int(http_socket.getsockname()[1])
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=app.state.http_port,
            log_level=settings.log_level,
            access_log=settings.log_level == "debug",
            lifespan="on",
            timeout_graceful_shutdown=10,
        )
        server = uvicorn.Server(config)
        stopped_for: list[str] = []

        def stop_serving(reason: str) -> None:
            """A config error found after start-up (the judge checks): stop with it."""
            stopped_for.append(reason)
            server.should_exit = True

        app.state.stop_serving = stop_serving
        server.run(sockets=[http_socket])
        if not server.started:
            raise ServeError(getattr(app.state, "startup_error", None)
                             or "the server did not start; see the log lines above")
        if stopped_for:
            raise ConfigError(stopped_for[0])
    finally:
        http_socket.close()
        if store is not None and store.is_open:
            store.close()


__all__ = ["CHATTY_LOGGERS", "configure_logging", "serve"]
