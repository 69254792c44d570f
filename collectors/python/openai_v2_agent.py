"""The weather agent traced with the official OpenTelemetry OpenAI instrumentation.

``opentelemetry-instrumentation-openai-v2`` makes one ``chat <model>`` span per model call;
``opentelemetry-util-genai`` adds the ``invoke_agent`` root and one ``execute_tool`` span per
tool call, all in the OTel GenAI conventions, with message content on the spans.

    python openai_v2_agent.py --endpoint http://127.0.0.1:4318 [--api-key KEY] [--project NAME]

With no OPENAI_BASE_URL set, a scripted OpenAI-compatible server answers in-process.
"""

from __future__ import annotations

import os

# Content capture must be chosen before the instrumentation is set up.
os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")

from openai import OpenAI  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.util.genai.handler import TelemetryHandler  # noqa: E402
from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text  # noqa: E402

import weather_agent as wa  # noqa: E402


def main() -> None:
    """Run one question through the agent and send its trace to tracescore."""
    args = wa.parse_args(__doc__.splitlines()[0])
    provider = wa.setup_tracing(args)
    OpenAIInstrumentor().instrument()
    genai = TelemetryHandler()

    def run_tool(name: str, arguments: dict, call_id: str) -> dict:
        with genai.tool(name, tool_call_id=call_id, tool_type="function",
                        tool_description=wa.TOOL_SPECS[name]["description"]) as span:
            span.arguments = arguments
            span.tool_result = wa.call_tool(name, arguments, call_id)
            return span.tool_result

    with wa.openai_endpoint() as base_url:
        client = OpenAI(base_url=base_url)
        with genai.invoke_local_agent(agent_name=wa.AGENT_NAME, request_model=args.model) as agent:
            agent.system_instruction = [Text(content=wa.SYSTEM_PROMPT)]
            agent.input_messages = [InputMessage(role="user", parts=[Text(content=args.question)])]
            answer = wa.run_agent(client, args.question, model=args.model, run_tool=run_tool)
            agent.output_messages = [OutputMessage(role="assistant", parts=[Text(content=answer)],
                                                   finish_reason="stop")]
            trace_id = wa.current_trace_id()
    provider.shutdown()  # flushes the batch to tracescore
    print(answer)
    print(f"trace_id={trace_id}")


if __name__ == "__main__":
    main()
