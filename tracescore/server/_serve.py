"""Run the server: ``serve(settings)`` starts uvicorn on the app of ``create_app``."""

from __future__ import annotations

import logging
from typing import Any

from ._settings import Settings, check_bind


def configure_logging(level: str) -> None:
    """Plain ``time level logger: message`` lines on stderr."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def serve(settings: Settings, **create_app_kwargs: Any) -> None:
    """Run tracescore until interrupted (SIGINT/SIGTERM stop it cleanly)."""
    import uvicorn

    from ._app import create_app

    check_bind(settings)
    configure_logging(settings.log_level)
    app = create_app(settings, **create_app_kwargs)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.http_port,
        log_level=settings.log_level,
        access_log=settings.log_level == "debug",
        lifespan="on",
        timeout_graceful_shutdown=10,
    )
    logging.getLogger(__name__).info(
        "OTLP/HTTP and API on http://%s:%d", settings.host, settings.http_port
    )
    uvicorn.Server(config).run()


__all__ = ["configure_logging", "serve"]
