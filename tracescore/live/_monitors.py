"""Monitors: alert when a scorer's scores drop (``[[monitors]]`` entries).

A monitor aggregates one scorer's ``scores`` rows over a sliding window (``avg``, ``p50``,
``p95``, ``pass_rate`` = share of scores >= ``pass_threshold``, ``count``, ``failed_rate`` =
share of runs that failed), optionally only for one project or for traces matching ``filter``
(a predicate over the ``traces`` table), and compares the value with ``threshold`` by ``op``;
``kappa`` instead reads the scorer's agreement with people as ``judge_agreement`` last kept it
(``tracescore.labels``), its labelled targets counting as the samples.
The scheduler calls ``Monitors.evaluate`` on its tick; each monitor runs at most once per
``evaluate_every``. With fewer than ``min_samples`` scores in the window (``count`` aside) the
state does not change.

A change of state is an event: ``breached`` when the comparison starts to hold (not again
within ``cooldown`` of the last breach), ``recovered`` when it stops. Each event is a
``monitor_events`` row (written at once, through the store's writer), a WARNING log line, the
``tracescore_monitor_state`` / ``tracescore_monitor_value`` gauges, and a JSON POST to every
``notify`` URL (Slack's incoming webhooks accept it: a ``text`` line plus the fields) in a
background task: bounded retries with backoff, the outcome (``notified_at`` or ``error``)
recorded on the event row, never raised into the loop. The state survives restarts: it is
read back from the last event of each monitor.

Webhook URLs are secrets and the POSTs leave from inside the operator's network: which URLs and
addresses are allowed, and how the URL is kept out of rows and logs, is ``_webhooks.py``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ._config import one_predicate
from ._errors import ConfigError
from ._webhooks import WebhookRefused, check_webhook_url, pinned_request, scrub, webhook_host

log = logging.getLogger(__name__)

Aggregate = Literal["avg", "p50", "p95", "pass_rate", "count", "failed_rate", "kappa"]
Op = Literal["lt", "lte", "gt", "gte"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "lt": lambda v, t: v < t, "lte": lambda v, t: v <= t,
    "gt": lambda v, t: v > t, "gte": lambda v, t: v >= t,
}
_OP_TEXT = {"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}

NOTIFY_ATTEMPTS = 3
"""POSTs per webhook URL and event at most (then the error is recorded)."""
NOTIFY_TIMEOUT_S = 10.0


def duration_seconds(text: str) -> float:
    """``"90s"``, ``"30m"``, ``"1h"``, ``"7d"`` in seconds (ValueError otherwise)."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as '90s', '30m', '1h' or '7d'")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


class MonitorEntry(BaseModel):
    """One ``[[monitors]]`` entry (keys documented in docs/live.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:\-]+$")
    """Names the monitor in ``monitor_events``, ``/metrics`` and ``tracescore monitors``."""
    scorer: str = Field(min_length=1)
    """The scorer id whose ``scores`` rows are aggregated."""
    project: str | None = None
    """Only scores of this project."""
    filter: str | None = None
    """Only scores of traces matching this SQL predicate over the ``traces`` table."""
    aggregate: Aggregate = "avg"
    pass_threshold: float = 1.0
    """``pass_rate``: a score at or above this passes."""
    window: str = "1h"
    op: Op = "lt"
    threshold: float
    min_samples: int = Field(default=10, ge=0)
    cooldown: str = "30m"
    """No new breach event within this long of the last one."""
    evaluate_every: str = "60s"
    """The monitor is evaluated on the scheduler's tick at most this often."""
    notify: list[str] = Field(default_factory=list)
    """Webhook URLs that get a JSON POST per event."""

    @field_validator("window", "cooldown", "evaluate_every")
    @classmethod
    def _is_duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @field_validator("filter")
    @classmethod
    def _one_predicate(cls, value: str | None) -> str | None:
        return one_predicate(value)

    @field_validator("notify")
    @classmethod
    def _urls(cls, value: list[str], info: ValidationInfo) -> list[str]:
        allow = bool((info.context or {}).get("allow_private_webhooks"))
        for number, url in enumerate(value, start=1):
            try:
                check_webhook_url(url, allow_private=allow)
            except WebhookRefused as exc:  # the message names the host, never the URL
                raise ValueError(f"URL #{number}: {exc}") from None
        return value


def parse_monitor_entries(entries: Any, *, source: str = "the config file",
                          scorer_ids: Sequence[str] | None = None,
                          allow_private_webhooks: bool = False) -> list[MonitorEntry]:
    """Validate ``[[monitors]]`` or raise ``ConfigError`` naming the entry and the key; with
    ``scorer_ids``, each monitor's ``scorer`` must be one of them. ``notify`` URLs to private
    addresses pass only with ``allow_private_webhooks`` (``[live]``)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigError(f"monitors in {source}: must be an array of tables ([[monitors]])")
    out: list[MonitorEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(entries, start=1):
        label = f"[[monitors]] entry #{index}"
        if isinstance(raw, Mapping) and raw.get("id"):
            label += f" (id {raw['id']!r})"
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{label} in {source}: must be a table")
        try:
            entry = MonitorEntry.model_validate(
                dict(raw), context={"allow_private_webhooks": allow_private_webhooks})
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(entry)"
            message = ("unknown key (check its spelling)" if first["type"] == "extra_forbidden"
                       else first["msg"].removeprefix("Value error, "))
            raise ConfigError(f"{label} in {source}: key {key!r}: {message}") from None
        if entry.id in seen:
            raise ConfigError(f"{label} in {source}: key 'id': {entry.id!r} is used twice; "
                              "give each monitor its own id")
        if scorer_ids is not None and entry.scorer not in scorer_ids:
            known = ", ".join(sorted(scorer_ids)) or "none"
            raise ConfigError(f"{label} in {source}: key 'scorer': no scorer {entry.scorer!r} "
                              f"is registered (the scorers are: {known})")
        seen.add(entry.id)
        out.append(entry)
    return out


KAPPA_SQL = """
SELECT arg_max(kappa, (updated_at, n)) AS value, arg_max(n, (updated_at, n)) AS samples
FROM judge_agreement WHERE scorer_id = ? AND updated_at < ?
"""
"""``kappa``: the newest ``judge_agreement`` row of the scorer (its version agreeing with people;
the labelled targets are the samples)."""


def window_query(entry: MonitorEntry, *, start: datetime, end: datetime) -> tuple[str, list[Any]]:
    """The monitor's value and sample count over scores created in [start, end) (``kappa``:
    the scorer's judge agreement as last kept, whatever the window)."""
    if entry.aggregate == "kappa":
        return KAPPA_SQL, [entry.scorer, end]
    done = "s.status = 'success' AND s.score IS NOT NULL"
    value = {
        "avg": f"avg(s.score) FILTER (WHERE {done})",
        "p50": f"quantile_cont(s.score, 0.5) FILTER (WHERE {done})",
        "p95": f"quantile_cont(s.score, 0.95) FILTER (WHERE {done})",
        "pass_rate": f"avg(CASE WHEN s.score >= ? THEN 1.0 ELSE 0.0 END) FILTER (WHERE {done})",
        "count": f"count(*) FILTER (WHERE {done})",
        "failed_rate": "avg(CASE WHEN s.status = 'failed' THEN 1.0 ELSE 0.0 END)",
    }[entry.aggregate]
    samples = "count(*)" if entry.aggregate == "failed_rate" else f"count(*) FILTER (WHERE {done})"
    params: list[Any] = [entry.pass_threshold] if entry.aggregate == "pass_rate" else []
    where = "s.scorer_id = ? AND s.created_at >= ? AND s.created_at < ?"
    params += [entry.scorer, start, end]
    if entry.project is not None:
        where += " AND s.project = ?"
        params.append(entry.project)
    if entry.filter is not None:
        where += f" AND s.trace_id IN (SELECT trace_id FROM traces WHERE ({entry.filter}))"
    return f"SELECT {value} AS value, {samples} AS samples FROM scores s WHERE {where}", params


LAST_EVENTS_SQL = """
SELECT monitor_id,
       arg_max(state, created_at) AS state,
       arg_max(value, created_at) AS value,
       max(created_at) AS at,
       max(created_at) FILTER (WHERE state = 'breached') AS breached_at,
       arg_max(error, created_at) FILTER (WHERE error IS NOT NULL) AS delivery_error,
       max(created_at) FILTER (WHERE error IS NOT NULL) AS delivery_failed_at
FROM monitor_events GROUP BY monitor_id
"""


@dataclass(slots=True)
class MonitorState:
    """What one monitor knows between evaluations (``tracescore monitors`` shows it)."""

    entry: MonitorEntry
    breached: bool = False
    value: float | None = None
    samples: int = 0
    evaluated_at: datetime | None = None
    last_breach_at: datetime | None = None
    last_event: dict[str, Any] | None = None
    last_error: str | None = None
    """The last evaluation error (a bad filter, say), if the last evaluation failed."""
    last_failed_delivery: dict[str, Any] | None = None
    """The newest event whose webhook delivery failed: ``{"at", "error"}``."""

    def status(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        e = self.entry
        return {
            "id": e.id, "scorer": e.scorer, "aggregate": e.aggregate, "op": e.op,
            "threshold": e.threshold, "window": e.window,
            "state": "breached" if self.breached else "ok", "value": self.value,
            "samples": self.samples,
            "evaluated_at": _iso(self.evaluated_at),
            "last_event": self.last_event, "last_error": self.last_error,
            "last_failed_delivery": self.last_failed_delivery,
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() + "Z" if value is not None else None


def event_text(entry: MonitorEntry, state: str, value: float, samples: int) -> str:
    """The one-line summary of an event (the log line and the webhook's ``text``)."""
    verb = "breached" if state == "breached" else "recovered"
    return (f"tracescore monitor {entry.id} {verb}: {entry.aggregate} of {entry.scorer} over "
            f"{entry.window} is {value:.4g} ({samples} samples; alert when "
            f"{_OP_TEXT[entry.op]} {entry.threshold:g})")


class Monitors:
    """The configured monitors of one scheduler: evaluation, events, notifications."""

    def __init__(self, entries: Sequence[MonitorEntry] = (), *,
                 allow_private_webhooks: bool = False, _retry_base_s: float = 1.0) -> None:
        self.states = {e.id: MonitorState(e) for e in entries}
        self.allow_private_webhooks = allow_private_webhooks
        self._restored = False
        self._retry_base_s = _retry_base_s
        self._notifying: set[asyncio.Task[Any]] = set()

    def __bool__(self) -> bool:
        return bool(self.states)

    async def evaluate(self, live: Any, now: datetime) -> list[dict[str, Any]]:
        """Evaluate the monitors that are due; return the events written. Never raises."""
        events: list[dict[str, Any]] = []
        if not self.states:
            return events
        try:
            await self.restore(live)
            for state in self.states.values():
                every = timedelta(seconds=duration_seconds(state.entry.evaluate_every))
                if state.evaluated_at is not None and now - state.evaluated_at < every:
                    continue
                event = await self._evaluate_one(live, state, now)
                if event is not None:
                    events.append(event)
        except Exception as exc:  # noqa: BLE001 - monitors never stop scoring
            log.warning("evaluating monitors failed; trying again at the next tick: %s", exc)
        return events

    async def restore(self, live: Any) -> None:
        """Read each monitor's state and last event back from ``monitor_events`` (at the
        first evaluation; the API and CLI call it to show a state another process wrote).
        Only the first call reads; later the state in memory is the newer one."""
        if self._restored:
            return
        for row in await live.read(LAST_EVENTS_SQL):
            state = self.states.get(row["monitor_id"])
            if state is not None:
                state.breached = row["state"] == "breached"
                state.value = row["value"]
                state.last_breach_at = row["breached_at"]
                state.last_event = {"state": row["state"], "value": row["value"],
                                    "at": _iso(row["at"])}
                if row["delivery_error"] is not None:
                    state.last_failed_delivery = {"at": _iso(row["delivery_failed_at"]),
                                                  "error": row["delivery_error"]}
        self._restored = True

    async def _evaluate_one(self, live: Any, state: MonitorState,
                            now: datetime) -> dict[str, Any] | None:
        entry = state.entry
        start = now - timedelta(seconds=duration_seconds(entry.window))
        state.evaluated_at = now
        try:
            [row] = await live.read(*window_query(entry, start=start, end=now))
        except Exception as exc:  # noqa: BLE001 - e.g. a filter that no longer parses
            state.last_error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            log.warning("monitor %s could not be evaluated: %s", entry.id, state.last_error)
            return None
        state.last_error = None
        samples = int(row["samples"] or 0)
        state.samples = samples
        if row["value"] is None or (entry.aggregate != "count" and samples < entry.min_samples):
            return None
        value = float(row["value"])
        state.value = value
        holds = _OPS[entry.op](value, entry.threshold)
        if holds == state.breached:
            return None
        cooldown = timedelta(seconds=duration_seconds(entry.cooldown))
        if holds and state.last_breach_at is not None and now - state.last_breach_at < cooldown:
            return None
        name = "breached" if holds else "recovered"
        event = {
            "event_id": str(uuid.uuid4()), "monitor_id": entry.id, "scorer_id": entry.scorer,
            "state": name, "value": value, "threshold": entry.threshold,
            "window_start": start, "window_end": now, "samples": samples,
            "notified_at": None, "error": None, "created_at": now, "kind": "monitor",
        }
        await live.store.write(_insert_events([event]))
        state.breached = holds
        if holds:
            state.last_breach_at = now
        state.last_event = {"state": name, "value": value, "at": _iso(now)}
        text = event_text(entry, name, value, samples)
        log.warning("%s", text)
        self.notify(live, event, text, entry.notify)
        return event

    def notify(self, live: Any, event: dict[str, Any], text: str, urls: Sequence[str]) -> None:
        """POST a stored ``monitor_events`` row to ``urls`` in a background task (a breach
        here; a judge drift from ``tracescore.labels``), its outcome recorded on the row."""
        if not urls:
            return
        task = asyncio.get_running_loop().create_task(self._notify(live, event, text, urls))
        self._notifying.add(task)
        task.add_done_callback(self._notifying.discard)

    async def _notify(self, live: Any, event: dict[str, Any], text: str,
                      urls: Sequence[str]) -> None:
        """POST the event to every URL (bounded retries, backoff); record the outcome."""
        import httpx

        payload = {"text": text, **{k: _jsonable(v) for k, v in event.items()
                                    if k not in ("notified_at", "error")}}
        errors: list[str] = []
        name = event["monitor_id"]
        async with httpx.AsyncClient(timeout=NOTIFY_TIMEOUT_S) as client:
            for number, url in enumerate(urls, start=1):
                error = await self._post(client, url, payload)
                if error is not None:  # the host only: the URL itself is a secret
                    errors.append(f"webhook #{number} ({webhook_host(url)}): {error}")
        notified_at = None if errors else live.now()
        message = "; ".join(errors) or None
        if message:
            log.warning("monitor %s: notifying failed: %s", name, message)
            state = self.states.get(event["monitor_id"])
            if state is not None:  # a monitor's breach (a judge drift has no monitor state)
                state.last_failed_delivery = {"at": _iso(event["created_at"]), "error": message}
        try:
            await live.store.write(_record_notification(event["event_id"], notified_at, message))
        except Exception as exc:  # noqa: BLE001 - recorded in the log, never raised
            log.warning("monitor %s: could not record the notification: %s", name, exc)

    async def _post(self, client: Any, url: str, payload: dict[str, Any]) -> str | None:
        try:
            target = await pinned_request(url, allow_private=self.allow_private_webhooks,
                                          loop=asyncio.get_running_loop())
        except WebhookRefused as exc:
            return f"not sent: {exc}"
        error = "not sent"
        for attempt in range(NOTIFY_ATTEMPTS):
            if attempt:
                await asyncio.sleep(self._retry_base_s * 2 ** (attempt - 1))
            try:
                response = await client.post(target.url, json=payload, headers=target.headers,
                                             extensions=target.extensions)
            except Exception as exc:  # noqa: BLE001 - a refused or timed-out POST is data
                error = scrub(scrub(f"{type(exc).__name__}: {exc}", url), target.url)
                continue
            if response.status_code < 300:
                return None
            error = f"HTTP {response.status_code}"
            if response.status_code < 500 and response.status_code != 429:
                break  # a 4xx other than 429 will not get better
        return f"{error} after {attempt + 1} attempt(s)"

    async def drain(self) -> None:
        """Wait for notifications in flight."""
        if self._notifying:
            await asyncio.gather(*list(self._notifying), return_exceptions=True)

    def status(self) -> list[dict[str, Any]]:
        """Each monitor's state, last value and last event."""
        return [state.status() for state in self.states.values()]


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat() + "Z"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _insert_events(events: list[dict[str, Any]]) -> Callable[[Any], None]:
    from tracescore.store import insert_arrow, rows_table

    table = rows_table("monitor_events", events)

    def write(conn: Any) -> None:
        insert_arrow(conn, "monitor_events", table)

    return write


def _record_notification(event_id: str, notified_at: datetime | None,
                         error: str | None) -> Callable[[Any], None]:
    def write(conn: Any) -> None:
        conn.execute("UPDATE monitor_events SET notified_at = ?, error = ? WHERE event_id = ?",
                     [notified_at, error, event_id])

    return write


def load_monitors(document: Mapping[str, Any], *, source: str = "the config file",
                  scorer_ids: Sequence[str] | None = None) -> Monitors:
    """The ``[[monitors]]`` of a parsed config file (``ConfigError`` on a bad entry), with
    ``[live] allow_private_webhooks``."""
    live = document.get("live")
    allow = bool(live.get("allow_private_webhooks", False)) if isinstance(live, Mapping) else False
    return Monitors(parse_monitor_entries(document.get("monitors"), source=source,
                                          scorer_ids=scorer_ids, allow_private_webhooks=allow),
                    allow_private_webhooks=allow)


__all__ = [
    "LAST_EVENTS_SQL",
    "MonitorEntry",
    "MonitorState",
    "Monitors",
    "duration_seconds",
    "event_text",
    "load_monitors",
    "parse_monitor_entries",
    "window_query",
]
