"""The ``[labels]`` table and the ``[[canaries]]`` entries of the config file.

``[labels]`` sets how agreement is kept (how often, how many bootstrap resamples, which seed),
the κ floor below which gating scorers are warned about, and the review page's defaults.
A ``[[canaries]]`` entry freezes a labelled dataset as a judge's canary: the live scorer
re-scores it every ``every`` within ``max_cost_usd`` and raises a ``judge_drift`` event when
the judge's agreement on it leaves its first interval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._errors import InvalidLabel

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration_s(text: str) -> float:
    """``"90s"``, ``"30m"``, ``"6h"``, ``"1d"`` in seconds (ValueError otherwise)."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as '90s', '30m', '6h' or '1d'")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


class LabelsSettings(BaseModel):
    """The ``[labels]`` table (keys documented in docs/labels.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agreement_interval_seconds: float = Field(default=60.0, gt=0)
    """How often the live scorer brings ``judge_agreement`` up to date (when labels or scores
    changed)."""
    bootstrap_resamples: int = Field(default=1000, ge=0, le=100_000)
    """Resamples behind each 95 % interval (0: no intervals)."""
    bootstrap_seed: int = 0
    """The seed of the resamples (the same data gives the same intervals)."""
    agreement_floor: float = Field(default=0.6, ge=-1.0, le=1.0)
    """`run_evals` and `experiments compare` warn when a gating scorer's κ is below this (or
    unknown)."""
    hide_judge: bool = True
    """The review page hides the judge's score and reason until the item is labelled."""
    drift_notify: list[str] = Field(default_factory=list)
    """Webhook URLs told about every judge_drift event (canaries add their own)."""


class CanaryEntry(BaseModel):
    """One ``[[canaries]]`` entry: a judge's frozen, labelled canary set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorer: str = Field(min_length=1)
    """The judge scorer's id (a ``[[scorers]]`` entry)."""
    dataset: str = Field(min_length=1)
    """The dataset of canary items (labelled with ``target_type = 'item'``)."""
    schema_name: str = Field(min_length=1, alias="schema")
    """The label schema the items are labelled with."""
    every: str = "24h"
    """How often the canary set is re-scored."""
    max_cost_usd: float = Field(default=1.0, ge=0)
    """Judge spend of one canary run at most (it stops scoring items once reached)."""
    max_items: int = Field(default=200, ge=1)
    """Items scored per run at most."""
    notify: list[str] = Field(default_factory=list)
    """Webhook URLs told about this judge's drift events."""

    @field_validator("every")
    @classmethod
    def _is_duration(cls, value: str) -> str:
        duration_s(value)
        return value

    @property
    def every_s(self) -> float:
        """``every`` in seconds."""
        return duration_s(self.every)


def _check_urls(urls: Sequence[str], label: str, document: Mapping[str, Any]) -> None:
    """Refuse what cannot be a webhook, as monitors' ``notify`` is checked (private addresses
    only with ``[live] allow_private_webhooks``); the error names the host, never the URL."""
    from tracescore.live._webhooks import WebhookRefused, check_webhook_url

    live = document.get("live")
    allow = bool(live.get("allow_private_webhooks")) if isinstance(live, Mapping) else False
    for number, url in enumerate(urls, start=1):
        try:
            check_webhook_url(url, allow_private=allow)
        except WebhookRefused as exc:
            raise InvalidLabel(f"{label}: webhook #{number}: {exc}") from None


def _sentence(exc: ValidationError, label: str) -> str:
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(entry)"
    message = ("unknown key (check its spelling)" if first["type"] == "extra_forbidden"
               else first["msg"])
    return f"{label}: key {key!r}: {message}"


def parse_labels_config(document: Mapping[str, Any], *, source: str = "the config file",
                        scorer_ids: Sequence[str] | None = None
                        ) -> tuple[LabelsSettings, list[CanaryEntry]]:
    """``[labels]`` and ``[[canaries]]`` of a parsed config; ``InvalidLabel`` names the entry
    and the key (with ``scorer_ids``, a canary's scorer must be one of them)."""
    table = document.get("labels") or {}
    if not isinstance(table, Mapping):
        raise InvalidLabel(f"[labels] in {source}: must be a table")
    try:
        settings = LabelsSettings.model_validate(dict(table))
    except ValidationError as exc:
        raise InvalidLabel(_sentence(exc, f"[labels] in {source}")) from None
    _check_urls(settings.drift_notify, f"[labels] drift_notify in {source}", document)
    entries = document.get("canaries") or []
    if not isinstance(entries, list):
        raise InvalidLabel(f"canaries in {source}: must be an array of tables ([[canaries]])")
    canaries: list[CanaryEntry] = []
    for index, raw in enumerate(entries, start=1):
        label = f"[[canaries]] entry #{index} in {source}"
        if not isinstance(raw, Mapping):
            raise InvalidLabel(f"{label}: must be a table")
        try:
            entry = CanaryEntry.model_validate(dict(raw))
        except ValidationError as exc:
            raise InvalidLabel(_sentence(exc, label)) from None
        _check_urls(entry.notify, f"{label}: key 'notify'", document)
        if scorer_ids is not None and entry.scorer not in scorer_ids:
            known = ", ".join(sorted(scorer_ids)) or "none"
            raise InvalidLabel(f"{label}: key 'scorer': no scorer {entry.scorer!r} is "
                               f"registered (the scorers are: {known})")
        if any(c.scorer == entry.scorer for c in canaries):
            raise InvalidLabel(f"{label}: key 'scorer': {entry.scorer!r} already has a canary")
        canaries.append(entry)
    return settings, canaries


__all__ = ["CanaryEntry", "LabelsSettings", "duration_s", "parse_labels_config"]
