"""Rewind and fork never keep an approval (or client tool call) of an agent call they removed.

On every store (memory, SQLite, PostgreSQL): a thread answers "hi" (call 0), then is asked to
pay and waits on the approval of call 1. A pending call belongs to the checkpoint of the call
that asked for it: a rewind to checkpoint 0 withdraws it (answering is `AlreadyAnsweredError`
saying so, and `pay` never runs: its side effects are counted in `PAID`), and so does the
thread it keeps as `kept_as`; a fork at checkpoint 0 waits on nothing. At checkpoint 1 the
approval is the checkpoint's own: a rewind there keeps it, and a fork there waits on it and
answers it once.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from network import AlreadyAnsweredError, InterruptError, Network, Resume, ThreadRef, ToolResults
from network.threads import ThreadStore
from tests.network.threads.payments import CONFIRM, PAID, pay

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_payments() -> None:
    PAID.clear()


def script(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool":
        return f"Done: {last.content}"
    if "confirm" in str(last.content):
        return call("confirm")
    if "pay" in str(last.content):
        return call("pay", amount=100)
    return "Hello"


def shop() -> Network:
    cashier = Agent("cashier", tools=[pay, CONFIRM], model=ScriptedModel(script))

    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return cashier if last is None or last.tool_calls else None

    return Network("shop", agents=[cashier], router=router, state_schema={"paid": {"type": int}})


async def waiting_on_call_1(store: ThreadStore, ask: str = "pay the invoice") -> Any:
    """Call 0 answers "hi"; call 1 asks for `ask` and the thread waits on it. Its stop."""
    thread = ThreadRef("t", store=store)
    await shop().run("hi", thread=thread)
    stopped = await shop().run(ask, thread=thread)
    assert stopped.stop_reason in ("interrupted", "client_tool")
    found = await store.get_thread("t")
    assert found is not None and len(found.results) == 2 and len(found.pending) == 1
    return stopped


async def conversation(store: ThreadStore, thread_id: str) -> list[str]:
    found = await store.get_thread(thread_id)
    assert found is not None
    return [message.role for message in found.messages]


async def test_a_rewind_withdraws_the_approval_of_a_call_it_removed(store: ThreadStore) -> None:
    stopped = await waiting_on_call_1(store)
    (approval,) = stopped.interrupts

    report = await shop().rewind(ThreadRef("t", store=store), to=0)

    assert report.withdrawn == [approval.id]
    rewound = await store.get_thread("t")
    assert rewound is not None and rewound.pending == []
    before = await conversation(store, "t")
    assert before == ["user", "assistant"]
    with pytest.raises(AlreadyAnsweredError, match="withdrawn: the thread was rewound") as by_id:
        await shop().run(Resume([approval.accept()]), thread=ThreadRef("t", store=store))
    assert by_id.value.ids == (approval.id,)
    with pytest.raises(AlreadyAnsweredError):  # the stopped run's own result: refused too
        await shop().run(stopped.resume([approval.accept()]), thread=ThreadRef("t", store=store))
    assert PAID == []  # the tool never ran
    assert await conversation(store, "t") == before  # no tool result without its call
    # the thread kept as it was holds call 1, and waits on nothing either
    kept = await store.get_thread(report.kept_as)
    assert kept is not None and len(kept.results) == 2 and kept.pending == []
    with pytest.raises(InterruptError):
        await shop().run(Resume([approval.accept()]), thread=ThreadRef(report.kept_as, store=store))
    assert PAID == []
    # the thread goes on from checkpoint 0 as any thread does
    again = await shop().run("hi again", thread=ThreadRef("t", store=store))
    assert again.output == "Hello"


async def test_a_rewind_withdraws_a_client_tool_call_of_a_call_it_removed(
    store: ThreadStore,
) -> None:
    stopped = await waiting_on_call_1(store, ask="please confirm")
    (asked,) = stopped.pending_tool_calls

    report = await shop().rewind(ThreadRef("t", store=store), to=0)

    assert report.withdrawn == [asked.id]
    with pytest.raises(AlreadyAnsweredError, match="withdrawn"):
        await shop().run(ToolResults({asked.id: "yes"}), thread=ThreadRef("t", store=store))
    assert await conversation(store, "t") == ["user", "assistant"]


async def test_a_fork_before_the_call_that_asked_waits_on_nothing(store: ThreadStore) -> None:
    stopped = await waiting_on_call_1(store)
    (approval,) = stopped.interrupts

    fork = await shop().fork(ThreadRef("t", store=store), at=0, new_thread_id="f")

    forked = await store.get_thread("f")
    assert forked is not None and forked.pending == []
    with pytest.raises(InterruptError, match="waits on no"):
        await shop().run(Resume([approval.accept()]), thread=ThreadRef("f", store=store))
    assert PAID == []
    assert await conversation(store, "f") == ["user", "assistant"]
    assert fork.thread.thread_id == "f"
    # the source still waits on it, and answering there pays once
    source = await store.get_thread("t")
    assert source is not None and [entry.id for entry in source.pending] == [approval.id]
    done = await shop().run(Resume([approval.accept()]), thread=ThreadRef("t", store=store))
    assert done.output == "Done: paid 100" and PAID == [100]


async def test_at_the_checkpoint_that_asked_the_approval_is_its_own(store: ThreadStore) -> None:
    stopped = await waiting_on_call_1(store)
    (approval,) = stopped.interrupts

    await shop().fork(ThreadRef("t", store=store), at=1, new_thread_id="f")
    report = await shop().rewind(ThreadRef("t", store=store), to=1)

    assert report.withdrawn == []
    for thread_id in ("f", "t"):
        found = await store.get_thread(thread_id)
        assert found is not None and [entry.id for entry in found.pending] == [approval.id]
    # the fork is a thread of its own: its approval is answered once, there
    done = await shop().run(Resume([approval.accept()]), thread=ThreadRef("f", store=store))
    assert done.output == "Done: paid 100" and PAID == [100]
    with pytest.raises(AlreadyAnsweredError, match="answered already"):
        await shop().run(Resume([approval.accept()]), thread=ThreadRef("f", store=store))
    assert PAID == [100]
    # answering it in the source is the source's own, once
    await shop().run(Resume([approval.accept()]), thread=ThreadRef("t", store=store))
    assert PAID == [100, 100]
    with pytest.raises(AlreadyAnsweredError):
        await shop().run(Resume([approval.accept()]), thread=ThreadRef("t", store=store))
    assert PAID == [100, 100]


async def test_a_fork_never_shares_its_approvals_with_its_source(store: ThreadStore) -> None:
    """Answering in the fork leaves the source's entry as it was (and the other way round)."""
    stopped = await waiting_on_call_1(store)
    (approval,) = stopped.interrupts
    await shop().fork(ThreadRef("t", store=store), at=1, new_thread_id="f")

    await shop().run(Resume([approval.reject()]), thread=ThreadRef("t", store=store))

    forked = await store.get_thread("f")
    assert forked is not None and [entry.id for entry in forked.pending] == [approval.id]
    await shop().run(Resume([approval.accept()]), thread=ThreadRef("f", store=store))
    assert PAID == [100]
