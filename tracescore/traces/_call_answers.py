"""Stage 4, first: the answer of a model call whose span recorded none.

Rule: a model call of a run with no output of its own answered with what the run's next model
call was given right after this call's prompt: the assistant messages that follow this call's
input messages, when the next call's input starts with those messages. (A streamed call whose
span ended before the stream was read records no answer: LlamaIndex's own OpenTelemetry
integration drops the end event of every streamed call.) The run's last call has no next call:
its answer stays unknown.
"""

from __future__ import annotations

from ._scope import in_nested, scope
from ._steps import Step, note


def recover_answers(run: Step) -> None:
    """Give each of the run's own model calls that recorded no answer the one its next call was
    given (see the module's rule)."""
    calls = [s for s in scope(run) if s.is_model_call]  # (the walk stage 5 reads again, kept)
    if all(call.output_messages for call in calls):
        return  # every call recorded its answer (parsed here once, as stage 5 needs it)
    calls = [call for call in calls if not in_nested(call, run)]
    for call, following in zip(calls, calls[1:], strict=False):
        if call.output_messages:
            continue
        asked = call.input_messages
        given = following.input_messages
        if not asked or not given or len(given) <= len(asked) or given[: len(asked)] != asked:
            continue
        answer = []
        for msg in given[len(asked):]:
            if msg.role != "assistant":
                break
            answer.append(msg)
        if answer:
            call.output_messages = answer
            note(call, "records no answer: its answer is the {} assistant message(s) the next "
                 "model call {} was given after this call's prompt", len(answer),
                 following.span_id)


__all__ = ["recover_answers"]
