"""From traces to scorer inputs: trace assembly, convention adapters, the normalized step tree,
agent input/output, hierarchical trajectories and span-level scorer runs.

Only ``tracescore.model`` (and pydantic/orjson) is imported here: no DuckDB, no FastAPI.
"""

from ._adapters import ADAPTERS, Adapter, adapt_span
from ._agent import agent_input, agent_output
from ._document import lazy_trace_document, trace_document
from ._errors import SessionNotFound, SpanNotFound, TraceError, TraceIdError, TraceNotFound
from ._explain import explain, render_explain
from ._identity import session_id_of, trace_identity, user_id_of
from ._render import render_tree, step_summary
from ._runs import (
    scorer_input,
    trace_to_agent_run,
    trace_to_scorer_run,
    trace_to_scorer_runs,
    trace_to_span_run,
    trace_to_trajectory_run,
    trace_to_workflow_run,
)
from ._session import Session, Turn, load_session
from ._span import Span
from ._spend import ModelCallRecord, TraceSpend, trace_spend
from ._steps import KINDS, Msg, Step
from ._targets import default_target, find_target_spans
from ._tool_definitions import tool_definitions
from ._trace import Trace, load_trace
from ._trace_ref import MIN_PREFIX, PREFIX_SQL, check_trace_ref, resolve_trace_id
from ._trajectory import extract_trajectory_from_trace

__all__ = [
    "ADAPTERS",
    "KINDS",
    "MIN_PREFIX",
    "PREFIX_SQL",
    "Adapter",
    "ModelCallRecord",
    "Msg",
    "Session",
    "SessionNotFound",
    "Span",
    "SpanNotFound",
    "Step",
    "Trace",
    "TraceError",
    "TraceIdError",
    "TraceNotFound",
    "TraceSpend",
    "Turn",
    "adapt_span",
    "agent_input",
    "agent_output",
    "check_trace_ref",
    "default_target",
    "explain",
    "extract_trajectory_from_trace",
    "find_target_spans",
    "lazy_trace_document",
    "load_session",
    "load_trace",
    "render_explain",
    "render_tree",
    "resolve_trace_id",
    "scorer_input",
    "session_id_of",
    "step_summary",
    "tool_definitions",
    "trace_document",
    "trace_identity",
    "trace_spend",
    "trace_to_agent_run",
    "trace_to_scorer_run",
    "trace_to_scorer_runs",
    "trace_to_span_run",
    "trace_to_trajectory_run",
    "trace_to_workflow_run",
    "user_id_of",
]
