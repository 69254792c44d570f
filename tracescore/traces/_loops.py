"""Model calls grouped into conversations by what they carry: the loops agent runs are made of.

Rule: call B continues call A (both single model calls, A earlier) when B's prompt text carries a
line of A's completion (frameworks that fold the model's earlier completions into one prompt,
DSPy's ReAct and its extract step), or when they were given the same system instructions and
B's input replays A's output as messages: the tool calls A asked for (by call id) or their
results, A's answer text as an assistant message, or A's whole prompt as the start of B's (a
chat history that grows). Calls linked this way, directly or through others, are one
conversation: a model-call/tool loop. Calls given different instructions that replay each
other's messages (a triage agent and the agent it hands off to) are different conversations.
Calls that are siblings under one span are taken as one conversation without reading them:
their smallest common span is that span either way.
"""

from __future__ import annotations

from ._steps import Msg, Step

_MIN_LINE = 24
"""A completion line shorter than this is too common to show that a prompt carries it."""


class _Facts:
    """What one call says, for linking (read once per call)."""

    __slots__ = ("asked", "given", "history", "lines", "prompt", "system", "text")

    def __init__(self, call: Step) -> None:
        inputs = call.input_messages or []
        outputs = call.output_messages or []
        system = [m.text for m in inputs if m.role == "system"]
        self.system = "\n".join([*(call.system or []), *system])
        self.history = [_key(m) for m in inputs if m.role != "system"]
        self.prompt = "\n".join(m.text for m in inputs if m.role != "system")
        self.given: set[str] = set()
        for msg in inputs:
            self.given.update(c.id for c in msg.calls if c.id)
            self.given.update(r.id for r in msg.results if r.id)
        self.asked = {c.id for m in outputs for c in m.calls if c.id}
        self.text = "".join(m.text for m in outputs if m.role == "assistant")
        self.lines = [ln.strip() for ln in self.text.splitlines() if len(ln.strip()) >= _MIN_LINE]


def facts_of(call: Step) -> _Facts:
    """What ``call`` says, for ``continues``."""
    return _Facts(call)


def _key(msg: Msg) -> tuple[str, str, tuple[str, ...]]:
    return (msg.role, msg.text, tuple(c.name for c in msg.calls))


def continues(b: _Facts, a: _Facts) -> str | None:
    """Why call ``b`` continues call ``a``'s conversation, or None when it does not."""
    if a.lines and any(line in b.prompt for line in a.lines):
        return "its prompt carries the earlier completion"
    if a.system != b.system:
        return None
    if a.asked and a.asked & b.given:
        return "replays the tool calls it asked for"
    if a.text and any(k[0] == "assistant" and k[1] == a.text for k in b.history):
        return "replays its answer"
    if a.history and b.history[: len(a.history)] == a.history and len(b.history) > len(a.history):
        return "its prompt starts with the earlier prompt"
    return None


def same_prompt(b: _Facts, a: _Facts) -> bool:
    """Whether calls ``a`` and ``b`` were given the same instructions and the same non-empty
    messages (an instrumentation that records only the user's input of each call of a loop)."""
    return bool(a.history) and a.system == b.system and a.history == b.history


def conversations(calls: list[Step]) -> list[list[Step]]:
    """The calls (single model calls, in start order) grouped into conversations, each in start
    order; a call linked to none is a conversation of its own."""
    if len(calls) < 2:
        return [[c] for c in calls]
    if all(c.parent is calls[0].parent for c in calls):
        # Calls side by side under one span: whatever links them, their home is that span.
        return [list(calls)]
    facts = [_Facts(c) for c in calls]
    parent = list(range(len(calls)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for j in range(1, len(calls)):
        for i in range(j - 1, -1, -1):
            if find(i) == find(j):
                continue
            if continues(facts[j], facts[i]) is not None:
                parent[find(j)] = find(i)
                break
    groups: dict[int, list[Step]] = {}
    for index, call in enumerate(calls):
        groups.setdefault(find(index), []).append(call)
    return list(groups.values())


__all__ = ["continues", "conversations", "facts_of", "same_prompt"]
