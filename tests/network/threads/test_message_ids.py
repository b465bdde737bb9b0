"""Two appends of one message id at once: the store lets exactly one of them land.

`network.add_messages` refuses an id the thread holds; the check on its read is not enough
when two processes append the same id at the same moment (both read the thread before either
commits). The store checks again inside the commit's transaction: on SQLite (one file) and
PostgreSQL (a real server) with two OS processes, in memory with two tasks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel
from network import MessageError, Network, ThreadRef, UserMessage
from network.threads import MemoryStore, SQLStore

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


def _network() -> Network:
    return Network("support", agents=[Agent("a", model=ScriptedModel(["hi"]))])


@pytest.fixture(params=["sqlite", "postgres"])
def race_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def test_two_processes_appending_one_id_land_it_once(race_url: str, tmp_path: Path) -> None:
    thread_id = f"ids-{time.time_ns()}"  # PostgreSQL's server is shared between tests
    await _network().run("hello", thread=ThreadRef(thread_id, store=race_url))
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.network.threads.add_id_child"]
    children = [
        subprocess.Popen(
            [*command, race_url, thread_id, "note-1", str(go)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 120  # a loaded machine takes long to start Python
    while len(list(tmp_path.glob("go.ready-*"))) < 2:  # both have read the thread
        assert all(child.poll() is None for child in children), [c.communicate() for c in children]
        assert time.monotonic() < deadline, "the appending processes never read the thread"
        time.sleep(0.02)
    go.touch()
    outcomes = [child.communicate(timeout=120) for child in children]
    assert sorted(child.returncode for child in children) == [0, 3], outcomes
    assert "refused on id" in "".join(out for out, _ in outcomes)
    async with SQLStore(race_url) as store:
        thread = await store.get_thread(thread_id)
    assert thread is not None
    assert [m.id for m in thread.messages].count("note-1") == 1
    assert len(thread.messages) == 3  # hello, hi, and one note


async def test_two_tasks_appending_one_id_in_memory_land_it_once() -> None:
    store = MemoryStore()
    network = _network()
    await network.run("hello", thread=ThreadRef("t", store=store))
    read, both_read = store.get_thread, anyio.Event()
    readers = 0

    async def read_then_wait(thread_id: str) -> Any:
        nonlocal readers
        found = await read(thread_id)
        readers += 1
        if readers == 2:
            both_read.set()
        await both_read.wait()
        return found

    store.get_thread = read_then_wait  # type: ignore[method-assign]
    outcomes: list[str] = []

    async def append(text: str) -> None:
        try:
            await network.add_messages(ThreadRef("t", store=store), [UserMessage(text, "note-1")])
            outcomes.append("landed")
        except MessageError as refused:
            assert refused.field == "id" and "'note-1'" in str(refused)
            outcomes.append("refused")

    async with anyio.create_task_group() as group:
        group.start_soon(append, "one")
        group.start_soon(append, "two")
    assert sorted(outcomes) == ["landed", "refused"]
    thread = await read("t")
    assert thread is not None
    assert [m.id for m in thread.messages].count("note-1") == 1


async def test_the_store_itself_refuses_every_id_a_thread_holds(store: Any) -> None:
    """The commit's own check (not `add_messages`' read) knows every id a client sees: a
    message's own, a tool result's `<callId>:result`, a position's `msg_<n>`; an append-only
    commit naming one is refused on field "id" and writes nothing."""
    from network import Resume
    from network.history.messages import shown_id
    from network.threads import Commit
    from tests.network.threads.payments import pay_network

    network = pay_network()
    thread = ThreadRef("t", store=store)
    stopped = await network.run("Pay", thread=thread)
    await network.run(Resume({stopped.interrupts[0].id: True}), thread=thread)
    before = await store.get_thread("t")
    assert before is not None
    held = [shown_id(message, index) for index, message in enumerate(before.messages)]
    assert "msg_0" in held and any(item.endswith(":result") for item in held), held
    for taken in held:
        commit = Commit(
            revision=before.revision,
            messages=[UserMessage("ok", "fresh"), UserMessage("x", taken)],
            append_only=True,
        )
        with pytest.raises(MessageError, match=repr(taken)) as refused:
            await store.append_results("t", commit)
        assert (refused.value.field, refused.value.index) == ("id", 1)
    far = [UserMessage("ok", "msg_99"), UserMessage("ok", f"msg_{2**40}")]  # none so far
    fresh = Commit(revision=before.revision, messages=far, append_only=True)
    assert await store.append_results("t", fresh) == before.revision + 1
    after = await store.get_thread("t")
    assert after is not None and len(after.messages) == len(before.messages) + 2
