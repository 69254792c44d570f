// The travel-weather agent in Mastra, traced to tracescore with @mastra/otel-exporter.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8011/v1 \
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \
//   OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20KEY,x-tracescore-project=demo" \
//   node agent.mjs
//
// Needs Node >= 22.13 (Mastra's engines). OPENAI_BASE_URL may be any OpenAI-compatible
// chat-completions server, e.g. collectors/python/scripted_llm.py.
import { Mastra } from "@mastra/core";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { z } from "zod";

// The standard OTLP variables: a base URL, and "key=value" pairs with URL-encoded values.
const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://127.0.0.1:4318";
const headers = Object.fromEntries(
  (process.env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",").filter((p) => p.includes("="))
    .map((p) => [p.slice(0, p.indexOf("=")).trim(), decodeURIComponent(p.slice(p.indexOf("=") + 1).trim())]),
);

const getWeather = createTool({
  id: "get_weather",
  description: "Get the current weather for a city",
  inputSchema: z.object({ city: z.string().describe("City name") }),
  execute: async ({ city }) => ({ city, temperatureC: 18, condition: "cloudy" }),
});

const convertTemperature = createTool({
  id: "convert_temperature",
  description: "Convert a temperature from Celsius to Fahrenheit",
  inputSchema: z.object({ celsius: z.number() }),
  execute: async ({ celsius }) => ({ fahrenheit: Math.round((celsius * 9 / 5 + 32) * 10) / 10 }),
});

const weatherAgent = new Agent({
  id: "weather-agent",
  name: "Weather Agent",
  instructions:
    "You are a concise travel weather assistant. Always use the get_weather tool for current " +
    "conditions and convert_temperature when the user wants Fahrenheit.",
  model: {
    id: `openai/${process.env.OPENAI_MODEL ?? "gpt-4o-mini"}`,
    url: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: process.env.OPENAI_API_KEY ?? "sk-scripted",
    api: "chat",
  },
  tools: { get_weather: getWeather, convert_temperature: convertTemperature },
});

const mastra = new Mastra({
  agents: { weatherAgent },
  observability: new Observability({
    configs: {
      otel: {
        serviceName: process.env.OTEL_SERVICE_NAME ?? "weather-agent-mastra",
        exporters: [new OtelExporter({ provider: { custom: { endpoint, protocol: "http/protobuf", headers } } })],
      },
    },
  }),
});

const question = process.argv[2] ?? "What is the weather in Paris right now, in Fahrenheit?";
const result = await mastra.getAgent("weatherAgent").generate(question);
console.log(result.text);
console.log(`trace_id=${result.traceId}`);
await mastra.shutdown(); // flushes the exporter's batch to tracescore
