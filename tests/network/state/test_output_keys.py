"""An agent's typed answer (`output_type`) in an `output_key` the schema does not declare: the
network declares the key as that type, so the key holds the typed object, also on the next
turn of a thread read back from SQLite; a conflicting declaration is a ConfigurationError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agents import ScriptedModel
from network import ConfigurationError, Network, RunContext, State, StateSchema, Stop, ThreadRef
from tests.agents.capabilities.output.ticket import TICKET, Ticket, agent

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


def triage(key: str = "ticket", output_type: Any = Ticket, name: str = "triage") -> Any:
    answer = json.dumps(TICKET if output_type is Ticket else {"response": [TICKET]})
    built = agent(ScriptedModel(lambda request: answer), output_type=output_type, output_key=key)
    built.name = name
    return built


async def test_an_undeclared_output_key_holds_the_typed_object_in_the_run() -> None:
    seen: list[Any] = []
    filer = triage()

    def route(ctx: RunContext) -> Any:
        if ctx.last_result is None:
            return filer
        seen.append(ctx.kv.get("ticket"))
        return None

    network = Network("n", agents=[filer], router=route)
    result = await network.run("login is broken")
    assert seen == [Ticket(**TICKET)] and isinstance(seen[0], Ticket)
    assert isinstance(result["ticket"], Ticket)
    assert network.schema.spec("ticket") is not None
    assert network.schema.spec("ticket").type is Ticket  # type: ignore[union-attr]


async def test_the_next_turn_of_a_sqlite_thread_reads_the_typed_object_back(
    tmp_path: Any,
) -> None:
    filer = triage()
    read_back: list[Any] = []

    def route(ctx: RunContext) -> Any:
        ticket = ctx.kv.get("ticket")
        if ctx.last_result is None and ticket is None:
            return filer  # first turn: nothing filed yet
        if ctx.last_result is None:  # a later turn: what the thread kept, before any call
            read_back.append(ticket)
            return Stop("already_filed", f"ticket {ticket.title!r} priority {ticket.priority}")
        return None

    store = str(tmp_path / "threads.db")
    network = Network("n", agents=[filer], router=route)
    first = await network.run("login is broken", thread=ThreadRef("t1", store=store))
    assert first.stop_reason == "router_finished"
    # a new network object, as a new process would build it
    later = Network("n", agents=[triage()], router=route)
    second = await later.run("and again?", thread=ThreadRef("t1", store=store))
    assert read_back == [Ticket(**TICKET)] and isinstance(read_back[0], Ticket)
    assert second.stop_reason == "already_filed"
    assert second.summary == "ticket 'Login fails' priority 2"
    assert isinstance(second["ticket"], Ticket)


async def test_a_list_output_type_replaces_the_key_on_every_answer(tmp_path: Any) -> None:
    filer = triage("tickets", list[Ticket])
    network = Network("n", agents=[filer])
    store = str(tmp_path / "threads.db")
    await network.run("one", thread=ThreadRef("t1", store=store))
    second = await network.run("two", thread=ThreadRef("t1", store=store))
    assert second["tickets"] == [Ticket(**TICKET)]  # the latest answer, not both appended


async def test_a_key_declared_as_the_type_or_optional_or_any_is_accepted() -> None:
    class Optional(BaseModel):
        ticket: Ticket | None = None

    optional = Network("n", agents=[triage()], state_schema=Optional)
    assert isinstance((await optional.run("x"))["ticket"], Ticket)
    exact = Network("n", agents=[triage()], state_schema={"ticket": {"type": Ticket}})
    assert isinstance((await exact.run("x"))["ticket"], Ticket)
    untyped = Network("n", agents=[triage()], state_schema={"ticket": {"type": Any}})
    assert (await untyped.run("x"))["ticket"] == TICKET  # declared untyped: its JSON form


def test_a_conflicting_declared_type_names_the_key_and_both_types() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Network("n", agents=[triage()], state_schema={"ticket": {"type": dict[str, str]}})
    message = str(caught.value)
    assert "'ticket'" in message and "'triage'" in message
    assert "dict[str, str]" in message
    assert "tests.agents.capabilities.output.ticket:Ticket" in message


def test_two_agents_storing_different_types_in_one_key_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Network(
            "n",
            agents=[triage(), triage("ticket", list[Ticket], name="bulk")],
            router=lambda ctx: None,
        )
    message = str(caught.value)
    assert "'ticket'" in message and "'triage'" in message and "'bulk'" in message
    assert "list[tests.agents.capabilities.output.ticket:Ticket]" in message


@pytest.mark.parametrize("text_first", [False, True])
def test_a_typed_and_a_text_answer_in_one_key_is_a_configuration_error(text_first: bool) -> None:
    # before, the network was built and the text answer's write failed mid-run, after the
    # model had been paid for (StateValidationError: the key was declared as the typed answer's)
    from agents import Agent

    writer = Agent("writer", model=ScriptedModel(["a note"]), output_key="ticket")
    agents = [writer, triage()] if text_first else [triage(), writer]
    with pytest.raises(ConfigurationError) as caught:
        Network("n", agents=agents, router=lambda ctx: None)
    message = str(caught.value)
    assert "'ticket'" in message and "'triage'" in message and "'writer'" in message
    assert "tests.agents.capabilities.output.ticket:Ticket and text" in message
    declared = Network(  # declared to hold both: the application's choice
        "n", agents=agents, router=lambda ctx: None, state_schema={"ticket": {"type": Ticket | str}}
    )
    assert declared.name == "n"


def test_a_closed_schema_must_declare_the_key() -> None:
    closed = StateSchema({"other": {"type": int}}, closed=True)
    with pytest.raises(ConfigurationError, match=r"'ticket'.*closed.*declare it as"):
        Network("n", agents=[triage()], state_schema=closed)


def test_a_closed_schema_must_declare_a_text_output_key_too() -> None:
    """ADK's `output_key` on a closed schema (docs/coming-from-haystack.md): a typed answer's
    undeclared key was refused when the network was built, a text answer's only when the run
    stored it, after the model had been paid for; now both when the network is built."""
    from agents import Agent

    closed = StateSchema({"other": {"type": int}}, closed=True)
    writer = Agent("writer", model=ScriptedModel(["a draft"]), output_key="draft")
    with pytest.raises(ConfigurationError, match=r"'writer'.*'draft'.*closed.*declare it"):
        Network("n", agents=[writer], state_schema=closed)
    assert writer.model.requests == []  # type: ignore[union-attr]
    declared = StateSchema({"draft": {"type": str}}, closed=True)
    result = Network("n", agents=[writer], state_schema=declared).run_sync("write")
    assert result["draft"] == "a draft"


def test_the_applications_schema_object_is_left_as_it_was() -> None:
    shared = StateSchema({"other": {"type": int}})
    Network("n", agents=[triage()], state_schema=shared)
    assert "ticket" not in shared
    assert shared.keys == ["other"]


class Plain(BaseModel):
    other: int = 0


async def test_a_models_schema_keeps_the_declared_key_through_state_json() -> None:
    result = await Network("n", agents=[triage()], state_schema=Plain).run("x")
    state = State.from_json(result.state.to_json())
    assert state.schema.model is Plain
    assert isinstance(state.kv.get("ticket"), Ticket)
