"""The totals maintainer inside ``tracescore serve``: ``[pricing]`` at ``create_app``, the
maintainer in the lifespan.

``mount_totals(app)`` (in ``DEFAULT_MOUNTS``) reads ``[pricing]`` from the settings' config file
(a bad entry stops ``create_app`` with one sentence). ``totals_lifespan(app)`` (in
``DEFAULT_HOOKS``) runs ``tracescore.live.TotalsMaintainer`` on ``app.state.store`` with the
``[live]`` readiness settings (``interval_seconds``, ``settle_seconds``, ``max_wait_seconds``)
and ``totals_busy_share``,
whether or not live scoring is enabled; it is ``app.state.totals`` (its ``stats`` feed
``/metrics``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from ._errors import ConfigError

log = logging.getLogger(__name__)


def _pricing(settings: Any) -> Any:
    from tracescore.live import ConfigError as LiveConfigError
    from tracescore.live import Pricing, parse_pricing

    config = getattr(settings, "config", None) or {}
    source = getattr(settings, "config_path", None) or "the built-in defaults"
    try:
        return Pricing(parse_pricing(config.get("pricing"), source=source))
    except LiveConfigError as exc:
        raise ConfigError(str(exc)) from None


def mount_totals(app: FastAPI) -> None:
    """Validate ``[pricing]`` of ``app.state.settings`` (kept as ``app.state.pricing``)."""
    app.state.pricing = _pricing(app.state.settings)
    app.state.totals = None


@contextlib.asynccontextmanager
async def totals_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Keep ``model_calls`` and the ``traces`` totals while the app serves."""
    from tracescore.live import TotalsMaintainer, parse_live_settings

    pricing = getattr(app.state, "pricing", None) or _pricing(app.state.settings)
    setup = getattr(app.state, "live_setup", None)
    if setup is not None:
        live = setup[0]
    else:
        config = getattr(app.state.settings, "config", None) or {}
        live = parse_live_settings(config.get("live") or {}, source="config")
    store = app.state.store
    maintainer = TotalsMaintainer(
        getattr(store, "local_store", store),  # a cluster node's own rows
        pricing=pricing,
        interval_s=live.interval_seconds,
        settle_s=live.settle_seconds,
        max_wait_s=live.max_wait_seconds,
        busy_share=live.totals_busy_share,
    )
    await maintainer.start()
    app.state.totals = maintainer
    try:
        yield
    finally:
        await maintainer.stop()
        app.state.totals = None


__all__ = ["mount_totals", "totals_lifespan"]
