"""Trajectories: the hierarchical steps an agent or workflow took, and expectations of them.

The step types follow Mastra's ``TrajectoryStep`` union, discriminated by ``step_type``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._base import Model
from ._messages import Message

StepType = Literal[
    "tool_call",
    "mcp_tool_call",
    "provider_tool_call",
    "model_generation",
    "agent_run",
    "workflow_run",
    "workflow_step",
    "workflow_conditional",
    "workflow_parallel",
    "workflow_loop",
    "workflow_sleep",
    "workflow_wait_event",
    "processor_run",
]
Ordering = Literal["strict", "relaxed", "unordered"]


class _StepBase(Model):
    name: str
    """Tool name, model id, agent name or workflow step id."""
    duration_ms: float | None = None
    """How long the step took."""
    metadata: dict[str, Any] | None = None
    """Anything else known about the step (span id, error, …)."""
    children: list[TrajectoryStep] | None = None
    """Nested steps (tool calls inside an agent run, steps inside a workflow step, …)."""


class ToolCallStep(_StepBase):
    """A call of a function tool."""

    step_type: Literal["tool_call"] = "tool_call"
    tool_args: Any = None
    tool_result: Any = None
    success: bool | None = None
    tool_call_id: str | None = None


class McpToolCallStep(_StepBase):
    """A call of a tool served over MCP."""

    step_type: Literal["mcp_tool_call"] = "mcp_tool_call"
    tool_args: Any = None
    tool_result: Any = None
    mcp_server: str | None = None
    success: bool | None = None
    tool_call_id: str | None = None


class ProviderToolCallStep(_StepBase):
    """A tool executed by the model provider (web search, code interpreter, …)."""

    step_type: Literal["provider_tool_call"] = "provider_tool_call"
    tool_args: Any = None
    tool_result: Any = None
    success: bool | None = None
    tool_call_id: str | None = None


class ModelGenerationStep(_StepBase):
    """One call of a model."""

    step_type: Literal["model_generation"] = "model_generation"
    model_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None


class AgentRunStep(_StepBase):
    """A (nested) agent run."""

    step_type: Literal["agent_run"] = "agent_run"
    agent_id: str | None = None


class WorkflowRunStep(_StepBase):
    """A (nested) workflow run."""

    step_type: Literal["workflow_run"] = "workflow_run"
    workflow_id: str | None = None
    status: str | None = None


class WorkflowStepStep(_StepBase):
    """One step of a workflow."""

    step_type: Literal["workflow_step"] = "workflow_step"
    step_id: str | None = None
    status: str | None = None
    output: Any = None


class WorkflowConditionalStep(_StepBase):
    """A branch decision in a workflow."""

    step_type: Literal["workflow_conditional"] = "workflow_conditional"
    condition_count: int | None = None
    selected_steps: list[str] | None = None


class WorkflowParallelStep(_StepBase):
    """Parallel branches in a workflow."""

    step_type: Literal["workflow_parallel"] = "workflow_parallel"
    branch_count: int | None = None
    parallel_steps: list[str] | None = None


class WorkflowLoopStep(_StepBase):
    """A loop in a workflow."""

    step_type: Literal["workflow_loop"] = "workflow_loop"
    loop_type: str | None = None
    total_iterations: int | None = None


class WorkflowSleepStep(_StepBase):
    """A sleep in a workflow."""

    step_type: Literal["workflow_sleep"] = "workflow_sleep"
    sleep_duration_ms: float | None = None
    sleep_type: str | None = None


class WorkflowWaitEventStep(_StepBase):
    """A wait for an external event in a workflow."""

    step_type: Literal["workflow_wait_event"] = "workflow_wait_event"
    event_name: str | None = None
    event_received: bool | None = None


class ProcessorRunStep(_StepBase):
    """An input/output processor run."""

    step_type: Literal["processor_run"] = "processor_run"
    processor_id: str | None = None


TrajectoryStep = Annotated[
    ToolCallStep
    | McpToolCallStep
    | ProviderToolCallStep
    | ModelGenerationStep
    | AgentRunStep
    | WorkflowRunStep
    | WorkflowStepStep
    | WorkflowConditionalStep
    | WorkflowParallelStep
    | WorkflowLoopStep
    | WorkflowSleepStep
    | WorkflowWaitEventStep
    | ProcessorRunStep,
    Field(discriminator="step_type"),
]
"""Any trajectory step; the concrete class is chosen by ``step_type``."""

STEP_CLASSES: dict[str, type[_StepBase]] = {
    "tool_call": ToolCallStep,
    "mcp_tool_call": McpToolCallStep,
    "provider_tool_call": ProviderToolCallStep,
    "model_generation": ModelGenerationStep,
    "agent_run": AgentRunStep,
    "workflow_run": WorkflowRunStep,
    "workflow_step": WorkflowStepStep,
    "workflow_conditional": WorkflowConditionalStep,
    "workflow_parallel": WorkflowParallelStep,
    "workflow_loop": WorkflowLoopStep,
    "workflow_sleep": WorkflowSleepStep,
    "workflow_wait_event": WorkflowWaitEventStep,
    "processor_run": ProcessorRunStep,
}
"""step_type → step class, for code that builds steps by kind."""


class RawWorkflowResult(Model):
    """A workflow's step results, kept on its trajectory for scorers that need them."""

    step_results: dict[str, Any] = Field(default_factory=dict)
    step_execution_path: list[str] | None = None


class Trajectory(Model):
    """The ordered steps an agent or workflow took from input to output."""

    steps: list[TrajectoryStep] = Field(default_factory=list)
    """Top-level steps in order; containers hold theirs in ``children``."""
    total_duration_ms: float | None = None
    """The whole run's duration."""
    raw_output: list[Message] | None = None
    """The agent's output messages, for scorers that need text."""
    raw_workflow_result: RawWorkflowResult | None = None
    """The workflow's step results, for scorers that need them."""


class ExpectedStep(Model):
    """One expected step: matches on ``name``, and on ``step_type`` and each other field given."""

    model_config = Model.model_config | {"extra": "allow"}

    name: str
    step_type: StepType | None = None
    tool_args: Any = None
    tool_result: Any = None
    success: bool | None = None
    model_id: str | None = None
    agent_id: str | None = None
    workflow_id: str | None = None
    step_id: str | None = None
    status: str | None = None
    output: Any = None
    mcp_server: str | None = None
    finish_reason: str | None = None
    children: TrajectoryExpectation | None = None
    """Expectations for the matched step's children."""

    def expected_fields(self) -> dict[str, Any]:
        """The fields (besides name, step_type and children) this expectation sets."""
        skip = {"name", "step_type", "children"}
        return {k: getattr(self, k) for k in self.model_fields_set if k not in skip} | {
            k: v for k, v in (self.model_extra or {}).items() if k not in skip
        }


class TrajectoryExpectation(Model):
    """Everything a trajectory should satisfy: expected steps, budgets, blacklists."""

    steps: list[ExpectedStep] | None = None
    ordering: Ordering = "relaxed"
    allow_repeated_steps: bool = True
    compare_step_data: bool | None = None
    """None: compare the fields each expected step sets; True: also legacy ``data``; False: names
    and step types only."""
    max_steps: int | None = None
    max_total_tokens: int | None = None
    max_total_duration_ms: float | None = None
    no_redundant_calls: bool = True
    blacklisted_tools: list[str] = Field(default_factory=list)
    blacklisted_sequences: list[list[str]] = Field(default_factory=list)
    max_retries_per_tool: int = 2


_REBUILT: tuple[type[Model], ...] = (*STEP_CLASSES.values(), ExpectedStep)
for _cls in _REBUILT:
    _cls.model_rebuild()
