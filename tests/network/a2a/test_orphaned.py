"""A task whose server process is killed (kill -9) while it runs ends `failed`, read from
another process on the same store, once the dead run's lease expires; its context takes the
next message at once (two `agent-network serve --a2a` processes, SQLite, `--lease-ttl 1`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.client.errors import A2AClientError
from a2a.types import CancelTaskRequest, GetTaskRequest, TaskState
from a2a.utils.errors import A2AError

from network.a2a.orphaned import STOPPED
from tests.fakes.processes import free_port, server_processes
from tests.network.a2a.servers import TEAM, client_for, collect, final_task, output_text, said

pytestmark = pytest.mark.anyio


@contextlib.contextmanager
def servers_on_one_store(tmp_path: Path, lease_ttl: float) -> Iterator[tuple[Any, str, str]]:
    """Two `serve --a2a` processes on one SQLite file: the first process, and both URLs."""
    store = str(tmp_path / "threads.db")
    commands = []
    for _ in range(2):
        port = free_port()
        command = [sys.executable, "-m", "network.cli", "serve", TEAM, "--a2a"]
        command += ["--store", store, "--port", str(port), "--lease-ttl", str(lease_ttl)]
        url = f"http://127.0.0.1:{port}"
        commands.append((command, f"{url}/.well-known/agent-card.json", url))
    with server_processes([(c, probe) for c, probe, _ in commands]) as processes:
        for process in processes:
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:  # read, or a full pipe blocks the server
                    threading.Thread(target=pipe.read, daemon=True).start()
        yield processes[0], commands[0][2], commands[1][2]


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    """A lease of 1 s: a killed server's run is found dead quickly."""
    with servers_on_one_store(tmp_path, 1) as servers:
        yield servers


@pytest.fixture
def two_patient_servers(tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    """A lease of 3 s, renewed every second: a live run keeps it on a loaded machine too (at
    1 s, a renewal the scheduler held back by 0.7 s let a live run's lease lapse)."""
    with servers_on_one_store(tmp_path, 3) as servers:
        yield servers


async def streaming(group: Any, client: Any, text: str, seen: list[Any]) -> None:
    """Stream the message `text` in `group`, its events into `seen`; return once the first
    (the task, `working`) has arrived."""

    async def stream() -> None:
        async for event in client.send_message(said(text)):
            seen.append(event)

    group.start_soon(stream)
    with anyio.fail_after(20):
        while not seen:
            await anyio.sleep(0.05)


async def test_a_task_of_a_killed_server_ends_failed_when_read_from_another(
    two_servers: tuple[Any, str, str],
) -> None:
    """Before, the killed process's task said `working` for ever: `tasks/get` and a
    resubscription waited on a run no process had, and `tasks/cancel` answered that it runs
    in another server process."""
    doomed, one, two = two_servers
    first = await client_for(one, None)
    seen: list[Any] = []
    async with anyio.create_task_group() as group:
        await streaming(group, first, "wait 60", seen)
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(10)
        group.cancel_scope.cancel()
    task = final_task(seen)
    assert task.status.state == TaskState.TASK_STATE_WORKING

    other = await client_for(two, None)
    with anyio.fail_after(20):
        while True:
            read = await other.get_task(GetTaskRequest(id=task.id))
            if read.status.state != TaskState.TASK_STATE_WORKING:
                break
            await anyio.sleep(0.2)
    assert read.status.state == TaskState.TASK_STATE_FAILED
    told = "".join(part.text for part in read.status.message.parts)
    assert told == STOPPED
    # ended once: read again, it stays as it is; a cancel finds it ended
    again = await other.get_task(GetTaskRequest(id=task.id))
    assert again.status.SerializeToString() == read.status.SerializeToString()
    with pytest.raises((A2AError, A2AClientError), match="FAILED: it has ended"):
        await other.cancel_task(CancelTaskRequest(id=task.id))
    # the context is free: its next message runs on the other process at once
    events = await collect(other, said("hello", context_id=task.context_id))
    assert output_text(final_task(events)) == "echo: hello"


async def test_a_task_running_on_another_live_server_is_left_working(
    two_patient_servers: tuple[Any, str, str],
) -> None:
    """The check takes nothing from a live run: read from the other process while its run
    renews its lease (twice the lease's time to live), the task stays `working` and then
    completes."""
    _, one, two = two_patient_servers
    first, other = await client_for(one, None), await client_for(two, None)
    seen: list[Any] = []
    async with anyio.create_task_group() as group:
        await streaming(group, first, "wait 8", seen)
        task_id = final_task(seen).id
        states = []
        reading_until = time.monotonic() + 6  # twice the lease's time to live
        while time.monotonic() < reading_until:
            states.append((await other.get_task(GetTaskRequest(id=task_id))).status.state)
            await anyio.sleep(0.2)
    # working until it completed (a loaded machine's slow reads may outlast the 8 s wait):
    # never `failed`
    working, completed = TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED
    assert states[0] == working and set(states) <= {working, completed}, states
    assert states == sorted(states, key=lambda state: state == completed)
    ended = final_task(seen)
    assert ended.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_text(ended) == "done: waited 8"
