"""A trace's session (conversation) id and user id, from whichever convention carries them.

Precedence, first match wins:

1. What the adapters put on the step tree (``Step.conversation_id`` / ``Step.user_id``), the
   outermost step first: OpenInference ``session.id`` / ``user.id``, GenAI
   ``gen_ai.conversation.id``, Mastra's ``mastra.metadata.threadId`` / ``resourceId``, the AI
   SDK's ``ai.telemetry.metadata.sessionId`` / ``threadId`` / ``conversationId`` / ``userId``.
2. Span attributes, spans in tree order (root first), keys in the order of ``SESSION_KEYS`` /
   ``USER_KEYS`` (this also catches spans no adapter claimed, ``langfuse.session.id``, and
   LangGraph's ``thread_id`` in the OpenInference ``metadata`` JSON).
3. Resource attributes of those spans, same keys.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._steps import Step, walk_steps
from ._values import as_dict

if TYPE_CHECKING:
    from ._trace import Trace

SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "mastra.metadata.threadId",
    "ai.telemetry.metadata.sessionId",
    "ai.telemetry.metadata.threadId",
    "ai.telemetry.metadata.conversationId",
    "metadata.thread_id",
    "metadata.session_id",
)
"""Attribute keys holding a session id (``metadata.X`` = key X of the JSON ``metadata``)."""

USER_KEYS = (
    "user.id",
    "enduser.id",
    "langfuse.user.id",
    "mastra.metadata.resourceId",
    "ai.telemetry.metadata.userId",
    "metadata.user_id",
)
"""Attribute keys holding a user id, in precedence order."""


def trace_identity(trace: Trace, roots: list[Step] | None = None) -> tuple[str | None, str | None]:
    """(session id, user id) of ``trace``; None where no convention carries one."""
    steps = roots if roots is not None else trace.steps
    session: str | None = None
    user: str | None = None
    for step in walk_steps(steps):
        if session is None and step.conversation_id:
            session = step.conversation_id
        if user is None and step.user_id:
            user = step.user_id
        if session is not None and user is not None:
            return session, user
    spans = list(trace.walk())
    if session is None:
        session = _find(spans, SESSION_KEYS)
    if user is None:
        user = _find(spans, USER_KEYS)
    return session, user


def _find(spans: Iterable[Any], keys: tuple[str, ...]) -> str | None:
    spans = list(spans)
    for source in ("attributes", "resource_attributes"):
        for span in spans:
            value = _lookup(getattr(span, source), keys)
            if value is not None:
                return value
    return None


@functools.cache
def _consulted(keys: tuple[str, ...]) -> frozenset[str]:
    """The attribute names ``_lookup`` reads for ``keys`` (``metadata`` for ``metadata.X``)."""
    return frozenset("metadata" if key.startswith("metadata.") else key for key in keys)


def _lookup(attrs: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    if not attrs or _consulted(keys).isdisjoint(attrs):  # most spans carry none of the keys
        return None
    metadata: dict[str, Any] | None = None
    for key in keys:
        if key.startswith("metadata."):
            if metadata is None:
                metadata = as_dict(attrs.get("metadata"))
            value = metadata.get(key[len("metadata."):])
        else:
            value = attrs.get(key)
        if value is not None and value != "" and not isinstance(value, (dict, list)):
            return str(value)
    return None


__all__ = ["SESSION_KEYS", "USER_KEYS", "trace_identity"]
