"""Conversations: the traces of one session read back as turns, and the ``Session`` scorer input.

A production agent answers each user turn in its own trace; the traces that carry one session
id (``traces.session_id``, read by ``trace_identity`` from every convention) are one
conversation. ``load_session`` orders them by start time and reads each turn the way a
per-trace agent scorer would (``trace_to_agent_run``): its new input messages, its final output
and the tool calls beneath it. ``Session.scorer_run()`` turns the whole conversation into one
agent-shaped input, so any ``type="agent"`` scorer (the multi-turn judge too) scores it as is:
``input_messages`` = the last turn's input, ``remembered_messages`` = every earlier turn (user
and assistant), ``output`` = every assistant message of the session in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.model import (
    AgentInput,
    AgentRunStep,
    Message,
    ScorerRun,
    ToolInvocation,
    Trajectory,
)

from ._errors import SessionNotFound
from ._runs import trace_to_agent_run
from ._targets import default_agent
from ._trace import Trace, load_trace
from ._trajectory import trajectory_of

SESSION_TRACES_SQL = """
SELECT trace_id, start_time, project FROM traces WHERE session_id = ?
ORDER BY start_time, first_received_at, trace_id
"""


@dataclass(frozen=True, slots=True)
class Turn:
    """One trace of a conversation, read as a user turn and the agent's answer."""

    trace_id: str
    start_time: datetime | None
    agent_span_id: str | None
    input: AgentInput
    """The turn's own input (``input_messages``) and what its agent was given besides."""
    output: list[Message]
    """The agent's answer: assistant messages with their tool invocations."""
    trajectory: Trajectory

    @property
    def tool_calls(self) -> list[ToolInvocation]:
        """Every tool invocation of the turn, in order."""
        return [call for message in self.output for call in message.tool_invocations]


@dataclass(frozen=True, slots=True)
class Session:
    """A conversation: its turns in order (see the module docstring)."""

    session_id: str
    turns: list[Turn] = field(default_factory=list)
    project: str | None = None
    """The project of the session's first trace."""

    @property
    def last_trace_id(self) -> str | None:
        """The trace of the latest turn (``scores.trace_id`` of a session score)."""
        return self.turns[-1].trace_id if self.turns else None

    def agent_input(self) -> AgentInput:
        """The last turn's input with every earlier turn as remembered messages."""
        if not self.turns:
            return AgentInput()
        remembered: list[Message] = []
        for turn in self.turns[:-1]:
            remembered += turn.input.input_messages
            remembered += turn.output
        last = self.turns[-1].input
        return AgentInput(
            input_messages=list(last.input_messages),
            remembered_messages=remembered,
            system_messages=list(last.system_messages),
            tagged_system_messages=dict(last.tagged_system_messages),
        )

    def output(self) -> list[Message]:
        """Every assistant message of the session, in order."""
        return [message for turn in self.turns for message in turn.output]

    def trajectory(self) -> Trajectory:
        """One ``agent_run`` step per turn, its children the turn's steps."""
        steps: list[Any] = []
        total = 0.0
        for index, turn in enumerate(self.turns, start=1):
            duration = turn.trajectory.total_duration_ms
            total += duration or 0.0
            steps.append(AgentRunStep(
                name=f"turn {index}", agent_id=turn.trace_id, duration_ms=duration,
                children=list(turn.trajectory.steps) or None,
                metadata={"trace_id": turn.trace_id, "span_id": turn.agent_span_id}))
        return Trajectory(steps=steps, total_duration_ms=total or None,
                          raw_output=self.output())

    def scorer_run(self, scorer_type: str | None = "agent") -> ScorerRun:
        """The run a session scorer sees: the agent input/output of the whole conversation
        (``scorer_type="trajectory"``: the session trajectory as output)."""
        output: Any = self.trajectory() if scorer_type == "trajectory" else self.output()
        return ScorerRun(input=self.agent_input(), output=output, trace_id=self.last_trace_id,
                         request_context={"conversation_id": self.session_id})


def turn_of(trace: Trace, start_time: datetime | None = None) -> Turn:
    """One loaded trace as a conversation turn."""
    run = trace_to_agent_run(trace)
    step = default_agent(trace)
    agent_input = run.input if isinstance(run.input, AgentInput) else AgentInput()
    output = [m for m in run.output or [] if isinstance(m, Message)]
    trajectory = trajectory_of([step], raw_output=output) if step is not None else Trajectory()
    return Turn(trace.trace_id, start_time, step.span_id if step is not None else None,
                agent_input, output, trajectory)


def load_session(store: Any, session_id: str) -> Session:
    """The conversation ``session_id`` in order, from the store's ``traces`` table.

    ``store`` is anything with ``read(sql, params)`` and ``fetch_trace_rows(trace_id)``, such
    as ``tracescore.store.Store``. Raises ``SessionNotFound`` when no trace carries the id.
    """
    rows = store.read(SESSION_TRACES_SQL, [session_id])
    if not rows:
        raise SessionNotFound(
            f"no trace carries session id {session_id!r}; check the id (the sessions table "
            "lists them) or wait until its traces have settled")
    turns = [turn_of(load_trace(store, row["trace_id"]), row["start_time"]) for row in rows]
    return Session(session_id, turns, project=rows[0]["project"])


__all__ = ["SESSION_TRACES_SQL", "Session", "Turn", "load_session", "turn_of"]
