"""``observe_judge_executions``: hear about each judge execution the moment its step ends.

A prompt step's ``JudgeExecution`` (usage, cost, error) normally reaches the caller only inside
the ``ScorerRunResult`` (or the ``ScorerRunError``) at the end of the whole run. The live scorer
needs it earlier: judge spend must be stored as soon as the provider answered, so a crash later
in the run (another judge step, the write-back) loses nothing that was paid for. Inside
``with observe_judge_executions(callback):`` every finished prompt step, successful or failed,
calls ``callback(step_name, execution)`` before the run goes on. The observer is a context
variable, so concurrent runs in other tasks each see their own. A callback that raises is logged
and ignored: observing never changes a run's outcome.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from tracescore.model import JudgeExecution

logger = logging.getLogger(__name__)

ExecutionObserver = Callable[[str, JudgeExecution], None]

_observer: ContextVar[ExecutionObserver | None] = ContextVar(
    "tracescore_judge_execution_observer", default=None
)


@contextlib.contextmanager
def observe_judge_executions(callback: ExecutionObserver) -> Iterator[None]:
    """Call ``callback(step, execution)`` for each judge execution finished inside the block
    (in this task and tasks started from it)."""
    token = _observer.set(callback)
    try:
        yield
    finally:
        _observer.reset(token)


def notify_execution(step: str, execution: JudgeExecution) -> None:
    """Tell the current observer, if any, that ``step`` finished with ``execution``."""
    callback = _observer.get()
    if callback is None:
        return
    try:
        callback(step, execution)
    except Exception:  # noqa: BLE001 - observing must never fail the run
        logger.exception("a judge execution observer failed on step %s; ignored", step)


@contextlib.contextmanager
def relay_judge_executions(prefix: str) -> Iterator[None]:
    """Inside the block, the judge executions of a scorer run inside another scorer's step
    reach the outer observer under ``prefix + step`` (a cascade's ``cheap.generate_score``)."""
    outer = _observer.get()
    if outer is None:
        yield
        return

    def relay(step: str, execution: JudgeExecution) -> None:
        outer(prefix + step, execution)

    token = _observer.set(relay)
    try:
        yield
    finally:
        _observer.reset(token)


__all__ = ["ExecutionObserver", "notify_execution", "observe_judge_executions",
           "relay_judge_executions"]
