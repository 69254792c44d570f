"""Stage 3: the spans around agent runs, classified by what they contain.

Rules, once the agent runs are known (stage 2):

- **Handoffs** first (``_control``): a handed-to run moves under the run that handed off.
- **A tool span outside every run that no model call asked for** is not a tool call (a tool
  call is a model's request) but a span like any other: a step of what holds it (MLflow types
  a Haystack pipeline's plain components TOOL).
- **Inside a run**, any span that is not a model call, a tool, a nested run or a declared step
  kind is plumbing (its children promoted): chains, graph nodes, per-step spans, agent spans
  that hold only part of the run's loop, and a workflow span holding no run of its own (CrewAI's
  agent executor, a Flow of its own, as OpenLIT traces it).
- **A container** (a span holding runs, or model/tool work of no run, that is not itself a run
  or a declared workflow step) is decided bottom-up:
  - a **wrapper** when its input and output are those of the one run below it (compared by the
    texts they carry, ``_run_text``; an input whose texts are only names of spans around or
    beneath it says which work this is, not what it was given, and is no input of its own;
    a run that shows nothing it took in is compared by its
    output alone; a workflow's output is also any output made within it; a span without input
    or output values by the user and assistant messages it carries; a plain span with neither
    by the sentences among its attributes, once one is about its work: the run's question or
    answer, or said again below), whatever its name, kind or siblings, unless its output also
    carries what a step of its own beside the run gave out (a graph's state collecting every
    step's output: then it is their workflow); also when it carries neither and has nothing
    of its own beside that run;
  - a **workflow run** when it has steps of its own (children with input/output, declared
    steps or agent spans that are not runs, or peers of the child that holds the run: spans with
    the same attribute keys) beside the run, or holds several runs, or work of its own beside
    them;
  - with output or input of its own that is not the run's and nothing else: a step around the
    run when a workflow holds it, else a workflow run.
  A graph node (``_agent_runs.graph_node``) is always a step.
- **Children of a workflow run** are its steps (unless a run, a model or tool call, or a kind a
  convention declared). Where the children holding its runs have peers (the same attribute
  keys), those peers are its steps, the child holding a run among them even when it carries
  nothing or only the run's answer (so is a span around a run beside steps of the workflow's
  own, whatever its keys), and a child of other keys that carries nothing is plumbing
  between the steps (message routing). A step's name loses its workflow's object prefix
  (``Flow.parse_request`` under ``Flow.kickoff`` → ``parse_request``); a span named
  ``<operation> <target>`` whose target is one of its attribute values is named by that target
  (``executor.process parse-request`` with ``executor.id`` ``parse-request`` →
  ``parse-request``).
- **A plain workflow run with no input or output values** reads them from the sentences among
  its attributes: its input the one its first step also carries and its last does not, its
  output the one its last step carries and its first does not (``_flow_io``).
"""

from __future__ import annotations

from typing import Any

from ._adapt_generic import method_owner
from ._agent_runs import graph_node
from ._control import handoffs
from ._run_io import run_io
from ._run_text import is_repr, norm, reads_as, same_text, texts_of
from ._scope import own_calls
from ._steps import DECLARED_KINDS, RUN_KINDS, TOOL_KINDS, Step, note
from ._values import parse_json

_CONTAINER_KINDS = RUN_KINDS | {"generic"}
"""Kinds a container can have before it is classified (a declared step stays a step)."""


def classify_containers(roots: list[Step], runs: list[Step], typed: list[Step],
                        work: list[Step]) -> None:
    """Apply the rules above to the tree. ``runs``: the agent runs found by stage 2; ``typed``:
    the spans a convention typed as agent runs, workflow runs or workflow steps; ``work``: the
    model calls and tool executions (only spans above these can be containers)."""
    if runs:
        handoffs(runs)
    run_ids = {id(r) for r in runs}
    workflows: list[Step] = []
    for step in typed:
        if id(step) in run_ids:
            continue
        if _in_agent_run(step, run_ids):
            if step.kind == "agent_run":
                _plumbing(step, "agent span inside an agent run holding part of its loop: a "
                          "step of the run (plumbing)")
            elif step.kind == "workflow_step":
                step.kind = "generic"
                note(step, "workflow step inside an agent run, in no workflow: a step of the "
                     "agent's loop (plumbing)")
            elif step.kind == "workflow_run" and not any(
                id(below) in run_ids for below in step.walk()
            ):
                _plumbing(step, "workflow span inside an agent run holding no run of its own, "
                          "only the run's loop: the framework's loop machinery (plumbing)")
        elif step.kind == "workflow_run":
            workflows.append(step)
    containers, outside = _candidates([*runs, *work], run_ids)
    if runs and outside:
        _unasked_tools(outside, work)
    containers.sort(key=lambda item: -item[0])
    verdicts: dict[int, str] = {}
    for _, step in containers:
        verdicts[id(step)] = _decide(step, run_ids, verdicts)
    for _, step in reversed(containers):  # outermost first: a step needs its workflow decided
        parent = step.parent
        workflow = parent if parent is not None and parent.kind == "workflow_run" else None
        _classify(step, verdicts[id(step)], workflow, run_ids, verdicts)
        if step.kind == "workflow_run":
            workflows.append(step)
    done: set[int] = set()
    for workflow in workflows:
        if workflow.kind == "workflow_run" and id(workflow) not in done:
            done.add(id(workflow))
            _steps_of(workflow, verdicts, run_ids)


def _unasked_tools(outside: list[Step], work: list[Step]) -> None:
    """Tool spans outside every run (``outside``) that no model call asked for (by call id or
    name) are not tool calls: a tool call is a model's request. They are steps of whatever
    holds them (MLflow types a Haystack pipeline's plain components TOOL)."""
    ids: set[str] = set()
    names: set[str] = set()
    for call in work:
        if call.is_model_call:
            for msg in call.output_messages or []:
                for asked in msg.calls:
                    names.add(asked.name)
                    if asked.id:
                        ids.add(asked.id)
    for tool in outside:
        if tool.tool_call_id in ids or tool.tool_name in names or tool.name in names:
            continue
        tool.kind = "generic"
        tool.hint = None
        note(tool, "tool span outside every run that no model call asked for: not a tool call, "
             "a step of what holds it")


def _in_agent_run(step: Step, run_ids: set[int]) -> bool:
    """True when the nearest run above ``step`` is an agent run (no workflow run between)."""
    node = step.parent
    while node is not None:
        if id(node) in run_ids:
            return True
        if node.kind == "workflow_run":
            return False
        node = node.parent
    return False


def _candidates(items: list[Step], run_ids: set[int]) -> tuple[list[tuple[int, Step]],
                                                                 list[Step]]:
    """Spans above runs and work that are not inside a run (depth, step): the containers; and
    the tool spans among ``items`` that are inside no run."""
    seen: dict[int, tuple[int, Step]] = {}
    outside: list[Step] = []
    for item in items:
        path: list[Step] = []
        node = item.parent
        inside = False
        while node is not None:
            if id(node) in run_ids:
                inside = True
                break
            path.append(node)
            node = node.parent
        if inside:
            continue  # work, or a run, inside a run
        if item.kind in TOOL_KINDS:
            outside.append(item)
        depth = len(path)
        for offset, above in enumerate(path):
            if (
                id(above) not in seen
                and above.kind in _CONTAINER_KINDS
                and not above.is_model_call
            ):
                seen[id(above)] = (depth - 1 - offset, above)
    return list(seen.values()), outside


def _plumbing(step: Step, why: str) -> None:
    if step.kind in ("agent_run", "workflow_run"):
        step.kind = "generic"
    note(step, why)


def _runs_below(step: Step, run_ids: set[int], verdicts: dict[int, str]) -> tuple[
    list[Step], bool
]:
    """The outermost runs beneath ``step`` (agent runs, and containers decided to be workflows),
    and whether model or tool work lies beneath outside them."""
    runs: list[Step] = []
    work = False
    stack = list(reversed(step.children))
    while stack:
        below = stack.pop()
        if id(below) in run_ids or verdicts.get(id(below)) in ("workflow", "step_around"):
            runs.append(below)
            continue
        if below.is_model_call or below.kind in TOOL_KINDS:
            work = True
        stack.extend(reversed(below.children))
    return runs, work


def _decide(step: Step, run_ids: set[int], verdicts: dict[int, str]) -> str:
    if graph_node(step):
        return "node"
    runs, work = _runs_below(step, run_ids, verdicts)
    own_steps = _steps_beside(step, runs)
    if len(runs) == 1 and not work:
        match = io_match(step, runs[0])
        if match is True and not (own_steps and _carries_steps_work(step, runs[0], own_steps)):
            return "wrapper_named"
        if match is None and not own_steps:
            return "wrapper"
        if own_steps or step.kind == "workflow_run":
            return "workflow"
        return "step_around"
    if len(runs) > 1 or ((runs or work) and (own_steps or step.kind == "workflow_run")):
        return "workflow"
    return "plumbing"


def _carries_steps_work(container: Step, run: Step, steps: list[Step]) -> bool:
    """Whether the container's output carries what a step beside the run gave out (a text that
    is not the run's own, nor anything the run was given): then it is the workflow of those
    steps and the run, not a wrapper whose output merely holds the run's answer (a graph's
    state collects every step's output)."""
    if container._output is None:
        return False
    said = texts_of(container.output)
    if not said:
        return False
    calls = own_calls(run)
    wanted_in, wanted_out = run_io(run, calls)
    runs_own = [*wanted_in, *wanted_out]  # and all it was given (a conversation's history)
    if run._input is not None:
        runs_own.extend(texts_of(run.input))
    if calls:
        runs_own.extend(m.text for m in calls[0].input_messages or [] if m.text)
    for beside in steps:
        if beside._output is None:
            continue
        for text in texts_of(beside.output):
            if any(same_text(text, t) for t in runs_own):
                continue
            if any(same_text(text, t) for t in said):
                return True
    return False


def _steps_beside(step: Step, runs: list[Step]) -> list[Step]:
    """Children of ``step`` off the paths to ``runs`` that are steps of its own: declared steps,
    graph nodes, or spans with an input or output."""
    on_path: set[int] = set()
    for run in runs:
        node: Step | None = run
        while node is not None and node is not step:
            on_path.add(id(node))
            node = node.parent
    peers = _path_keys(step, on_path)
    out = []
    for child in step.children:
        if id(child) in on_path:
            continue
        if child.kind in DECLARED_KINDS or graph_node(child) or _keys(child) in peers:
            out.append(child)
        elif child.kind == "generic" and child.hint in (None, "chain") and (
            child._input is not None or child._output is not None
        ):
            out.append(child)
    return out


def _keys(step: Step) -> frozenset[str]:
    return frozenset(step.attributes)


def _path_keys(step: Step, on_path: set[int]) -> set[frozenset[str]]:
    """The attribute keys of ``step``'s children that hold a run without being one, where
    another child has the same keys (peers: the kind of span its steps are)."""
    holding = {_keys(c) for c in step.children
               if id(c) in on_path and c.kind not in RUN_KINDS and c.attributes}
    if not holding:
        return holding
    counts: dict[frozenset[str], int] = {}
    for child in step.children:
        keys = _keys(child)
        if keys in holding:
            counts[keys] = counts.get(keys, 0) + 1
    return {keys for keys, count in counts.items() if count > 1}


def _run_holders(workflow: Step, verdicts: dict[int, str], run_ids: set[int]) -> set[int]:
    """The children of ``workflow`` on the paths to its runs."""
    out: set[int] = set()
    for child in workflow.children:
        if id(child) in run_ids or verdicts.get(id(child)) in ("workflow", "step_around"):
            out.add(id(child))
            continue
        for below in child.descendants(stop_at=RUN_KINDS):
            if id(below) in run_ids:
                out.add(id(child))
                break
    return out


def io_match(container: Step, run: Step) -> bool | None:
    """Whether the container's input and output (or the user and assistant messages it carries)
    are those of ``run`` (None: it carries neither)."""
    wanted_in, wanted_out = run_io(run, own_calls(run))
    checks = []
    # (a run that shows nothing it took in, its model calls not traced, is compared by output)
    if wanted_in and container._input is not None:
        given = reads_as(container.input, wanted_in)
        if given is False and _names_only(container.input, container):
            given = None  # ``{"name": "weather conversation"}``: what it is, not what it got
        checks.append(given)
    elif wanted_in and container.has_input_messages:  # given as messages (a GenAI user message)
        asked = [m.text for m in container.input_messages or [] if m.role == "user" and m.text]
        checks.append(reads_as(asked, wanted_in))
    if container._output is not None:
        gave = reads_as(container.output, wanted_out)
        if gave is False and run.kind != "agent_run":  # a workflow (maybe not yet typed)
            gave = reads_as(container.output, _made_within(run))
        checks.append(gave)
    elif container._output_messages is not None:
        said = [m.text for m in container.output_messages or [] if m.role == "assistant"]
        checks.append(reads_as([t for t in said if t], wanted_out))
    if not checks and container.convention == "generic":
        # no value and no message, and no convention saying where its content is: the
        # sentences among its attributes (a plain span's arguments set by hand), once one of
        # them is about the work it holds (an HTTP span's user agent is about nothing here)
        written = _sentences(container)
        if written and _about(written, container, [*wanted_in, *wanted_out]):
            checks.append(reads_as(written, wanted_in))
    if any(c is False for c in checks):
        return False
    if any(c is True for c in checks):
        return True
    return None


def _names_only(value: Any, container: Step) -> bool:
    """Whether every text ``value`` carries is the name of the container, of a span above it or
    of one beneath it (Laminar's ``agents.task`` input ``{"name": "weather conversation"}``,
    its trace's name): it says which work this is, not what the work was given."""
    texts = texts_of(value)
    if not texts:
        return False
    names: set[str] = set()
    node: Step | None = container
    while node is not None:
        names.update((node.name, node.span_name))
        node = node.parent
    for below in container.descendants():
        names.update((below.name, below.span_name))
    return all(text in names for text in texts)


def _made_within(workflow: Step) -> list[str]:
    """What the steps and runs inside a workflow run gave out (a span around the workflow whose
    output is one of these, ADK's last event, reports the workflow's work, not work of its
    own)."""
    out: list[str] = []
    for below in workflow.descendants():
        if below._output is not None:
            out.extend(texts_of(below.output))
        if below.kind == "agent_run":
            out.extend(run_io(below, own_calls(below))[1])
    return out


def _sentences(step: Step) -> list[str]:
    """The attribute values of a span that are text a person wrote or read: several words, not
    data (JSON: a text that only begins like it, ``[Oslo] cloudy``, is text), not a repr, and
    not its name (a label its name already says: a logging library's message template, or the
    value the template was filled with)."""
    out = []
    names = (step.span_name, step.name)
    for value in step.attributes.values():
        if isinstance(value, str) and " " in value.strip() and (
            value[:1] not in "{[" or parse_json(value) is value
        ) and not is_repr(value) and not any(value in name for name in names):
            out.append(value)
    return out


def _about(sentences: list[str], container: Step, texts: list[str]) -> bool:
    """Whether one of a container's ``sentences`` is about the work it holds: it holds one of
    the run's ``texts`` (its question or answer) or is held by one, or a span below says it
    again (whitespace aside)."""
    wanted = [norm(t) for t in texts if t and t.strip()]
    for below in container.descendants():
        wanted.extend(norm(t) for t in _sentences(below))
    for sentence in sentences:
        said = norm(sentence)
        if any(w and (w in said or said in w) for w in wanted):
            return True
    return False


def _steps_of(workflow: Step, verdicts: dict[int, str], run_ids: set[int]) -> None:
    """A workflow run's children are its steps (see the rules above)."""
    peers = _path_keys(workflow, _run_holders(workflow, verdicts, run_ids))
    for step in workflow.children:
        if id(step) in verdicts or id(step) in run_ids or step.is_model_call:
            continue
        if step.kind == "generic" and step.hint in (None, "chain"):
            if peers and _keys(step) not in peers and step._input is None and (
                step._output is None
            ):
                note(step, "directly under a workflow run whose steps are spans of other "
                     "attribute keys, carrying nothing: plumbing between its steps")
            elif _passes_through(step):
                note(step, "directly under a workflow run, but its output is its input: a "
                     "pass-through, plumbing")
            else:
                _make_step(step, workflow, "unrecognised span directly under a workflow run: "
                           "one of its steps")
        elif step.kind == "agent_run" and not _holds_work(step):
            _make_step(step, workflow, "agent span with no model or tool work, directly under a "
                       "workflow run: one of its steps")
    _flow_io(workflow)


def _flow_io(workflow: Step) -> None:
    """A plain workflow run with no input or output values (no convention says where its
    content is): its input is the sentence among its attributes that its first step carries
    and its last does not, its output the one its last step carries and its first does not.
    What flowed in is what the first step was given; what flowed out, what the last one made.
    A sentence every step carries (a placeholder id, a shared setting) is neither."""
    if workflow._input is not None or workflow._output is not None or (
        workflow.convention != "generic"
    ):
        return
    steps = [c for c in workflow.children if c.kind == "workflow_step"]
    if len(steps) < 2:
        return
    own = _sentences(workflow)
    if not own:
        return
    first, last = _sentences(steps[0]), _sentences(steps[-1])
    given = next((t for t in own if reads_as(t, first) and not reads_as(t, last)), None)
    made = next((t for t in own if reads_as(t, last) and not reads_as(t, first)), None)
    if given is not None:
        workflow.input = given
    if made is not None:
        workflow.output = made
    if given is not None or made is not None:
        note(workflow, "no input or output values: its input is the text its first step {!r} "
             "also carries ({}), its output the text its last step {!r} also carries ({})",
             steps[0].name, "found" if given is not None else "none",
             steps[-1].name, "found" if made is not None else "none")


def _holds_work(step: Step) -> bool:
    for below in step.descendants():
        if below.kind in RUN_KINDS or below.is_model_call or below.kind in TOOL_KINDS:
            return True
    return False


def _classify(step: Step, verdict: str, workflow: Step | None, run_ids: set[int],
              verdicts: dict[int, str]) -> None:
    if verdict in ("wrapper", "wrapper_named") and workflow is not None and (
        _keys(step) in _path_keys(workflow, {id(step)}) or _steps_beside(workflow, [step])
    ):
        _make_step(step, workflow, "span around a run, carrying nothing or the run's own, "
                   "directly under a workflow run beside steps of its own: one of its steps")
    elif verdict in ("wrapper", "wrapper_named"):
        inner = _runs_below(step, run_ids, verdicts)[0]
        _wrap(step, inner[0] if len(inner) == 1 else None, lend_name=verdict == "wrapper_named")
    elif verdict in ("node", "step_around") and workflow is not None:
        why = "graph node" if verdict == "node" else "span around a run, with input or output "
        why += "" if verdict == "node" else "of its own,"
        _make_step(step, workflow, f"{why} directly under a workflow run: a workflow step")
    elif verdict in ("workflow", "step_around"):
        was = step.kind
        step.kind = "workflow_run"
        if step.name == step.span_name:
            step.name = method_owner(step.name)
        step.workflow_id = step.workflow_id or step.name
        why = ("with steps of its own beside the runs it holds" if verdict == "workflow"
               else "around one run, with input or output of its own")
        note(step, f"{was} {why}: a workflow run")
    elif verdict == "node":
        _plumbing(step, "graph node outside a workflow: plumbing")
    else:
        _plumbing(step, "holds no run and no steps of its own: plumbing")


def _passes_through(step: Step) -> bool:
    """A span with no work whose output is its input (a graph's start node)."""
    if step._input is None or step._output is None or step.children:
        return False
    return bool(step.input == step.output)


def _wrap(step: Step, inner: Step | None, *, lend_name: bool = False) -> None:
    """Make ``step`` a wrapper of the one run ``inner`` below it (an agent run, or a span decided
    to be a workflow: not yet typed, as spans are typed outermost first), lending it the input,
    output and ids it lacks."""
    was = step.kind
    step.kind = "generic"
    step.hint = "wrapper"
    if inner is None:
        note(step, f"{was} around one run, carrying nothing of its own: a wrapper")
        return
    note(step, "{} whose input and output are those of the run {!r} ({}) below it: a "
         "wrapper; that run is the run", was, inner.name, inner.span_id)
    if not inner.has_input_messages and step.has_input_messages:
        inner.input_messages = step._input_messages
    if inner._input is None:
        inner.input = step._input
    if inner._output is None and step._output is not None:
        inner.output = step._output
    if inner.conversation_id is None:
        inner.conversation_id = step.conversation_id
    if inner.user_id is None:
        inner.user_id = step.user_id
    if (
        lend_name
        and inner.kind == "agent_run"
        and step.name == step.span_name
        and method_owner(inner.span_name) != inner.span_name
        and (inner.name in (inner.span_name, inner.span_name.rpartition(".")[2]) or (
            inner.hint == "implicit_agent" and inner.name == method_owner(inner.span_name)))
    ):
        # A run named only after its method-call span (a framework's class: ``ReAct.forward``;
        # an implicit run named after that class; the method itself: ``ai.generateText``), no
        # attribute naming it; the span around it with the same input and output is the
        # program that names it.
        inner.name = inner.agent_id = method_owner(step.name)
        note(inner, f"named by the wrapper {step.span_id} around it")


def _target_of(step: Step) -> str | None:
    """The target of a span named ``<operation> <target>`` when one of its attribute values is
    that target."""
    _, space, target = step.span_name.rpartition(" ")
    if space and target and target in step.attributes.values():
        return target
    return None


def _make_step(step: Step, workflow: Step, why: str) -> None:
    step.kind = "workflow_step"
    owner = method_owner(workflow.span_name)
    if owner != workflow.span_name and step.name.startswith(owner + "."):
        step.name = step.name[len(owner) + 1 :]  # Flow.parse_request under Flow.kickoff
    elif step.name == step.span_name:
        step.name = _target_of(step) or method_owner(step.name)  # ParseRequest.forward
    step.step_id = step.step_id or step.name
    note(step, why)


__all__ = ["classify_containers", "io_match"]
