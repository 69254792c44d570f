// The travel-weather agent with the Vercel AI SDK 5, traced through experimental_telemetry.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8011/v1 \
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \
//   OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20KEY,x-tracescore-project=demo" \
//   node agent.mjs
//
// The AI SDK writes spans to the global OpenTelemetry tracer provider; this file registers one
// whose OTLP/protobuf exporter reads the standard OTEL_EXPORTER_OTLP_* variables.
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "weather-agent-aisdk" }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();

const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL, // unset: api.openai.com
  apiKey: process.env.OPENAI_API_KEY ?? "sk-scripted",
});

const tools = {
  get_weather: tool({
    description: "Get the current weather for a city",
    inputSchema: z.object({ city: z.string().describe("City name") }),
    execute: async ({ city }) => ({ city, temperatureC: 18, condition: "cloudy" }),
  }),
  convert_temperature: tool({
    description: "Convert a temperature from Celsius to Fahrenheit",
    inputSchema: z.object({ celsius: z.number() }),
    execute: async ({ celsius }) => ({ fahrenheit: Math.round((celsius * 9 / 5 + 32) * 10) / 10 }),
  }),
};

const result = await generateText({
  model: openai.chat(process.env.OPENAI_MODEL ?? "gpt-4o-mini"), // chat completions API
  system:
    "You are a concise travel weather assistant. Always use the get_weather tool for current " +
    "conditions and convert_temperature when the user wants Fahrenheit.",
  prompt: process.argv[2] ?? "What is the weather in Paris right now, in Fahrenheit?",
  tools,
  stopWhen: stepCountIs(5),
  experimental_telemetry: {
    isEnabled: true,
    functionId: "weather-agent", // becomes the trace's agent name
    metadata: { sessionId: "session-1", userId: "user-1" },
  },
});
console.log(result.text);
await provider.shutdown(); // flushes the batch to tracescore
