"""A trace's session (conversation) id and user id, read by the shape of attribute keys.

Conventions and frameworks name these ids under keys of their own (``session.id``,
``gen_ai.conversation.id``, ``mastra.metadata.threadId``, ``ai.telemetry.metadata.sessionId``,
``ai.settings.context.sessionId``, ``conversation.id``, ``langfuse.user.id``, a ``thread_id`` in
OpenInference's JSON ``metadata``…). One pattern reads them all, whatever the prefix and the
separator (``.``, ``_``, ``:``, camelCase): a key whose last part is a **session**,
**conversation** or **thread** id is a session id (preferred in that order; then a key that is
a **group** id as the whole key or among a trace's ``metadata`` keys, as the OpenAI Agents SDK
groups a conversation's traces: ``group_id``, ``….metadata.openai.agents.group_id``, not
``edge_group.id``), a key whose last
part is a **user** or **end user** id is a user id (Mastra's ``resourceId`` is read by its
adapter). Keys inside a JSON
``metadata`` attribute are read the same way. A value is an id only when it is one token: a
sentence under such a key is a placeholder (Logfire scrubs ``session.id`` to ``[Scrubbed due to
'session']`` on the spans it writes), and the next span's id is read instead.

Precedence, first match wins:

1. What the adapters put on the step tree (``Step.conversation_id`` / ``Step.user_id``), the
   outermost step first.
2. Span attributes, spans in tree order (root first), by the pattern above.
3. Resource attributes of those spans, the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ._steps import Step, walk_steps
from ._values import as_dict, id_like, words

if TYPE_CHECKING:
    from ._trace import Trace

_SESSION_WORDS = ("session", "conversation", "thread", "group")
"""Words of a session id key, in order of preference (``group`` only as the whole key or among
a trace's metadata: ``group_id``, the OpenAI Agents SDK's id of a conversation's traces;
``edge_group.id`` is the id of some other group)."""
_USER_WORDS = ("user", "enduser")
_ID_ENDS = frozenset({"id", "Id", "ID"})


@functools.lru_cache(maxsize=4096)
def _id_word(key: str) -> str | None:
    """The word whose id a key names (``gen_ai.conversation.id`` → ``conversation``;
    ``ai.settings.context.sessionId`` → ``session``), or None."""
    if not key[-2:].lower() == "id":
        return None
    said = words(key)
    if len(said) >= 2 and said[-1] == "id":
        word = said[-2]
        return word if word != "group" or len(said) == 2 or _group_segment(key) else None
    return None


_SEGMENTS = re.compile(r"[.:/]+")


def _group_segment(key: str) -> bool:
    """A group id key that names a conversation's group: the whole key (``group_id``), or a
    ``group_id`` / ``group.id`` among a trace's metadata (Laminar's
    ``lmnr.association.properties.metadata.openai.agents.group_id``: the app's own label); a
    group id elsewhere (``edge_group.id``, ``consumer.groupId``) is some other group's."""
    segments = [s.lower() for s in _SEGMENTS.split(key) if s]
    if "metadata" not in segments[:-1]:
        return False
    last = words(segments[-1])
    return last == ["group", "id"] or (last == ["id"] and segments[-2] == "group")


class _Plan(NamedTuple):
    """Where an attribute layout keeps its ids: session and user id keys, most preferred first,
    and whether it has a JSON ``metadata`` key to read the same way."""

    session: tuple[str, ...]
    user: tuple[str, ...]
    metadata: bool


@functools.lru_cache(maxsize=1024)
def _plan(keys: tuple[str, ...]) -> _Plan:
    """The plan of a layout; spans of one framework share a few layouts, so this is read once
    per layout, not once per span."""
    ranked: dict[tuple[str, ...], list[tuple[int, str]]] = {_SESSION_WORDS: [], _USER_WORDS: []}
    for key in keys:
        if key[-2:] not in _ID_ENDS:
            continue
        word = _id_word(key)
        for preferred, found in ranked.items():
            if word in preferred:
                found.append((preferred.index(word), key))
    session, user = (
        tuple(key for _, key in sorted(found, key=lambda f: f[0])) for found in ranked.values()
    )
    return _Plan(session, user, "metadata" in keys)


def _first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attrs[key]
        if id_like(value):
            return str(value)
    return None


def _ids(attrs: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(session id, user id) under the attribute keys of ``attrs``, then its ``metadata``."""
    if not attrs:
        return None, None
    plan = _plan(tuple(attrs))
    session = _first(attrs, plan.session) if plan.session else None
    user = _first(attrs, plan.user) if plan.user else None
    if plan.metadata and (session is None or user is None) and attrs["metadata"]:
        inner_session, inner_user = _ids(as_dict(attrs["metadata"]))
        session = session if session is not None else inner_session
        user = user if user is not None else inner_user
    return session, user


def session_id_of(attrs: Mapping[str, Any]) -> str | None:
    """The session (conversation, thread) id a span's attributes carry, by key pattern."""
    return _ids(attrs)[0]


def user_id_of(attrs: Mapping[str, Any]) -> str | None:
    """The user id a span's attributes carry, by key pattern."""
    return _ids(attrs)[1]


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
    for source in ("attributes", "resource_attributes"):
        for span in spans:
            found_session, found_user = _ids(getattr(span, source))
            session = session if session is not None else found_session
            user = user if user is not None else found_user
            if session is not None and user is not None:
                return session, user
    return session, user


__all__ = ["session_id_of", "trace_identity", "user_id_of"]
