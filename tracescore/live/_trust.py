"""Judge trust on the live scorer's tick: agreement kept up to date, provider models watched,
canary sets re-scored (``tracescore.labels`` does the work; this module decides when).

The scheduler calls ``JudgeTrust.tick`` once per tick. It starts one background pass at a
time, never waiting for it: the pass checks the models providers reported since the last pass
(``ModelWatch``), refreshes ``judge_agreement`` every ``[labels] agreement_interval_seconds``
(or at once after ``poke``, which new labels call), and re-scores each ``[[canaries]]`` set that
is due. Drift events are stored in ``monitor_events`` (``kind = 'judge_drift'``), logged, and
POSTed to ``[labels] drift_notify`` and the canary's ``notify`` URLs through the monitors'
webhook path. A failing pass is logged and tried again at the next tick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from tracescore.labels import (
    AgreementKeeper,
    CanaryEntry,
    LabelsNotFound,
    LabelsSettings,
    ModelWatch,
    canary_due,
    drift_text,
    event_writer,
    get_schema,
    outcome_writer,
    run_canary,
)

log = logging.getLogger(__name__)


class JudgeTrust:
    """Agreement maintenance, model watch and canary runs of one live scheduler."""

    def __init__(self, settings: LabelsSettings | None = None,
                 canaries: Sequence[CanaryEntry] = ()) -> None:
        self.settings = settings or LabelsSettings()
        self.canaries = list(canaries)
        self.keeper = AgreementKeeper(resamples=self.settings.bootstrap_resamples,
                                      seed=self.settings.bootstrap_seed)
        self.watch = ModelWatch()
        self.agreement_rows: list[dict[str, Any]] = []
        """The ``judge_agreement`` rows as of the last refresh (the ``/metrics`` gauges)."""
        self.last_error: str | None = None
        self.passes = 0
        self._refreshed_at: datetime | None = None
        self._task: asyncio.Task[None] | None = None

    def poke(self) -> None:
        """Refresh agreement at the next tick (labels were added)."""
        self._refreshed_at = None

    def tick(self, live: Any, now: datetime) -> None:
        """Start a background pass unless one is still running. Never raises."""
        if self._task is not None and not self._task.done():
            return
        every = timedelta(seconds=self.settings.agreement_interval_seconds)
        refresh = self._refreshed_at is None or now - self._refreshed_at >= every
        self._task = asyncio.get_running_loop().create_task(self._pass(live, now, refresh))

    async def drain(self) -> None:
        """Wait for the pass in flight."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _pass(self, live: Any, now: datetime, refresh: bool) -> None:
        try:
            await self._watch_models(live, now)
            if refresh:
                self._refreshed_at = now
                await asyncio.to_thread(self.keeper.refresh, live.store, now=now)
                self.agreement_rows = await live.read("SELECT * FROM judge_agreement")
            for entry in self.canaries:
                await self._canary(live, entry, now)
            self.last_error = None
        except Exception as exc:  # noqa: BLE001 - judge trust never stops scoring
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("judge trust pass failed; trying again at the next tick: %s",
                        self.last_error)
        finally:
            self.passes += 1

    async def _watch_models(self, live: Any, now: datetime) -> None:
        events = await asyncio.to_thread(self.watch.check, live.store.read, now)
        if events:
            await self._raise(live, events)

    async def _canary(self, live: Any, entry: CanaryEntry, now: datetime) -> None:
        reg = live.registry.get(entry.scorer)
        if reg is None or reg.scorer is None or not reg.enabled or entry.scorer in live.paused:
            return
        if not await asyncio.to_thread(canary_due, live.store.read, entry, now):
            return
        try:
            schema = await asyncio.to_thread(get_schema, live.store, entry.schema_name)
        except LabelsNotFound as exc:
            log.debug("canary of %s waits: %s", entry.scorer, exc)
            return
        outcome = await run_canary(live.store.read, reg.scorer, entry=entry,
                                   version=reg.version, schema=schema,
                                   resamples=self.settings.bootstrap_resamples,
                                   seed=self.settings.bootstrap_seed, now=now)
        if outcome is None:
            log.debug("canary of %s waits: no item of %s is labelled with %s yet",
                      entry.scorer, entry.dataset, entry.schema_name)
            return
        await live.store.write(outcome_writer(outcome))
        log.info("canary of %s on %s: n %d, kappa %s, $%.4f", entry.scorer, entry.dataset,
                 outcome.run["n"], outcome.run["kappa"], outcome.run["cost_usd"])
        if outcome.events:
            await self._raise(live, outcome.events, stored=True)

    async def _raise(self, live: Any, events: list[dict[str, Any]], *,
                     stored: bool = False) -> None:
        if not stored:
            await live.store.write(event_writer(events))
        for event in events:
            text = drift_text(event)
            log.warning("%s", text)
            urls = [*self.settings.drift_notify,
                    *(url for c in self.canaries if c.scorer == event["scorer_id"]
                      for url in c.notify)]
            live.monitors.notify(live, event, text, urls)


__all__ = ["JudgeTrust"]
