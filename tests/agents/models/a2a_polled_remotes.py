"""A hand-written remote A2A server that does not stream, for `A2AModel`'s polling path
(`agents.models._a2a_poll`), run by `a2a_remotes.py` as kind `hostile-unstreamed`.

Its card says no streaming; `SendMessage` answers JSON. Every JSON-RPC call writes
`method: <method>` to the count file, each message its text, each `CancelTask`
`cancelled: <text>`. By the message's text:

- "finished": ignores `returnImmediately` and answers the completed task at once;
- "forever": a working task, read as working for ever;
- "huge": a read of 10 MB; "quiet": a read that never answers; "garbage": a read that is not
  JSON; "other task": a read naming another task; "long failure": a read of the task failed
  with a message of 2,000 characters;
- anything else: the send answers the task submitted (as asked), the first two reads say it
  works (the same status message, "working on it"), the third is the completed task
  (artifact `polled: <text>`, usage 3 in, 2 out).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

READS_BEFORE_THE_END = 3


def hostile_unstreamed(port: int, count_file: str | None) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    card = {
        "name": "hostile-unstreamed",
        "description": "Does not stream; misbehaves when read.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": f"http://127.0.0.1:{port}/",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    texts: dict[str, str] = {}  # task id -> the message's text
    reads: dict[str, int] = {}

    def note(line: str) -> None:
        if count_file:
            with open(count_file, "a", encoding="utf-8") as out:
                out.write(line.replace("\n", " ") + "\n")

    def task(task_id: str, state: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
        status: dict[str, Any] = {"state": state}
        if text is not None:
            status["message"] = {
                "messageId": uuid.uuid4().hex,
                "role": "ROLE_AGENT",
                "parts": [{"text": text}],
            }
        return {"id": task_id, "contextId": "c1", "status": status, **extra}

    def completed(task_id: str, text: str) -> dict[str, Any]:
        artifact = {"artifactId": "a", "parts": [{"text": f"polled: {text}"}]}
        usage = {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 2}}}
        return task(task_id, "TASK_STATE_COMPLETED", artifacts=[artifact], **usage)

    async def agent_card(request: Request) -> JSONResponse:
        return JSONResponse(card)

    async def rpc(request: Request) -> Response:
        body = await request.json()
        method, params, rpc_id = body.get("method"), body.get("params", {}), body.get("id")
        note(f"method: {method}")

        def answer(result: Any) -> JSONResponse:
            return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": result})

        if method == "SendMessage":
            text = "".join(part.get("text", "") for part in params["message"]["parts"])
            note(text)
            task_id = uuid.uuid4().hex
            texts[task_id], reads[task_id] = text, 0
            if text == "finished":
                return answer({"task": completed(task_id, text)})
            return answer({"task": task(task_id, "TASK_STATE_SUBMITTED")})
        task_id = params.get("id", "")
        text = texts.get(task_id, "")
        if method == "CancelTask":
            note(f"cancelled: {text}")
            return answer(task(task_id, "TASK_STATE_CANCELED"))
        reads[task_id] = reads.get(task_id, 0) + 1
        if text == "huge":
            return answer(completed(task_id, "x" * 10_000_000))
        if text == "quiet":
            await asyncio.sleep(3600)
        if text == "garbage":
            return Response(b"{this is not json", media_type="application/json")
        if text == "other task":
            return answer(completed("another-task", text))
        if text == "long failure":
            return answer(task(task_id, "TASK_STATE_FAILED", "e" * 2000))
        if text == "forever" or reads[task_id] < READS_BEFORE_THE_END:
            return answer(task(task_id, "TASK_STATE_WORKING", "working on it"))
        return answer(completed(task_id, text))

    routes = [
        Route("/.well-known/agent-card.json", agent_card),
        Route("/", rpc, methods=["POST"]),
    ]
    return Starlette(routes=routes)


def ours_unstreamed(store: str) -> Any:
    """`agent-network serve examples/a2a_test_agent.py:network --a2a` as an app (on the
    SQLite file `store`), its agent card saying it does not stream: our own server as a
    remote `A2AModel` reads by polling. Only the card is changed."""
    from network.a2a import app
    from network.cli.load import load_network

    example = Path(__file__).parents[3] / "examples" / "a2a_test_agent.py"
    served = app(load_network(f"{example}:network"), store=store)
    return CardUnstreamed(served)


class CardUnstreamed:
    """Passes every request on; the agent card's answer says `streaming: false`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/.well-known/agent-card.json":
            await self.app(scope, receive, send)
            return
        started: dict[str, Any] = {}
        body = b""

        async def rewrite(message: Any) -> None:
            nonlocal body
            if message["type"] == "http.response.start":
                started.update(message)
                return
            body += message.get("body", b"")
            if message.get("more_body"):
                return
            card = json.loads(body)
            card["capabilities"]["streaming"] = False
            changed = json.dumps(card).encode()
            headers = [(k, v) for k, v in started["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(changed)).encode()))
            await send({**started, "headers": headers})
            await send({"type": "http.response.body", "body": changed})

        await self.app(scope, receive, rewrite)
