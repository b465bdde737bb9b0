"""`resources=`: async context managers opened on first use in a run, closed at its end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, StopReason, ThreadRef
from network.run.context import RunContext

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


class Journal:
    """Records what every resource did, in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def factory(self, name: str) -> Callable[[], Any]:
        @asynccontextmanager
        async def open_it() -> AsyncIterator[dict[str, Any]]:
            self.count += 1
            handle = {"name": name, "n": self.count, "open": True}
            self.lines.append(f"open {name}#{handle['n']}")
            try:
                yield handle
            except BaseException as error:
                self.lines.append(f"close {name}#{handle['n']} after {type(error).__name__}")
                raise
            finally:
                handle["open"] = False
            self.lines.append(f"close {name}#{handle['n']}")

        return open_it


@tool
async def use(names: list[str], ctx: ToolContext) -> str:
    """Use resources, in the order given."""
    got = [await ctx.resource(name) for name in names]
    assert all(handle["open"] for handle in got)
    return ",".join(f"{h['name']}#{h['n']}" for h in got)


def network_of(journal: Journal, *answers: Any, **resources: Any) -> Network:
    agent = Agent("worker", tools=[use], model=ScriptedModel(list(answers)))
    factories = {name: journal.factory(name) for name in ("db", "sandbox", "unused")}
    factories.update(resources)
    return Network("resourced", agents=[agent], resources=factories)


async def test_opened_on_first_use_shared_in_the_run_closed_in_reverse_order() -> None:
    journal = Journal()
    network = network_of(journal, [call("use", names=["db", "sandbox"]), call("use", names=["db"])])
    result = await network.run("go")
    outputs = [record.content for record in result.results[0].tool_calls]
    assert outputs == ["db#1,sandbox#2", "db#1"]  # one db for the whole run
    assert journal.lines == ["open db#1", "open sandbox#2", "close sandbox#2", "close db#1"]


async def test_concurrent_first_uses_open_it_once() -> None:
    journal = Journal()
    calls = [call("use", names=["db"]) for _ in range(5)]
    await network_of(journal, calls).run("go")
    assert journal.lines == ["open db#1", "close db#1"]


async def test_closed_in_reverse_order_when_the_run_fails() -> None:
    journal = Journal()

    async def route(ctx: RunContext) -> Any:
        await ctx.resource("sandbox")
        await ctx.resource("db")
        raise RuntimeError("router broke")

    agent = Agent("worker", model=ScriptedModel(["hi"]))
    network = Network(
        "failing",
        agents=[agent],
        router=route,
        resources={n: journal.factory(n) for n in ("db", "sandbox")},
    )
    with pytest.raises(RuntimeError, match="router broke"):
        await network.run("go")
    assert journal.lines == [
        "open sandbox#1",
        "open db#2",
        "close db#2 after RuntimeError",
        "close sandbox#1 after RuntimeError",
    ]


async def test_closed_in_reverse_order_when_the_run_is_cancelled() -> None:
    journal = Journal()
    opened = anyio.Event()

    @tool
    async def hang(ctx: ToolContext) -> str:
        """Open two resources, then wait forever."""
        await ctx.resource("db")
        await ctx.resource("sandbox")
        opened.set()
        await anyio.sleep_forever()
        return "never"

    agent = Agent("worker", tools=[hang], model=ScriptedModel([call("hang")]))
    network = Network(
        "hanging", agents=[agent], resources={n: journal.factory(n) for n in ("db", "sandbox")}
    )
    async with anyio.create_task_group() as group:
        group.start_soon(network.run, "go")
        await opened.wait()
        group.cancel_scope.cancel()
    cancelled = anyio.get_cancelled_exc_class().__name__
    assert journal.lines == [
        "open db#1",
        "open sandbox#2",
        f"close sandbox#2 after {cancelled}",
        f"close db#1 after {cancelled}",
    ]


async def test_per_run_resources_add_to_and_override_the_networks() -> None:
    journal = Journal()
    network = network_of(journal, [call("use", names=["db", "cache"])])

    @asynccontextmanager
    async def run_db() -> AsyncIterator[dict[str, Any]]:
        journal.lines.append("open run-db")
        yield {"name": "run-db", "n": 0, "open": True}
        journal.lines.append("close run-db")

    result = await network.run("go", resources={"db": run_db, "cache": journal.factory("cache")})
    assert result.results[0].tool_calls[0].content == "run-db#0,cache#1"
    assert journal.lines == ["open run-db", "open cache#1", "close cache#1", "close run-db"]


async def test_an_unknown_resource_is_an_error_naming_it() -> None:
    journal = Journal()

    async def route(ctx: RunContext) -> Any:
        await ctx.resource("sandbx")

    agent = Agent("a", model=ScriptedModel([]))
    network = Network(
        "typo", agents=[agent], router=route, resources={"sandbox": journal.factory("s")}
    )
    with pytest.raises(ConfigurationError, match=r"'sandbx' \(resources: sandbox\)"):
        await network.run("go")


def test_a_value_instead_of_a_factory_is_refused_at_definition() -> None:
    agent = Agent("a", model=ScriptedModel([]))
    with pytest.raises(ConfigurationError, match="resource 'db' must be a factory"):
        Network("n", agents=[agent], resources={"db": 42})
    opened = Journal().factory("db")()
    with pytest.raises(ConfigurationError, match="resource 'db' is an opened context manager"):
        Network("n", agents=[agent], resources={"db": opened})


def test_an_async_def_or_an_undecorated_async_generator_is_refused_at_definition() -> None:
    """`async def open_db(): return Db()` and an `async def` that yields without
    `@asynccontextmanager` were taken; every use in every run was then a tool error ("its
    factory returned coroutine"), with a never-awaited coroutine warned about."""
    agent = Agent("a", model=ScriptedModel([]))

    async def open_db() -> dict[str, Any]:
        return {}

    async def open_shell() -> AsyncIterator[dict[str, Any]]:
        yield {}

    with pytest.raises(ConfigurationError, match="resource 'db' is an async def returning"):
        Network("n", agents=[agent], resources={"db": open_db})
    with pytest.raises(ConfigurationError, match="'shell' is an async generator function"):
        Network("n", agents=[agent], resources={"shell": open_shell})
    with pytest.raises(ConfigurationError, match=r"run: resource 'db' is an async def"):
        Network("n", agents=[agent]).run_sync("x", resources={"db": open_db})
    assert Network("n", agents=[agent], resources={"shell": asynccontextmanager(open_shell)})


async def test_a_class_with_aenter_and_aexit_is_a_factory() -> None:
    # docs/deps.md: a factory is "an `@asynccontextmanager` function or a class with
    # `__aenter__` / `__aexit__`"; the class was refused as "an opened context manager"
    journal = Journal()

    class Connection:
        async def __aenter__(self) -> dict[str, Any]:
            journal.lines.append("open conn")
            return {"name": "conn", "n": 1, "open": True}

        async def __aexit__(self, *exc_info: object) -> None:
            journal.lines.append("close conn")

    network = network_of(journal, [call("use", names=["conn"])], "done", conn=Connection)
    result = await network.run("go")
    assert result.results[0].tool_calls[0].content == "conn#1"
    assert journal.lines == ["open conn", "close conn"]


def test_an_empty_resource_name_is_refused_saying_so() -> None:
    agent = Agent("a", model=ScriptedModel([]))
    with pytest.raises(ConfigurationError, match="resource names must be non-empty strings"):
        Network("n", agents=[agent], resources={"": Journal().factory("x")})


async def test_a_factory_that_returns_no_context_manager_is_named() -> None:
    network = network_of(Journal(), [call("use", names=["db"])], "done", db=lambda: 42)
    result = await network.run("go")
    assert "resource 'db'" in result.results[0].tool_calls[0].content  # told to the model


async def test_a_thread_next_run_rebuilds_them(tmp_path: Path) -> None:
    journal = Journal()
    store = str(tmp_path / "threads.db")
    for _ in range(2):
        network = network_of(journal, [call("use", names=["db"])])
        await network.run("go", thread=ThreadRef("t", store=store))
    assert journal.lines == ["open db#1", "close db#1", "open db#2", "close db#2"]


async def test_a_confirmation_resume_rebuilds_them() -> None:
    journal = Journal()

    @tool(requires_confirmation=True)
    async def deploy(ctx: ToolContext) -> str:
        """Deploy through the sandbox."""
        handle = await ctx.resource("sandbox")
        return f"deployed with sandbox#{handle['n']}"

    agent = Agent(
        "ops",
        tools=[deploy, use],
        model=ScriptedModel([[call("use", names=["sandbox"]), call("deploy")], "deployed"]),
    )

    def route(ctx: RunContext) -> Any:
        return agent if ctx.call_count == 0 or ctx.last_result.tool_calls else None

    network = Network(
        "ops", agents=[agent], router=route, resources={"sandbox": journal.factory("sandbox")}
    )
    first = await network.run("deploy it")
    assert first.stop_reason == StopReason.INTERRUPTED
    assert journal.lines == ["open sandbox#1", "close sandbox#1"]
    resumed = await network.run(first.resume([first.interrupts[0].accept()]))
    deployed = [r.content for res in resumed.results for r in res.tool_calls if r.name == "deploy"]
    assert deployed == ["deployed with sandbox#2"]
    assert journal.lines[2:] == ["open sandbox#2", "close sandbox#2"]


async def test_a_resource_asked_for_after_its_run_ended_is_refused() -> None:
    journal = Journal()
    kept: list[RunContext] = []

    def route(ctx: RunContext) -> Any:
        kept.append(ctx)

    network = Network(
        "late",
        agents=[Agent("a", model=ScriptedModel([]))],
        router=route,
        resources={"db": journal.factory("db")},
    )
    await network.run("go")
    with pytest.raises(ConfigurationError, match="resource 'db' asked for after its run ended"):
        await kept[0].resource("db")
    assert journal.lines == []  # never opened


class Owner:
    """A library object that owns a run resource (as an MCP server owns its connection)."""


async def test_an_owned_resource_is_opened_once_per_owner_and_closed_with_the_run() -> None:
    from network.run.resources import Resources

    journal = Journal()
    resources = Resources()
    owner = Owner()
    first = await resources.open_owned(owner, journal.factory("conn"))
    assert await resources.open_owned(owner, journal.factory("conn")) is first
    assert journal.count == 1
    await resources.aclose()
    assert journal.lines[-1] == "close conn#1"
    with pytest.raises(ConfigurationError, match="after its run ended"):
        await resources.open_owned(owner, journal.factory("conn"))


async def test_an_owned_resource_first_needed_in_another_task_is_refused() -> None:
    from network.run.resources import Resources

    journal = Journal()
    resources = Resources()
    failures: list[BaseException] = []

    async def in_a_branch() -> None:
        try:
            await resources.open_owned(Owner(), journal.factory("conn"))
        except ConfigurationError as exc:
            failures.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(in_a_branch)
    assert len(failures) == 1 and "outside the run's own task" in str(failures[0])
    assert journal.count == 0
