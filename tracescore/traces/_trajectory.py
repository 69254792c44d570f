"""Hierarchical trajectories from the step tree, as Mastra builds them, one shape for every client.

A single agent or workflow root is a container whose children are the steps. Each single model
call is one ``model_generation`` step and each tool call its sibling, in call order (tool spans
that sit under a model span, as Mastra and some clients place them, are lifted beside it).
Wrappers around model calls, model inference/chunk spans, processors, memory operations,
scorers and generic spans are skipped and their children promoted. Nested agent runs, workflow
steps and other workflow constructs are containers whose children follow the same rule.
"""

from __future__ import annotations

from typing import Any

from tracescore.model import (
    AgentRunStep,
    McpToolCallStep,
    Message,
    ModelGenerationStep,
    ProviderToolCallStep,
    RawWorkflowResult,
    ToolCallStep,
    Trajectory,
    WorkflowConditionalStep,
    WorkflowLoopStep,
    WorkflowParallelStep,
    WorkflowRunStep,
    WorkflowSleepStep,
    WorkflowStepStep,
    WorkflowWaitEventStep,
)

from ._agent import agent_output
from ._steps import MODEL_KINDS, RUN_KINDS, Step
from ._targets import default_target, step_of
from ._tool_steps import untraced_tools
from ._trace import Trace

_CONTAINERS = RUN_KINDS


def _base(step: Step, children: list[Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"span_id": step.span_id}
    if step.failed and step.error:
        metadata["error"] = step.error
    return {
        "name": step.name,
        "duration_ms": step.duration_ms,
        "metadata": metadata,
        "children": children or None,
    }


def _success(step: Step) -> bool | None:
    if step.failed:
        return False
    return True if step.ended or step.tool_result is not None else None


def _status(step: Step) -> str:
    if step.step_status:
        return step.step_status
    if step.failed:
        return "failed"
    return "success" if step.ended else "running"


def convert(step: Step) -> list[Any]:
    """The trajectory steps of one step and its subtree (a list: skipped steps promote theirs)."""
    kind = step.kind
    if step.is_model_call:
        usage = step.usage or {}
        metadata: dict[str, Any] = {"span_id": step.span_id}
        if step.response_model:
            metadata["response_model"] = step.response_model
        if step.failed and step.error:
            metadata["error"] = step.error
        lifted = [s for child in step.children for s in convert(child)]
        return [
            ModelGenerationStep(
                name=step.model or step.name,
                duration_ms=step.duration_ms,
                metadata=metadata,
                model_id=step.model,
                prompt_tokens=usage.get("input_tokens"),
                completion_tokens=usage.get("output_tokens"),
                finish_reason=step.finish_reason,
            ),
            *lifted,
        ]
    children = [s for child in step.children for s in convert(child)]
    if kind in MODEL_KINDS:
        return children
    if kind == "tool_call":
        return [
            ToolCallStep(
                **_base(step, children),
                tool_args=step.tool_args,
                tool_result=step.tool_result,
                success=_success(step),
                tool_call_id=step.tool_call_id,
            )
        ]
    if kind == "mcp_tool_call":
        return [
            McpToolCallStep(
                **_base(step, children),
                tool_args=step.tool_args,
                tool_result=step.tool_result,
                mcp_server=step.mcp_server,
                success=_success(step),
                tool_call_id=step.tool_call_id,
            )
        ]
    if kind == "provider_tool_call":
        return [
            ProviderToolCallStep(
                **_base(step, children),
                tool_args=step.tool_args,
                tool_result=step.tool_result,
                success=_success(step),
                tool_call_id=step.tool_call_id,
            )
        ]
    if kind == "agent_run":
        children = with_untraced_tools(step, children)
        return [AgentRunStep(**_base(step, children), agent_id=step.agent_id)]
    if kind == "workflow_run":
        return [
            WorkflowRunStep(
                **_base(step, children), workflow_id=step.workflow_id, status=_status(step)
            )
        ]
    if kind == "workflow_step":
        return [
            WorkflowStepStep(
                **_base(step, children),
                step_id=step.step_id or step.name,
                status=_status(step),
                output=step.output,
            )
        ]
    if kind == "workflow_conditional":
        return [WorkflowConditionalStep(**_base(step, children))]
    if kind == "workflow_parallel":
        return [
            WorkflowParallelStep(**_base(step, children), branch_count=len(step.children) or None)
        ]
    if kind == "workflow_loop":
        return [
            WorkflowLoopStep(**_base(step, children), total_iterations=len(step.children) or None)
        ]
    if kind == "workflow_sleep":
        return [WorkflowSleepStep(**_base(step, children), sleep_duration_ms=step.duration_ms)]
    if kind == "workflow_wait_event":
        return [WorkflowWaitEventStep(**_base(step, children))]
    return children


def with_untraced_tools(agent: Step, steps: list[Any]) -> list[Any]:
    """An agent's steps with a tool step after each model call for every tool it asked for that
    ran without a span of its own (the trajectory is the same whether tools were traced or not).
    """
    derived = untraced_tools(agent)
    if not derived:
        return steps
    out: list[Any] = []
    for item in steps:
        out.append(item)
        if isinstance(item, ModelGenerationStep) and item.metadata:
            out.extend(derived.pop(str(item.metadata.get("span_id")), ()))
    for rest in derived.values():
        out.extend(rest)
    return out


def workflow_result(workflow: Step) -> RawWorkflowResult:
    """Each workflow step's status, input and output, and the order the steps ran in."""
    results: dict[str, Any] = {}
    path: list[str] = []
    for step in workflow.descendants(stop_at=RUN_KINDS):
        if step.kind != "workflow_step" or _inside_run(step, workflow):
            continue
        step_id = step.step_id or step.name
        path.append(step_id)
        results[step_id] = {"status": _status(step), "input": step.input, "output": step.output}
        if step.failed and step.error:
            results[step_id]["error"] = step.error
    return RawWorkflowResult(step_results=results, step_execution_path=path)


def _inside_run(step: Step, top: Step) -> bool:
    parent = step.parent
    while parent is not None and parent is not top:
        if parent.kind in RUN_KINDS:
            return True
        parent = parent.parent
    return False


def trajectory_of(
    roots: list[Step],
    *,
    span_range_ns: tuple[int | None, int | None] = (None, None),
    raw_output: list[Message] | None = None,
) -> Trajectory:
    """The trajectory of a list of root steps (one container root, or several steps).

    ``raw_output`` is the agent output when the caller has it already (saves building it twice).
    """
    if len(roots) == 1 and roots[0].stands_as_agent:
        root = roots[0]
        if raw_output is None:
            raw_output = agent_output(root)
        return Trajectory(
            steps=with_untraced_tools(root, convert(root)),
            total_duration_ms=root.duration_ms,
            raw_output=raw_output,
        )
    if len(roots) == 1 and roots[0].kind in _CONTAINERS:
        root = roots[0]
        steps = [s for child in root.children for s in convert(child)]
        if root.kind == "agent_run":
            steps = with_untraced_tools(root, steps)
        trajectory = Trajectory(steps=steps, total_duration_ms=root.duration_ms)
        if root.kind == "agent_run":
            if raw_output is None:
                raw_output = agent_output(root)
            trajectory.raw_output = raw_output
        else:
            trajectory.raw_workflow_result = workflow_result(root)
        return trajectory
    steps = [s for root in roots for s in convert(root)]
    total = None
    if len(roots) == 1:
        total = roots[0].duration_ms
    elif span_range_ns[0] and span_range_ns[1]:
        total = max(0, span_range_ns[1] - span_range_ns[0]) / 1_000_000
    return Trajectory(steps=steps, total_duration_ms=total)


def extract_trajectory_from_trace(trace: Trace, root_span_id: str | None = None) -> Trajectory:
    """The hierarchical trajectory of a trace, or of the subtree under ``root_span_id``.

    With no root given: the outermost agent or workflow run is the container (beneath plumbing
    such as an HTTP server span); a trace with no run uses its root span, or all its root spans
    when the root is missing.
    """
    if root_span_id is not None:
        return trajectory_of([step_of(trace, root_span_id)])
    target = default_target(trace)
    if target is not None and (target.kind in _CONTAINERS or target.stands_as_agent):
        return trajectory_of([target])
    return trajectory_of(trace.steps, span_range_ns=(trace.start_time_ns, trace.end_time_ns))


__all__ = [
    "convert",
    "extract_trajectory_from_trace",
    "trajectory_of",
    "with_untraced_tools",
    "workflow_result",
]
