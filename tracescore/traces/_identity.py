"""A trace's session (conversation) id and user id, read by the shape of attribute keys.

Conventions and frameworks name these ids under keys of their own (``session.id``,
``gen_ai.conversation.id``, ``mastra.metadata.threadId``, ``ai.telemetry.metadata.sessionId``,
``ai.settings.context.sessionId``, ``conversation.id``, ``langfuse.user.id``, a ``thread_id`` in
OpenInference's JSON ``metadata``…). One pattern reads them all, whatever the prefix and the
separator (``.``, ``_``, ``:``, camelCase): a key whose last part is a **session**,
**conversation** or **thread** id is a session id (preferred in that order), a key whose last
part is a **user** or **end user** id is a user id (Mastra's ``resourceId`` is read by its
adapter). Keys inside a JSON
``metadata`` attribute are read the same way.

Precedence, first match wins:

1. What the adapters put on the step tree (``Step.conversation_id`` / ``Step.user_id``), the
   outermost step first.
2. Span attributes, spans in tree order (root first), by the pattern above.
3. Resource attributes of those spans, the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._steps import Step, walk_steps
from ._values import as_dict

if TYPE_CHECKING:
    from ._trace import Trace

_SESSION_WORDS = ("session", "conversation", "thread")
"""Words of a session id key, in order of preference."""
_USER_WORDS = ("user", "enduser")
_PARTS = re.compile(r"[._:/\-]+|(?<=[a-z0-9])(?=[A-Z])")


def _words(key: str) -> list[str]:
    return [w.lower() for w in _PARTS.split(key) if w]


def _id_word(key: str) -> str | None:
    """The word whose id a key names (``gen_ai.conversation.id`` → ``conversation``;
    ``ai.settings.context.sessionId`` → ``session``), or None."""
    if not key[-2:].lower() == "id":
        return None
    words = _words(key)
    if len(words) >= 2 and words[-1] == "id":
        return words[-2]
    return None


def id_of(attrs: Mapping[str, Any], words: tuple[str, ...]) -> str | None:
    """The id under the most preferred key of ``words`` in ``attrs`` (and its ``metadata``)."""
    if not attrs:
        return None
    best: tuple[int, str] | None = None
    for key, value in attrs.items():
        if key == "metadata" and value:
            inner = id_of(as_dict(value), words)
            if inner is not None and best is None:
                best = (len(words), inner)
            continue
        word = _id_word(key)
        if word is None or word not in words:
            continue
        if value is None or value == "" or isinstance(value, (dict, list)):
            continue
        rank = words.index(word)
        if best is None or rank < best[0]:
            best = (rank, str(value))
            if rank == 0:
                break
    return best[1] if best is not None else None


def session_id_of(attrs: Mapping[str, Any]) -> str | None:
    """The session (conversation, thread) id a span's attributes carry, by key pattern."""
    return id_of(attrs, _SESSION_WORDS)


def user_id_of(attrs: Mapping[str, Any]) -> str | None:
    """The user id a span's attributes carry, by key pattern."""
    return id_of(attrs, _USER_WORDS)


def trace_identity(trace: Trace, roots: list[Step] | None = None) -> tuple[str | None, str | None]:
    """(session id, user id) of ``trace``; None where no span carries one."""
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
        session = _find(spans, session_id_of)
    if user is None:
        user = _find(spans, user_id_of)
    return session, user


def _find(spans: Iterable[Any], read: Any) -> str | None:
    spans = list(spans)
    for source in ("attributes", "resource_attributes"):
        for span in spans:
            value = read(getattr(span, source))
            if value is not None:
                return str(value)
    return None


__all__ = ["id_of", "session_id_of", "trace_identity", "user_id_of"]
