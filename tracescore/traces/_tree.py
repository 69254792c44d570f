"""Build the normalized step tree of a trace: adapt each span, then decide what needs the tree.

Adapters see one span at a time; some decisions need its neighbours:

- An OpenInference CHAIN (or an OpenLLMetry task) is a workflow run when it is the outermost
  span and holds agents or no model calls at all, a workflow step when its parent is a workflow
  run, an implicit agent run when it is outermost and holds model calls but no agent (a LangGraph
  or LangChain agent traced without an AGENT span), and plumbing otherwise. An unrecognised span
  directly under a workflow run is one of its steps.
- An AI SDK ``ai.generateText``/``ai.streamText`` span is an agent run when it is the trace's
  top span or loops over tools (several model calls or tool calls beneath); otherwise it is a
  model-call wrapper.
- A plain root span over model or tool calls, with no agent or workflow run anywhere, is an
  implicit agent run (an app that instruments only its LLM client under its own span).
- Model calls: a model step with no model step beneath it is one request to the model
  (``is_model_call``); wrappers (Mastra's ``model_generation`` over its ``model_step`` spans, a
  Mastra ``model_step`` over its ``model_inference``, the AI SDK's top call) are not. A wrapper
  with exactly one call beneath lends that call whatever the call's own span lacks (Mastra's
  ``chat`` span carries usage but not the tool calls its ``model_step`` parent records). Tokens
  are counted on calls only, since parents repeat their children's sums or the last step's.
- A tool span that records only its name and call id gets its args and result from the run's
  conversation (the call the model made, the tool message it was given next).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._adapters import adapt_span
from ._steps import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Call, Msg, Step
from ._values import as_dict, pick_usage

if TYPE_CHECKING:
    from ._trace import Span, Trace


def build_steps(trace: Trace) -> list[Step]:
    """The normalized step forest of ``trace`` (one root step per root span)."""
    roots: list[Step] = []
    stack: list[tuple[Span, Step | None]] = [(span, None) for span in reversed(trace.roots)]
    built: list[Step] = []
    pop, push = stack.pop, stack.append
    while stack:
        span, parent = pop()
        step = adapt_span(span)
        built.append(step)
        if parent is None:
            roots.append(step)
        else:
            step.parent = parent
            parent.children.append(step)
        for child in reversed(span.children):
            push((child, step))
    for root in roots:
        _classify(root)
        _implicit_agent(root)
    for root in roots:
        _resolve_calls(root)
    # Every step is in ``built`` (the classify/resolve passes change kinds, not the tree).
    incomplete = any(
        step.kind in TOOL_KINDS and (step.tool_args is None or step.tool_result is None)
        for step in built
    )
    if incomplete:
        for root in roots:
            _complete_tools(root)
    return roots


def _complete_tools(root: Step) -> None:
    """Fill tool steps without args or result from the conversation of the run they belong to."""
    scopes: dict[int, Step] = {}
    for step in root.walk():
        if step.kind in TOOL_KINDS and (step.tool_args is None or step.tool_result is None):
            scope = step.parent
            while scope is not None and scope.kind != "agent_run":
                scope = scope.parent
            scope = scope or root
            scopes[id(scope)] = scope
    if scopes:
        from ._agent import link_tool_steps

        for scope in scopes.values():
            link_tool_steps(scope)


def _implicit_agent(root: Step) -> None:
    """A plain root span (an HTTP handler, a script's own span) over model or tool calls and no
    agent or workflow run is the agent run of that trace."""
    if root.kind != "generic" or root.hint is not None:
        return
    has_work = False
    for below in root.descendants():
        if below.kind in RUN_KINDS:
            return
        if below.kind in MODEL_KINDS or below.kind in TOOL_KINDS:
            has_work = True
    if has_work:
        root.kind = "agent_run"
        root.hint = "implicit_agent"
        root.agent_id = root.name


def _classify(root: Step) -> None:
    stack = [root]
    while stack:
        step = stack.pop()
        parent = step.parent
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
        stack.extend(reversed(step.children))


def _has_run_ancestor(step: Step) -> bool:
    parent = step.parent
    while parent is not None:
        if parent.kind in RUN_KINDS or parent.kind == "workflow_step":
            return True
        parent = parent.parent
    return False


def _classify_chain(step: Step) -> None:
    parent = step.parent
    if parent is not None and parent.kind == "workflow_run":
        step.kind = "workflow_step"
        step.step_id = step.step_id or step.name
        return
    if _has_run_ancestor(step):
        step.kind = "generic"
        return
    has_agent = False
    has_model = False
    for below in step.descendants():
        if below.kind == "agent_run":
            has_agent = True
            break
        if below.kind in MODEL_KINDS or below.kind in TOOL_KINDS:
            has_model = True
    if not has_agent and has_model:
        step.kind = "agent_run"
        step.agent_id = step.agent_id or step.name
        step.hint = "implicit_agent"
        return
    if len(step.children) == 1 and step.children[0].kind == "agent_run":
        step.kind = "generic"
        return
    if step.children:
        step.kind = "workflow_run"
        step.workflow_id = step.workflow_id or step.name
    else:
        step.kind = "generic"


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
    if step.model:
        step.name = step.model


def _resolve_calls(root: Step) -> list[Step]:
    """Mark single model calls beneath ``root`` and return them (in order)."""
    # Iterative post-order: children's calls are known before their parent is looked at.
    calls_of: dict[int, list[Step]] = {}
    stack: list[tuple[Step, bool]] = [(root, False)]
    while stack:
        step, done = stack.pop()
        children = step.children
        if not done:
            stack.append((step, True))
            for child in reversed(children):
                stack.append((child, False))
            continue
        below: list[Step] = []
        for child in children:
            lent = calls_of.pop(id(child), None)
            if lent:
                below.extend(lent)
        if step.kind in MODEL_KINDS:
            if not below:
                step.is_model_call = True
                below = [step]
            elif len(below) == 1:
                _lend(below[0], step)
            else:
                for call in below:
                    if call.model is None and step.model is not None:
                        call.model = step.model
                        call.provider = call.provider or step.provider
            if len(below) == 1 and below[0].usage is None:
                below[0].usage = _body_usage(step.attributes)
        calls_of[id(step)] = below
    return calls_of.pop(id(root), [])


def _lend(call: Step, wrapper: Step) -> None:
    """Give a single call what its only wrapper knows and the call's own span does not."""
    if not call.has_input_messages and wrapper.has_input_messages:
        call.input_messages = wrapper._input_messages
    if wrapper.output_messages:
        if not call.output_messages or _weak(call.output_messages):
            call.output_messages = wrapper.output_messages
        else:
            own_calls = any(m.calls for m in call.output_messages)
            lent = [c for m in wrapper.output_messages for c in m.calls]
            if lent and not own_calls:
                last = call.output_messages[-1]
                call.output_messages = [
                    *call.output_messages[:-1],
                    Msg(last.role, [*last.parts, *lent]),
                ]
    if call.model is None:
        call.model = wrapper.model
    if call.provider is None:
        call.provider = wrapper.provider
    if call.response_model is None:
        call.response_model = wrapper.response_model
    if call.finish_reason is None:
        call.finish_reason = wrapper.finish_reason
    if call.usage is None:
        call.usage = wrapper.usage
    if call.system is None:
        call.system = wrapper.system
    if call._input is None:
        call.input = wrapper._input
    if call._output is None:
        call.output = wrapper._output


_USAGE_FIELDS = (
    ("input_tokens", ("prompt_tokens", "input_tokens", "promptTokenCount")),
    ("output_tokens", ("completion_tokens", "output_tokens", "candidatesTokenCount")),
    ("total_tokens", ("total_tokens", "totalTokenCount")),
)


def _body_usage(attrs: dict[str, Any]) -> dict[str, int] | None:
    """Usage from the provider's raw response body a span kept (Mastra's
    ``mastra.metadata.body``), for a model call whose span reports no usage."""
    raw = attrs.get("mastra.metadata.body")
    if raw is None:
        return None
    usage = as_dict(as_dict(raw).get("usage") or as_dict(raw).get("usageMetadata"))
    return pick_usage(usage, _USAGE_FIELDS) if usage else None


def _weak(msgs: list[Msg]) -> bool:
    return not any(m.text or any(isinstance(p, Call) for p in m.parts) for m in msgs)


__all__ = ["build_steps"]
