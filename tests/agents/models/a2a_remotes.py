"""Remote A2A servers for `A2AModel`'s tests, each run as its own process on loopback:

    python tests/agents/models/a2a_remotes.py KIND PORT [COUNT_FILE]

- `reference`: the official `a2a-sdk` server (`DefaultRequestHandler`, in-memory tasks) with a
  scripted executor: "slow N" sleeps N seconds (a cancelled one writes "cancelled: slow N" to
  COUNT_FILE); "late N" sends its task (its first event) only after N seconds, then sleeps 30
  (cancelled, it writes "cancelled: late N"); "fail" fails its task; "ask" waits for input;
  "usage A B" reports usage A in, B out; anything else: one `working` progress message, then
  the answer `echo: <text> (turn N of context C)` in two artifact chunks, usage 7 / 5. Every
  task appends a line to COUNT_FILE (when given): the calls counted. `reference-0.3`: the
  same, its card's interface saying A2A 0.3 (the SDK's 0.3 compatibility mode). Each JSON-RPC
  call writes `method: <its method>` to COUNT_FILE. `reference-unstreamed` and
  `reference-0.3-unstreamed`: the same, their cards saying they do not stream.
- `hostile-unstreamed`: a hand-written server that does not stream; `ours-unstreamed`:
  `agent-network serve examples/a2a_test_agent.py:network --a2a` (COUNT_FILE: its SQLite
  store), its card saying it does not stream (`tests/agents/models/a2a_polled_remotes.py`);
  `peer-unstreamed`: `peer`, its card saying so (fasta2a answers `message/send` with the
  task submitted, whatever the client asks).
- `hostile`: a hand-written JSON-RPC server with a valid agent card whose stream misbehaves,
  by the message text: "mute" (headers, then nothing, not even the task), "huge" (10 MB in one
  event), "quiet" (sends nothing, for ever), "trickle" (a byte a second, for ever), "garbage"
  (an event that is not JSON), "empty part" (a part with no content), "negative usage",
  "absurd usage", "nan usage", "other task" (an update of another task), "no end" (the stream
  ends while the task works). `elsewhere`: the same, its card naming an endpoint on another
  host (127.0.0.2).
- `peer`: a pydantic-ai agent (a `FunctionModel` answering `peer: <text> (turn N)`) served
  by `fasta2a.pydantic_ai.agent_to_a2a`, the A2A server pydantic-ai points to.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from tests.agents.models.a2a_polled_remotes import (
    CardUnstreamed,
    hostile_unstreamed,
    ours_unstreamed,
)
from tests.fakes.processes import free_port, server_process

COUNTS: Counter[str] = Counter()


@contextmanager
def running(kind: str, count_file: Path | None = None) -> Iterator[str]:
    """The `kind` server as a process on a free loopback port; yields its URL; killed after."""
    port = free_port()
    command = [sys.executable, __file__, kind, str(port)]
    if count_file is not None:
        command.append(str(count_file))
    url = f"http://127.0.0.1:{port}"
    probe = f"{url}/.well-known/agent-card.json"
    with server_process(command, probe, cwd=None, name=f"the {kind} server", stdout=None):
        yield url


def reference(
    port: int, count_file: str | None, version: str = "1.0", *, streaming: bool = True
) -> Any:
    from a2a.helpers.proto_helpers import new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Part,
        TaskState,
    )
    from starlette.applications import Starlette

    class Scripted(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.get_user_input()
            if count_file:
                with open(count_file, "a", encoding="utf-8") as out:
                    out.write(text.replace("\n", " ") + "\n")
            task = context.current_task or new_task_from_user_message(context.message)
            if text.startswith("late "):  # the caller learns of the task late
                await asyncio.sleep(float(text.split()[1]))
            if context.current_task is None:
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            if text.startswith(("slow ", "late ")):
                try:
                    await asyncio.sleep(float(text.split()[1]) if text[0] == "s" else 30)
                except asyncio.CancelledError:
                    if count_file:
                        with open(count_file, "a", encoding="utf-8") as out:
                            out.write(f"cancelled: {text}\n")
                    raise
            if text == "fail":
                await updater.failed(updater.new_agent_message([Part(text="the tank is empty")]))
                return
            if text == "ask":
                await updater.requires_input(updater.new_agent_message([Part(text="Which city?")]))
                return
            COUNTS[task.context_id] += 1
            turn = COUNTS[task.context_id]
            await updater.start_work(updater.new_agent_message([Part(text=f"looking at {text}")]))
            usage = {"inputTokens": 7, "outputTokens": 5}
            if text.startswith("usage "):
                _, given_in, given_out = text.split()
                usage = {"inputTokens": int(given_in), "outputTokens": int(given_out)}
            await updater.add_artifact([Part(text="echo: ")], artifact_id="answer")
            await updater.add_artifact(
                [Part(text=f"{text} (turn {turn} of context {task.context_id})")],
                artifact_id="answer",
                append=True,
                last_chunk=True,
            )
            await updater.update_status(TaskState.TASK_STATE_COMPLETED, metadata={"usage": usage})

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            return None

    card = AgentCard(
        name="reference",
        description="The a2a-sdk reference server, scripted.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/",
                protocol_binding="JSONRPC",
                protocol_version=version,
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes.", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card
    )
    legacy = version != "1.0"
    rpc = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=legacy)
    routes = [*create_agent_card_routes(card), *rpc]
    return _MethodsLogged(Starlette(routes=routes), count_file)


class _MethodsLogged:
    """Writes `method: <JSON-RPC method>` to the count file for each call (which protocol
    version the client spoke), then passes the request on."""

    def __init__(self, app: Any, count_file: str | None) -> None:
        self.app = app
        self.count_file = count_file

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.count_file:
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        with open(self.count_file, "a", encoding="utf-8") as out:
            out.write(f"method: {json.loads(body).get('method')}\n")
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def hostile(port: int, elsewhere: bool = False) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    card = {
        "name": "hostile",
        "description": "Misbehaves.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": f"http://{'127.0.0.2' if elsewhere else '127.0.0.1'}:{port}/",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }

    async def agent_card(request: Request) -> JSONResponse:
        return JSONResponse(card)

    def event(rpc_id: Any, result: Any) -> bytes:
        body = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": result})
        return f"data: {body}\n\n".encode()

    def task(state: str, **extra: Any) -> dict[str, Any]:
        found = {"id": "t1", "contextId": "c1", "status": {"state": state}}
        return {"task": {**found, **extra}}

    def completed(text: str, usage: Any = None) -> dict[str, Any]:
        artifact = {"artifactId": "a", "parts": [{"text": text}]}
        extra: dict[str, Any] = {"artifacts": [artifact]}
        if usage is not None:
            extra["metadata"] = {"usage": usage}
        return task("TASK_STATE_COMPLETED", **extra)

    async def rpc(request: Request) -> StreamingResponse:
        body = await request.json()
        rpc_id = body.get("id")
        parts = body["params"]["message"]["parts"]
        text = "".join(part.get("text", "") for part in parts)

        async def stream() -> Any:
            if text == "mute":  # not even the task
                await asyncio.sleep(3600)
            yield event(rpc_id, task("TASK_STATE_WORKING"))
            if text == "huge":
                yield event(rpc_id, completed("x" * 10_000_000))
            elif text == "quiet":
                await asyncio.sleep(3600)
            elif text == "trickle":
                while True:
                    yield b":"
                    await asyncio.sleep(0.2)
            elif text == "garbage":
                yield b"data: {this is not json\n\n"
            elif text == "empty part":
                result = task(
                    "TASK_STATE_COMPLETED", artifacts=[{"artifactId": "a", "parts": [{}]}]
                )
                yield event(rpc_id, result)
            elif text == "negative usage":
                yield event(rpc_id, completed("fine", {"inputTokens": -5, "outputTokens": 1}))
            elif text == "absurd usage":
                yield event(rpc_id, completed("fine", {"inputTokens": 1e300, "outputTokens": 1}))
            elif text == "nan usage":
                yield (
                    b'data: {"jsonrpc": "2.0", "id": %s, "result": ' % json.dumps(rpc_id).encode()
                    + b'{"task": {"id": "t1", "contextId": "c1", "status": {"state": '
                )
                yield b'"TASK_STATE_COMPLETED"}, "metadata": {"usage": {"inputTokens": NaN}}}}}\n\n'
            elif text == "other task":
                update = {
                    "statusUpdate": {
                        "taskId": "t2",
                        "contextId": "c1",
                        "status": {"state": "TASK_STATE_COMPLETED"},
                    }
                }
                yield event(rpc_id, update)
            elif text == "no end":
                return
            else:
                yield event(rpc_id, completed(f"hostile: {text}"))

        return StreamingResponse(stream(), media_type="text/event-stream")

    routes = [
        Route("/.well-known/agent-card.json", agent_card),
        Route("/", rpc, methods=["POST"]),
    ]
    return Starlette(routes=routes)


def peer(port: int) -> Any:
    from fasta2a.pydantic_ai import agent_to_a2a
    from pydantic_ai import Agent as PeerAgent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        said = [
            part.content
            for message in messages
            for part in getattr(message, "parts", ())
            if getattr(part, "part_kind", "") == "user-prompt"
        ]
        return ModelResponse(parts=[TextPart(f"peer: {said[-1]} (turn {len(said)})")])

    agent = PeerAgent(FunctionModel(answer), name="peer")
    return agent_to_a2a(agent, name="peer", url=f"http://127.0.0.1:{port}")


if __name__ == "__main__":
    kind, port_text = sys.argv[1], sys.argv[2]
    port = int(port_text)
    count = sys.argv[3] if len(sys.argv) > 3 else None
    if count:
        Path(count).touch()
    made = {"reference": lambda: reference(port, count), "hostile": lambda: hostile(port)}
    made["reference-0.3"] = lambda: reference(port, count, "0.3")
    made["elsewhere"] = lambda: hostile(port, elsewhere=True)
    made["peer"] = lambda: peer(port)
    made["reference-unstreamed"] = lambda: reference(port, count, streaming=False)
    made["reference-0.3-unstreamed"] = lambda: reference(port, count, "0.3", streaming=False)
    made["hostile-unstreamed"] = lambda: hostile_unstreamed(port, count)
    made["ours-unstreamed"] = lambda: ours_unstreamed(str(count))
    made["peer-unstreamed"] = lambda: CardUnstreamed(peer(port))
    uvicorn.run(made[kind](), host="127.0.0.1", port=port, log_level="warning")
