"""`RunSlots` and `ServedThreads(max_runs=)`: a server's runs in flight, bounded; every
refusal of `admit` gives the slot it took back, in memory and on a store."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.errors import ConfigurationError
from network.history.messages import UserMessage
from network.serving import RunSlots
from network.serving.admission import RunRequest
from network.serving.errors import RequestError
from network.serving.threads import ServedThreads
from network.threads import MemoryStore

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def echo() -> Network:
    return Network("echo", agents=[Agent("echo", model=ScriptedModel(lambda request: "hi"))])


def by_token(request: Any, thread_id: str | None) -> str | None:
    return request


@pytest.mark.parametrize("on_store", [False, True], ids=["memory", "store"])
async def test_refusals_of_admit_give_the_slot_back(on_store: bool) -> None:
    store = {"store": MemoryStore()} if on_store else {}
    served = ServedThreads(echo(), authorize=by_token, max_runs=2, **store)
    held = await served.admit("t", "r1", "alice")
    assert served.slots.running == 1
    ctx = await held.start(RunRequest(messages=[UserMessage(content="hi")], data={}))
    await held.execute(ctx)  # the thread is alice's from now on
    for _ in range(5):
        with pytest.raises(RequestError) as busy:  # the thread's run holds it
            await served.admit("t", "r2", "alice")
        assert busy.value.code == "thread_busy" and served.slots.running == 1
    await held.release()
    for _ in range(5):
        with pytest.raises(RequestError) as unknown:  # someone else's thread
            await served.admit("t", "r3", "bob")
        assert unknown.value.status == 404 and served.slots.running == 0
    await served.close()


async def test_the_limit_refuses_with_retry_after_and_counts_threadless_runs() -> None:
    served = ServedThreads(echo(), max_runs=RunSlots(2, retry_after=3))
    first = await served.admit("a", "r1", None)
    # a run on no thread (an MCP call without one) counts too
    with served.slot(), pytest.raises(RequestError) as refused:
        await served.admit("b", "r2", None)
    error = refused.value
    assert (error.status, error.code, error.retry_after) == (503, "server_busy", 3)
    assert error.headers() == {"retry-after": "3"}
    assert error.body() == {"error": {"code": "server_busy", "message": error.message}}
    assert "b" not in served.registry  # nothing of the refused request kept
    second = await served.admit("b", "r2", None)
    await first.release()
    await first.release()  # again: the slot is not given back twice
    assert served.slots.running == 1
    await second.release()
    assert served.slots.running == 0


def test_one_runslots_bounds_several_servers() -> None:
    slots = RunSlots(1)
    one, two = ServedThreads(echo(), max_runs=slots), ServedThreads(echo(), max_runs=slots)
    with one.slot(), pytest.raises(RequestError, match="limit of 1 run under way"):
        two.slot()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_a_bad_max_runs_is_a_configuration_error(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="max_runs"):
        ServedThreads(echo(), max_runs=bad)


def test_the_refusal_counts_its_runs_in_words_a_person_reads() -> None:
    assert "limit of 1 run under way" in RunSlots(1).busy().message
    assert "limit of 2 runs under way" in RunSlots(2).busy().message
