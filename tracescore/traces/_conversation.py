"""An agent run's conversation, derived from its model calls when the agent span lacks it.

Rules (``agent_input``):

- **The conversation** is what the run's first own model call was given (its input messages);
  the run's own input when no model call beneath has any.
- **System messages**: the agent's declared instructions, then the system-role messages of that
  conversation and of the run's own input, each text once; else the instructions its model steps
  declare.
- **The current turn** is the last user message (with the user messages right before it) of that
  conversation, whatever wrapper text the framework put around it (smolagents' ``New task:``,
  CrewAI's ``Current Task:``). The input message keeps the user's own text when the agent span
  carries it (its trailing user messages, read from any of the shapes ``input_messages_of``
  reads); otherwise it is that turn as the model got it. When the model got the user's text
  inside a template, earlier user turns in the history are read back out of the same template.
- **Remembered messages** are the conversation before the current turn, without system messages;
  what follows the turn in the first call's prompt (this run's own tool calls, as in a plain
  LLM-call trace cut into several calls) is the run's work, not history. Tool results are folded
  into the assistant calls they answer, consecutive assistant messages are joined, and a
  final-answer tool call reads as the assistant's answer (``_plumbing``).
"""

from __future__ import annotations

from tracescore.model import AgentInput, Message

from ._messages import input_messages_of, merge_conversation, to_message
from ._plumbing import answers_as_text
from ._steps import MODEL_KINDS, Msg, Step


def scope(agent: Step) -> list[Step]:
    """The run's subtree in order (the run itself first when it is model work); kept on the step,
    since the tree does not change once built."""
    cached = agent._scope_cache
    if cached is None:
        below = list(agent.descendants())
        cached = [agent, *below] if agent.kind in MODEL_KINDS else below
        agent._scope_cache = cached
    return cached


def in_nested(step: Step, agent: Step) -> bool:
    """True when ``step`` sits inside an agent run nested in ``agent``."""
    parent = step.parent
    while parent is not None and parent is not agent:
        if parent.kind == "agent_run":
            return True
        parent = parent.parent
    return False


def own_model_steps(agent: Step) -> list[Step]:
    """Model steps of this run (wrappers and calls), not those of nested agent runs, in order."""
    cached = agent._model_steps_cache
    if cached is None:
        cached = [s for s in scope(agent) if s.kind in MODEL_KINDS and not in_nested(s, agent)]
        agent._model_steps_cache = cached
    return cached


def conversation(agent: Step) -> list[Msg]:
    """The messages the model was first given in this run (the run's own input as a fallback)."""
    for step in own_model_steps(agent):
        if step.input_messages:
            return step.input_messages
    return own_input(agent)


def own_input(agent: Step) -> list[Msg]:
    """The run's own input messages, when its span carries any text (else empty)."""
    msgs = agent.input_messages
    if msgs:
        for msg in msgs:
            if msg.parts:
                return msgs
    if agent._input is None or agent.kind in MODEL_KINDS:
        return []
    return input_messages_of(agent.input) or []


def agent_input(agent: Step) -> AgentInput:
    """The ``AgentInput`` of an agent run."""
    conv = conversation(agent)
    own = own_input(agent)
    system: list[str] = []
    for text in [
        *(agent.system or []),
        *(m.text for m in conv if m.role == "system"),
        *(m.text for m in own if m.role == "system"),
    ]:
        if text and text not in system:
            system.append(text)
    if not system:
        for step in own_model_steps(agent):
            for text in step.system or []:
                if text and text not in system:
                    system.append(text)
    history = [m for m in conv if m.role != "system"]
    start, end = _current_turn(history)
    own_rest = [m for m in own if m.role != "system" and m.parts]
    own_tail = own_rest[slice(*_current_turn(own_rest))] or own_rest[-1:]
    current = own_tail or history[start:end]
    remembered = answers_as_text(history[:start])
    if own_tail and end > start:
        remembered = _unwrap_turns(remembered, history[end - 1].text, own_tail[-1].text)
    return AgentInput(
        input_messages=[to_message(m) for m in current],
        remembered_messages=[to_message(m) for m in merge_conversation(remembered)],
        system_messages=[Message(role="system", content=text) for text in system],
    )


def _unwrap_turns(msgs: list[Msg], as_sent: str, own: str) -> list[Msg]:
    """Earlier user turns without the wrapper text the framework put around this turn.

    When the model got the user's text inside a template (``New task:\n<text>``), earlier user
    turns of the history carry the same template: they are read back to the user's own text.
    """
    at = as_sent.rfind(own) if own and own != as_sent else -1
    if at < 0:
        return msgs
    prefix, suffix = as_sent[:at], as_sent[at + len(own) :]
    out: list[Msg] = []
    for msg in msgs:
        text = msg.text
        if (
            msg.role == "user"
            and len(msg.parts) == 1
            and len(text) > len(prefix) + len(suffix)
            and text.startswith(prefix)
            and text.endswith(suffix)
        ):
            msg = Msg("user", [text[len(prefix) : len(text) - len(suffix)]], id=msg.id)
        out.append(msg)
    return out


def _current_turn(msgs: list[Msg]) -> tuple[int, int]:
    """Bounds of the last block of user messages (``(len, len)`` when there is none)."""
    end = len(msgs)
    while end > 0 and msgs[end - 1].role != "user":
        end -= 1
    if end == 0:
        return len(msgs), len(msgs)
    start = end
    while start > 0 and msgs[start - 1].role == "user":
        start -= 1
    return start, end


__all__ = ["agent_input", "conversation", "in_nested", "own_input", "own_model_steps", "scope"]
