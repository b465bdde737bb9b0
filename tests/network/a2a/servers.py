"""`agent-network serve tests/network/a2a/team.py --a2a` as real processes, and the official
`a2a-sdk` client pointed at them."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import (
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

from tests.fakes.processes import free_port, server_processes

TEAM = "tests/network/a2a/team.py"
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


def token_file(directory: Path) -> Path:
    path = directory / "tokens.txt"
    path.write_text("".join(f"{who} {token}\n" for who, token in TOKENS.items()))
    return path


@contextmanager
def serve(
    store: str,
    tokens: Path | None,
    env: dict[str, str] | None = None,
    target: str = TEAM,
    log: list[bytes] | None = None,
) -> Iterator[str]:
    """A `serve TARGET --a2a --store` process on a free port (with `--token-file` when
    `tokens` is given); yields its base URL; killed after. Its output is read as it comes
    (into `log` when given): a pipe nobody reads fills, and the server blocks writing a log."""
    with served(1, store, tokens, env, target, log) as (url,):
        yield url


@contextmanager
def served(
    count: int,
    store: str,
    tokens: Path | None,
    env: dict[str, str] | None = None,
    target: str = TEAM,
    log: list[bytes] | None = None,
) -> Iterator[list[str]]:
    """`count` such processes on one store, started at once (their start-ups overlap);
    yields their base URLs. `log` gets the first one's output."""
    urls: list[str] = []
    servers: list[tuple[list[str], str]] = []
    for _ in range(count):
        port = free_port()
        command = [sys.executable, "-m", "network.cli", "serve", target, "--a2a"]
        command += ["--store", store, "--port", str(port)]
        if tokens is not None:
            command += ["--token-file", str(tokens)]
        urls.append(f"http://127.0.0.1:{port}")
        servers.append((command, f"{urls[-1]}/.well-known/agent-card.json"))
    with server_processes(servers, env=env) as processes:
        for number, process in enumerate(processes):
            kept = log if log is not None and number == 0 else []
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    threading.Thread(target=_drain, args=(pipe, kept), daemon=True).start()
        yield urls


class Pair:
    """Two server processes on one store, and the file their payments go to."""

    def __init__(self, one: str, two: str, paid: Path, log: list[bytes]) -> None:
        self.one, self.two, self.paid, self.log = one, two, paid, log

    def payments(self) -> list[str]:
        return self.paid.read_text().split() if self.paid.exists() else []


@contextmanager
def served_pair(request: pytest.FixtureRequest, directory: Path, store_kind: str) -> Iterator[Pair]:
    """Two servers of the team on a SQLite file in `directory` or on the session's PostgreSQL
    (`store_kind`), with bearer tokens, counting payments in a file; `Pair.log` gets the first
    one's output."""
    if store_kind == "sqlite":
        store = str(directory / "threads.db")
    else:
        store = request.getfixturevalue("postgres_url")
    paid = directory / "paid.txt"
    env = {"A2A_PAID_FILE": str(paid)}
    log: list[bytes] = []
    with served(2, store, token_file(directory), env, log=log) as (one, two):  # at once
        yield Pair(one, two, paid, log)


def _drain(pipe: IO[bytes], log: list[bytes]) -> None:
    try:
        for line in pipe:
            log.append(line)
    except ValueError:  # closed once the process ended (`server_processes`)
        pass


async def client_for(url: str, who: str | None, *, streaming: bool = True) -> Any:
    """The official client, signed in as `who` (None: no token)."""
    headers = {"authorization": f"Bearer {TOKENS[who]}"} if who else {}
    # The a2a client never closes an httpx client it was given, and no test closes it: a
    # connection kept alive to the server was a loopback socket left open (a ResourceWarning
    # wherever the collector found it). Each exchange closes its own connection instead.
    no_keepalive = httpx.Limits(max_keepalive_connections=0)
    http = httpx.AsyncClient(headers=headers, timeout=30, limits=no_keepalive)
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


async def cancelled_while_running(client: Any, request: SendMessageRequest) -> Task:
    """Stream `request`, cancel its task once the first event arrives (checking that the
    cancel answers CANCELED); the task as the stream left it."""
    seen: list[Any] = []
    async with anyio.create_task_group() as group:

        async def stream() -> None:
            async for event in client.send_message(request):
                seen.append(event)

        group.start_soon(stream)
        with anyio.fail_after(10):
            while not seen:
                await anyio.sleep(0.05)
        cancelled = await client.cancel_task(CancelTaskRequest(id=seen[0].task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    return final_task(seen)
