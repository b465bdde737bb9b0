"""Approvals and client tool calls are part of the thread, answered exactly once by the store.

On every store (memory, SQLite, PostgreSQL): a run that stops stores what it waits on in the
commit of the call that asked for it; a fresh network object answers it with only the thread
id; a second answer is `AlreadyAnsweredError` and runs nothing (the tool's side effects are
counted); an edit is checked against the tool's schema before anything is claimed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from network import (
    AlreadyAnsweredError,
    ConfigurationError,
    InterruptError,
    Resume,
    ThreadRef,
    ToolResults,
)
from network.history.messages import ToolMessage
from network.threads import ThreadStore
from network.threads.pending import PendingCall
from tests.network.threads.payments import PAID, pay_network

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_payments() -> None:
    PAID.clear()


async def stop_for_approval(store: ThreadStore) -> Any:
    stopped = await pay_network().run("Pay the invoice", thread=ThreadRef("t1", store=store))
    assert stopped.stop_reason == "interrupted" and stopped.persisted
    return stopped


async def test_a_stop_is_stored_with_the_call_that_asked_for_it(store: ThreadStore) -> None:
    stopped = await stop_for_approval(store)
    thread = await store.get_thread("t1")
    assert thread is not None
    assert thread.revision == 1  # one commit: the call, its messages and what it waits on
    assert len(thread.results) == 1
    (waiting,) = thread.pending_interrupts
    assert (waiting.id, waiting.tool, waiting.arguments) == (
        stopped.interrupts[0].id,
        "pay",
        {"amount": 100},
    )
    assert thread.pending_tool_calls == []
    assert PAID == []


async def test_any_process_answers_with_only_the_thread_id(
    open_store: Callable[[], ThreadStore],
) -> None:
    await stop_for_approval(open_store())
    elsewhere = open_store()  # another store object: another process, as far as it knows
    thread = await elsewhere.get_thread("t1")
    assert thread is not None
    (waiting,) = thread.pending_interrupts
    done = await pay_network().run(
        Resume([waiting.accept()]), thread=ThreadRef("t1", store=elsewhere)
    )
    assert done.output == "Done: paid 100" and PAID == [100]
    after = await open_store().get_thread("t1")
    assert after is not None and after.pending == [] and after.state["paid"] == 100


async def test_a_second_answer_is_refused_and_runs_nothing(store: ThreadStore) -> None:
    stopped = await stop_for_approval(store)
    thread = ThreadRef("t1", store=store)
    await pay_network().run(stopped.resume([stopped.interrupts[0].accept()]), thread=thread)
    calls_after_first = len((await store.get_thread("t1")).results)  # type: ignore[union-attr]
    with pytest.raises(AlreadyAnsweredError, match="answered already") as refused:
        await pay_network().run(stopped.resume([stopped.interrupts[0].accept()]), thread=thread)
    assert refused.value.ids == (stopped.interrupts[0].id,)
    with pytest.raises(AlreadyAnsweredError, match="answered already"):  # by thread id alone
        await pay_network().run(Resume([stopped.interrupts[0].accept()]), thread=thread)
    assert PAID == [100]
    stored = await store.get_thread("t1")
    assert stored is not None and len(stored.results) == calls_after_first
    results_for_the_call = [
        call
        for result in stored.results
        for call in result.tool_calls
        if call.id == stopped.interrupts[0].tool_call_id
    ]
    assert len(results_for_the_call) == 1  # one result for one call


async def test_answers_that_do_not_match_claim_nothing(store: ThreadStore) -> None:
    stopped = await stop_for_approval(store)
    thread = ThreadRef("t1", store=store)
    with pytest.raises(InterruptError, match="not answered"):
        await pay_network().run(Resume([]), thread=thread)
    with pytest.raises(InterruptError, match="waits on no call int_nope"):
        await pay_network().run(Resume({"int_nope": True}), thread=thread)
    still = await store.get_thread("t1")
    assert still is not None and [i.id for i in still.pending_interrupts] == [
        stopped.interrupts[0].id
    ]
    assert still.revision == 1 and PAID == []


async def test_answers_that_contradict_or_are_not_answers_claim_nothing(
    store: ThreadStore,
) -> None:
    """LangGraph's Command(resume=...) takes one value per interrupt. Here an accept and a
    reject of one call in one Resume ran the tool (the last answer won, silently),
    `{id: "no"}` approved it (truthy), and `Resume(None)` failed with a TypeError."""
    stopped = await stop_for_approval(store)
    (interrupt,) = stopped.interrupts
    thread = ThreadRef("t1", store=store)
    with pytest.raises(InterruptError, match=rf"interrupt '{interrupt.id}' is answered twice"):
        await pay_network().run(Resume([interrupt.accept(), interrupt.reject()]), thread=thread)
    with pytest.raises(InterruptError, match=rf"'{interrupt.id}' must be True or False, got 'no'"):
        await pay_network().run(Resume({interrupt.id: "no"}), thread=thread)
    for answers in (None, "yes", 1):
        with pytest.raises(ConfigurationError, match="Resume takes a list with an Answer"):
            Resume(answers)
    still = await store.get_thread("t1")
    assert still is not None and [i.id for i in still.pending_interrupts] == [interrupt.id]
    assert still.revision == 1 and PAID == []


async def test_an_edited_call_is_checked_then_runs_as_edited(store: ThreadStore) -> None:
    stopped = await stop_for_approval(store)
    (interrupt,) = stopped.interrupts
    thread = ThreadRef("t1", store=store)
    with pytest.raises(InterruptError, match="amount") as refused:
        await pay_network().run(
            Resume([interrupt.accept(arguments={"amount": "lots"})]), thread=thread
        )
    assert "pay" in str(refused.value)
    pending = await store.get_thread("t1")
    assert pending is not None and len(pending.pending) == 1  # the interrupt stays pending
    done = await pay_network().run(
        Resume([interrupt.accept(arguments={"amount": 40})]), thread=thread
    )
    assert PAID == [40] and done.output == "Done: paid 40"
    stored = await store.get_thread("t1")
    assert stored is not None
    (record,) = [c for r in stored.results for c in r.tool_calls if c.id == interrupt.tool_call_id]
    assert record.arguments == {"amount": 40} and record.content == "paid 40"


async def test_a_response_answers_without_running_the_tool(store: ThreadStore) -> None:
    stopped = await stop_for_approval(store)
    (interrupt,) = stopped.interrupts
    done = await pay_network().run(
        Resume([interrupt.respond({"paid_by": "cheque"})]), thread=ThreadRef("t1", store=store)
    )
    assert PAID == []
    tool_messages = [m for m in done.messages if isinstance(m, ToolMessage)]
    assert tool_messages[-1].content == '{"paid_by": "cheque"}'
    assert done.output == 'Done: {"paid_by": "cheque"}'
    stored = await store.get_thread("t1")
    assert stored is not None and stored.pending == [] and "paid" not in stored.state


async def test_client_tool_calls_are_answered_by_thread_once(store: ThreadStore) -> None:
    thread = ThreadRef("t2", store=store)
    stopped = await pay_network().run("please confirm", thread=thread)
    assert stopped.stop_reason == "client_tool"
    stored = await store.get_thread("t2")
    assert stored is not None
    (call,) = stored.pending_tool_calls
    assert call.id == stopped.pending_tool_calls[0].id and call.name == "confirm"
    done = await pay_network().run(ToolResults({call.id: "confirmed"}), thread=thread)
    assert done.output == "Done: confirmed"
    with pytest.raises(AlreadyAnsweredError):
        await pay_network().run(stopped.tool_results({call.id: "again"}), thread=thread)
    again = await store.get_thread("t2")
    assert again is not None and again.pending == []
    answers = [m.content for m in again.messages if isinstance(m, ToolMessage)]
    assert answers == ["confirmed"]


async def test_a_new_message_supersedes_what_the_thread_waited_on(store: ThreadStore) -> None:
    old = await stop_for_approval(store)
    new = await pay_network().run("Pay again", thread=ThreadRef("t1", store=store))
    stored = await store.get_thread("t1")
    assert stored is not None
    assert [i.id for i in stored.pending_interrupts] == [new.interrupts[0].id]
    with pytest.raises(AlreadyAnsweredError, match=f"answered already by run {new.run_id!r}"):
        await pay_network().run(
            Resume([old.interrupts[0].accept()]), thread=ThreadRef("t1", store=store)
        )
    assert PAID == []


def test_an_entry_keeps_the_trace_of_the_run_that_stopped_on_it() -> None:
    """Its root span's ids, so that the run answering it in any process links to it; ids a
    store gives back that are no ids (an older entry has none, or one edited by hand) are
    left out rather than failing the answer."""
    ids = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
    entry = PendingCall("int_1", "interrupt", "run_1", {"id": "int_1"}, trace=ids)
    assert PendingCall.from_text(entry.to_text(3)).trace == ids
    assert PendingCall.from_text(PendingCall("c", "client_tool", None).to_text()).trace is None
    for stored in (["zz" * 16, ids[1]], [ids[0]], [ids[0], "0" * 16], "x", [ids[0], 7]):
        value = json.loads(entry.to_text())
        value["trace"] = stored
        assert PendingCall.from_text(json.dumps(value)).trace is None, stored
