"""``Judge``: which model answers prompt steps, how, and with which processors.

A ``Judge`` remembers which fields were set explicitly, so a step's judge overrides the
scorer's field by field: ``PromptStep(..., judge=Judge(model_settings={"temperature": 0}))``
keeps the scorer's model and instructions and changes only the settings.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

JsonPromptInjection = bool | Literal["auto", "inline", "system"]


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()

_DEFAULTS: dict[str, Any] = {
    "model": None,
    "instructions": None,
    "json_prompt_injection": "auto",
    "model_settings": None,
    "api_base": None,
    "api_key": None,
    "timeout_s": None,
    "input_processors": (),
    "output_processors": (),
    "error_processors": (),
    "max_processor_retries": None,
}
_INJECTION_MODES = ("auto", "inline", "system", True, False)
_PROCESSOR_FIELDS = ("input_processors", "output_processors", "error_processors")


_warming: threading.Thread | None = None


def warm_litellm() -> None:
    """Start importing litellm (≈3.5–5 s) on a background thread, once per process, so the
    first judge call of a script does not pay for it; a call made meanwhile waits for the same
    import. A ``Judge`` with a model calls this when it is made."""
    global _warming
    if _warming is not None or "litellm" in sys.modules:
        return

    def load() -> None:
        from ._judge_call import load_litellm

        try:
            load_litellm()
        except Exception:  # noqa: BLE001 - the judge call itself reports a broken install
            pass

    _warming = threading.Thread(target=load, name="tracescore-litellm-import", daemon=True)
    _warming.start()


class Judge:
    """The LLM judge of prompt steps, called through litellm.

    Args:
        model: a litellm model string, e.g. ``"openai/gpt-4o-mini"``.
        instructions: the judge's system message.
        json_prompt_injection: how structured output is requested: ``"auto"`` (native JSON
            schema output when litellm knows the model supports it, else the schema injected
            into the prompt), ``True``/``"inline"`` (schema in the prompt), ``"system"`` (in
            the system message), ``False`` (native only).
        model_settings: extra litellm arguments (``temperature``, ``max_tokens``, ...).
        api_base: the provider's base URL (an OpenAI-compatible server, a proxy).
        api_key: the provider key (else litellm reads the provider's environment variable).
        timeout_s: per-request timeout in seconds.
        input_processors: callables ``fn(messages) -> messages`` run before each request.
        output_processors: callables ``fn(text) -> text`` run on each reply before parsing.
        error_processors: e.g. ``RetryProcessor()``; decide whether a failed request is retried.
        max_processor_retries: cap on retries per step (default 10 when processors are set).
    """

    __slots__ = (*_DEFAULTS, "_explicit")

    model: str | None
    instructions: str | None
    json_prompt_injection: JsonPromptInjection
    model_settings: Mapping[str, Any] | None
    api_base: str | None
    api_key: str | None
    timeout_s: float | None
    input_processors: tuple[Callable[..., Any], ...]
    output_processors: tuple[Callable[..., Any], ...]
    error_processors: tuple[Any, ...]
    max_processor_retries: int | None
    _explicit: frozenset[str]

    def __init__(
        self,
        model: str | None = UNSET,
        instructions: str | None = UNSET,
        *,
        json_prompt_injection: JsonPromptInjection = UNSET,
        model_settings: Mapping[str, Any] | None = UNSET,
        api_base: str | None = UNSET,
        api_key: str | None = UNSET,
        timeout_s: float | None = UNSET,
        input_processors: Sequence[Callable[..., Any]] = UNSET,
        output_processors: Sequence[Callable[..., Any]] = UNSET,
        error_processors: Sequence[Any] = UNSET,
        max_processor_retries: int | None = UNSET,
    ) -> None:
        given = {
            "model": model,
            "instructions": instructions,
            "json_prompt_injection": json_prompt_injection,
            "model_settings": model_settings,
            "api_base": api_base,
            "api_key": api_key,
            "timeout_s": timeout_s,
            "input_processors": input_processors,
            "output_processors": output_processors,
            "error_processors": error_processors,
            "max_processor_retries": max_processor_retries,
        }
        explicit = frozenset(k for k, v in given.items() if v is not UNSET)
        self._assign({k: given[k] for k in explicit}, explicit)
        if self.model:
            warm_litellm()

    def _assign(self, values: Mapping[str, Any], explicit: frozenset[str]) -> None:
        mode = values.get("json_prompt_injection", "auto")
        if mode not in _INJECTION_MODES or (isinstance(mode, int) and not isinstance(mode, bool)):
            raise ValueError(
                f"json_prompt_injection must be 'auto', 'inline', 'system', True or False, "
                f"got {mode!r}"
            )
        for name, default in _DEFAULTS.items():
            value = values.get(name, default)
            if name in _PROCESSOR_FIELDS:
                value = tuple(value or ())
            elif name == "model_settings" and value is not None:
                value = dict(value)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_explicit", explicit)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Judge is immutable; use judge.replace(...) or merged(...)")

    @property
    def explicit_fields(self) -> frozenset[str]:
        """The fields given when this judge was made (the ones that override when merged)."""
        return self._explicit

    def merged(self, override: Judge | None) -> Judge:
        """This judge with every field set explicitly on ``override`` taken from it."""
        if override is None or not override._explicit:
            return self
        values = {name: getattr(self, name) for name in self._explicit}
        values.update({name: getattr(override, name) for name in override._explicit})
        new = object.__new__(Judge)
        new._assign(values, self._explicit | override._explicit)
        return new

    def replace(self, **changes: Any) -> Judge:
        """A copy with ``changes`` applied (they count as explicitly set)."""
        return self.merged(Judge(**changes))

    @property
    def processor_retry_limit(self) -> int:
        """How many retries a step may make (``max_processor_retries``, default 10)."""
        if self.max_processor_retries is not None:
            return int(self.max_processor_retries)
        return 10 if any(getattr(self, f) for f in _PROCESSOR_FIELDS) else 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Judge):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _DEFAULTS) and (
            self._explicit == other._explicit
        )

    def __hash__(self) -> int:
        return hash((self.model, self.instructions, self.api_base))

    def __repr__(self) -> str:
        shown = []
        for name in _DEFAULTS:
            if name not in self._explicit:
                continue
            value = getattr(self, name)
            shown.append(f"{name}={'***' if name == 'api_key' and value else value!r}")
        return f"Judge({', '.join(shown)})"


def as_judge(value: Judge | Mapping[str, Any] | None) -> Judge | None:
    """Accept a ``Judge`` or a dict of its arguments (camelCase keys too)."""
    if value is None or isinstance(value, Judge):
        return value
    if isinstance(value, Mapping):
        renames = {
            "jsonPromptInjection": "json_prompt_injection",
            "modelSettings": "model_settings",
            "apiBase": "api_base",
            "apiKey": "api_key",
            "timeoutS": "timeout_s",
        }
        return Judge(**{renames.get(k, k): v for k, v in value.items()})
    raise TypeError(f"judge must be a Judge or a dict, got {type(value).__name__}")
