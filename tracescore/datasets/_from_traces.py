"""Items from stored production traces, through the traces room's public functions only.

Each trace's agent run gives one item: its input with the conversation history (as a list of
``{"role", "content"}`` messages, oldest first), its final answer as ``ground_truth`` (edit it
before adding when the production answer was wrong) and, when asked, its trajectory as
``expected_trajectory``; the trace and span ids are kept. A trace whose target is a workflow
run gives the workflow's input and result instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracescore.model import Message

from ._errors import DatasetError
from ._models import DatasetItem


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_invocations:
        out["tool_invocations"] = [t.model_dump(mode="json", exclude_defaults=True)
                                   for t in message.tool_invocations]
    return out


def _plain(value: Any) -> Any:
    """Messages as ``{"role", "content"}`` dicts, everything else JSON-ready."""
    from pydantic_core import to_jsonable_python

    if isinstance(value, list) and value and all(isinstance(m, Message) for m in value):
        return [_message(m) for m in value]
    return to_jsonable_python(value, fallback=repr)


def _workflow_item(trace: Any, *, trajectory: bool) -> DatasetItem:
    from tracescore.traces import trace_to_trajectory_run, trace_to_workflow_run

    run = trace_to_workflow_run(trace)
    output = run.output
    if isinstance(output, list) and output and all(isinstance(m, Message) for m in output):
        answers = [m.content for m in output if m.role == "assistant" and m.content]
        output = answers[-1] if answers else None
    expected = None
    if trajectory:
        expected = trace_to_trajectory_run(trace, run.span_id).output.model_dump(
            mode="json", exclude_none=True)
    return DatasetItem(
        input=_plain(run.input), ground_truth=_plain(output), expected_trajectory=expected,
        request_context=run.request_context, metadata={"source": "trace", "target": "workflow"},
        source_trace_id=run.trace_id or trace.trace_id, source_span_id=run.span_id,
    )


def item_from_trace(trace: Any, *, trajectory: bool = False) -> DatasetItem:
    """The item of one assembled ``Trace``: its workflow run when the trace's target is one
    (the workflow's input and result), else its outermost agent run."""
    from tracescore.model import AgentInput
    from tracescore.traces import default_target, trace_to_agent_run, trace_to_trajectory_run

    target = default_target(trace)
    if target is not None and target.kind == "workflow_run":
        return _workflow_item(trace, trajectory=trajectory)
    run = trace_to_agent_run(trace)
    agent_input = run.input if isinstance(run.input, AgentInput) else AgentInput()
    history = [*agent_input.remembered_messages, *agent_input.input_messages]
    output = [m for m in (run.output or []) if isinstance(m, Message)]
    answers = [m.content for m in output if m.role == "assistant" and m.content]
    metadata: dict[str, Any] = {"source": "trace"}
    system = [m.content for m in agent_input.system_messages if m.content]
    if system:
        metadata["system"] = system
    expected = None
    if trajectory:
        expected = trace_to_trajectory_run(trace, run.span_id).output
        expected = expected.model_dump(mode="json", exclude_none=True)
    return DatasetItem(
        input=[_message(m) for m in history],
        ground_truth=answers[-1] if answers else None,
        expected_trajectory=expected,
        request_context=run.request_context,
        metadata=metadata,
        source_trace_id=run.trace_id or trace.trace_id,
        source_span_id=run.span_id,
    )


_HEX = frozenset("0123456789abcdef")


def trace_ids_of(store: Any, sql: str) -> list[str]:
    """The ``trace_id`` column of a read-only query (the store's guarded SQL surface)."""
    result = store.query(sql)
    if "trace_id" not in result.columns:
        raise DatasetError(
            f"the query must return a trace_id column; it returned {result.columns}"
        )
    index = result.columns.index("trace_id")
    ids = [str(row[index]).lower() for row in result.rows if row[index]]
    for number, trace_id in enumerate(ids, 1):
        if len(trace_id) != 32 or not set(trace_id) <= _HEX:
            # the value is not echoed: a query can put anything in this column
            raise DatasetError(
                f"row {number} of the query has a trace_id that is not 32 hex digits; select "
                "the trace_id column of spans or traces"
            )
    return list(dict.fromkeys(ids))


def items_from_store(store: Any, trace_ids: Sequence[str] | None, *, sql: str | None,
                     trajectory: bool) -> list[DatasetItem]:
    """Items of ``trace_ids`` (or of the traces ``sql`` selects) read from an open ``Store``."""
    from tracescore.traces import TraceIdError, TraceNotFound, load_trace, resolve_trace_id

    if (trace_ids is None) == (sql is None):
        raise DatasetError("give exactly one of trace_ids or sql= to items_from_traces")
    ids = list(trace_ids) if trace_ids is not None else trace_ids_of(store, sql or "")
    items = []
    for trace_id in ids:
        try:
            trace = load_trace(store, resolve_trace_id(store.read, trace_id))  # a prefix too
        except (TraceNotFound, TraceIdError) as exc:
            raise DatasetError(str(exc)) from None
        items.append(item_from_trace(trace, trajectory=trajectory))
    return items


__all__ = ["item_from_trace", "items_from_store", "trace_ids_of"]
