"""Microsoft Agent Framework's AG-UI endpoint (`add_agent_framework_fastapi_endpoint`), for
benchmarks/agui_served.py.

An agent on a chat client answering "noted" at once (streamed as one update), served by
uvicorn on 127.0.0.1:`--port`, with the endpoint's defaults (threads in its in-memory
snapshot store). Runs in benchmarks/.venv-agui-agent-framework (`setup_peers.sh agui`).
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Message,
    ResponseStream,
)
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
from fastapi import FastAPI


class Noted(BaseChatClient):
    """A chat client answering "noted" at once."""

    def _inner_get_response(
        self, *, messages: Any, stream: bool, options: Any, **kwargs: Any
    ) -> Any:
        if stream:

            async def updates() -> Any:
                text = {"type": "text", "text": "noted"}
                yield ChatResponseUpdate(role="assistant", contents=[text])

            return ResponseStream(updates())

        async def whole() -> ChatResponse:
            return ChatResponse(messages=[Message(role="assistant", contents=["noted"])])

        return whole()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    app = FastAPI()
    agent = Agent(client=Noted(), name="scribe", instructions="Take notes.")
    # one user: the benchmark's client (the endpoint refuses to guess who its users are)
    add_agent_framework_fastapi_endpoint(app, agent, "/", single_user=True)
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
