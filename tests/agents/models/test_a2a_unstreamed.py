"""`A2AModel` against remotes that do not stream: the message is sent non-blocking (1.0
`returnImmediately`, 0.3 `blocking: false`), the task read (`GetTask`) until it ends, so a call
given up while the remote works cancels its task (`agents.models._a2a_poll`). Real server
processes on loopback (`tests/agents/models/a2a_remotes.py`): the a2a-sdk reference server
with a card saying it does not stream (1.0 and its 0.3 mode), and a hand-written one
(`a2a_polled_remotes.py`) that ignores the flag or misbehaves when read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent
from agents.models._a2a_wire import MAX_PROGRESS_CHARS, Answer
from agents.models.a2a import A2AModel
from network import Network
from network.errors import ModelError
from tests.agents.models.a2a_remotes import running

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("a2a-unstreamed") / "calls.txt"


@pytest.fixture(scope="module")
def reference(calls: Path) -> Iterator[str]:
    with running("reference-unstreamed", calls) as url:
        yield url


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    count = tmp_path_factory.mktemp("a2a-hostile-unstreamed") / "calls.txt"
    with running("hostile-unstreamed", count) as url:
        yield url, count


def lines(calls: Path) -> list[str]:
    return calls.read_text().splitlines()


def since(calls: Path, start: int) -> list[str]:
    """The count file's lines written after its first `start` lines (this test's)."""
    return lines(calls)[start:]


async def cancelled_while_working(model: A2AModel, text: str, calls: Path) -> None:
    """Run `text` on `model`, and cancel the caller once the remote works on it."""
    async with anyio.create_task_group() as group:
        group.start_soon(Agent("remote", model=model).run, text)
        with anyio.fail_after(30):
            while text not in lines(calls):  # the remote's executor has it
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)
        group.cancel_scope.cancel()


async def until_written(calls: Path, line: str) -> None:
    """Wait up to 10 s for `line` (the test's assertions then say whether it came)."""
    with anyio.move_on_after(10):
        while line not in lines(calls):
            await anyio.sleep(0.05)


async def remote_states(url: str, text: str) -> list[str]:
    """The states of the remote's tasks whose message was `text` (the reference's
    `ListTasks`, read with the official client)."""
    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.types import ListTasksRequest, TaskState

    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
        listed = await client.list_tasks(ListTasksRequest())
    said = [(task, [part.text for m in task.history for part in m.parts]) for task in listed.tasks]
    return [TaskState.Name(task.status.state) for task, texts in said if text in texts]


async def test_a_cancelled_caller_cancels_the_remote_task(reference: str, calls: Path) -> None:
    start = len(lines(calls))
    await cancelled_while_working(A2AModel(reference), "slow 22", calls)
    await until_written(calls, "cancelled: slow 22")
    mine = since(calls, start)
    assert mine.count("slow 22") == 1  # the remote's work ran once
    assert mine.count("cancelled: slow 22") == 1  # and was cancelled, not left working
    assert mine.count("method: CancelTask") == 1
    assert mine.count("method: SendMessage") == 1
    assert await remote_states(reference, "slow 22") == ["TASK_STATE_CANCELED"]


async def test_a_call_past_its_timeout_cancels_the_remote_task(reference: str, calls: Path) -> None:
    start = len(lines(calls))
    with pytest.raises(ModelError, match="did not finish within 1 s"):
        await Agent("remote", model=A2AModel(reference, timeout=1)).run("slow 23")
    await until_written(calls, "cancelled: slow 23")
    mine = since(calls, start)
    assert mine.count("slow 23") == 1
    assert mine.count("cancelled: slow 23") == 1
    assert await remote_states(reference, "slow 23") == ["TASK_STATE_CANCELED"]


async def test_a_normal_call_is_one_send_and_a_few_reads(reference: str, calls: Path) -> None:
    start = len(lines(calls))
    result = await Agent("remote", model=A2AModel(reference)).run("hello")
    assert result.output.startswith("echo: hello (turn 1 of context ")
    assert result.state.results[-1].usage.prompt_tokens == 7
    mine = [line for line in since(calls, start) if line.startswith("method: ")]
    # the reference ends this task within a few ms: read once 50 ms after the send (a few
    # times more on a loaded machine: reads at 0.05, 0.15, 0.35, 0.75, 1.55 s), never streamed
    assert mine[0] == "method: SendMessage" and mine.count("method: SendMessage") == 1
    assert 1 <= mine.count("method: GetTask") <= 5
    assert set(mine) == {"method: SendMessage", "method: GetTask"}


async def test_a_question_is_answered_in_its_task(reference: str, calls: Path) -> None:
    """The reference's `input-required` (read by polling) stops the caller's run on an
    interrupt; the answer is the next message of that task, also sent non-blocking."""
    remote = Agent("remote", model=A2AModel(reference))
    team = Network("desk", agents=[remote], router=lambda ctx: None if ctx.last_result else remote)
    result = await team.run("ask")
    [question] = result.interrupts
    assert question.message == "Which city?"
    start = len(lines(calls))
    done = await team.run(result.resume([question.respond("Lyon")]))
    assert done.output == f"echo: Lyon (turn 1 of context {question.arguments['context_id']})"
    mine = since(calls, start)
    assert mine.count("Lyon") == 1
    assert mine.count("method: SendMessage") == 1 and mine.count("method: GetTask") >= 1


async def test_the_0_3_mode_sends_blocking_false_and_cancels(tmp_path: Path) -> None:
    calls = tmp_path / "legacy.txt"
    with running("reference-0.3-unstreamed", calls) as url:
        result = await Agent("remote", model=A2AModel(url)).run("old")
        assert result.output.startswith("echo: old (turn 1 of context ")
        assert lines(calls).count("method: message/send") == 1
        assert lines(calls).count("method: tasks/get") >= 1
        await cancelled_while_working(A2AModel(url), "slow 24", calls)
        await until_written(calls, "cancelled: slow 24")
        assert lines(calls).count("cancelled: slow 24") == 1
        assert lines(calls).count("method: tasks/cancel") == 1


async def test_a_remote_read_until_its_task_ends(hostile: tuple[str, Path]) -> None:
    url, calls = hostile
    start = len(lines(calls))
    events: list[Any] = []
    result = await Agent("remote", model=A2AModel(url)).run("hello", sinks=[events.append])
    assert result.output == "polled: hello"
    assert result.state.results[-1].usage.prompt_tokens == 3
    # read three times (working, working, completed): its status told once, as reasoning
    mine = since(calls, start)
    assert mine == ["method: SendMessage", "hello", *["method: GetTask"] * 3]
    reasoning = "".join(e.delta for e in events if e.type == "REASONING_MESSAGE_CONTENT")
    assert reasoning == "working on it\n"
    # a remote that ignores `returnImmediately` and answers the finished task: one request,
    # as before
    start = len(lines(calls))
    assert (await Agent("remote", model=A2AModel(url)).run("finished")).output == (
        "polled: finished"
    )
    assert since(calls, start) == ["method: SendMessage", "finished"]


async def test_a_task_working_for_ever_is_read_until_the_timeout(
    hostile: tuple[str, Path],
) -> None:
    url, calls = hostile
    start = len(lines(calls))
    with pytest.raises(ModelError, match="did not finish within 3 s"):
        await Agent("remote", model=A2AModel(url, timeout=3)).run("forever")
    mine = since(calls, start)
    # reads at 0.05, 0.15, 0.35, 0.75, 1.55, 2.55 s after the send's answer at most (fewer
    # when the card and the send took long), then the timeout
    assert 1 <= mine.count("method: GetTask") <= 6
    assert mine.count("cancelled: forever") == 1


HOSTILE_READS = [
    ("huge", "sent an answer past 1000000 bytes"),
    ("quiet", "sent nothing for 1 s"),
    ("garbage", "sent what is not A2A"),
    ("other task", "sent what is not A2A: an update of another task"),
    ("long failure", r"ended its task failed: e{500}\.\.\.$"),
]


@pytest.mark.parametrize(("text", "error"), HOSTILE_READS, ids=[t for t, _ in HOSTILE_READS])
async def test_a_hostile_read_is_a_clear_model_error(
    hostile: tuple[str, Path], text: str, error: str
) -> None:
    url, calls = hostile
    start = len(lines(calls))
    # the short idle bound only where it is what is tested: on a loaded machine the server can
    # take over 1 s to send the first megabyte of "huge"
    idle_timeout = 1 if text == "quiet" else 10
    model = A2AModel(url, timeout=30, idle_timeout=idle_timeout, max_bytes=1_000_000)
    with pytest.raises(ModelError, match=error):
        await Agent("remote", model=model).run(text)
    # a task that had not ended is cancelled; the same model answers the next call
    cancelled = since(calls, start).count(f"cancelled: {text}")
    assert cancelled == (0 if text == "long failure" else 1)
    assert (await Agent("remote", model=model).run("fine")).output == "polled: fine"


def test_a_task_read_many_times_holds_no_more_progress_than_the_answer_shows() -> None:
    from a2a.types import Message, Part, Task, TaskState, TaskStatus

    def working(text: str) -> Task:
        said = Message(message_id="m", parts=[Part(text=text)])
        status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=said)
        return Task(id="t1", context_id="c1", status=status)

    answer = Answer()
    assert answer.take_polled(working("same")) == ["same"]
    assert answer.take_polled(working("same")) == []  # read again: not told twice
    told = [answer.take_polled(working(f"{n:04d}" + "x" * 996)) for n in range(1000)]
    assert all(len(each) == 1 for each in told)  # every new status is told (streamed)
    kept = sum(len(text) + 1 for text in answer.progress)
    assert kept <= MAX_PROGRESS_CHARS + 1001  # but only what the answer shows is held
    shown = "\n".join(answer.progress)
    assert len(shown) > MAX_PROGRESS_CHARS  # so the answer shows the same cut as before


async def test_our_own_server_as_a_remote_that_does_not_stream(tmp_path: Path) -> None:
    with running("ours-unstreamed", tmp_path / "threads.db") as url:
        assert (await Agent("remote", model=A2AModel(url)).run("hello")).output == "echo: hello"
        async with anyio.create_task_group() as group:
            group.start_soon(Agent("remote", model=A2AModel(url)).run, "wait 30")
            with anyio.fail_after(30):
                while await remote_states(url, "wait 30") != ["TASK_STATE_WORKING"]:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.3)
            group.cancel_scope.cancel()
        with anyio.move_on_after(10):
            while await remote_states(url, "wait 30") != ["TASK_STATE_CANCELED"]:
                await anyio.sleep(0.05)
        # one task (the remote's run ran once), cancelled rather than left waiting 30 s
        assert await remote_states(url, "wait 30") == ["TASK_STATE_CANCELED"]


async def test_a_peer_that_always_answers_at_once_is_read_until_it_answers() -> None:
    # pydantic-ai's fasta2a answers every `message/send` with the task submitted: read, its
    # answer comes (a blocking send read that as a task stopped before it finished)
    with running("peer-unstreamed") as url:
        result = await Agent("remote", model=A2AModel(url)).run("hi")
        assert result.output == "peer: hi (turn 1)"
