"""Which model steps are single model calls, where tokens are counted once.

Rule: a model step with no model step beneath it is one request to the model
(``is_model_call``), provided it carries something of a request: input messages, output or
usage. A model-tagged span with none of them, or whose output is the conversation it prepared
(messages ending with the user's turn, no assistant message), is request preparation
(LlamaIndex's ``OpenAI._prepare_chat_with_tools``), not a call, and is dropped as plumbing.
Wrappers (Mastra's ``model_generation`` over its ``model_step`` spans, a ``model_step`` over its
``model_inference``, the AI SDK's top call, an LLM span around another LLM span) are not calls:
a model call wrapped by another counts once. A wrapper with exactly one call beneath lends that
call whatever the call's own span lacks (of two copies of the request's messages, the fuller:
``fuller``) (Mastra's ``chat`` span carries usage but not the tool
calls its ``model_step`` parent records). Tokens are counted on calls only, since parents repeat
their children's sums or the last step's.

A second record of a traced call: an agent-typed span with nothing beneath that carries the id
the provider gave a completion a traced model call carries too (``gen_ai.response.id``) records
that call again (OpenLIT's LangGraph node spans beside its LangChain ones): it is neither a
call, a step nor a run. So is an agent span holding no work beside one of the same name that
holds it, with the agent spans beneath it (``drop_twin_records``: a span that held only such
call records among them).
"""

from __future__ import annotations

from typing import Any

from ._steps import MODEL_KINDS, TOOL_KINDS, Call, Lazy, Msg, Step, note
from ._values import as_dict, pick_usage


def resolve_calls(root: Step) -> list[Step]:
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
                if step.usage is not None or _is_request(step):
                    step.is_model_call = True
                    below = [step]
                else:
                    step.kind = "generic"
                    note(
                        step,
                        "model span with no messages, output or usage, or whose output is "
                        "the prompt it prepared: request preparation, not a model call "
                        "(dropped as plumbing)",
                    )
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


_MESSAGE_KEYS = (
    "llm.input_messages.",
    "llm.output_messages.",
    "llm.prompts",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.prompt",
    "gen_ai.completion",
)


def _is_request(step: Step) -> bool:
    """A model step that carries messages, a model response or usage.

    Messages count when the span writes them as the conventions do (flattened or JSON message
    attributes, or message events); an ``output.value`` counts when it is a provider response
    (``choices``, an assistant message, a Responses-API ``output`` list), not when it is the
    prepared request (``{"messages": [...]}``).
    """
    if step.usage is not None or step.hint != "llm_call" or step.finish_reason is not None:
        return True
    if step.convention != "openinference":
        return not _gave_prompt(step)
    for key in step.attributes:
        if key.startswith(_MESSAGE_KEYS):
            return True
    output = step.output
    if isinstance(output, dict):
        return (
            "choices" in output
            or output.get("role") == "assistant"
            or isinstance(output.get("output"), list)
        )
    return False


def _gave_prompt(step: Step) -> bool:
    """A model step whose output is messages with no assistant message among them (the
    conversation it prepared for the model, ending with the user's turn), not an answer."""
    if step._output is None:
        return False
    out = step.output_messages
    return bool(out) and all(m.role in ("system", "user", "tool") for m in out or [])


def _lend(call: Step, wrapper: Step) -> None:
    """Give a single call what its only wrapper knows and the call's own span does not."""
    if not call.has_input_messages and wrapper.has_input_messages:
        call.input_messages = wrapper._input_messages
    elif wrapper.has_input_messages:
        # Both record the request: the fuller copy wins (Mastra's OpenInference export puts
        # placeholders for tool calls in the step's messages, the calls on its wrapper).
        call.input_messages = Lazy(fuller, call._input_messages, wrapper._input_messages)
    lent = wrapper._output_messages
    if lent is not None:
        # Merged on first read: a tree nobody reads the messages of never parses them.
        call.output_messages = Lazy(_lent_outputs, call._output_messages, lent)
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
    ``mastra.metadata.body``, or a ``body`` in its JSON ``metadata``), for a model call whose
    span reports no usage."""
    raw = attrs.get("mastra.metadata.body")
    if raw is None:
        raw = as_dict(attrs.get("metadata")).get("body")
    if raw is None:
        return None
    usage = as_dict(as_dict(raw).get("usage") or as_dict(raw).get("usageMetadata"))
    return pick_usage(usage, _USAGE_FIELDS) if usage else None


def _lent_outputs(own: list[Msg] | Lazy | None, lent: list[Msg] | Lazy) -> list[Msg] | None:
    """A call's output messages with what its only wrapper recorded: the wrapper's when the call
    has none (or no text and no tool call), else the call's with the wrapper's tool calls when
    the call's own messages carry none."""
    own_msgs = _resolved(own)
    lent_msgs = _resolved(lent)
    if not lent_msgs:
        return own_msgs
    if not own_msgs or _weak(own_msgs):
        return lent_msgs
    if any(m.calls for m in own_msgs):
        return own_msgs
    calls = [c for m in lent_msgs for c in m.calls]
    if not calls:
        return own_msgs
    last = own_msgs[-1]
    return [*own_msgs[:-1], Msg(last.role, [*last.parts, *calls])]


def fuller(own: list[Msg] | Lazy | None, lent: list[Msg] | Lazy | None) -> list[Msg] | None:
    """Of two copies of one request's messages, the one that says more (parts, call ids), or
    that holds every message of the other and more (a tracer that leaves the assistant's
    tool-call messages out, as OpenLIT's OpenAI spans under Strands' own)."""
    own_msgs, lent_msgs = _resolved(own), _resolved(lent)
    if not lent_msgs or not own_msgs:
        return own_msgs or lent_msgs
    if len(lent_msgs) > len(own_msgs):
        return lent_msgs if _holds(lent_msgs, own_msgs) else own_msgs
    if len(lent_msgs) != len(own_msgs):
        return own_msgs
    return lent_msgs if _weight(lent_msgs) > _weight(own_msgs) else own_msgs


def _holds(longer: list[Msg], shorter: list[Msg]) -> bool:
    """Whether ``longer`` has every message of ``shorter`` (role and text), in order."""
    wanted = iter(longer)
    return all(any(m.role == s.role and m.text == s.text for m in wanted) for s in shorter)


def _weight(msgs: list[Msg]) -> int:
    return sum(len(m.parts) + sum(1 for c in m.calls if c.id) + len(m.results) for m in msgs)


def _resolved(value: list[Msg] | Lazy | None) -> list[Msg] | None:
    if type(value) is Lazy:
        got: list[Msg] | None = value.get()
        return got
    return value  # type: ignore[return-value]


def _weak(msgs: list[Msg]) -> bool:
    return not any(m.text or any(isinstance(p, Call) for p in m.parts) for m in msgs)


CALL_RECORD = "call_record"
"""The hint of a span that records a traced model call again (``drop_call_records``)."""


def drop_call_records(empties: list[Step], calls: list[Step]) -> list[Step]:
    """Mark the spans among ``empties`` (agent-typed spans with nothing beneath) that record a
    traced call again (see the module docstring); return the empties left."""
    ids = {rid for call in calls if (rid := response_id(call)) is not None}
    if not ids:
        return empties
    left: list[Step] = []
    for empty in empties:
        rid = response_id(empty)
        if rid not in ids:
            left.append(empty)
            continue
        empty.kind = "generic"
        empty.hint = CALL_RECORD
        note(empty, f"carries the response id {rid!r} of a traced model call: a second record "
             "of that call (dropped)")
    return left


def drop_twin_records(typed: list[Step]) -> None:
    """An agent span beside an agent span of the same name that holds model or tool work, itself
    holding none, records that sibling's run again (OpenLIT's LangGraph node span beside its
    LangChain one, the nested graph's node spans beneath it): it and the agent spans beneath it
    are dropped."""
    groups: dict[tuple[int, str], list[Step]] = {}
    for step in typed:
        if step.kind == "agent_run" and step.parent is not None:
            groups.setdefault((id(step.parent), step.name), []).append(step)
    for twins in groups.values():
        if len(twins) < 2:
            continue
        working = [t for t in twins if any(s.is_model_call or s.kind in TOOL_KINDS
                                           for s in t.walk())]
        if not working:
            continue
        for twin in twins:
            if twin in working:
                continue
            for below in twin.walk():
                if below.kind == "agent_run":
                    below.kind = "generic"
                    below.hint = CALL_RECORD
            note(twin, f"agent span holding no work beside the agent span {working[0].span_id} "
                 "of the same name that holds it: a second record of that run (dropped)")


def response_id(step: Step) -> str | None:
    """The id the provider gave the completion a span records: an attribute whose key ends in
    ``response.id`` or ``response_id`` (``gen_ai.response.id``, the AI SDK's
    ``ai.response.id``)."""
    for key, value in step.attributes.items():
        if key.endswith(("response.id", "response_id")) and isinstance(value, str) and value:
            return value
    return None


__all__ = [
    "CALL_RECORD",
    "drop_call_records",
    "drop_twin_records",
    "fuller",
    "resolve_calls",
    "response_id",
]
