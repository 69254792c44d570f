"""Control tools, recognised by the role they play in a run rather than by their names.

- **A handoff**: a tool call after which another agent's run starts — outside the run that
  asked, or inside the tool's own span (a delegate tool) — whose name the call's name or
  arguments carry (``transfer_to_weather_agent``, ``handoff_to_WeatherAgent``, ``delegate_task
  {"targetAgents": ["weather_agent"]}``: names compared with case and punctuation aside). It is
  not a tool call of the run: the handed-to run becomes a child of the run that handed off; a
  tool span of the run named after the handed-to run, or naming it among its attribute values,
  is that handoff's execution (dropped with it).
- **A final answer**: the run's last tool call, after which its tool loop ends: with
  arguments, when no model call follows and they carry the run's final text or its result
  echoes them (smolagents' ``final_answer``); with none, when no later model call has the same
  instructions and a later one wrote the answer (DSPy's ``finish``, then the extract step); in a
  run whose model calls were not traced, when its arguments carry the run's declared answer. It
  is the run's answer, not a tool call.
- **In a history**, a turn that ends with a tool call — its result handed back, nothing written
  after it — whose result echoes its argument text, or whose arguments are one text, is read
  as that turn's answer (a final answer replayed into a later turn: smolagents' echoes it,
  BeeAI's answers ``Message has been sent``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from ._loops import facts_of
from ._run_text import same_text, texts_of
from ._scope import own_calls, own_tools, own_work
from ._steps import TOOL_KINDS, Call, Msg, Part, Result, Step, note

_NOT_WORD = re.compile(r"[^0-9a-z]+")
HANDOFF = "handoff"
FINAL_ANSWER = "final_answer"


def squash(name: str | None) -> str:
    """A name with case and punctuation aside (``Weather Agent`` → ``weatheragent``)."""
    return _NOT_WORD.sub("", (name or "").lower())


def handoffs(runs: list[Step]) -> list[Step]:
    """Move each handed-to agent run under the run that handed off to it; return the runs moved.

    ``runs``: the agent runs, outermost first. The calls looked at are the ones the run's model
    calls asked for, and, where the model's output was not captured, its tool spans."""
    agents = sorted((r for r in runs if r.kind == "agent_run"), key=lambda r: r.start_time_ns)
    moved: list[Step] = []
    if len(agents) < 2:
        return moved  # no other run to hand to
    for run in agents:
        asked_calls: list[tuple[Step, Call]] = [
            (call, asked)
            for call in own_calls(run)
            for msg in call.output_messages or []
            for asked in msg.calls
        ]
        seen = {(c.id, c.name) for _, c in asked_calls}
        for tool in own_tools(run):
            if (tool.tool_call_id, tool.tool_name) not in seen and tool.tool_name:
                # a tool span no captured model output asked for: its own call
                asked_calls.append((tool, Call(tool.tool_call_id, tool.tool_name, tool.tool_args)))
        for call, asked in asked_calls:
            target = _handed_to(run, call, asked, agents)
            if target is None:
                continue
            asked.control = HANDOFF
            _adopt(run, target)
            moved.append(target)
            note(target, f"handed off to by {run.name!r} ({run.span_id}) through its call "
                 f"{asked.name!r}: its child")
            for tool in own_tools(run):
                if _same_call(tool, asked) or _names(tool, target):
                    tool.kind = "generic"
                    tool.hint = HANDOFF
                    note(tool, f"{asked.name!r} hands the conversation to {target.name!r}: a "
                         "handoff, not a tool call (dropped)")
    return moved


def _handed_to(run: Step, call: Step, asked: Call, agents: list[Step]) -> Step | None:
    """The agent run ``asked`` hands to: a later run outside ``run``, or inside the tool step
    that executes ``asked`` (a delegate tool), whose name the call's name or arguments carry."""
    for other in agents:
        if other is run or other.start_time_ns < call.start_time_ns or _within(run, other):
            continue
        if _within(other, run):
            holder = other.parent
            while holder is not None and holder is not run and holder.kind not in TOOL_KINDS:
                holder = holder.parent
            if holder is None or holder is run or not _same_call(holder, asked):
                continue
        if carries_name(asked, other):
            return other
    return None


def carries_name(asked: Call, run: Step) -> bool:
    """Whether the call ``asked`` names ``run`` as where it hands the conversation: the run's
    name inside the tool's name (``transfer_to_weather_agent``), or among its arguments
    (``{"targetAgents": ["weather_agent"]}``), case and punctuation aside."""
    wanted = squash(asked.name)
    carried: set[str] | None = None
    for name in (run.name, run.agent_id):
        key = squash(name)
        if len(key) < 3:
            continue
        if key != wanted and key in wanted:
            return True
        if carried is None:
            carried = {squash(t) for t in texts_of(asked.args)}
        if key in carried:
            return True
    return False


def _names(tool: Step, target: Step) -> bool:
    """A tool step named after the run it hands to (``handoff to weather_agent``), or one of
    whose attribute values is that run's name (Laminar's ``agents.handoff`` span with
    ``openai.agents.handoff.to = weather_agent``)."""
    key = squash(target.name)
    if len(key) < 3:
        return False
    if key in squash(tool.name) or key in squash(tool.tool_name):
        return True
    return any(isinstance(v, str) and squash(v) == key for v in tool.attributes.values())


def _within(step: Step, top: Step) -> bool:
    node = step.parent
    while node is not None:
        if node is top:
            return True
        node = node.parent
    return False


def _adopt(owner: Step, target: Step) -> None:
    if target.parent is owner:
        return
    if target.parent is not None:
        target.parent.children.remove(target)
    target.parent = owner
    owner.children.append(target)
    target.hint = HANDOFF


def _same_call(tool: Step, asked: Call) -> bool:
    if tool.tool_call_id and asked.id:
        return tool.tool_call_id == asked.id
    names = (squash(tool.tool_name), squash(tool.name))
    return squash(asked.name) in names or any(n and squash(asked.name) in n for n in names)


class ToolCallLike(Protocol):
    """What ``final_answer`` reads of a run's tool call (``_tool_steps.Entry``)."""

    args: Any
    step: Step | None
    caller: Step | None


def _ends_run(args: Any, step: Step | None, anchor: Step, calls: list[Step],
              answer_of_run: Callable[[], str]) -> str | None:
    """Why a last tool call (``args``, its span ``step``, asked by ``anchor``) is the run's final
    answer (see the module docstring), or None."""
    after = step.start_time_ns if step is not None else anchor.start_time_ns
    later = [c for c in calls if c.start_time_ns > after]
    argless = args in (None, {}, [], "")
    if later and not argless:
        return None  # a call with arguments after which the model went on: a tool it used
    texts = texts_of(args)
    if not texts and not argless:
        return None  # arguments with no text: nothing to echo or to carry the answer
    echoed = texts_of(step.tool_result) if step is not None else []
    if any(same_text(a, e) for a in texts for e in echoed):
        why = "echoing its argument"
    else:
        answer = answer_of_run()
        if answer and any(same_text(a, answer) for a in texts):
            why = "carrying the run's final text"
        elif argless and later and answer:
            why = "with no arguments, after which another call wrote the answer"
        else:
            return None
    if later:
        system = facts_of(anchor).system
        if any(facts_of(c).system == system for c in later):
            return None  # the loop went on after it: a tool it used
    return why


def _drop(step: Step, name: str, why: str) -> None:
    step.kind = "generic"
    step.hint = FINAL_ANSWER
    note(step, "{!r} ends the run's tool loop {}: the run's final answer, not a tool call "
         "(dropped)", name, why)


def final_answer_span(run: Step, answer_of_run: Callable[[], str]) -> Step | None:
    """Stage 3: the run's last tool span when it is its final answer (dropped as control), read
    from the spans alone (the model's calls are matched in stage 5, ``final_answer``)."""
    calls, tools = own_work(run)
    if not tools:
        return None
    last = max(tools, key=lambda t: t.start_time_ns)
    if not calls:  # the run's model calls were not traced: its arguments must say the answer
        answer = answer_of_run()
        if not answer or not any(same_text(a, answer) for a in texts_of(last.tool_args)):
            return None
        _drop(last, last.tool_name or last.name, "carrying the run's declared answer (its model "
              "calls were not traced)")
        return last
    anchor = next((c for c in reversed(calls) if c.start_time_ns <= last.start_time_ns), None)
    if anchor is None:
        return None
    why = _ends_run(last.tool_args, last, anchor, calls, answer_of_run)
    if why is None:
        return None
    _drop(last, last.tool_name or last.name, why)
    return last


def final_answer(entries: list[Any], calls: list[Step], answer_of_run: Callable[[], str]) -> Any:
    """Stage 5: the run's last tool call when it is the run's final answer, else None (see the
    module docstring); the model's call is marked control (its span, if any, was dropped by
    ``final_answer_span``).

    ``entries``: the run's tool calls in call order (``ToolCallLike``); ``calls``: its own model
    calls; ``answer_of_run``: its final text (declared, or the last model text), read only when
    the call could be one."""
    if not entries:
        return None
    last = entries[-1]
    step = last.step
    anchor = last.caller
    if anchor is None and step is not None:
        anchor = next((c for c in reversed(calls) if c.start_time_ns <= step.start_time_ns),
                      None)
    if anchor is None:
        return None
    why = _ends_run(last.args, step, anchor, calls, answer_of_run)
    if why is None:
        return None
    if anchor is last.caller:
        for msg in anchor.output_messages or []:
            for call in msg.calls:
                if (call.id and call.id == getattr(last, "id", None)) or call.args is last.args:
                    call.control = FINAL_ANSWER
    if step is not None and step.kind != "generic":
        _drop(step, step.tool_name or step.name, why)
    return last


def answer_of(call: Call) -> str:
    """The answer text a final-answer call carries (its one text argument, or the first)."""
    args: Any = call.args
    texts = texts_of(args)
    if isinstance(args, dict) and len(args) == 1:
        only = next(iter(args.values()))
        if isinstance(only, str):
            return only
    return texts[0] if texts else ""


def answers_as_text(msgs: list[Msg], then: Msg | None = None) -> list[Msg]:
    """A history with each turn-ending echo call (a final answer replayed into a later turn)
    read as the assistant's answer, its echoed result dropped; ``then``: the user message that
    follows the history (the current turn's), if any."""
    ends: dict[int, Call] = {}
    last_call: Call | None = None
    last_result: Result | None = None
    for msg in [*msgs, then if then is not None and then.role == "user" else Msg("user", [])]:
        if msg.role == "user":
            if last_call is not None and last_result is not None and (
                _echoes(last_call, last_result) or _one_text(last_call)
            ):
                ends[id(last_call)] = last_call
            elif last_call is not None and last_result is None and _one_text(last_call) and (
                _said_in(last_call, msg.text)
            ):  # its result merged into the next user message (OpenLIT's smolagents history)
                ends[id(last_call)] = last_call
            last_call = last_result = None
            continue
        if msg.role == "assistant" and msg.text:
            last_call = last_result = None
        for part in msg.parts:
            if isinstance(part, Call):
                last_call, last_result = part, None
            elif isinstance(part, Result) and last_call is not None:
                if part.id is None or part.id == last_call.id:
                    last_result = part
    if not ends:
        return msgs
    answered = {c.id for c in ends.values()}
    out: list[Msg] = []
    for msg in msgs:
        parts: list[Part] = []
        for part in msg.parts:
            if isinstance(part, Call) and id(part) in ends:
                parts.append(answer_of(part))
            elif isinstance(part, Result) and (part.id in answered and part.id is not None):
                continue
            elif isinstance(part, Result) and part.id is None and _echo_result(part, ends):
                continue
            else:
                parts.append(part)
        if parts or not msg.parts:
            out.append(Msg(msg.role, parts, id=msg.id) if parts != msg.parts else msg)
    return out


def _one_text(call: Call) -> bool:
    """A call whose arguments are one text (``{"response": "…"}``): a turn that ended with it,
    nothing written after its result, ended by giving that text (BeeAI's ``final_answer``, whose
    result is ``Message has been sent``)."""
    args = call.args
    if not isinstance(args, dict) or len(args) != 1:
        return False
    (text,) = args.values()
    return isinstance(text, str) and bool(text.strip())


def _said_in(call: Call, text: str) -> bool:
    """Whether ``text`` says the one text argument of ``call`` again."""
    (said,) = call.args.values() if isinstance(call.args, dict) else ("",)
    return isinstance(said, str) and bool(said.strip()) and said.strip() in text


def _echoes(call: Call, result: Result) -> bool:
    args = texts_of(call.args)
    return bool(args) and any(same_text(a, r) for a in args for r in texts_of(result.result))


def _echo_result(result: Result, ends: dict[int, Call]) -> bool:
    return any(_echoes(call, result) for call in ends.values())


__all__ = [
    "FINAL_ANSWER",
    "HANDOFF",
    "answer_of",
    "answers_as_text",
    "final_answer",
    "final_answer_span",
    "handoffs",
    "squash",
]
