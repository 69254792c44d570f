"""Which steps are runs: chains and wrappers classified, wrappers collapsed onto the agent.

Rules, applied top-down once every span has its adapted step:

- **An empty agent span beside its body.** An agent run span with nothing beneath, whose
  sibling chain has the same name, is plumbing; the sibling is the agent run (OpenLLMetry's
  ``invoke_agent X`` next to ``execute_task X`` in a LangGraph node).
- **Graph nodes.** A LangGraph node span (its ``langgraph_node`` metadata is its own name) that
  is typed as an agent is a workflow step directly under a workflow run, and plumbing inside a
  run (a step of the agent loop: OpenInference's ``agent`` AGENT spans).
- **An agent that only orchestrates agents is a workflow.** An agent run whose every model and
  tool call sits in a nested agent run (a compiled LangGraph ``StateGraph`` that OpenLLMetry
  traces as ``invoke_agent``) is a workflow run; its nodes are its steps.
- **Chains.** An OpenInference CHAIN (or an OpenLLMetry task) is a workflow step when its parent
  is a workflow run; plumbing anywhere inside an agent run. Otherwise (outermost, or inside a
  workflow step): a workflow's entry ``X.run`` over ``X.<step>`` spans (LlamaIndex Workflows)
  is a workflow run; a chain that holds model calls but no agent is an (implicit) agent run,
  targetable by its span id (a LangGraph or LangChain agent traced without an AGENT span, a
  framework's agent entry point such as LlamaIndex's ``FunctionAgent.run``); inside a workflow,
  any other chain is plumbing; outermost, a chain that only wraps one agent run is a wrapper,
  and any other is a workflow run (it holds agents, or no model calls).
- **AI SDK top calls** (``ai.generateText``/``ai.streamText``) are agent runs at the top of a
  trace or when they loop over tools (several model calls or tool calls beneath); otherwise
  model-call wrappers.
- **An unrecognised span directly under a workflow run** is one of its steps.
- **Wrapper runs collapse onto the agent.** A workflow run or agent run whose only run beneath
  is one agent run, with no other span beside the path down to it, is a wrapper (Google ADK's
  ``invoke_workflow X`` → ``invoke_agent X``; OpenLLMetry's empty ``invoke_agent X`` over
  ``X.workflow``; the Agents SDK's trace-named AGENT span): it becomes plumbing, so the agent
  below is the target; the agent inherits the wrapper's input and conversation id when it has
  none.
- **A plain root over model or tool calls**, with no agent or workflow run anywhere, is an
  implicit agent run (an app that instruments only its LLM client under its own span).
- **A plain LLM-call trace** (only model calls, maybe tools, no run and no plain root over
  them): the outermost model step stands as the agent run (``stands_as_agent``).
"""

from __future__ import annotations

from ._steps import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Step, note


def classify(root: Step, *, nested_runs: bool = True) -> None:
    """Decide graph nodes, agent runs that only orchestrate agents, chains, AI SDK top calls and
    unrecognised workflow children, top-down (``nested_runs``: the trace has more than one run
    span, so an agent may only orchestrate others)."""
    stack = [root]
    while stack:
        step = stack.pop()
        parent = step.parent
        if step.kind == "agent_run" and nested_runs:
            if graph_node(step):
                _classify_node(step)
            elif step.hint != "implicit_agent" and _orchestrates(step):
                step.kind = "workflow_run"
                step.workflow_id = step.workflow_id or step.name
                note(
                    step,
                    "agent run with no model or tool call of its own, only nested agent "
                    "runs and steps: a workflow run",
                )
        if step.hint == "chain":
            _classify_chain(step)
        elif step.hint == "aisdk_top":
            _classify_aisdk_top(step)
        elif (
            step.kind == "generic"
            and parent is not None
            and parent.kind == "workflow_run"
            and (step.hint != "mastra")
        ):
            step.kind = "workflow_step"
            step.step_id = step.step_id or step.name
            note(step, "unrecognised span directly under a workflow run: one of its steps")
        stack.extend(reversed(step.children))


def graph_node(step: Step) -> bool:
    """A LangGraph node span (its ``langgraph_node`` metadata is its own name)."""
    node = step.metadata.get("langgraph_node")
    return node is not None and node in (step.span_name, step.name)


def _classify_node(step: Step) -> None:
    parent = step.parent
    if parent is not None and parent.kind == "workflow_run":
        step.kind = "workflow_step"
        step.step_id = step.step_id or step.name
        note(step, "graph node directly under a workflow run: a workflow step")
        return
    if _run_ancestor(step) is not None:
        step.kind = "generic"
        note(step, "graph node inside a run (a step of the agent loop): plumbing")


def _orchestrates(agent: Step) -> bool:
    """True when every model and tool call beneath sits in a nested (non-node) agent run."""
    nested = False
    stack = list(reversed(agent.children))
    while stack:
        step = stack.pop()
        if step.kind == "agent_run" and not graph_node(step):
            nested = True
            continue
        if step.kind in MODEL_KINDS or step.kind in TOOL_KINDS:
            return False
        stack.extend(reversed(step.children))
    return nested


def adopt_bodies(empties: list[Step]) -> None:
    """An agent run span with nothing beneath whose sibling chain of the same name holds the
    run (OpenLLMetry's ``invoke_agent X`` beside ``execute_task X`` in a LangGraph node): the
    sibling is the agent run, the empty span plumbing."""
    for empty in empties:
        parent = empty.parent
        if parent is None or empty.children:
            continue
        for sibling in parent.children:
            if sibling is not empty and sibling.hint == "chain" and sibling.name == empty.name:
                sibling.kind = "agent_run"
                sibling.hint = "agent_body"
                sibling.agent_id = empty.agent_id or empty.name
                sibling.conversation_id = sibling.conversation_id or empty.conversation_id
                empty.kind = "generic"
                empty.hint = "wrapper"
                note(
                    sibling,
                    f"holds the run of the empty agent span {empty.span_id} of the "
                    "same name beside it: the agent run",
                )
                note(empty, f"empty agent span; its run is the sibling {sibling.span_id}")
                break


def _run_ancestor(step: Step) -> Step | None:
    """The nearest agent run, workflow run or workflow step above ``step`` (an agent run when
    there is one at any height)."""
    parent = step.parent
    found: Step | None = None
    while parent is not None:
        if parent.kind == "agent_run":
            return parent
        if found is None and (parent.kind in RUN_KINDS or parent.kind == "workflow_step"):
            found = parent
        parent = parent.parent
    return found


def _holds_calls(step: Step) -> tuple[bool, bool]:
    """(holds an agent run, holds model or tool calls) beneath ``step``."""
    has_model = False
    for below in step.descendants():
        if below.kind == "agent_run":
            return True, has_model
        if below.kind in MODEL_KINDS or below.kind in TOOL_KINDS:
            has_model = True
    return False, has_model


ENTRY_SUFFIXES = (".run", ".kickoff")
"""Method names frameworks name a run's entry span by (``X.run``, CrewAI's ``X.kickoff``)."""


def entry_prefix(name: str) -> str:
    """``X.`` of an entry span named ``X.run`` / ``X.kickoff`` (empty for any other name)."""
    for suffix in ENTRY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix) + 1]
    return ""


def _workflow_entry(step: Step) -> bool:
    """A workflow's entry span named ``X.run``/``X.kickoff`` whose children include
    ``X.<step>`` spans (LlamaIndex Workflows: ``TravelWeatherWorkflow.run`` over
    ``….parse_request``; CrewAI Flows: ``<flow>.kickoff`` over ``<flow>.<method>``)."""
    prefix = entry_prefix(step.span_name)
    return bool(prefix) and any(
        c.span_name.startswith(prefix) and c.span_name != step.span_name for c in step.children
    )


def _classify_chain(step: Step) -> None:
    parent = step.parent
    if parent is not None and parent.kind == "workflow_run":
        step.kind = "workflow_step"
        prefix = entry_prefix(parent.span_name)
        if prefix and step.name.startswith(prefix):
            step.name = step.name[len(prefix) :]  # TravelWeatherWorkflow.parse_request
        step.step_id = step.step_id or step.name
        note(step, "chain directly under a workflow run: a workflow step")
        return
    above = _run_ancestor(step)
    if above is not None and above.kind == "agent_run":
        step.kind = "generic"
        note(step, "chain inside an agent run: plumbing (dropped, children promoted)")
        return
    workflow = _workflow_entry(step)
    has_agent, has_model = (False, False) if workflow else _holds_calls(step)
    if not workflow and not has_agent and has_model:
        step.kind = "agent_run"
        if step.name == step.span_name and entry_prefix(step.name):
            step.name = entry_prefix(step.name)[:-1]  # FunctionAgent.run → FunctionAgent
        step.agent_id = step.agent_id or step.name
        step.hint = "implicit_agent"
        where = "outermost chain" if above is None else "chain inside a workflow"
        note(step, f"{where} over model calls and no agent: an (implicit) agent run")
        return
    if above is not None and not workflow:
        step.kind = "generic"
        note(step, "chain inside a workflow with no model calls of its own: plumbing")
        return
    if not workflow and _only_agent_below(step) is not None:
        step.kind = "generic"
        note(step, "outermost chain that only wraps one agent run: a wrapper")
        return
    if step.children:
        step.kind = "workflow_run"
        step.workflow_id = step.workflow_id or step.name
        if workflow and step.name == step.span_name:
            step.name = entry_prefix(step.name)[:-1]
        why = "X.run over X.<step> spans" if workflow else "over agents or plain steps"
        note(step, f"chain {why}: a workflow run")
    else:
        step.kind = "generic"
        note(step, "chain with nothing beneath: plumbing")


def _classify_aisdk_top(step: Step) -> None:
    if step.parent is None:
        return
    calls = 0
    for below in step.descendants(stop_at=RUN_KINDS):
        if below.kind in TOOL_KINDS:
            return
        if below.hint == "llm_call":
            calls += 1
    if calls > 1:
        return
    step.kind = "model_generation"
    step.hint = "aisdk_wrapper"
    note(step, "nested AI SDK call with one model call and no tools: a model-call wrapper")
    if step.model:
        step.name = step.model


def collapse_wrappers(runs: list[Step]) -> None:
    """Demote wrapper runs (one agent run beneath, nothing beside it) to plumbing; ``runs``: the
    trace's agent and workflow run steps, outermost first."""
    for step in runs:
        if step.kind not in RUN_KINDS:
            continue
        inner = _only_agent_below(step)
        if inner is None:
            continue
        was = step.kind
        step.kind = "generic"
        step.hint = "wrapper"
        note(
            step,
            f"{was} whose only run beneath is agent run {inner.name!r} "
            f"({inner.span_id}), with no step of its own: a wrapper; the agent is the run",
        )
        if not inner.has_input_messages and step.has_input_messages:
            inner.input_messages = step._input_messages
        if inner._input is None:
            inner.input = step._input
        if inner.conversation_id is None:
            inner.conversation_id = step.conversation_id
        if inner.user_id is None:
            inner.user_id = step.user_id


def _only_agent_below(run: Step) -> Step | None:
    """The one agent run beneath ``run`` when nothing else of substance is (else None)."""
    agent: Step | None = None
    stack = list(reversed(run.children))
    while stack:
        step = stack.pop()
        kind = step.kind
        if kind == "agent_run":
            if agent is not None or graph_node(step):
                return None
            agent = step
            continue
        if (
            kind == "workflow_run"
            or kind == "workflow_step"
            or kind in TOOL_KINDS
            or kind in MODEL_KINDS
        ):
            return None
        stack.extend(reversed(step.children))
    if agent is None:
        return None
    if run.kind == "agent_run" and not _same_agent(run, agent) and run.has_input_messages:
        return None
    # Nothing beside the path down to the agent: a span there is a step of the run.
    node: Step = agent
    while node is not run and node.parent is not None:
        if len(node.parent.children) > 1:
            return None
        node = node.parent
    return agent


def _same_agent(outer: Step, inner: Step) -> bool:
    names = {outer.name, outer.agent_id} - {None, ""}
    return bool(names & {inner.name, inner.agent_id}) or any(
        n and inner.name.startswith(n + ".") for n in names
    )


def implicit_agent(root: Step) -> None:
    """A plain root span over model or tool calls and no run is the trace's agent run; with no
    plain root, the outermost model step stands as the agent (a plain LLM-call trace)."""
    if root.kind not in MODEL_KINDS and (root.kind != "generic" or root.hint is not None):
        return
    has_work = False
    outermost_model: Step | None = root if root.kind in MODEL_KINDS else None
    for below in root.descendants():
        if below.kind in RUN_KINDS:
            return
        if below.kind in MODEL_KINDS or below.kind in TOOL_KINDS:
            has_work = True
            if outermost_model is None and below.kind in MODEL_KINDS:
                outermost_model = below
    if root.kind == "generic" and has_work:
        root.kind = "agent_run"
        root.hint = "implicit_agent"
        root.agent_id = root.name
        note(
            root,
            "plain root over model or tool calls, no agent or workflow run anywhere: "
            "an implicit agent run",
        )
    elif root.kind in MODEL_KINDS and outermost_model is not None:
        outermost_model.stands_as_agent = True
        note(
            outermost_model,
            "plain LLM-call trace (no agent or workflow run): the outermost "
            "model call stands as the agent run",
        )


__all__ = ["adopt_bodies", "classify", "collapse_wrappers", "graph_node", "implicit_agent"]
