"""Answering a call a parallel branch stopped on: it runs once, inside its branch, the
branch's agent reads its result and goes on, and its writes go through the join."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, Parallel, StateConflictError, ThreadRef
from network.threads import ThreadStore
from network.threads.memory import MemoryStore

pytestmark = pytest.mark.anyio


def _answers_after_tool(name: str, asks: Any) -> ScriptedModel:
    """A model that asks for `asks` until it reads a tool result, then answers."""

    def script(request: Any) -> Any:
        if request.history[-1].role == "tool":
            return f"{name} read {request.history[-1].content}"
        return asks

    return ScriptedModel(script)


def _refund_network(ran: list[tuple[int, str | None]]) -> Network:
    @tool(requires_confirmation=True)
    def refund(amount: int, ctx: ToolContext) -> str:
        """Refund an amount."""
        ran.append((amount, ctx.run.branch.id if ctx.run.branch else None))
        ctx.kv.set("refunded", amount)
        return f"refunded {amount}"

    payer = Agent(
        "payer", tools=[refund], model=_answers_after_tool("payer", call("refund", amount=5))
    )
    other = Agent("other", model=ScriptedModel(lambda request: "other done"))

    def router(ctx: Any) -> Any:
        first = ctx.call_count == 0 and ctx.input == "go"  # (a later input: no fan-out)
        return Parallel(payer, other, name="p") if first else None

    return Network("n", agents=[payer, other], router=router)


async def _run_and_resume(network: Network, thread: ThreadRef | None) -> tuple[Any, Any]:
    stopped = await network.run("go", thread=thread)
    assert stopped.stop_reason == "interrupted"
    resumed = await network.run(
        stopped.resume([i.accept() for i in stopped.interrupts]), thread=thread
    )
    return stopped, resumed


async def test_an_approved_call_runs_once_in_its_branch_and_the_branch_answers() -> None:
    ran: list[tuple[int, str | None]] = []
    _, resumed = await _run_and_resume(_refund_network(ran), None)

    assert ran == [(5, "p/payer")]  # once, inside its branch
    assert resumed.stop_reason == "router_finished"
    assert resumed.output == "payer read refunded 5"  # the branch's agent read the result
    assert [(r.branch, r.text) for r in resumed.results] == [
        ("p/payer", None),  # the approved call
        ("p/payer", "payer read refunded 5"),
    ]
    assert [w.writer.branch for w in resumed.state.history_of("refunded")] == ["p/payer"]


async def test_an_approved_call_in_a_branch_on_a_thread(store: ThreadStore) -> None:
    ran: list[tuple[int, str | None]] = []
    network = _refund_network(ran)
    _, resumed = await _run_and_resume(network, ThreadRef("t", store=store))

    assert ran == [(5, "p/payer")]
    assert resumed.output == "payer read refunded 5"
    assert resumed.state.history_of("refunded")[-1].writer.branch == "p/payer"
    again = await network.run("more", thread=ThreadRef("t", store=store))  # stored whole
    assert ran == [(5, "p/payer")]  # never again
    assert [(r.branch, r.text) for r in again.state.results] == [
        ("p/payer", None),  # the call it stopped on
        ("p/other", "other done"),
        ("p/payer", None),  # the approved call
        ("p/payer", "payer read refunded 5"),
    ]


def _seat_network(schema: dict[str, Any] | None = None) -> tuple[Network, list[str]]:
    booked: list[str] = []

    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        """Book a seat."""
        booked.append(seat)
        ctx.kv.set("seat", seat)
        return "booked"

    @tool
    def take(seat: str, ctx: ToolContext) -> str:
        """Take a seat."""
        ctx.kv.set("seat", seat)
        return "taken"

    a = Agent("a", tools=[book], model=_answers_after_tool("a", call("book", seat="1A")))
    b = Agent("b", tools=[take], model=_answers_after_tool("b", call("take", seat="2B")))

    def router(ctx: Any) -> Any:
        return Parallel(a, b) if ctx.call_count == 0 else None

    return Network("n", agents=[a, b], router=router, state_schema=schema), booked


async def test_a_resumed_write_that_conflicts_with_a_sibling_is_refused() -> None:
    network, booked = _seat_network()
    stopped = await network.run("go")
    assert stopped["seat"] == "2B"

    with pytest.raises(StateConflictError) as raised:
        await network.run(stopped.resume([i.accept() for i in stopped.interrupts]))

    assert raised.value.key == "seat"
    assert [w.branch for w in raised.value.writers] == ["a+b/a", "a+b/b"]
    assert booked == ["1A"]  # it ran once; its write was not merged
    assert stopped["seat"] == "2B"


async def test_a_resumed_write_follows_the_keys_conflict_rule() -> None:
    network, booked = _seat_network({"seat": {"type": str, "conflict": "last"}})
    stopped = await network.run("go")
    resumed = await network.run(stopped.resume([i.accept() for i in stopped.interrupts]))

    assert booked == ["1A"]
    assert resumed["seat"] == "2B"  # b is declared last: its write stands
    assert resumed.output == "a read booked"


def _payer(name: str, ran: list[tuple[str, int, str | None, str]], approvals: int = 1) -> Agent:
    """An agent that asks to pay until it has read `approvals` tool results."""

    @tool(requires_confirmation=True)
    def pay(n: int, ctx: ToolContext) -> str:
        """Pay."""
        ran.append((name, n, ctx.run.branch.id if ctx.run.branch else None, ctx.run.input))
        ctx.kv.set("paid", [n])
        return f"paid {n}"

    def script(request: Any) -> Any:
        read = [m.content for m in request.history if m.role == "tool"]
        return f"{name} read {read}" if len(read) >= approvals else call("pay", n=len(read))

    return Agent(name, tools=[pay], model=ScriptedModel(script))


async def test_every_branch_that_stopped_goes_on_from_its_own_answer() -> None:
    ran: list[tuple[str, int, str | None, str]] = []
    x, y = _payer("x", ran), _payer("y", ran, approvals=2)
    network = Network(
        "n",
        agents=[x, y],
        router=lambda ctx: Parallel(x, y, name="p") if ctx.call_count == 0 else None,
        state_schema={"paid": {"type": list[int]}},
    )
    stopped = await network.run("go")
    accept_x, reject_y = stopped.interrupts[0].accept(), stopped.interrupts[1].reject("no")

    resumed = await network.run(stopped.resume([accept_x, reject_y]))

    assert ran == [("x", 0, "p/x", "go")]
    assert resumed.stop_reason == "interrupted"  # y read its rejection and asks again
    assert [(i.agent, i.arguments) for i in resumed.interrupts] == [("y", {"n": 1})]
    assert [(r.branch, r.text) for r in resumed.results] == [
        ("p/x", None),
        ("p/x", "x read ['paid 0']"),
        ("p/y", None),  # the rejection
        ("p/y", None),  # its next call, held
    ]
    done = await network.run(resumed.resume([i.accept() for i in resumed.interrupts]))
    assert ran == [("x", 0, "p/x", "go"), ("y", 1, "p/y", "go")]
    assert done.output is not None  # it read its rejection, then its approved call's result
    assert done.output.startswith('y read ["Rejected') and done.output.endswith("'paid 1']")
    assert done["paid"] == [0, 1]


async def test_a_mapped_branch_is_resumed_with_its_own_input() -> None:
    ran: list[tuple[str, int, str | None, str]] = []
    m = _payer("m", ran)
    network = Network(
        "n",
        agents=[m],
        router=lambda ctx: Parallel.map(m, ["a", "b"]) if ctx.call_count == 0 else None,
        state_schema={"paid": {"type": list[int]}},
    )
    stopped = await network.run("go")
    resumed = await network.run(stopped.resume([i.accept() for i in stopped.interrupts]))

    assert ran == [("m", 0, "m.map/m#0", "a"), ("m", 0, "m.map/m#1", "b")]
    assert [r.text for r in resumed.results] == [None, "m read ['paid 0']"] * 2
    assert resumed["paid"] == [0, 0]


async def test_a_sibling_s_writes_in_an_earlier_turn_s_fan_out_are_no_conflict(
    store: ThreadStore,
) -> None:
    booked: list[str] = []

    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        """Book a seat."""
        booked.append(seat)
        ctx.kv.set("seat", seat)
        return "booked"

    @tool
    def take(seat: str, ctx: ToolContext) -> str:
        """Take a seat."""
        ctx.kv.set("seat", seat)
        return "taken"

    def turn(request: Any) -> str:
        return str([m.content for m in request.history if m.role == "user"][-1])

    def booker(request: Any) -> Any:  # books on the second turn only
        if request.history[-1].role == "tool" or turn(request) == "go":
            return "a done"
        return call("book", seat="1A")

    def taker(request: Any) -> Any:  # takes a seat on the first turn only
        if request.history[-1].role == "tool" or turn(request) != "go":
            return "b done"
        return call("take", seat="2B")

    a = Agent("a", tools=[book], model=ScriptedModel(booker))
    b = Agent("b", tools=[take], model=ScriptedModel(taker))
    network = Network(
        "n", agents=[a, b], router=lambda ctx: Parallel(a, b) if ctx.call_count == 0 else None
    )
    thread = ThreadRef("t2", store=store)
    assert (await network.run("go", thread=thread))["seat"] == "2B"
    stopped = await network.run("more", thread=thread)
    assert stopped.stop_reason == "interrupted"
    resumed = await network.run(
        stopped.resume([i.accept() for i in stopped.interrupts]), thread=thread
    )

    assert booked == ["1A"]
    assert resumed["seat"] == "1A"  # b wrote nothing in this fan-out
    assert resumed.state.history_of("seat")[-1].writer.branch == "a+b/a"


async def test_a_branch_that_stops_again_is_checked_against_every_sibling(
    store: ThreadStore,
) -> None:
    await _stops_again(ThreadRef("t3", store=store))


async def test_a_branch_that_stops_again_in_memory_is_checked_against_every_sibling() -> None:
    await _stops_again(None)


async def _stops_again(thread: ThreadRef | None) -> None:
    booked: list[str] = []

    @tool(requires_confirmation=True)
    def book(seat: str, ctx: ToolContext) -> str:
        """Book a seat."""
        booked.append(seat)
        ctx.kv.set("seat", seat)
        return "booked"

    @tool(requires_confirmation=True)
    def hold(note: str, ctx: ToolContext) -> str:
        """Hold."""
        return "held"

    @tool
    def take(seat: str, ctx: ToolContext) -> str:
        """Take a seat."""
        ctx.kv.set("seat", seat)
        return "taken"

    def asks(*calls: Any, name: str) -> ScriptedModel:
        def script(request: Any) -> Any:
            read = sum(1 for m in request.history if m.role == "tool")
            return calls[read] if read < len(calls) else f"{name} done"

        return ScriptedModel(script)

    a = Agent("a", tools=[hold], model=asks(call("hold", note="x"), name="a"))
    b = Agent("b", tools=[take], model=asks(call("take", seat="2B"), name="b"))
    c = Agent(
        "c",
        tools=[hold, book],
        model=asks(call("hold", note="y"), call("book", seat="1A"), name="c"),
    )
    network = Network(
        "n", agents=[a, b, c], router=lambda ctx: Parallel(a, b, c) if ctx.call_count == 0 else None
    )
    stopped = await network.run("go", thread=thread)
    again = await network.run(
        stopped.resume([i.accept() for i in stopped.interrupts]), thread=thread
    )
    assert [i.tool for i in again.interrupts] == ["book"]  # c asks again

    with pytest.raises(StateConflictError) as raised:  # b set the seat in this fan-out
        await network.run(again.resume([i.accept() for i in again.interrupts]), thread=thread)
    assert [w.branch for w in raised.value.writers] == ["a+b+c/b", "a+b+c/c"]
    assert booked == ["1A"]


@pytest.mark.parametrize("on_thread", [False, True])
async def test_a_call_held_in_a_network_branch_the_run_cannot_finish_stays_pending(
    on_thread: bool,
) -> None:
    """A call held in a network branch is finished by the run's own agent of its name: when
    the run's network has none, answering it is refused before the answer is claimed, so the
    same answer, given to a network that has the agent, still runs the call (once)."""
    ran: list[int] = []

    @tool(requires_confirmation=True)
    def refund(amount: int) -> str:
        """Refund an amount."""
        ran.append(amount)
        return f"refunded {amount}"

    payer = Agent(
        "payer", tools=[refund], model=_answers_after_tool("payer", call("refund", amount=5))
    )
    team = Network(
        "team", agents=[payer], router=lambda ctx: payer if ctx.call_count == 0 else None
    )
    solo = Agent("solo", model=ScriptedModel(lambda request: "solo done"))

    def router(ctx: Any) -> Any:
        return Parallel(team, solo, name="p") if ctx.call_count == 0 else None

    thread = ThreadRef("t", store=MemoryStore()) if on_thread else None
    stopped = await Network("n", agents=[solo], router=router).run("go", thread=thread)
    answers = [i.accept() for i in stopped.interrupts]
    with pytest.raises(ConfigurationError, match="'payer'.*stays pending"):
        await Network("n", agents=[solo], router=router).run(stopped.resume(answers), thread=thread)
    assert ran == []

    finishing = Network("n", agents=[solo, payer], router=router)
    done = await finishing.run(stopped.resume(answers), thread=thread)
    assert done.stop_reason == "router_finished" and ran == [5]
