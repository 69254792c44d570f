"""Stage 4: each agent run's conversation, derived from its model calls.

Rules (``agent_input``):

- **The conversation** is what the run's first own model call was given (its input messages);
  the run's own input when no model call beneath has any.
- **System messages**: the agent's declared instructions, then the system-role messages of that
  conversation and of the run's own input, each text once; else the instructions its model steps
  declare.
- **The current turn** is the last user message (with the user messages right before it) of that
  conversation. The run's own input is used for it only when it is a real message list (items
  with roles, at any depth of its record; one message record beside identifiers) or the plain
  user text; a record's text is used when
  the model's current turn contains it (the user's own words without the wrapper text a
  framework put around them: smolagents' ``New task:``, CrewAI's ``Current Task:``, a prompt
  template). A Python repr is never read as a message's text. When the model got the user's
  text inside a template, earlier user turns in the history are read back out of it too.
- **Remembered messages** are the conversation before the current turn, without system messages;
  what follows the turn in the first call's prompt (this run's own tool calls) is the run's work,
  not history. Tool results are folded into the assistant calls they answer, consecutive
  assistant messages are joined, and a turn that ended with a final-answer call reads as the
  assistant's answer (``_control``).
"""

from __future__ import annotations

from typing import Any

from tracescore.model import AgentInput, Message

from ._control import answers_as_text
from ._message_out import merge_conversation, to_message
from ._messages import held_messages, norm_role, parse_messages
from ._run_io import current_turn, user_text
from ._run_text import is_repr, texts_of
from ._scope import own_model_steps
from ._steps import MODEL_KINDS, Msg, Step
from ._values import langchain_message, parse_json


def input_messages_of(value: Any) -> list[Msg] | None:
    """An agent span's own input as messages, when it is a real message list (items with roles,
    found at any depth of a record) or the plain user text; None otherwise (a record, a repr)."""
    value = parse_json(value)
    if isinstance(value, str):
        return [Msg("user", [value])] if value.strip() and not is_repr(value) else None
    found = _message_list(value, 0)
    if found is None:
        return None
    msgs = [m for m in parse_messages(found) or [] if m.parts]
    return msgs or None


def _message_list(value: Any, depth: int) -> list[Any] | None:
    """A message list, or a record whose content is one (no text of its own beside it:
    ``{"input": "…", "chat_history": […]}`` is a text with its history, not a message list), or
    a record holding one message record beside identifiers only (``{"user_id": "u-1",
    "new_message": {"role": "user", …}}``)."""
    if depth > 4:
        return None
    if isinstance(value, list):
        if value and all(_message_shaped(item) for item in value):
            return value
        return None
    if isinstance(value, dict):
        texts = [v for v in value.values() if isinstance(v, str) and v.strip() and not is_repr(v)]
        held = held_messages(value, depth=1)
        if len(held) == 1 and not any(len(t.split()) > 1 for t in texts):
            return held  # one message record beside ids only (ADK's run request: new_message)
        if texts:
            return None
        for item in value.values():
            found = _message_list(parse_json(item), depth + 1)
            if found is not None:
                return found
    return None


def _message_shaped(item: Any) -> bool:
    """A message: a record with a role (or a LangChain serialisation), or a (role, text) pair."""
    if isinstance(item, dict):
        return "role" in item or langchain_message(item) is not None
    if isinstance(item, str):
        return is_repr(item) and "role=" in item  # a message object printed with repr
    return (
        isinstance(item, (list, tuple))
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], str)
        and norm_role(item[0], "") in ("system", "user", "assistant", "tool")
    )


def conversation(agent: Step) -> list[Msg]:
    """The messages the model was first given in this run: its first model call's, else a
    wrapper's (a wrapper's copy may leave out what the request declared beside them, such as
    the Responses API's ``instructions``); the run's own input as a fallback."""
    steps = own_model_steps(agent)
    for step in steps:
        if step.is_model_call and step.input_messages:
            return step.input_messages
    for step in steps:
        if step.input_messages:
            return step.input_messages
    return own_input(agent)


def own_input(agent: Step, turn: str = "") -> list[Msg]:
    """The run's own input messages (see the rules above): a message list or the plain user
    text; else the text of its record that the model's current turn ``turn`` contains."""
    msgs = agent.input_messages  # what a convention adapter read as the agent's messages
    if msgs and any(m.parts for m in msgs):
        return msgs
    if agent._input is None or agent.kind in MODEL_KINDS:
        return []
    found = input_messages_of(agent.input)
    if found:
        return found
    own = user_text(agent.input, turn)
    if own:
        return [Msg("user", [own])]
    texts = texts_of(agent.input)
    if not turn and len(texts) == 1:
        return [Msg("user", [texts[0]])]  # no model call to compare with: the record's one text
    return []

def agent_input(agent: Step) -> AgentInput:
    """The ``AgentInput`` of an agent run."""
    conv = conversation(agent)
    first_turn = [m for m in conv if m.role != "system"]
    start0, end0 = current_turn(first_turn)
    own = own_input(agent, "\n".join(m.text for m in first_turn[start0:end0]))
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
    start, end = current_turn(history)
    own_rest = [m for m in own if m.role != "system" and m.parts]
    own_tail = own_rest[slice(*current_turn(own_rest))] or own_rest[-1:]
    current = own_tail or history[start:end]
    remembered = history[:start]
    if remembered:
        remembered = answers_as_text(remembered, history[start] if start < len(history) else None)
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
    The template may be the message's last line before the text alone (what came before it in
    the message, an earlier call's result merged in by an exporter, is no part of it).
    """
    at = as_sent.rfind(own) if own and own != as_sent else -1
    if at < 0:
        return msgs
    prefix, suffix = as_sent[:at], as_sent[at + len(own) :]
    lines = prefix.rstrip("\n").rsplit("\n", 1)
    tail = prefix[len(prefix.rstrip("\n")) :]
    prefixes = [prefix] if len(lines) < 2 else [prefix, lines[1] + tail]
    out: list[Msg] = []
    for msg in msgs:
        text = msg.text
        if msg.role == "user" and len(msg.parts) == 1:
            for head in prefixes:
                if (
                    len(text) > len(head) + len(suffix)
                    and text.startswith(head)
                    and text.endswith(suffix)
                ):
                    msg = Msg("user", [text[len(head) : len(text) - len(suffix)]], id=msg.id)
                    break
        out.append(msg)
    return out


__all__ = ["agent_input", "conversation", "input_messages_of", "own_input"]
