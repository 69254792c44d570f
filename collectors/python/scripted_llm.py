"""Serve the weather agent's scripted OpenAI-compatible LLM until interrupted.

For the JavaScript examples (or any client) when there is no real API key:

    python scripted_llm.py --port 8011
    OPENAI_BASE_URL=http://127.0.0.1:8011/v1 node ../js/mastra/agent.mjs

It answers ``POST /v1/chat/completions`` (not streaming) with get_weather, then
convert_temperature, then the final sentence, whatever the client.
"""

from __future__ import annotations

import argparse
import signal
import threading

from tracescore.testing import ScriptedLLMServer

from weather_agent import scripted_reply


def main() -> None:
    """Start the server, print its base URL, wait for SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with ScriptedLLMServer(port=args.port) as server:
        server.set_default(scripted_reply)
        print(f"OPENAI_BASE_URL={server.url}", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
