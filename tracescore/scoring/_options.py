"""``judge_options``: how the judge calls made inside a block behave, set by whoever runs them.

A scorer does not know where it runs. The live scorer, ``run_evals`` and a cascade each want
something of its judge calls: a cache of answers (``_cache``), a timeout that names the setting
it comes from, prices from ``[pricing]``, a count of the calls in flight, the replies' token
log-probabilities. ``with judge_options(...):`` sets them for every judge call made in the block
(in this task and the tasks it starts), on top of the options already in force, so a cascade
run inside the live scorer keeps the live scorer's cache and timeout. Options are a context
variable, so concurrent runs in other tasks each see their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from tracescore.model import JudgeUsage

    from ._cache import JudgeCache

CacheMode = Literal["auto", "on", "off"]
PriceFn = Callable[[str, "str | None", "JudgeUsage"], "tuple[float, str] | None"]
"""``price(model, provider, usage)`` → (USD, source) for a judge's usage, or None when the
function has no price for the model (litellm's price map is asked next)."""


class CallTracker(Protocol):
    """Told when each judge request starts and ends (the live scorer's in-flight count)."""

    def started(self) -> Any:
        """A request was sent; returns a token for ``finished``."""

    def finished(self, token: Any) -> None:
        """The request of ``token`` ended (answered, failed or cancelled)."""


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """What applies to the judge calls of a block (see the module docstring)."""

    cache: JudgeCache | None = None
    """Where answers are looked up and stored; None: no cache."""
    cache_mode: CacheMode = "auto"
    """``auto``: cache judges whose ``model_settings`` say ``temperature = 0``; ``on``: every
    judge; ``off``: none."""
    cache_epoch: int = 0
    """Part of every cache key: a new epoch asks afresh (answers of other epochs are not used)."""
    timeout_s: float | None = None
    """Longest wait for one judge request; past it the attempt fails with ``JudgeTimeoutError``."""
    timeout_setting: str | None = None
    """The setting ``timeout_s`` comes from, named in the error (``[live]
    judge_timeout_seconds = 60``)."""
    price: PriceFn | None = None
    """Prices asked before litellm's map (``[pricing]`` of the config)."""
    tracker: CallTracker | None = None
    """Told of each request's start and end."""
    logprobs: bool = False
    """Ask for the replies' token log-probabilities (``JudgeExecution.confidence``)."""


_NONE = JudgeOptions()
_current: ContextVar[JudgeOptions | None] = ContextVar("tracescore_judge_options", default=None)


def current_judge_options() -> JudgeOptions:
    """The options in force here."""
    return _current.get() or _NONE


@contextlib.contextmanager
def judge_options(**changes: Any) -> Iterator[JudgeOptions]:
    """Apply ``changes`` (``JudgeOptions`` fields) to the judge calls made inside the block, on
    top of the options already in force; yields the options in force inside."""
    merged = dataclasses.replace(current_judge_options(), **changes)
    token = _current.set(merged)
    try:
        yield merged
    finally:
        _current.reset(token)


__all__ = ["CacheMode", "CallTracker", "JudgeOptions", "PriceFn", "current_judge_options",
           "judge_options"]
