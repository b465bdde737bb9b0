"""Continuations through the one door, in memory: answered once, and a given State is kept."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel
from network import (
    AlreadyAnsweredError,
    Answer,
    Interrupt,
    InterruptError,
    Network,
    Resume,
    State,
    ThreadRef,
)
from network.errors import ConfigurationError
from network.history.messages import AssistantMessage, UserMessage
from network.threads import MemoryStore
from tests.network.threads.payments import PAID, pay_network

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_payments() -> None:
    PAID.clear()


async def test_a_result_in_memory_is_continued_once() -> None:
    network = pay_network()
    stopped = await network.run("Pay the invoice")
    (interrupt,) = stopped.interrupts
    done = await network.run(stopped.resume([interrupt.accept()]))
    assert done.output == "Done: paid 100"
    with pytest.raises(AlreadyAnsweredError, match="continued already") as refused:
        await network.run(stopped.resume([interrupt.accept()]))
    assert refused.value.answered_by == done.run_id
    assert PAID == [100]  # one payment


async def test_the_old_resume_is_gone_and_says_what_replaced_it() -> None:
    network = pay_network()
    stopped = await network.run("Pay the invoice")
    with pytest.raises(AttributeError, match=r"removed: .* network.run\(result.resume\(answers\)"):
        await network.resume(stopped, [stopped.interrupts[0].accept()])  # type: ignore[attr-defined]
    assert PAID == []  # nothing ran
    done = await network.run(stopped.resume([stopped.interrupts[0].accept()]))
    assert done.output == "Done: paid 100" and PAID == [100]  # the run still waits for it


async def test_a_result_in_memory_pickles_and_resumes_after() -> None:
    network = pay_network()
    stopped = pickle.loads(pickle.dumps(await network.run("Pay the invoice")))
    done = await network.run(stopped.resume([stopped.interrupts[0].accept()]))
    assert done.output == "Done: paid 100"


def echo(replies: list[str]) -> tuple[Network, Agent]:
    agent = Agent("echo", model=ScriptedModel(replies))
    return Network("echo", agents=[agent]), agent


async def test_a_state_with_a_conversation_is_continued() -> None:
    network, agent = echo(["Noted."])
    earlier = State({"k": 1}, messages=[UserMessage("My name is Ann."), AssistantMessage("Hi!")])
    result = await network.run("What is my name?", state=earlier)
    sent = agent.model.requests[0].history  # type: ignore[union-attr]
    assert [m.content for m in sent] == ["My name is Ann.", "Hi!", "What is my name?"]
    assert [m.content for m in result.messages] == [
        "My name is Ann.",
        "Hi!",
        "What is my name?",
        "Noted.",
    ]
    assert result["k"] == 1
    assert len(earlier.messages) == 2  # the given State is copied, never changed


async def test_a_state_with_agent_calls_is_continued() -> None:
    network, _ = echo(["one", "two"])
    first = await network.run("first")
    second = await network.run("second", state=first.state)
    assert [r.output[0].content for r in second.results] == ["one", "two"]
    assert second.output == "two"
    assert len(first.results) == 1


async def test_a_state_with_a_conversation_is_refused_on_a_thread(tmp_path: str) -> None:
    network, agent = echo(["never"])
    earlier = State(messages=[UserMessage("Hello")])
    with pytest.raises(ConfigurationError, match="1 messages and 0 agent calls"):
        await network.run("go", state=earlier, thread=ThreadRef("t", store=f"{tmp_path}/t.db"))
    assert agent.model.requests == []  # type: ignore[union-attr]


async def test_one_interrupt_answered_twice_differently_is_refused_and_nothing_runs() -> None:
    """The last answer won: `[interrupt.reject("no"), interrupt.accept()]` (a double click,
    two people answering one request) paid. Which one was meant is unknown: it is an
    `InterruptError`, and the run still waits for one answer, in memory and on a thread."""
    network = pay_network()
    stopped = await network.run("Pay the invoice")
    (interrupt,) = stopped.interrupts
    with pytest.raises(
        InterruptError, match=r"answered twice, differently \(reject, then accept\)"
    ):
        await network.run(stopped.resume([interrupt.reject("no"), interrupt.accept()]))
    assert PAID == []
    same = await network.run(stopped.resume([interrupt.accept(), interrupt.accept()]))
    assert same.output == "Done: paid 100" and PAID == [100]  # the same answer twice is one

    store = MemoryStore()
    thread = ThreadRef("t", store=store)
    (interrupt,) = (await network.run("Pay the invoice", thread=thread)).interrupts
    twice = [interrupt.accept(arguments={"amount": 1}), interrupt.accept()]
    with pytest.raises(InterruptError, match=r"\(accept with edited arguments, then accept\)"):
        await network.run(Resume(twice), thread=thread)
    done = await network.run(Resume([interrupt.reject("no")]), thread=thread)
    assert "Rejected" in (done.output or "") and PAID == [100]


async def test_an_answer_built_from_json_takes_a_boolean_only() -> None:
    # an Answer built from a client's JSON (a protocol of your own, a queue's message) was
    # read by its truth: approved="no" (or 1, "false") ran the tool and paid
    network = pay_network()
    store = MemoryStore()
    stopped = await network.run("Pay the invoice", thread=ThreadRef("t", store=store))
    (interrupt,) = stopped.interrupts
    for word in ("no", "false", "yes", 1, 0, None):
        with pytest.raises(InterruptError, match=rf"{interrupt.id!r}: approved must be True or"):
            Answer(interrupt_id=interrupt.id, approved=word)  # type: ignore[arg-type]
    with pytest.raises(InterruptError, match="reason must be a string"):
        Answer(interrupt_id=interrupt.id, approved=False, reason=["no"])  # type: ignore[arg-type]
    with pytest.raises(InterruptError, match="interrupt_id must be a string"):
        Answer(interrupt_id=7, approved=True)  # type: ignore[arg-type]
    assert PAID == []  # nothing ran, and the call still waits on the thread
    thread = await store.get_thread("t")
    assert thread is not None and [i.id for i in thread.pending_interrupts] == [interrupt.id]
    answer = Answer(interrupt_id=interrupt.id, approved=True)
    done = await network.run(Resume([answer]), thread=ThreadRef("t", store=store))
    assert done.output == "Done: paid 100" and PAID == [100]


class Receipt(BaseModel):
    amount: int
    note: str


async def test_a_response_that_is_no_json_is_refused_naming_the_call() -> None:
    # respond(float('nan')) reached the model as the text NaN, respond(object()) as the
    # object's repr: what the person meant was lost, and the call was answered
    network = pay_network()
    stopped = await network.run("Pay the invoice")
    (interrupt,) = stopped.interrupts
    for value in (math.nan, -math.inf, {"total": [math.inf]}, object(), {1, 2}):
        with pytest.raises(InterruptError, match="a response is a string or JSON data") as bad:
            interrupt.respond(value)
        assert f"interrupt {interrupt.id!r} (tool 'pay')" in str(bad.value)
        with pytest.raises(InterruptError, match=f"interrupt {interrupt.id!r}: a response"):
            Answer(interrupt_id=interrupt.id, approved=False, response=value)
    assert PAID == []  # the call still waits: answered with JSON, the model reads that JSON
    answer = interrupt.respond({"receipt": Receipt(amount=5, note="cash"), "at": (1, 2)})
    assert answer.response == {"receipt": {"amount": 5, "note": "cash"}, "at": [1, 2]}
    done = await network.run(stopped.resume([answer]))
    assert done.output == 'Done: {"receipt": {"amount": 5, "note": "cash"}, "at": [1, 2]}'
    assert PAID == []  # responded: the tool did not run


def test_a_response_is_read_as_a_tools_result_is() -> None:
    # one rule for what the model reads (`network.state.values.json_part`): a dataclass in a
    # response is its JSON data, as in a tool's result, and bytes their text or base64
    @dataclasses.dataclass
    class Slot:
        day: str
        hour: int

    interrupt = Interrupt(tool_call_id="c1", tool="pay", agent="cashier")
    answer = interrupt.respond({"slot": Slot("mon", 9), "raw": b"\xff"})
    assert answer.response == {"slot": {"day": "mon", "hour": 9}, "raw": {"base64": "/w=="}}
