"""Handing a cascade's unsure items to a review queue (``tracescore.labels``).

A cascade scorer with ``queue = "name"`` marks the runs its cheap judge was unsure of
(``analyze_step_result["unsure"]``). After such a run is scored, the live scorer adds the item
to that review queue (``tracescore.labels.enqueue_review_items``, in a worker thread), and
nothing else: with no queue of that name, nothing happens. A failing hand-off is logged and
never changes the score. Unsure items can also be selected from SQL:
``scores.decided_by = 'expensive'``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from tracescore.model import ScorerRunResult

from ._registry import RegisteredScorer
from ._rows import PairKey

if TYPE_CHECKING:
    from ._context import LiveContext

logger = logging.getLogger(__name__)

def unsure_item(reg: RegisteredScorer, key: PairKey,
                result: ScorerRunResult | None) -> tuple[str, dict[str, Any]] | None:
    """(queue, item) when ``result`` is an unsure cascade run of a scorer with a queue."""
    queue = getattr(reg.scorer, "queue", None)
    evidence = result.analyze_step_result if result is not None else None
    if not queue or not isinstance(evidence, dict) or not evidence.get("unsure"):
        return None
    confidence = evidence.get("cheap_confidence")
    said = "no confidence" if confidence is None else f"confidence {confidence:.2f}"
    return queue, {
        "trace_id": key.trace_id, "span_id": key.span_id or None, "session_id": key.session_id,
        "scorer_id": key.scorer_id, "scorer_version": key.scorer_version,
        "score_id": key.score_id,
        "reason": f"the cheap judge was unsure ({said} < {evidence.get('unsure_below')})"}


async def hand_off(live: LiveContext, reg: RegisteredScorer, key: PairKey,
                   result: ScorerRunResult | None) -> bool:
    """Offer an unsure cascade item to its review queue; True when it was queued."""
    found = unsure_item(reg, key, result)
    if found is None:
        return False
    from tracescore.labels import enqueue_review_items

    queue, item = found
    try:
        return bool(await asyncio.to_thread(enqueue_review_items, live.store, queue, [item]))
    except LookupError:
        return False  # no queue of that name: nothing to do
    except Exception as exc:  # noqa: BLE001 - a review queue never fails scoring
        logger.warning("could not hand trace %s to review queue %r: %s", key.trace_id, queue,
                       exc)
        return False


__all__ = ["hand_off", "unsure_item"]
