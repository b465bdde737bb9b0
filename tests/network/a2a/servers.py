"""`agent-network serve tests/network/a2a/team.py --a2a` as real processes, and the official
`a2a-sdk` client pointed at them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, Task
from google.protobuf.json_format import MessageToDict

ROOT = Path(__file__).resolve().parents[3]
TEAM = "tests/network/a2a/team.py"
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def token_file(directory: Path) -> Path:
    path = directory / "tokens.txt"
    path.write_text("".join(f"{who} {token}\n" for who, token in TOKENS.items()))
    return path


@contextmanager
def serve(
    store: str, tokens: Path | None, env: dict[str, str] | None = None, target: str = TEAM
) -> Iterator[str]:
    """A `serve TARGET --a2a --store` process on a free port (with `--token-file` when
    `tokens` is given); yields its base URL; killed after."""
    port = free_port()
    command = [sys.executable, "-m", "network.cli", "serve", target, "--a2a", "--store", store]
    command += ["--port", str(port)]
    if tokens is not None:
        command += ["--token-file", str(tokens)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # waits only until the server answers; a loaded machine (4 test workers on 2 cores)
        # can take a minute to start a Python process
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.communicate()[1].decode()[-3000:]
            try:
                if httpx.get(f"{url}/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield url
    finally:
        process.kill()
        process.wait(10)


async def client_for(url: str, who: str | None, *, streaming: bool = True) -> Any:
    """The official client, signed in as `who` (None: no token)."""
    headers = {"authorization": f"Bearer {TOKENS[who]}"} if who else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    return await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))


def said(text: str, context_id: str = "", task_id: str = "") -> SendMessageRequest:
    message = Message(
        message_id=f"m-{time.monotonic_ns()}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        context_id=context_id,
        task_id=task_id,
    )
    return SendMessageRequest(message=message)


def answering(task: Task, approved: bool = True) -> SendMessageRequest:
    """The message answering every approval `task` waits on."""
    answers = [{"interrupt": i["id"], "approved": approved} for i in waiting_on(task)]
    message = Message(
        message_id=f"m-{time.monotonic_ns()}",
        role=Role.ROLE_USER,
        parts=[new_data_part({"answers": answers})],
        context_id=task.context_id,
        task_id=task.id,
    )
    return SendMessageRequest(message=message)


def waiting_on(task: Task) -> list[dict[str, Any]]:
    for part in task.status.message.parts:
        data = MessageToDict(part.data) if part.HasField("data") else None
        if isinstance(data, dict) and "interrupts" in data:
            found: list[dict[str, Any]] = data["interrupts"]
            return found
    return []


async def collect(client: Any, request: SendMessageRequest) -> list[StreamResponse]:
    return [event async for event in client.send_message(request)]


def final_task(events: list[StreamResponse]) -> Task:
    """The task as the events leave it (the first Task, with every update applied)."""
    from network.a2a.live import apply

    task = Task()
    for event in events:
        if event.HasField("task"):
            task.CopyFrom(event.task)
        elif event.HasField("status_update"):
            apply(task, event.status_update)
        elif event.HasField("artifact_update"):
            apply(task, event.artifact_update)
    return task


def output_text(task: Task) -> str:
    for artifact in task.artifacts:
        if artifact.artifact_id == "output":
            return "".join(part.text for part in artifact.parts if part.HasField("text"))
    return ""
