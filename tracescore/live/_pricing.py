"""Prices of the agent's model calls: litellm's local cost map, and ``[pricing]`` overrides.

The map is litellm's own bundled copy (``model_prices_and_context_window_backup.json``), read
without importing litellm (``litellm.model_cost`` when litellm is already loaded, which is the
same file under ``LITELLM_LOCAL_MODEL_COST_MAP=True``): nothing is fetched from the network and
the 200 MB import stays off this path.

A model id is looked up as given, with its provider in front (``openai/gpt-4o-mini``), without a
``provider/`` prefix, and without a date suffix (``gpt-4o-mini-2024-07-18`` → ``gpt-4o-mini``),
overrides first. The cost of a call, with ``input_tokens`` counting cached and cache-creation
tokens (as OpenAI and the GenAI conventions report them) and ``output_tokens`` counting
reasoning tokens::

    (input - cached - cache_creation) × input rate + cached × cache-read rate
    + cache_creation × cache-creation rate + (output - reasoning) × output rate
    + reasoning × reasoning rate

where a missing cache or reasoning rate is the plain input or output rate.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigError

log = logging.getLogger(__name__)

RATE_KEYS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "output_cost_per_reasoning_token",
)
"""The keys of a ``[pricing."model"]`` table (litellm's names; USD per token)."""

_DATE = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per token of one model (None: that kind of token is priced at the plain rate)."""

    input_cost_per_token: float
    output_cost_per_token: float
    cache_read_input_token_cost: float | None = None
    cache_creation_input_token_cost: float | None = None
    output_cost_per_reasoning_token: float | None = None

    def cost(
        self,
        *,
        input_tokens: int | None,
        output_tokens: int | None,
        cached_input_tokens: int | None = None,
        cache_creation_input_tokens: int | None = None,
        reasoning_tokens: int | None = None,
    ) -> float:
        """The USD cost of a call with these token counts (see the module docstring)."""
        cached = cached_input_tokens or 0
        creation = cache_creation_input_tokens or 0
        reasoning = reasoning_tokens or 0
        plain_in = max((input_tokens or 0) - cached - creation, 0)
        read_rate = _or(self.cache_read_input_token_cost, self.input_cost_per_token)
        write_rate = _or(self.cache_creation_input_token_cost, self.input_cost_per_token)
        reasoning_rate = _or(self.output_cost_per_reasoning_token, self.output_cost_per_token)
        plain_out = max((output_tokens or 0) - reasoning, 0)
        return (
            plain_in * self.input_cost_per_token
            + cached * read_rate
            + creation * write_rate
            + plain_out * self.output_cost_per_token
            + reasoning * reasoning_rate
        )


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


class Pricing:
    """Finds a model's price: ``overrides`` (from ``[pricing]``) first, then litellm's map.

    ``price(model, provider)`` returns ``(ModelPrice, source)`` with source ``"config"`` or
    ``"litellm"``, or None for an unknown model. Lookups are cached.
    """

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        *,
        _cost_map: Mapping[str, Any] | None = None,
    ) -> None:
        self.overrides = {key.lower(): value for key, value in (overrides or {}).items()}
        self._cost_map = _cost_map
        self._cache: dict[tuple[str, str | None], tuple[ModelPrice, str] | None] = {}

    def price(self, model: str | None, provider: str | None = None) -> tuple[
        ModelPrice, str
    ] | None:
        """The price of ``model`` and where it came from; None when neither source knows it."""
        if not model:
            return None
        key = (model, provider)
        if key in self._cache:
            return self._cache[key]
        found = self._lookup(model, provider)
        self._cache[key] = found
        return found

    def _lookup(self, model: str, provider: str | None) -> tuple[ModelPrice, str] | None:
        names = _candidates(model, provider)
        for name in names:
            if name in self.overrides:
                return self.overrides[name], "config"
        cost_map = self.cost_map()
        for name in names:
            entry = cost_map.get(name)
            price = _from_entry(entry) if isinstance(entry, dict) else None
            if price is not None:
                return price, "litellm"
        return None

    def cost_map(self) -> Mapping[str, Any]:
        """litellm's local cost map (loaded once)."""
        if self._cost_map is None:
            self._cost_map = load_cost_map()
        return self._cost_map


def _candidates(model: str, provider: str | None) -> list[str]:
    name = model.strip().lower()
    bare = name.split("/", 1)[1] if "/" in name else name
    out = [name]
    if provider:
        out.append(f"{provider.lower()}/{bare}")
    out.append(bare)
    undated = _DATE.sub("", bare)
    if undated != bare:
        out.append(undated)
        if provider:
            out.append(f"{provider.lower()}/{undated}")
    return list(dict.fromkeys(out))


def _from_entry(entry: Mapping[str, Any]) -> ModelPrice | None:
    inp, out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(inp, int | float) and not isinstance(out, int | float):
        return None
    rates = {key: entry.get(key) for key in RATE_KEYS[2:]}
    return ModelPrice(
        float(inp or 0.0),
        float(out or 0.0),
        **{k: float(v) if isinstance(v, int | float) else None for k, v in rates.items()},
    )


def load_cost_map() -> Mapping[str, Any]:
    """litellm's bundled cost map, without importing litellm when it is not loaded yet."""
    loaded = sys.modules.get("litellm")
    cost = getattr(loaded, "model_cost", None) if loaded is not None else None
    if isinstance(cost, dict) and cost:
        return cost
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
    log.warning("litellm's local cost map was not found; agent model calls stay unpriced "
                "unless [pricing] names their models")
    return {}


def parse_pricing(table: Any, *, source: str) -> dict[str, ModelPrice]:
    """``[pricing]`` of a config file: ``{"model id": {rate key: USD per token}}``.

    Raises ``ConfigError`` naming the key and ``source`` for anything else.
    """
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [pricing] must be a table of models")
    out: dict[str, ModelPrice] = {}
    for model, rates in table.items():
        where = f'{source}: [pricing."{model}"]'
        if not isinstance(rates, dict):
            raise ConfigError(f"{where} must be a table such as {{ input_cost_per_token = "
                              "1.5e-07, output_cost_per_token = 6e-07 }}")
        unknown = sorted(set(rates) - set(RATE_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]}; the keys are "
                              f"{', '.join(RATE_KEYS)}")
        values: dict[str, float | None] = {}
        for key in RATE_KEYS:
            value = rates.get(key)
            if value is None:
                values[key] = None
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{where}.{key} must be a number >= 0 (USD per token), got "
                                  f"{value!r}")
            values[key] = float(value)
        if values["input_cost_per_token"] is None or values["output_cost_per_token"] is None:
            raise ConfigError(f"{where} needs input_cost_per_token and output_cost_per_token")
        out[str(model)] = ModelPrice(**values)  # type: ignore[arg-type]
    return out


__all__ = ["RATE_KEYS", "ModelPrice", "Pricing", "load_cost_map", "parse_pricing"]
