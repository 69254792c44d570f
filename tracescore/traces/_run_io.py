"""What a run takes in and gives out, read from its own span and its model calls.

Shared by the stages that compare runs with what surrounds them (``_containers``), derive a
run's conversation (``_conversation``) and its answer (``_agent``):

- **The current turn** of a run is the last block of user messages its first model call was
  given.
- **The user's own text** in a run's input record is a text of that record sitting in the
  current turn as most of the line(s) it is on (the user's words inside a framework's template:
  ``New task:\\n<text>``, ``Current Task: <text>``, a prompt's field), not a word inside a
  sentence.
- **The declared answer** is the run's own output when it says one: plain text (never a repr),
  a message list's last assistant text (a message record under any key of a record: an ADK
  event's ``content``), or a record with one text field — with several, the one
  its last model call wrote last (DSPy's ``{"reasoning", "answer"}``), not counting a text
  that is part of another one found there (the ``city`` a graph state's ``answer`` names); a
  record's text that its model calls did not write last is no answer when it has model calls
  (the Agents SDK's ``{"output_type": "str"}`` under MLflow declares a type, not the answer). A
  declared answer that is the last model call's text with other surrounding whitespace is that
  text: the framework's rendering of the model's answer (Strands adds a newline per text block).
"""

from __future__ import annotations

from ._messages import held_messages, parse_messages
from ._run_text import is_repr, texts_of
from ._scope import own_calls
from ._steps import Msg, Step
from ._values import parse_json


def current_turn(msgs: list[Msg]) -> tuple[int, int]:
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


def turn_text(calls: list[Step]) -> str:
    """The text of the current turn the run's first model call with input was given."""
    for call in calls:
        msgs = [m for m in call.input_messages or [] if m.role != "system"]
        if msgs:
            start, end = current_turn(msgs)
            return "\n".join(m.text for m in msgs[start:end])
    return ""


def user_text(value: object, turn: str) -> str | None:
    """The user's own text in a run's input ``value``: its longest text that fills the line(s) it
    sits on in ``turn`` (see the module docstring)."""
    if not turn:
        return None
    inside = [t.strip() for t in texts_of(value) if _fills_lines(t.strip(), turn)]
    return max(inside, key=len) if inside else None


def _fills_lines(text: str, turn: str) -> bool:
    if len(text) < 2:
        return False
    at = turn.find(text)
    if at < 0:
        return False
    start = turn.rfind("\n", 0, at) + 1
    end = turn.find("\n", at + len(text))
    line = turn[start : len(turn) if end < 0 else end].strip()
    return len(text) * 2 >= len(line)


def last_text(calls: list[Step]) -> str:
    """The last assistant text the run's model calls wrote."""
    for step in reversed(calls):
        for msg in reversed(step.output_messages or []):
            if msg.role == "assistant" and msg.text:
                return msg.text
    return ""


def declared_answer(run: Step, calls: list[Step]) -> str | None:
    """The answer the run's own span declares (see the module docstring), or None; as the
    model wrote it when the span's copy only adds or drops surrounding whitespace."""
    found = _declared(run, calls)
    if found is None or not calls:
        return found
    written = last_text(calls)
    return written if written and written != found and written.strip() == found.strip() else found


def _declared(run: Step, calls: list[Step]) -> str | None:
    for msg in reversed(run.output_messages or []):
        if msg.role == "assistant" and msg.text and not is_repr(msg.text):
            return msg.text
    if run._output is None:
        return None
    value = parse_json(run.output)
    if isinstance(value, str):
        return value if value.strip() and not is_repr(value) else None
    if not isinstance(value, dict):
        return None
    for msg in reversed(_messages_in(value)):
        if msg.role == "assistant" and msg.text and not is_repr(msg.text):
            return msg.text
    texts = [v for v in value.values() if isinstance(v, str) and v.strip() and not is_repr(v)]
    completion = last_text(calls)
    if len(texts) == 1 and (not calls or texts[0].strip() in completion):
        return texts[0]
    found = [t for t in texts if completion and t in completion]
    # a text inside another text found (the city the answer names) is a piece of it
    placed = [(completion.rfind(t), t) for t in found if not any(t in o and t != o for o in found)]
    return max(placed)[1] if placed else None


def _messages_in(record: dict[str, object]) -> list[Msg]:
    """Messages a record holds: a message record (one with a role) under any key (``message``;
    an ADK event's ``content``), or in a record under one (``{"result": {"response": …}}``), or
    a message list under any key."""
    held = held_messages(record)
    if held:
        return parse_messages(held, default_role="assistant") or []
    if any(isinstance(v, list) for v in record.values()):
        msgs = parse_messages(record, default_role="assistant") or []
        return msgs if len(msgs) > 1 or (msgs and msgs[0].parts) else []
    return []


def run_io(run: Step, calls: list[Step]) -> tuple[list[str], list[str]]:
    """The texts a run takes in and gives out, for comparing a span around it: an agent run's
    current turn, the user's own text in its input and its answer; a workflow's own input and
    output texts."""
    if run.kind != "agent_run":
        return texts_of(run.input), texts_of(run.output)
    turn = turn_text(calls)
    wanted_in = [turn] if turn else []
    if run._input is not None:
        own = user_text(run.input, turn)
        if own:
            wanted_in.append(own)
        elif isinstance(run.input, str) and not is_repr(run.input):
            wanted_in.append(run.input)
    for msg in run.input_messages or []:
        if msg.role == "user" and msg.text and not is_repr(msg.text):
            wanted_in.append(msg.text)
    wanted_out = [t for t in (declared_answer(run, calls), last_text(calls)) if t]
    if calls:  # a run that ended by a final-answer call carries its answer in the arguments
        for msg in calls[-1].output_messages or []:
            for call in msg.calls:
                wanted_out.extend(texts_of(call.args))
    for child in run.children:
        if child.kind == "agent_run" and child.hint == "handoff":  # its answer is theirs
            wanted_out.extend(run_io(child, own_calls(child))[1])
    return wanted_in, wanted_out


__all__ = [
    "current_turn",
    "declared_answer",
    "last_text",
    "run_io",
    "turn_text",
    "user_text",
]
