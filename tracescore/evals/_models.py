"""What ``run_evals`` takes in: data items, targets' return values and scorer configurations.

These are pydantic models that also accept Mastra-shaped dicts (camelCase keys such as
``groundTruth``, ``expectedTrajectory``, ``startOptions``, ``stepResults``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from tracescore.model import Message, to_messages

_UNSET: Any = object()


class _EvalModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=False,
        arbitrary_types_allowed=True,
        extra="allow",
    )


class EvalTurn(_EvalModel):
    """One turn of a ``turns`` item: its input and the assertions that see only this turn."""

    input: Any = None
    """What the user says on this turn (a string, a message, or a list of messages)."""
    gates: list[Any] = Field(default_factory=list)
    """Scorers that must score 1.0 on this turn (averaged across items, per turn index)."""
    scorers: list[Any] = Field(default_factory=list)
    """Scorers (or ``{"scorer", "threshold"}`` entries) run on this turn's output only."""
    ground_truth: Any = None
    """The expected answer for this turn; the item's ``ground_truth`` when not given."""

    @model_validator(mode="before")
    @classmethod
    def _bare_input(cls, data: Any) -> Any:
        """A turn given as just its input (a string or a message) is ``{"input": ...}``."""
        if isinstance(data, dict) and ("input" in data or "gates" in data or "scorers" in data):
            return data
        if isinstance(data, EvalTurn):
            return data
        return {"input": data}


class EvalItem(_EvalModel):
    """One data item: exactly one of ``input``, ``inputs`` (turns on one thread) or ``turns``."""

    input: Any = None
    """A single input for the target."""
    inputs: list[Any] | None = None
    """Inputs sent one after another on one thread; scorers see the accumulated output."""
    turns: list[EvalTurn] | None = None
    """Turns with their own gates and scorers; each turn's assertions see only that turn."""
    ground_truth: Any = None
    """The expected answer, passed to every scorer as ``run.ground_truth``."""
    expected_trajectory: Any = None
    """The expected steps, passed to every scorer as ``run.expected_trajectory``."""
    request_context: dict[str, Any] | None = None
    """Passed to the target and to every scorer run."""
    start_options: dict[str, Any] | None = None
    """Workflows only: options for ``run`` merged on top of ``target_options``."""

    def given_input_keys(self) -> list[str]:
        """Which of ``input``, ``inputs`` and ``turns`` this item sets."""
        return [k for k in ("input", "inputs", "turns") if k in self.model_fields_set]


class AgentResponse(_EvalModel):
    """What an agent's ``generate`` returns: its output messages and where it was traced."""

    messages: list[Message] = Field(default_factory=list)
    """The messages the agent produced on this call (assistant and tool messages)."""
    trace_id: str | None = None
    """The trace of this call, when the agent was traced into a tracescore store."""
    span_id: str | None = None
    """The agent run's span in that trace."""

    def __init__(self, messages: Any = _UNSET, /, **data: Any) -> None:
        """``AgentResponse(messages, trace_id=None, span_id=None)``; messages may be positional."""
        if messages is not _UNSET:
            data["messages"] = messages
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _coerce_messages(cls, data: Any) -> Any:
        if isinstance(data, dict) and "messages" in data:
            data = dict(data)
            data["messages"] = to_messages(data["messages"], default_role="assistant")
        return data

    @property
    def text(self) -> str:
        """The text of the assistant messages, joined by newlines."""
        return "\n".join(m.content for m in self.messages if m.role == "assistant" and m.content)


class WorkflowRunResult(_EvalModel):
    """What a workflow's ``run`` returns (Mastra's ``WorkflowResult`` in Python spelling)."""

    status: str = "success"
    """``success``, ``failed``, ``suspended``, …; scorers see ``result`` only on success."""
    result: Any = None
    """The workflow's output."""
    step_results: dict[str, Any] = Field(default_factory=dict)
    """Per step id: ``{"status", "payload", "output", ...}`` (Mastra's ``steps``)."""
    step_execution_path: list[str] | None = None
    """Step ids in the order they ran."""
    trace_id: str | None = None
    """The trace of this run, when the workflow was traced into a tracescore store."""
    span_id: str | None = None
    """The workflow run's span in that trace."""
    error: Any = None
    """Why the run failed, when it did."""

    def __init__(self, *args: Any, **data: Any) -> None:
        """``WorkflowRunResult(status, result, step_results, step_execution_path, ...)``; the
        first four may be positional."""
        names = ("status", "result", "step_results", "step_execution_path")
        if len(args) > len(names):
            raise TypeError(f"WorkflowRunResult takes at most {len(names)} positional arguments")
        data.update(zip(names, args, strict=False))
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _accept_steps(cls, data: Any) -> Any:
        if isinstance(data, dict) and "steps" in data and not (
            "step_results" in data or "stepResults" in data
        ):
            data = dict(data)
            data["step_results"] = data.pop("steps")
        return data


class AgentScorerConfig(_EvalModel):
    """Scorers for an agent, by what they see: its messages (``agent``) or its ``trajectory``."""

    agent: list[Any] = Field(default_factory=list)
    """Scorers of the agent's output messages (results under ``scores["agent"]``)."""
    trajectory: list[Any] = Field(default_factory=list)
    """Scorers given a ``Trajectory`` (results under ``scores["trajectory"]``)."""


class WorkflowScorerConfig(_EvalModel):
    """Scorers for a workflow: of its result, of named steps, and of its trajectory."""

    workflow: list[Any] = Field(default_factory=list)
    """Scorers of the workflow's input and result (results under ``scores["workflow"]``)."""
    steps: dict[str, list[Any]] = Field(default_factory=dict)
    """Per step id, scorers of that step's input and output (``scores["steps"][step_id]``)."""
    trajectory: list[Any] = Field(default_factory=list)
    """Scorers given a ``Trajectory`` (results under ``scores["trajectory"]``)."""
