"""`CancelTask` of a task waiting for approvals (`input-required`), against real
`agent-network serve --a2a` processes, two per store (SQLite, PostgreSQL):

- the task ends `canceled` (read so from the other process, listed so), its approval is
  settled: an answer after the cancel is refused and the guarded tool never runs (counted in
  a file); the AG-UI side of the thread finds nothing to resume, and the thread goes on;
- a cancel and an answer racing (from two processes, or one; started together or a little
  apart, either first): one wins, the tool runs at most once, and the task's final state
  agrees with the winner; a cancel well ahead of the answer wins;
- in process, the claim: a cancel retried after its claim committed completes, any other
  finds the approvals taken; approvals kept in memory are settled once too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client.errors import A2AClientError
from a2a.types import CancelTaskRequest, GetTaskRequest, ListTasksRequest, Task, TaskState
from a2a.utils.errors import A2AError

from network.a2a.cancel_waiting import CANCELED_BY, cancel_waiting, canceled_answer
from network.history.messages import UserMessage
from network.ids import new_id
from network.serving.admission import RunRequest
from network.serving.threads import ServedThreads
from network.threads.thread_data import Commit
from tests.fakes.unkept_store import KeepsNoPending
from tests.network.a2a import team
from tests.network.a2a.servers import (
    TOKENS,
    Pair,
    answering,
    client_for,
    collect,
    final_task,
    output_text,
    said,
    served_pair,
    waiting_on,
)
from tests.network.agui.networks import pantry_kitchen

pytestmark = pytest.mark.anyio
REFUSED = (A2AError, A2AClientError)
CANCELED = TaskState.TASK_STATE_CANCELED
COMPLETED = TaskState.TASK_STATE_COMPLETED


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pair]:
    with served_pair(request, tmp_path_factory.mktemp("a2a_cancel"), request.param) as pair:
        yield pair


async def waiting_task(url: str, amount: int) -> Task:
    alice = await client_for(url, "alice")
    task = final_task(await collect(alice, said(f"pay {amount}", f"ctx-{uuid.uuid4().hex[:12]}")))
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and waiting_on(task)
    return task


async def test_a_waiting_task_is_canceled_and_its_approval_never_runs(servers: Pair) -> None:
    before = servers.payments()
    waiting = await waiting_task(servers.one, 301)
    other = await client_for(servers.two, "alice")  # cancelled from the other process
    canceled = await other.cancel_task(CancelTaskRequest(id=waiting.id))
    assert canceled.status.state == CANCELED
    alice = await client_for(servers.one, "alice")
    assert (await alice.get_task(GetTaskRequest(id=waiting.id))).status.state == CANCELED
    listed = await alice.list_tasks(ListTasksRequest(context_id=waiting.context_id))
    assert [(t.id, t.status.state) for t in listed.tasks] == [(waiting.id, CANCELED)]
    # an answer now is refused, from either process: the task has ended; nothing ran
    for client in (alice, other):
        with pytest.raises(REFUSED, match="TASK_STATE_CANCELED"):
            await collect(client, answering(waiting))
    with pytest.raises(REFUSED, match="has ended"):  # a second cancel: ended already
        await alice.cancel_task(CancelTaskRequest(id=waiting.id))
    # the AG-UI side of the thread finds nothing waiting, and the thread goes on
    (asked,) = waiting_on(waiting)
    resume = [{"interruptId": asked["id"], "status": "resolved", "payload": {"approved": True}}]
    body = {"threadId": waiting.context_id, "runId": "r-late", "messages": [], "resume": resume}
    headers = {"authorization": f"Bearer {TOKENS['alice']}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        late = await http.post(f"{servers.two}/", json=body)
        view = (await http.get(f"{servers.one}/threads/{waiting.context_id}")).json()
    assert late.status_code == 409 and late.json()["error"]["code"] == "no_pending_interrupt"
    # it waits on nothing; the state never took the proposal; the call answered as not run
    assert not view.get("interrupts") and "paid" not in view["state"]
    messages = view["messages"]
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("toolCalls", [])]
    results = [m for m in messages if m["role"] == "tool"]
    assert len(calls) == 1 and [m["toolCallId"] for m in results] == calls, messages
    assert results[0]["content"].startswith("Not run: its task was cancelled"), messages
    after = final_task(await collect(alice, said("hello again", waiting.context_id)))
    assert output_text(after) == "echo: hello again"
    assert servers.payments() == before


async def race(canceller: Any, answerer: Any, waiting: Task, lag: float) -> dict[str, Any]:
    """A cancel of `waiting` and an answer to it, at once (the answer `lag` seconds after);
    what each got: the task, or the refusal."""
    outcome: dict[str, Any] = {}

    async def cancel() -> None:
        await anyio.sleep(max(0.0, -lag))
        try:
            outcome["cancel"] = await canceller.cancel_task(CancelTaskRequest(id=waiting.id))
        except REFUSED as refused:
            outcome["cancel"] = refused

    async def answer() -> None:
        await anyio.sleep(max(0.0, lag))
        try:
            outcome["answer"] = final_task(await collect(answerer, answering(waiting)))
        except REFUSED as refused:
            outcome["answer"] = refused

    async with anyio.create_task_group() as group:
        group.start_soon(cancel)
        group.start_soon(answer)
    return outcome


# how long the answer starts after the cancel, a round each (negative: before it)
STAGGER = (0.0, 0.0, 0.02, -0.02, 0.05, 1.0)


async def test_a_cancel_racing_an_answer_has_one_winner(servers: Pair) -> None:
    winners: list[str] = []
    for round_, lag in enumerate(STAGGER):
        before = servers.payments()
        waiting = await waiting_task(servers.one, 400 + round_)
        # the cancel from one process, the answer from the other (or the same, every other)
        canceller = await client_for(servers.one, "alice")
        answerer = await client_for(servers.two if round_ % 2 == 0 else servers.one, "alice")
        with anyio.fail_after(60):
            outcome = await race(canceller, answerer, waiting, lag)
        final = await canceller.get_task(GetTaskRequest(id=waiting.id))
        paid = servers.payments()[len(before) :]
        assert paid in ([], [str(400 + round_)]), paid  # at most once
        winners.append("cancel" if isinstance(outcome["answer"], Exception) else "answer")
        if winners[-1] == "cancel":
            assert isinstance(outcome["cancel"], Task), outcome
            assert outcome["cancel"].status.state == final.status.state == CANCELED
            assert paid == []
        else:  # the answer won: its run went on (stopped by the cancel, or to its end)
            told = outcome["cancel"]
            # stopped by the cancel (a Task), refused as the answer holds the thread ("came
            # first"), or, when the answer's run had already ended by the time the cancel
            # read the task (a quick run, the answer sent first), refused as ended; or, when
            # the other process's answer had already marked the task working by the time the
            # cancel read it, refused as running there
            ended_first = "has ended" in str(told) and final.status.state == COMPLETED
            elsewhere = round_ % 2 == 0 and "runs in another server process" in str(told)
            assert (
                isinstance(told, Task) or "came first" in str(told) or ended_first or elsewhere
            ), outcome
            assert final.status.state == outcome["answer"].status.state
            if final.status.state == TaskState.TASK_STATE_COMPLETED:
                assert paid == [str(400 + round_)]
            else:
                assert final.status.state == CANCELED
    # a cancel a second ahead wins (before the fix every cancel lost: it was refused)
    assert winners[-1] == "cancel", winners


# -- the claim itself, in process ---------------------------------------------------------


async def paid_and_waiting(served: ServedThreads, thread_id: str) -> list[str]:
    """Run "pay 5" on `thread_id` through the serving layer; the approvals it waits on."""
    admission = await served.admit(thread_id, new_id("run_"), None)
    try:
        ctx = await admission.start(RunRequest(messages=[UserMessage("pay 5")], data={}))
        result = await admission.execute(ctx)
    finally:
        await admission.release()
    return [interrupt.id for interrupt in result.interrupts]


async def test_a_cancel_claims_once_and_a_retry_of_it_completes(tmp_path: Path) -> None:
    served = ServedThreads(team.network, store=str(tmp_path / "threads.db"))
    try:
        waited = await paid_and_waiting(served, "t1")
        # a cancel whose claim committed and whose task was not saved (the process died)
        store = served.stored.store if served.stored is not None else None
        assert store is not None
        thread = await store.get_thread("t1")
        claim = dict.fromkeys(waited, canceled_answer("task_1"))
        await store.append_results(
            "t1", Commit(revision=thread.revision, run_id=CANCELED_BY + "task_1", answered=claim)
        )

        async def ended() -> str:
            return "saved"

        # tried again, it completes; another task's cancel (or an answer) finds them taken
        assert await cancel_waiting(served, "task_1", "t1", None, waited, ended) == "saved"
        assert await cancel_waiting(served, "task_2", "t1", None, waited, ended) is None
        assert (await served.read("t1", None)).interrupts == []
    finally:
        await served.close()


async def test_a_cancel_settles_approvals_kept_in_memory_once() -> None:
    served = ServedThreads(team.network)
    waited = await paid_and_waiting(served, "t1")

    async def ended() -> str:
        return "saved"

    assert await cancel_waiting(served, "task_1", "t1", None, waited, ended) == "saved"
    assert await cancel_waiting(served, "task_1", "t1", None, waited, ended) is None
    assert (await served.read("t1", None)).interrupts == []


@pytest.mark.parametrize("kind", ["sqlite", "keeping-no-calls"])
async def test_a_cancel_adds_the_message_held_while_the_call_waited_again(
    tmp_path: Path, kind: str
) -> None:
    # a request answered the approval and said something more, and the call it answered waits
    # again (a sub-agent's second approval): the thread keeps that message with the approval
    # (a store that keeps no pending calls: the server remembers both); a cancel answers the
    # call as not run, then the message goes in, after the result
    network, _ = pantry_kitchen([])
    store = str(tmp_path / "threads.db") if kind == "sqlite" else KeepsNoPending()
    served = ServedThreads(network, store=store)

    async def turn(request: RunRequest) -> list[Any]:
        admission = await served.admit("t1", new_id("run_"), None)
        try:
            result = await admission.execute(await admission.start(request))
        finally:
            await admission.release()
        return list(result.interrupts)

    try:
        (asked,) = await turn(RunRequest(messages=[UserMessage("pancakes")], data={}))
        syrup = UserMessage("also add syrup", id="u2")
        answered = [(asked, asked.accept())]
        waited = await turn(RunRequest(messages=[syrup], data={}, answered=answered))
        assert [i.tool_call_id for i in waited] == [asked.tool_call_id]  # waits again

        async def ended() -> str:
            return "saved"

        ids = [i.id for i in waited]
        assert await cancel_waiting(served, "task_1", "t1", None, ids, ended) == "saved"
        opened = served.stored.store if served.stored is not None else None
        assert opened is not None
        thread = await opened.get_thread("t1")
    finally:
        await served.close()
    roles = [(m.role, m.content if m.role != "tool" else m.tool_call_id) for m in thread.messages]
    assert roles == [
        ("user", "pancakes"),
        ("assistant", None),
        ("tool", asked.tool_call_id),
        ("user", "also add syrup"),
    ]
    assert thread.messages[2].content.startswith("Not run: its task was cancelled")


async def test_a_cancel_says_a_call_whose_answering_run_died_is_unfinished(
    tmp_path: Path,
) -> None:
    """Two approvals in one turn: one answered, its run killed mid-tool (the answer claimed,
    the result lost), the other still waiting when the task is cancelled. The cancel says the
    first call's run ended before it finished (it may have paid), as a new message on the
    thread says it, and only the waiting one was cancelled before it ran."""
    from agents import Agent, ScriptedModel
    from agents.models.scripted import call
    from network import Network
    from network.history.unanswered import UNFINISHED
    from tests.network.threads.payments import pay

    def twice(request: Any) -> Any:
        return [call("pay", amount=1), call("pay", amount=2)]

    network = Network("shop", agents=[Agent("a", tools=[pay], model=ScriptedModel(twice))])
    served = ServedThreads(network, store=str(tmp_path / "threads.db"))
    try:
        first, second = await paid_and_waiting(served, "t1")
        store = served.stored.store if served.stored is not None else None
        assert store is not None
        thread = await store.get_thread("t1")
        assert thread is not None
        # the answering run's claim committed, then its process died inside the tool
        died = Commit(revision=thread.revision, run_id="run_died", answered={first: "true"})
        await store.append_results("t1", died)

        async def ended() -> str:
            return "saved"

        assert await cancel_waiting(served, "task_1", "t1", None, [second], ended) == "saved"
        thread = await store.get_thread("t1")
    finally:
        await served.close()
    assert thread is not None
    calls = {
        c.id: c.arguments["amount"]
        for m in thread.messages
        for c in getattr(m, "tool_calls", None) or []
    }
    results = {m.tool_call_id: m.content for m in thread.messages if m.role == "tool"}
    by_amount = {calls[call_id]: content for call_id, content in results.items()}
    assert by_amount == {
        1: UNFINISHED.format(tool="pay"),
        2: "Not run: its task was cancelled before this call was answered to 'pay'.",
    }
