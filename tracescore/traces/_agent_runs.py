"""Stage 2: agent runs, found bottom-up from the model calls and tool executions.

Rules:

- **A declared agent** (a span a convention types as an agent: an OpenInference AGENT, a GenAI
  ``invoke_agent``, Mastra's ``agent_run``, a shape adapter's ``agent`` kind word) is the run of
  the model calls beneath it — each call belongs to the nearest one above it — and of the tool
  calls beneath it when it holds no model call. A span that says it is a node of a graph (its
  ``langgraph_node`` metadata is its own name) is a step of a loop, never a run.
- **A declared agent around a step that holds the conversation** is not its run: when one plain
  child holds all its model calls, other children are steps with input or output of their
  own, and its own input does not carry the question the calls were asked (a step handed it
  on), the calls find their run beneath it (Laminar declares every LangGraph graph an agent,
  the workflow's too); stage 3 makes it the workflow it is.
- **An agent span that names no other agent** than the one it is directly inside (no agent
  name or id attribute, a bare GenAI ``invoke_agent``, or the same name) is a turn of that
  agent's loop, not a run (OpenLIT's Agents SDK spans, one per model call, and its smolagents
  ``invoke_agent weather_agent step_1`` spans).
- **Agent spans that are siblings holding parts of one conversation** (the later one's first
  call continues the earlier one's last: ``_loops``, or starts from the same prompt, as when only
  the user's input of each call is recorded) are steps of that loop, not runs.
- **An empty declared agent beside its body**: an agent span with nothing beneath, whose sibling
  of the same name holds model work, lends that sibling its declaration (OpenLLMetry's
  ``invoke_agent X`` next to ``execute_task X``); beside an agent span of the same name that
  holds the work it is a second record of it (stage 1, ``_model_calls.drop_twin_records``).
- **Calls with no declared agent** are grouped into conversations (``_loops``), deepest home
  first. A conversation's **home** is the smallest span holding its calls and the tool spans
  they asked for. A declared agent above the home is its run; otherwise a home that is not a
  call is an implicit agent run (a chain, a plain span, an AI SDK top call looping over tools),
  named by the agent name it carries (an ``agent.name`` attribute, read by the shape adapter),
  else by the name its span name was written with (``Agent run: {name!r}``), else after the
  object of a method-call span name (``FunctionAgent.run`` → ``FunctionAgent``).
  A model step over calls is that only at the top of a one-root trace; inside something else
  it is the loop, and the span holding it is the run (Mastra's ``llm`` span over its steps,
  under an agent span nothing declares an agent).
- **A lone call** is a run only when it is the trace's whole work: the innermost span above it
  that names an agent (an ``agent_name`` attribute), else its root, whose output, if any, reads
  as the call's answer, is the run (a root that is the call itself stands as the agent of a
  plain LLM-call trace). Elsewhere a lone call is one model call of whatever holds it.
- **A call that hands off**: a call outside every run that asks for a tool naming a run which
  starts after it (``transfer_to_weather_agent``) is the model call of the run that hands off:
  the innermost span above it that names an agent, else the call's parent.
- **A plain root over model or tool calls** in which no run was found is their run.
- **A declared agent whose model calls were not traced**: an agent span with nothing beneath
  that declares an answer of its own (its output says one, ``_run_io.declared_answer``) is a
  run (OpenInference's ADK agent span, whose framework calls its model through another client).

- **An agent whose model calls were not traced, found from what its steps give out**: with no
  model call traced anywhere and no run found (before the plain-root rule), the innermost span
  whose steps give out a conversation (a message list with a user message) and later an
  assistant's answer is an agent run: its input the conversation (the last one given out
  before its first tool call), its output the answer's record, its name the ``…agent_name``
  that record declares.

Other declared agents that run nothing are left for stage 3 (containers).
"""

from __future__ import annotations

from collections.abc import Iterable

from ._adapt_generic import method_owner, template_name
from ._adapt_shape import declared_agent_name, message_list
from ._control import carries_name
from ._loops import continues, conversations, facts_of, same_prompt
from ._messages import held_messages
from ._run_io import declared_answer, turn_text
from ._run_text import reads_as
from ._scope import depth_of
from ._steps import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Msg, Step, note


def graph_node(step: Step) -> bool:
    """A span that says it is a node of a graph (``langgraph_node`` metadata is its own name)."""
    node = step.metadata.get("langgraph_node")
    return node is not None and node in (step.span_name, step.name)


def declared_agent(step: Step) -> bool:
    """A span a convention declares an agent run (and not a graph node)."""
    return step.kind == "agent_run" and step.hint != "implicit_agent" and not graph_node(step)


def find_agent_runs(
    calls: list[Step], tools: list[Step], empties: list[Step], roots: list[Step]
) -> list[Step]:
    """Make each conversation's run an agent run; return the runs, outermost first.

    ``calls``: the single model calls in start order; ``tools``: the tool executions;
    ``empties``: declared agent spans with nothing beneath.
    """
    found: list[Step] = []
    for empty in empties:
        _lend_declaration(empty)
        if declared_agent(empty) and declared_answer(empty, []):
            note(empty, "agent span with nothing beneath that declares an answer: the run of an "
                 "agent whose model calls were not traced")
            found.append(empty)
    loose: list[Step] = []
    owned: dict[int, list[Step]] = {}
    owners: dict[int, Step] = {}
    holders: dict[int, bool] = {}
    for call in calls:
        owner = _declared_owner(call, holders)
        if owner is None:
            loose.append(call)
        else:
            owned.setdefault(id(owner), []).append(call)
            owners[id(owner)] = owner
    for owner in _loop_steps(owners, owned):
        loose.extend(owned.pop(id(owner)))
        owner.kind = "generic"
    for key, owner in owners.items():
        if key in owned:
            note(owner, "agent span holding a conversation of model calls: the agent run")
            found.append(owner)
    for tool in tools:
        owner = _declared_owner(tool, holders)
        if owner is not None and owner not in found and id(owner) not in owned:
            if owner.kind == "agent_run":
                note(owner, "agent span holding tool calls: the agent run")
                found.append(owner)
    if loose:
        loose.sort(key=lambda c: c.start_time_ns)
        found.extend(_implicit_runs(loose, tools, len(roots), holders))
        found.extend(_handing_off(loose, found))
    if not calls and not found:
        found.extend(_untraced_runs(roots, tools))
    if loose or (tools and not found):
        found.extend(_plain_roots(roots, found))
    found = list(dict.fromkeys(found))
    found.sort(key=depth_of)
    return found


def _plain_roots(roots: list[Step], found: list[Step]) -> list[Step]:
    """A plain root span over model or tool work in which no run was found is that work's run
    (an app that instruments only its LLM client and its tools under a span of its own)."""
    out: list[Step] = []
    inside = {id(run) for run in found}
    for root in roots:
        if root.kind != "generic" or root.hint not in (None, "chain") or id(root) in inside:
            continue
        work = False
        for below in root.descendants():
            if id(below) in inside or below.kind in ("agent_run", "workflow_run"):
                work = False
                break
            work = work or below.is_model_call or below.kind in TOOL_KINDS
        if work:
            _make_agent(root, "plain root over model or tool calls, no run found beneath: an "
                        "implicit agent run")
            out.append(root)
    return out


def _untraced_runs(roots: list[Step], tools: list[Step]) -> list[Step]:
    """With no model call traced anywhere: a span whose steps hand around a conversation (a
    message list with a user message, given out by one step) and, later, an assistant's answer
    (given out by a later step) is an agent run whose model calls were not traced; the
    innermost such spans (LlamaIndex's agent workflow through OpenLLMetry, whose steps give out
    the messages the model was handed and the agent's result)."""
    found: list[tuple[Step, list[Msg], Step]] = []
    for root in roots:
        for step in root.walk():
            if step.kind in ("generic", "workflow_run") and len(step.children) > 1:
                held = _conversation_and_answer(step, tools)
                if held is not None:
                    found.append((step, *held))
    out: list[Step] = []
    for step, conversation, answer in found:
        if any(inner is not step and _within(inner, step) for inner, _, _ in found):
            continue  # a span inside it hands the conversation around: that one is the run
        if step.agent_id is None and isinstance(answer.output, dict):
            step.agent_id = declared_agent_name(answer.output)
        _make_agent(step, "its steps hand around a conversation and then an assistant's "
                    "answer, with no model call traced: an agent run whose model calls were "
                    "not traced")
        step.input_messages = conversation
        if step._output is None:
            step.output = answer.output
        out.append(step)
    return out


def _conversation_and_answer(step: Step, tools: list[Step]) -> tuple[list[Msg], Step] | None:
    """The conversation a span's steps hand around (the last message list with a user message
    given out before its first tool call, else before its answer) and the child that gives out
    its answer (the last one whose output holds an assistant message), or None."""
    children = sorted(step.children, key=lambda c: c.start_time_ns)
    answer = None
    for child in reversed(children):
        if child._output is not None and isinstance(child.output, dict) and any(
            m.get("role") == "assistant" for m in held_messages(child.output)
        ):
            answer = child
            break
    if answer is None:
        return None
    first_tool = min((t.start_time_ns for t in tools if _within(t, step)), default=None)
    conversation: list[Msg] | None = None
    for child in children:
        if child is answer or (first_tool is not None and child.start_time_ns >= first_tool):
            break
        if child._output is None:
            continue
        msgs = message_list(child.output)
        if msgs and any(m.role == "user" for m in msgs):
            conversation = msgs
    return (conversation, answer) if conversation else None


def _holds_steps_beside(agent: Step, memo: dict[int, bool]) -> bool:
    """Whether a declared agent above model calls holds all of them inside one plain child while
    its other children are steps with input or output of their own (a tracer that declares
    every graph an agent, as Laminar's LangGraph instrumentation does, the workflow's graph
    around a step running the real agent too): the work is a workflow's, and the child's
    conversation finds its own run (``memo``: the answer per agent, asked once)."""
    known = memo.get(id(agent))
    if known is None:
        known = memo[id(agent)] = _one_child_holds_calls(agent)
        if known:
            note(agent, "declared agent whose model calls one child holds beside steps of its "
                 "own, its input not the question the calls were asked: not their run")
    return known


def _one_child_holds_calls(agent: Step) -> bool:
    """One plain child holds all the agent span's model calls, other children are steps with
    input or output of their own, and the agent span's own input, where it has one, does not
    carry the question its calls' conversation was asked (a step of its own handed the
    conversation its question: ``{"request": "Planning a trip…"}`` above "What is the weather
    in Lisbon…")."""
    if agent._input is None or len(agent.children) < 2 or any(
        c.kind in MODEL_KINDS for c in agent.children
    ):
        return False  # (a model step right under it: it holds its calls itself)
    steps = [c for c in agent.children if (c._input is not None or c._output is not None)
             and c.kind not in MODEL_KINDS and c.kind not in TOOL_KINDS]
    if not steps:
        return False
    holding = [c for c in agent.children
               if c.is_model_call or any(b.is_model_call for b in c.descendants())]
    if len(holding) != 1 or holding[0].kind != "generic" or holding[0].is_model_call or (
        steps == holding
    ):
        return False
    calls = sorted((b for b in holding[0].descendants() if b.is_model_call),
                   key=lambda b: b.start_time_ns)
    question = turn_text(calls)
    return bool(question) and reads_as(agent.input, [question]) is False


def _declared_owner(call: Step, holders: dict[int, bool]) -> Step | None:
    """The nearest declared agent above ``call``; one directly inside a declared agent that
    names no agent (no agent name attribute) while that one does, or names the same agent, is a
    turn of that agent's loop, which owns it; one whose calls a plain child holds beside its
    steps (``_holds_steps_beside``) owns none."""
    node = call.parent
    while node is not None:
        if declared_agent(node):
            if _holds_steps_beside(node, holders):
                return None
            above = node.parent
            if above is not None and declared_agent(above) and above.agent_id is not None and (
                node.agent_id is None or node.name == above.name
            ):
                node.kind = "generic"
                note(node, f"agent span inside the agent {above.name!r} naming no other agent: "
                     "a turn of its loop, not a run")
                return above
            return node
        node = node.parent
    return None


def _loop_steps(owners: dict[int, Step], owned: dict[int, list[Step]]) -> list[Step]:
    """Sibling agent spans that hold parts of one conversation (the later one's first call
    continues the earlier one's last): steps of one loop, not runs."""
    if len(owners) < 2:
        return []
    by_parent: dict[int, list[Step]] = {}
    for owner in owners.values():
        if owner.parent is not None:
            by_parent.setdefault(id(owner.parent), []).append(owner)
    steps: list[Step] = []
    for siblings in by_parent.values():
        if len(siblings) < 2:
            continue
        siblings.sort(key=lambda s: s.start_time_ns)
        for earlier, later in zip(siblings, siblings[1:], strict=False):
            first, last = facts_of(owned[id(later)][0]), facts_of(owned[id(earlier)][-1])
            why = continues(first, last)
            if why is None and same_prompt(first, last):
                why = "it starts from the same prompt"
            if why is None:
                continue
            for owner in (earlier, later):
                if owner not in steps:
                    steps.append(owner)
                    note(owner, f"agent span holding part of a conversation that goes on in a "
                         f"sibling ({why}): a step of that loop, not a run")
    return steps


def _implicit_runs(calls: list[Step], tools: list[Step], roots: int,
                   holders: dict[int, bool]) -> list[Step]:
    homes: list[tuple[int, list[Step], Step]] = []
    by_call_id: dict[str, Step] | None = None
    for loop in conversations(calls):
        home = common_ancestor(loop)
        if tools and not all(_within(t, home) for t in tools):
            # Tool spans outside the calls' common span: the ones this loop asked for count.
            if by_call_id is None:
                by_call_id = {t.tool_call_id: t for t in tools if t.tool_call_id}
            members: list[Step] = list(loop)
            for call in loop:
                for msg in call.output_messages or []:
                    for asked in msg.calls:
                        tool = by_call_id.get(asked.id) if asked.id else None
                        if tool is not None:
                            members.append(tool)
            home = common_ancestor(members)
        homes.append((depth_of(home), loop, home))
    homes.sort(key=lambda item: -item[0])
    out: list[Step] = []
    for _, loop, home in homes:
        run = _run_of(loop, home, roots, holders)
        if run is not None:
            out.append(run)
    return out


def _within(step: Step, top: Step) -> bool:
    node: Step | None = step
    while node is not None:
        if node is top:
            return True
        node = node.parent
    return False


def _run_of(loop: list[Step], home: Step, roots: int, holders: dict[int, bool]) -> Step | None:
    node: Step | None = home
    while node is not None:
        if node is not home and node.kind == "agent_run" and node.hint == "implicit_agent":
            return None  # a run already found holds this conversation: its model call(s)
        if declared_agent(node):
            if _holds_steps_beside(node, holders):
                break  # a declared agent around a step that holds this conversation: not its run
            note(node, "nearest agent span above the conversation of {!r}: the agent run",
                 home.name)
            return node
        node = node.parent
    if home.is_model_call:
        return _lone_call_run(home) if len(loop) == 1 else None
    what = "smallest span holding"
    if home.kind in MODEL_KINDS and home.hint != "aisdk_top" and (home.parent or roots > 1):
        # a model step over its calls (Mastra's ``llm`` span over its steps) is the loop, not
        # its run: the span holding that step is
        while home.parent is not None and home.kind in MODEL_KINDS:
            home = home.parent
        if home.kind in MODEL_KINDS or home.kind in RUN_KINDS:
            return None
        what = "span holding the model step over"
    below = "below the agent span around its steps" if node is not None else "with no agent span"
    _make_agent(home, f"{what} a conversation of {len(loop)} model call(s) and "
                f"the tools they asked for, {below}: an implicit agent run")
    return home


def _lone_call_run(call: Step) -> Step | None:
    """A lone call is the run of the whole trace when nothing else in it is work."""
    root = call
    while root.parent is not None:
        root = root.parent
    if root is call:
        call.stands_as_agent = True
        note(call, "plain LLM-call trace (no agent or workflow run): the outermost model call "
             "stands as the agent run")
        return None
    if root.kind in MODEL_KINDS and root.hint != "aisdk_top":
        # A model wrapper over the call (an LLM span around another): the call is the agent.
        if not any(s.kind in TOOL_KINDS for s in root.walk()):
            root.stands_as_agent = True
            note(root, "plain LLM-call trace (no agent or workflow run): the outermost model "
                 "step stands as the agent run")
        return None
    for step in root.walk():
        if step is not call and (step.is_model_call or step.kind in TOOL_KINDS):
            return None
        if step.kind in ("agent_run", "workflow_run") and step is not root:
            return None
    answer = "".join(m.text for m in call.output_messages or [] if m.role == "assistant")
    if root._output is not None and reads_as(root.output, [answer]) is False:
        return None
    node = _naming_agent_above(call, root)
    if node is not None:
        _make_agent(node, "innermost span naming an agent over the trace's one model call, "
                    "with no agent span: an implicit agent run")
        return node
    _make_agent(root, "root span over the trace's one model call, with no agent span, and "
                "nothing else of its own: an implicit agent run")
    return root


def _handing_off(calls: list[Step], runs: list[Step]) -> list[Step]:
    """A call outside every run that asks for a tool naming a run which starts after it (a
    handoff, ``transfer_to_weather_agent``) is the model call of the run that hands off: that
    run is the innermost span above it that names an agent, else the call's parent."""
    out: list[Step] = []
    agents = [r for r in runs if r.kind == "agent_run"]
    for call in calls:
        later = [r for r in agents if r.start_time_ns >= call.start_time_ns]
        if not later or call.parent is None or any(_within(call, r) for r in [*runs, *out]):
            continue
        asked = [c for m in call.output_messages or [] for c in m.calls]
        if not any(carries_name(a, r) for a in asked for r in later):
            continue
        home = _naming_agent_above(call) or call.parent
        _make_agent(home, "holds a model call outside every run that hands the conversation to "
                    "a later run: the run that hands off")
        out.append(home)
    return out


def _naming_agent_above(step: Step, top: Step | None = None) -> Step | None:
    """The innermost span above ``step`` (below ``top``, not past a run) that names an agent
    (an ``agent_name`` attribute the shape adapter read), or None; when the spans right above
    that one are named after the same agent (a turn span naming its agent, inside the agent's
    own span: Laminar's ``agents.turn`` in ``weather_agent``), the outermost of them."""
    node = step.parent
    while node is not None and node is not top and node.kind not in RUN_KINDS:
        if node.agent_id:
            named = node.agent_id
            while (node.parent is not None and node.parent is not top
                   and node.parent.kind not in RUN_KINDS
                   and named in (node.parent.agent_id, node.parent.name)):
                node = node.parent
            return node
        node = node.parent
    return None


def _make_agent(step: Step, why: str) -> None:
    step.kind = "agent_run"
    step.hint = "implicit_agent"
    if step.agent_id:  # the span names the agent it runs (an ``agent.name`` attribute)
        step.name = step.agent_id
    elif "{" in step.span_name and (
        named := template_name(step.span_name, step.attributes)
    ) is not None:  # ``Agent run: {name!r}``: the value its name was written with
        step.name = named
    elif step.name == step.span_name:
        step.name = method_owner(step.name)
    step.agent_id = step.agent_id or step.name
    note(step, why)


def _lend_declaration(empty: Step) -> None:
    """An empty agent span whose sibling of the same name holds work: the sibling is the agent."""
    parent = empty.parent
    if parent is None or empty.children:
        return
    for sibling in parent.children:
        if sibling is empty or sibling.name != empty.name or sibling.kind == "agent_run":
            continue
        if not any(s.is_model_call or s.kind in MODEL_KINDS for s in sibling.walk()):
            continue
        sibling.kind = "agent_run"
        sibling.hint = "agent_body"
        sibling.agent_id = empty.agent_id or empty.name
        sibling.conversation_id = sibling.conversation_id or empty.conversation_id
        empty.kind = "generic"
        empty.hint = "wrapper"
        note(sibling, f"holds the run of the empty agent span {empty.span_id} of the same name "
             "beside it: the agent run")
        note(empty, f"empty agent span; its run is the sibling {sibling.span_id}")
        return


def common_ancestor(steps: Iterable[Step]) -> Step:
    """The deepest step that is an ancestor of (or one of) every step given."""
    iterator = iter(steps)
    first = next(iterator)
    path = _path(first)
    for step in iterator:
        other = set(map(id, _path(step)))
        while path and id(path[-1]) not in other:
            path.pop()
    return path[-1] if path else first


def _path(step: Step) -> list[Step]:
    """Root → ``step``."""
    out: list[Step] = []
    node: Step | None = step
    while node is not None:
        out.append(node)
        node = node.parent
    out.reverse()
    return out


__all__ = ["common_ancestor", "declared_agent", "find_agent_runs", "graph_node"]
