"""The weather agent traced with OpenInference (the conventions of Arize Phoenix).

``openinference-instrumentation-openai`` makes one ``ChatCompletion`` LLM span per model call;
the ``OITracer`` from ``openinference-instrumentation`` adds the AGENT root and a TOOL span per
tool call, with ``session.id`` and ``user.id`` on every span.

    python openinference_agent.py --endpoint http://127.0.0.1:4318 [--api-key KEY] [--project NAME]

With no OPENAI_BASE_URL set, a scripted OpenAI-compatible server answers in-process.
"""

from __future__ import annotations

import json

from openai import OpenAI
from openinference.instrumentation import TracerProvider, using_session, using_user
from openinference.instrumentation.openai import OpenAIInstrumentor

import weather_agent as wa


def main() -> None:
    """Run one question through the agent and send its trace to tracescore."""
    args = wa.parse_args(__doc__.splitlines()[0])
    provider = wa.setup_tracing(args, provider_class=TracerProvider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer(__name__)

    def run_tool(name: str, arguments: dict, call_id: str) -> dict:
        with tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
            spec = wa.TOOL_SPECS[name]
            span.set_tool(name=name, description=spec["description"], parameters=spec["parameters"])
            span.set_input(json.dumps(arguments), mime_type="application/json")
            result = wa.call_tool(name, arguments, call_id)
            span.set_output(json.dumps(result), mime_type="application/json")
            return result

    with wa.openai_endpoint() as base_url, using_session("session-1"), using_user("user-1"):
        client = OpenAI(base_url=base_url)
        with tracer.start_as_current_span(wa.AGENT_NAME, openinference_span_kind="agent") as agent:
            agent.set_input(args.question)
            answer = wa.run_agent(client, args.question, model=args.model, run_tool=run_tool)
            agent.set_output(answer)
            trace_id = wa.current_trace_id()
    provider.shutdown()  # flushes the batch to tracescore
    print(answer)
    print(f"trace_id={trace_id}")


if __name__ == "__main__":
    main()
