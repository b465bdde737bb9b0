"""`ServedThreads`: principals, ownership, one run per thread, exactly-once answers and the
input kept from admission, driven through a small protocol built on the layer alone
(`toy_protocol`, an A2A-shaped one), on a store of each kind."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network, RunContext
from network.errors import ConfigurationError
from network.run.interrupts import Answer
from network.serving.admission import RunRequest
from network.serving.approvals import pair_answers
from network.serving.errors import RequestError
from network.serving.threads import ServedThreads
from network.threads import SQLStore
from tests.fakes.stores import STORE_KINDS, fresh_thread_store
from tests.network.serving.toy_protocol import send

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


class Request:
    """What the toy protocol's transport would hand the hook: here, only a token."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token


def by_token(request: Request, thread_id: str | None) -> str | None:
    return {"a": "alice", "b": "bob"}.get(request.token or "")


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    async for opened in fresh_thread_store(request.param, tmp_path, request):
        yield opened


def echo(seen: list[Any]) -> Network:
    def answer(request: Any) -> str:
        seen.append(request)
        users = [m.content for m in request.history if m.role == "user"]
        return f"heard {' | '.join(users)}"

    return Network("echo", agents=[Agent("echo", model=ScriptedModel(answer))])


async def test_a_thread_continues_for_its_owner_and_is_nobody_elses(store: Any) -> None:
    seen: list[Any] = []
    served = ServedThreads(echo(seen), authorize=by_token, store=store)
    one = await send(served, Request("a"), {"contextId": "c1", "text": "hello"})
    two = await send(served, Request("a"), {"contextId": "c1", "text": "again"})
    assert one["output"] == "heard hello" and two["output"] == "heard hello | again"
    theirs = await send(served, Request("b"), {"contextId": "c1", "text": "let me in"})
    assert theirs["status"] == 404 and theirs["error"]["code"] == "thread_not_found"
    nobody = await send(served, Request(), {"contextId": "c1", "text": "me?"})
    assert nobody["status"] == 401
    assert len(seen) == 2  # the refused requests ran nothing
    assert [h.thread_id for h in await served.list_threads("alice")] == ["c1"]
    assert await served.list_threads("bob") == []
    thread = await store.get_thread("c1")
    assert thread.user_id == "alice" and thread.message_count == 4


async def test_a_bad_context_id_is_refused_naming_the_protocols_field(store: Any) -> None:
    seen: list[Any] = []
    served = ServedThreads(echo(seen), store=store)
    for bad in ("", "c\x00", "x" * 257, 42):
        answer = await send(served, Request(), {"contextId": bad, "text": "hi"})
        assert answer["status"] == 422, bad
        assert answer["error"] == {
            "code": "invalid_thread_id",
            "message": answer["error"]["message"],
            "key": "contextId",
        }
    assert not seen and await store.list_threads() == []


async def test_one_run_per_thread(store: Any) -> None:
    started, release = anyio.Event(), anyio.Event()

    @tool
    async def wait() -> str:
        """Wait for the test."""
        started.set()
        await release.wait()
        return "released"

    def script(request: Any) -> Any:
        return "done" if request.history[-1].role == "tool" else call("wait")

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        return ctx.network.agents["w"] if last is None or last.tool_calls else None

    network = Network("gate", agents=[Agent("w", tools=[wait], model=ScriptedModel(script))])
    network.router = route
    served = ServedThreads(network, store=store)
    answers: list[Any] = []
    async with anyio.create_task_group() as group:

        async def first() -> None:
            answers.append(await send(served, Request(), {"contextId": "t", "text": "go"}))

        group.start_soon(first)
        await started.wait()
        busy = await send(served, Request(), {"contextId": "t", "text": "me too"})
        release.set()
    assert busy["status"] == 409 and busy["error"]["code"] == "thread_busy"
    assert answers[0]["state"] == "completed"
    after = await send(served, Request(), {"contextId": "t", "text": "now"})
    assert after["state"] == "completed"


async def test_an_approval_is_answered_once_and_its_tool_runs_once(store: Any) -> None:
    paid: list[int] = []

    @tool(requires_confirmation=True)
    def pay(amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        return f"paid {amount}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        return "done: " + last.content if last.role == "tool" else call("pay", amount=5)

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        return ctx.network.agents["cashier"] if last is None or last.tool_calls else None

    network = Network(
        "shop", agents=[Agent("cashier", tools=[pay], model=ScriptedModel(script))], router=route
    )
    served = ServedThreads(network, store=store)
    asked = await send(served, Request(), {"contextId": "bill", "text": "pay"})
    assert asked["state"] == "input-required" and not paid
    (pending,) = asked["interrupts"]
    ignored = await send(served, Request(), {"contextId": "bill", "text": "something else"})
    assert ignored["status"] == 409 and ignored["error"]["code"] == "interrupt_pending"
    assert "send `answers`" in ignored["error"]["message"]
    for word in ("yes", "no", 1):  # an approval's word by its truth: "no" paid, before
        said = {"contextId": "bill", "answers": [{"interrupt": pending["id"], "approved": word}]}
        refused = await send(served, Request(), said)
        assert refused["status"] == 422 and refused["error"]["key"] == "answers", refused
        assert "approved must be True or False" in refused["error"]["message"]
    assert not paid  # and the call still waits
    answer = {"contextId": "bill", "answers": [{"interrupt": pending["id"], "approved": True}]}
    done = await send(served, Request(), answer)
    again = await send(served, Request(), answer)
    assert done["state"] == "completed" and done["output"] == "done: paid 5"
    assert again["status"] == 409 and again["error"]["code"] == "no_pending_interrupt"
    assert paid == [5]


async def test_an_answer_paired_before_another_settled_it_runs_nothing(store: Any) -> None:
    """Two servers on one store pair the same answer with what the thread waited on; the
    store settles it once: the second is refused and runs nothing, whatever it paired."""
    paid: list[int] = []

    @tool(requires_confirmation=True)
    def pay(amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        return f"paid {amount}"

    def script(request: Any) -> Any:
        return "done" if request.history[-1].role == "tool" else call("pay", amount=7)

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        return ctx.network.agents["cashier"] if last is None or last.tool_calls else None

    network = Network(
        "shop", agents=[Agent("cashier", tools=[pay], model=ScriptedModel(script))], router=route
    )
    first, second = ServedThreads(network, store=store), ServedThreads(network, store=store)
    asked = await send(first, Request(), {"contextId": "bill", "text": "pay"})
    (pending,) = asked["interrupts"]
    one = await first.admit("bill", "run-one", None)
    answered = pair_answers(
        network, "bill", one.record.interrupts, [Answer(interrupt_id=pending["id"], approved=True)]
    )
    await one.release()  # paired, then its process stalled: it has not settled yet
    two = await second.admit("bill", "run-two", None)
    ctx = await two.start(RunRequest(messages=[], data=dict(two.record.state), answered=answered))
    await two.release()  # settled by the second; it would run the tool now
    three = await first.admit("bill", "run-one-again", None)
    with pytest.raises(RequestError) as refused:
        await three.start(RunRequest(messages=[], data=dict(three.record.state), answered=answered))
    await three.release()
    assert refused.value.status == 409 and refused.value.code == "interrupt_answered"
    assert ctx.engine.resume and not paid  # only the second's run may pay, and it has not run yet
    late = await send(
        first,
        Request(),
        {"contextId": "bill", "answers": [{"interrupt": pending["id"], "approved": True}]},
    )
    assert late["status"] == 409 and late["error"]["code"] == "no_pending_interrupt"


async def test_the_users_message_is_kept_when_the_run_fails(store: Any) -> None:
    def broken(request: Any) -> str:
        raise ConnectionError("model down: postgres://admin:hunter2@db")

    network = Network("fragile", agents=[Agent("a", model=ScriptedModel(broken))])
    served = ServedThreads(network, store=store)
    failed = await send(served, Request(), {"contextId": "f", "text": "remember me"})
    assert failed["state"] == "failed"
    assert "hunter2" not in failed["error"]["message"]
    thread = await store.get_thread("f")
    assert [m.content for m in thread.messages] == ["remember me"]


async def test_a_stored_run_reads_its_thread_once_with_its_lease(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The owner check, the run lease and the read are one claim: the thread's row is read
    once per request (before: a read to check the owner, the claim, a read of what the lease
    protects, and the session's own load), and a new thread is created and read back in one
    go. The statements are the store's own (`statement_listeners`)."""
    if not isinstance(store, SQLStore):
        pytest.skip("counts the SQL store's statements")
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    # each INSERT with the sync level its transaction ran at (a connection's PRAGMA is sent
    # only when its level changes, so the statements alone do not say it)
    inserts: list[tuple[str, str]] = []
    level = threading.local()
    if store.dialect == "sqlite":
        from network.threads import sqlite_workers

        synced_as = sqlite_workers.synced_as

        def recorded(work: Any, worker: Any, wanted: str, connection: Any) -> Any:
            level.value = wanted
            return synced_as(work, worker, wanted, connection)

        monkeypatch.setattr(sqlite_workers, "synced_as", recorded)

        def insert(sql: str) -> None:
            if sql.startswith("INSERT INTO") and sql.split()[2].endswith(("messages", "results")):
                inserts.append((sql.split()[2], getattr(level, "value", "")))

        store.statement_listeners.append(insert)
    served = ServedThreads(echo([]), authorize=by_token, store=store)

    def rows_read() -> int:
        head = "SELECT t.thread_id, t.app_name, t.user_id, t.revision"
        return sum(head in sql for sql in seen)

    first = await send(served, Request("a"), {"contextId": "once", "text": "hello"})
    assert first["output"] == "heard hello"
    # the claim finds it missing (on SQLite by reading its row in the claim's transaction; on
    # PostgreSQL its statement holds the read, which finds nothing); its creation reads only
    # its user's and app's keys with it
    assert rows_read() == 1
    assert sum("INSERT INTO agent_network_threads " in sql.replace('"', "") for sql in seen) == 1
    # one transaction each: the claim, which finds it missing and creates it holding the
    # user's message (before: the creation and the message were a transaction of their own,
    # and before that two), the agent call, the release
    assert transactions(seen) == 3
    if store.dialect == "sqlite":  # the creation and the input unsynced, the call synced
        modes = [(table, wanted != "NORMAL") for table, wanted in inserts]
        assert modes == [
            ("agent_network_messages", False),
            ("agent_network_messages", True),
            ("agent_network_results", True),
        ]
    seen.clear()
    inserts.clear()
    again = await send(served, Request("a"), {"contextId": "once", "text": "again"})
    assert again["output"] == "heard hello | again"
    assert rows_read() == 1
    # one transaction each: the claim with the read, the user's message, the agent call, the
    # release (on PostgreSQL the claim's statement reads the thread: before, a load of its own)
    assert transactions(seen) == 4
    if store.dialect == "sqlite":  # the input kept at admission is not synced; the call is
        modes = [(table, wanted != "NORMAL") for table, wanted in inserts]
        assert modes == [
            ("agent_network_messages", False),
            ("agent_network_messages", True),
            ("agent_network_results", True),
        ]
    seen.clear()
    theirs = await send(served, Request("b"), {"contextId": "once", "text": "let me in"})
    assert theirs["status"] == 404
    assert not any("run_leases" in sql for sql in seen if sql.lstrip().startswith("INSERT"))
    assert (await send(served, Request("a"), {"contextId": "once", "text": "free"}))["output"]


def transactions(statements: list[str]) -> int:
    """The transactions `statements` (as `statement_listeners` saw them) make: each BEGIN, and
    each statement run outside one."""
    count, inside = 0, False
    for sql in statements:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head == "BEGIN":
            count, inside = count + 1, True
        elif head in ("COMMIT", "ROLLBACK"):
            inside = False
        elif head != "PRAGMA" and not inside:
            count += 1
    return count


async def test_holding_a_thread_runs_its_work_then_frees_it_or_answers_none_when_busy() -> None:
    served = ServedThreads(echo([]))
    inside: list[Any] = []

    async def nested(admission: Any) -> str:
        return "not run"

    async def work(admission: Any) -> str:
        inside.append(await served.holding("t", None, nested))  # busy: held by this work
        return f"held {admission.record.thread_id}"

    assert await served.holding("t", None, work) == "held t"
    assert inside == [None] and served.under_way == 0
    assert await served.holding("t", None, work) == "held t"  # freed after the first
    with pytest.raises(RequestError) as refused:  # any other refusal is raised
        await served.holding("x" * 10_000, None, work)
    assert refused.value.status == 422
    assert await served.holding("x" * 10_000, None, work, busy=lambda _: True) is None


def test_a_full_registry_forgets_its_oldest_idle_thread_and_keeps_busy_ones() -> None:
    from network.serving.registry import ThreadRecord, ThreadRegistry

    registry = ThreadRegistry(max_threads=3)
    busy = ThreadRecord("busy", run_id="running")
    registry.admit(busy)
    for name in ("a", "b", "c", "d"):
        registry.admit(ThreadRecord(name))
    assert list(registry._records) == ["busy", "c", "d"]  # a, b forgotten; busy kept in place
    busy.run_id = None
    registry.admit(ThreadRecord("e"))
    assert list(registry._records) == ["c", "d", "e"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"threads": {}}, "threads must be a ThreadRegistry"),
        ({"lease_ttl": float("nan")}, "lease's ttl"),
        ({"lease_ttl": 0}, "lease's ttl"),
        ({"lease_ttl": "30"}, "lease's ttl"),
    ],
)
def test_a_bad_option_is_refused_at_construction_in_memory_too(
    options: dict[str, Any], named: str
) -> None:
    solo = Network("solo", agents=[Agent("solo", model=ScriptedModel(["hi"]))])
    with pytest.raises(ConfigurationError, match=named):
        ServedThreads(solo, **options)


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"messages": None, "data": {}}, "RunRequest.messages must be a list, got NoneType"),
        ({"messages": [], "data": None}, "RunRequest.data must be a dict, got NoneType"),
        ({"messages": [], "data": {}, "temp": [("k", 1)]}, "RunRequest.temp must be a dict"),
        ({"messages": [], "data": {}, "answered": "yes"}, "RunRequest.answered must be"),
        ({"messages": [], "data": {}, "input": 5}, "RunRequest.input must be a string"),
        ({"messages": [], "data": {}, "client_tools": ["t"]}, "client_tools must be a tuple"),
    ],
)
def test_a_run_request_of_the_wrong_shape_names_its_field(given: Any, named: str) -> None:
    """A protocol adapter's mistake was a bare TypeError deep in the run (`None` is not
    iterable); it is a ConfigurationError naming the field when the request is made."""
    with pytest.raises(ConfigurationError, match=named):
        RunRequest(**given)
