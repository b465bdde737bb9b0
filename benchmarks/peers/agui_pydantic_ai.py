"""pydantic-ai's AG-UI adapter (`AGUIAdapter.dispatch_request`), for benchmarks/agui_served.py.

An agent on a `FunctionModel` answering "noted" at once (streamed as one text part), served
by uvicorn on 127.0.0.1:`--port`; threads are the client's (the adapter keeps no thread).
Runs in benchmarks/.venv-agui-pydantic-ai (`setup_peers.sh agui`).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("noted")])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "noted"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    agent: Agent[Any, str] = Agent(FunctionModel(answer, stream_function=stream), name="scribe")

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    app = Starlette(routes=[Route("/", run, methods=["POST"])])
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
