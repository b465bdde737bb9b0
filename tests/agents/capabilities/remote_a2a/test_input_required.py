"""A remote A2A agent's `input-required` is an interrupt of the calling run, and the answer
continues the same remote task exactly once (`agents.capabilities.remote_a2a.input_required`).

The remote is our own `agent-network serve --a2a` process on loopback (its scripted cashier
asks for an approval before it pays; every payment is a line in a file: the side effect
counted), the caller a team whose member is an `A2AModel` agent, on a thread in SQLite or in
memory, as a member and as a sub-agent tool.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.types import GetTaskRequest, Message, TaskState
from google.protobuf.json_format import MessageToJson

from agents import A2AModel, Agent, ScriptedModel, call
from agents.capabilities.remote_a2a import REMOTE_INPUT
from agents.capabilities.remote_a2a.input_required import (
    interrupt_of,
    remote_approvals,
    reply_of,
)
from agents.models.a2a import _part
from network import (
    AlreadyAnsweredError,
    InterruptError,
    Network,
    Parallel,
    Resume,
    StopReason,
    ThreadRef,
)
from network.history.messages import AssistantMessage
from network.history.model_io import ModelResponse
from network.run.interrupts import Interrupt
from tests.network.a2a.servers import TOKENS, client_for, output_text, serve, token_file

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def cashier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the module's cashier servers: their store, tokens and ledger."""
    return tmp_path_factory.mktemp("cashier")


@pytest.fixture
def paid(cashier: Path) -> Path:
    """The ledger the cashier appends each payment to, emptied before every test: the servers
    are the module's (one start-up each, not one a test), each test's tasks its own."""
    ledger = cashier / "paid.txt"
    ledger.unlink(missing_ok=True)
    return ledger


@pytest.fixture(scope="module")
def remote(cashier: Path) -> Iterator[str]:
    """Our A2A server of the cashier team, its payments counted in `paid`."""
    ledger = {"A2A_PAID_FILE": str(cashier / "paid.txt")}
    with serve(str(cashier / "remote.db"), token_file(cashier), env=ledger) as url:
        yield url


def payments(paid: Path) -> list[str]:
    return paid.read_text().splitlines() if paid.exists() else []


def front(url: str) -> Network:
    till = Agent(
        "till", description="A remote cashier.", model=A2AModel(url, token=TOKENS["alice"])
    )
    return Network("front", agents=[till], router=lambda ctx: till if ctx.call_count == 0 else None)


async def remote_task(url: str, task_id: str) -> Any:
    client = await client_for(url, "alice")
    return await client.get_task(GetTaskRequest(id=task_id))


async def test_an_approval_the_remote_waits_on_is_answered_once_in_the_same_task(
    remote: str, paid: Path, tmp_path: Path
) -> None:
    team = front(remote)
    thread = ThreadRef("t1", store=str(tmp_path / "front.db"))
    stopped = await team.run("pay 40", thread=thread)

    assert stopped.stop_reason == StopReason.INTERRUPTED
    [waiting] = stopped.interrupts
    assert (waiting.reason, waiting.tool, waiting.agent) == (REMOTE_INPUT, REMOTE_INPUT, "till")
    assert waiting.message.startswith("waiting for approval of pay")
    [approval] = waiting.arguments["asked"][0]["interrupts"]
    assert approval["tool"] == "pay" and approval["arguments"] == {"amount": 40.0}
    task_id, context_id = waiting.arguments["task_id"], waiting.arguments["context_id"]
    assert waiting.tool_call_id == task_id
    assert payments(paid) == []  # nothing paid before the answer

    # answered from the thread alone (another process holds only its id)
    done = await front(remote).run(Resume([waiting.accept()]), thread=thread)
    assert done.stop_reason == StopReason.ROUTER_FINISHED
    assert done.output == "done: paid 40"
    assert payments(paid) == ["40"]
    task = await remote_task(remote, task_id)  # the same remote task finished
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert (task.context_id, output_text(task)) == (context_id, "done: paid 40")

    with pytest.raises(AlreadyAnsweredError):  # a second answer runs nothing
        await front(remote).run(Resume([waiting.accept()]), thread=thread)
    assert payments(paid) == ["40"]


async def test_a_rejection_pays_nothing_and_the_remote_says_so(remote: str, paid: Path) -> None:
    team = front(remote)
    stopped = await team.run("pay 7")
    [waiting] = stopped.interrupts
    done = await team.run(stopped.resume([waiting.reject("too dear")]))
    assert done.output.startswith("done: Rejected: the user rejected this call to 'pay': too dear")
    assert payments(paid) == []
    with pytest.raises(AlreadyAnsweredError):  # one result is continued once
        await team.run(stopped.resume([waiting.accept()]))
    assert payments(paid) == []


async def test_a_remote_agent_as_a_tool_waits_as_its_callers_interrupt(
    remote: str, paid: Path
) -> None:
    """The remote's approval, two levels down: the supervisor's run stops on it, and the
    answer reaches the remote task through the sub-run (each answer given by `respond`:
    the remote's own answers entries, as its approvals list them)."""
    till = Agent("till", model=A2AModel(remote, token=TOKENS["alice"]))
    boss_model = ScriptedModel([call("till", input="pay 12"), "The till paid."])
    boss = Agent("boss", tools=[till.as_tool()], model=boss_model)
    office = Network(
        "office", agents=[boss], router=lambda ctx: boss if ctx.call_count < 2 else None
    )

    stopped = await office.run("Pay the bill")
    assert stopped.stop_reason == StopReason.INTERRUPTED
    [waiting] = stopped.interrupts
    assert waiting.subagent_run_id is not None  # raised inside the sub-run
    nested = waiting.nested or {}
    assert nested["waiting"]["tool"] == REMOTE_INPUT
    [approval] = nested["waiting"]["arguments"]["asked"][0]["interrupts"]
    answers = {"answers": [{"interrupt": approval["id"], "approved": True}]}
    done = await office.run(stopped.resume([waiting.respond(answers)]))
    assert done.output == "The till paid."
    assert payments(paid) == ["12"]
    told = boss_model.requests[1].history[-1]
    assert told.role == "tool" and "done: paid 12" in str(told.content)


async def test_edited_arguments_are_refused_before_anything_is_claimed(
    remote: str, paid: Path
) -> None:
    team = front(remote)
    stopped = await team.run("pay 3")
    [waiting] = stopped.interrupts
    with pytest.raises(InterruptError, match="cannot check the edited arguments"):
        await team.run(stopped.resume([waiting.accept(arguments={"amount": 1})]))
    done = await team.run(stopped.resume([waiting.accept()]))  # still answerable
    assert done.output == "done: paid 3" and payments(paid) == ["3"]


def answer_of(**raw: Any) -> ModelResponse:
    return ModelResponse(
        message=AssistantMessage(content="Which city?"), raw=raw, finish_reason="input_required"
    )


def test_what_each_answer_sends() -> None:
    asked = [{"interrupts": [{"id": "int_1", "tool": "pay"}, {"id": "int_2"}, {"id": 3}]}]
    waiting = interrupt_of("till", answer_of(task_id="task-1", context_id="ctx-1", asked=asked))
    assert waiting is not None and remote_approvals(waiting.arguments["asked"]) == [
        "int_1",
        "int_2",
    ]
    assert reply_of(waiting, waiting.reject("no")) == {
        "task_id": "task-1",
        "context_id": "ctx-1",
        "parts": [
            {
                "data": {
                    "answers": [
                        {"interrupt": "int_1", "approved": False, "reason": "no"},
                        {"interrupt": "int_2", "approved": False, "reason": "no"},
                    ]
                }
            }
        ],
    }
    question = interrupt_of("guide", answer_of(task_id="task-2", context_id="ctx-2", asked=[]))
    assert question is not None and question.message == "Which city?"
    assert reply_of(question, question.respond("Lyon"))["parts"] == [{"text": "Lyon"}]
    assert reply_of(question, question.respond({"city": "Lyon"}))["parts"] == [
        {"data": {"city": "Lyon"}}
    ]
    assert reply_of(question, question.accept())["parts"] == [{"data": {"approved": True}}]
    # an answer that names no task, or is not input-required, raises nothing
    assert interrupt_of("guide", answer_of(context_id="ctx-2")) is None
    done = ModelResponse(message=AssistantMessage(content="Lyon"), raw={"task_id": "t"})
    assert interrupt_of("guide", done) is None
    bare = Interrupt(tool_call_id="x", tool=REMOTE_INPUT, agent="guide", reason=REMOTE_INPUT)
    with pytest.raises(InterruptError, match="names no remote A2A task"):
        reply_of(bare, bare.accept())


def test_an_answer_a2a_cannot_carry_is_sent_as_a_model_reads_it() -> None:
    # A lone surrogate (NaN or infinity, before respond() refused them) in a person's answer
    # failed the call after the answer was claimed, reported as the remote's fault ("sent
    # what is not A2A", or a protobuf SerializeToJsonError): the message could not be encoded.
    question = interrupt_of("guide", answer_of(task_id="task-2", context_id="ctx-2", asked=[]))
    assert question is not None
    text = reply_of(question, question.respond("Ly\ud800on"))["parts"]
    assert text == [{"text": "Ly\ufffdon"}]
    for number in (math.nan, math.inf):  # no JSON: refused when the answer is made
        with pytest.raises(InterruptError, match="a response is a string or JSON data"):
            question.respond({"k": [number]})
    odd = {"k\udc00": [1.5, "v\udfff"]}
    sent = reply_of(question, question.respond(odd))["parts"]
    assert sent == [{"data": {"k\ufffd": [1.5, "v\ufffd"]}}]
    reason = reply_of(question, question.reject("no\ud800"))["parts"]
    assert reason == [{"data": {"approved": False, "reason": "no\ufffd"}}]
    for parts in (sent, reason, text):  # each one the client can encode
        MessageToJson(Message(message_id="m", parts=[_part(part) for part in parts]))


def fanned_out(url: str) -> Network:
    """Two branches of one remote agent (`Parallel.map`), each paying its own amount."""
    till = Agent("till", model=A2AModel(url, token=TOKENS["alice"]))

    def route(ctx: Any) -> Any:
        if ctx.call_count == 0:
            return Parallel.map(till, [5, 7], input=lambda amount: f"pay {amount}")
        return None

    return Network("front", agents=[till], router=route)


@pytest.fixture(scope="module")
def remote_on_postgres(cashier: Path, postgres_url: str) -> Iterator[str]:
    """The cashier's A2A server on PostgreSQL: the branches' tasks run on it at once (two
    runs at once on one SQLite file can find it locked by the SDK's task table)."""
    ledger = {"A2A_PAID_FILE": str(cashier / "paid.txt")}
    with serve(postgres_url, token_file(cashier), env=ledger) as url:
        yield url


@pytest.mark.parametrize("on_thread", [True, False])
async def test_two_branches_of_one_remote_agent_waiting_are_both_answered_once(
    remote_on_postgres: str, paid: Path, tmp_path: Path, on_thread: bool
) -> None:
    """Each branch's remote task waits on its own approval (its own remote context: the
    branches do not share one); one resume answers both, each in its own task, once."""
    remote = remote_on_postgres
    fan = f"fan-{uuid.uuid4().hex[:8]}"  # the remote's contexts derive from it: one database
    thread = ThreadRef(fan, store=str(tmp_path / "front.db")) if on_thread else None
    stopped = await fanned_out(remote).run("pay both", thread=thread)
    assert stopped.stop_reason == StopReason.INTERRUPTED
    five, seven = stopped.interrupts
    assert [i.arguments["asked"][0]["interrupts"][0]["arguments"] for i in (five, seven)] == [
        {"amount": 5.0},
        {"amount": 7.0},
    ]
    assert five.arguments["context_id"] != seven.arguments["context_id"]
    assert payments(paid) == []

    answers = [five.accept(), seven.accept()]
    if on_thread:  # answered from the thread alone, by a fresh network object
        done = await fanned_out(remote).run(Resume(answers), thread=thread)
    else:
        done = await fanned_out(remote).run(stopped.resume(answers))
    assert done.stop_reason == StopReason.ROUTER_FINISHED
    assert sorted(payments(paid)) == ["5", "7"]
    outputs = [r.text for r in done.state.results if r.agent == "till"]
    assert sorted(outputs[-2:]) == ["done: paid 5", "done: paid 7"]
    for waiting, amount in ((five, "5"), (seven, "7")):
        task = await remote_task(remote, waiting.arguments["task_id"])
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert output_text(task) == f"done: paid {amount}"

    with pytest.raises(AlreadyAnsweredError):  # a second answer runs nothing
        if on_thread:
            await fanned_out(remote).run(Resume(answers), thread=thread)
        else:
            await fanned_out(remote).run(stopped.resume(answers))
    assert sorted(payments(paid)) == ["5", "7"]
