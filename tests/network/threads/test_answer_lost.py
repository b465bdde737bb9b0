"""A process killed after it claimed an approval and ran the tool, before the call's result
was committed: the store keeps the call answered (a second answer is refused, the tool ran
once), and the thread's next message gives the call a result saying that the run that took
up its answer ended before it finished. Never "not run" (the payment was made: a model told
so would pay again), and never no result at all (the providers refuse a conversation with a
user message between a tool call and its result)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from network import AlreadyAnsweredError, Resume, ThreadRef
from network.history.messages import AssistantMessage, ToolMessage
from network.history.unanswered import UNFINISHED
from network.threads import SQLStore
from tests.network.threads.payments import pay_network

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def test_an_answer_whose_process_died_mid_tool_is_unfinished_not_unrun(
    url: str, tmp_path: Path
) -> None:
    thread_id = f"lost-{time.time_ns()}"  # PostgreSQL's server is shared between tests
    thread = ThreadRef(thread_id, store=url)
    stopped = await pay_network().run("Pay", thread=thread)
    (interrupt,) = stopped.interrupts
    log, hang, go = tmp_path / "payments.log", tmp_path / "paying", tmp_path / "go"
    go.touch()  # the child answers at once
    command = [sys.executable, "-m", "tests.network.threads.approval_child"]
    child = subprocess.Popen(
        [*command, url, thread_id, interrupt.id, str(go)],
        env={**os.environ, "PAY_LOG": str(log), "PAY_HANG": str(hang), "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # a loaded machine takes long to start Python
    while not hang.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never paid"
        time.sleep(0.02)
    child.kill()  # SIGKILL: paid, the call's result never committed
    child.wait()

    with pytest.raises(AlreadyAnsweredError):  # answered once, by the dead process's run
        await pay_network().run(Resume({interrupt.id: True}), thread=thread)
    await pay_network().run("Thanks", thread=thread)
    async with SQLStore(url) as store:
        saved = await store.get_thread(thread_id)
    assert saved is not None
    messages = list(saved.messages)
    call = next(m for m in messages if isinstance(m, AssistantMessage) and m.tool_calls)
    after = messages[messages.index(call) + 1]
    assert isinstance(after, ToolMessage) and after.tool_call_id == interrupt.tool_call_id
    assert after.content == UNFINISHED.format(tool="pay") and after.is_error
    assert messages[messages.index(call) + 2].content == "Thanks"
    assert log.read_text().splitlines() == ["100"]  # paid once
