"""`deps=`: one live object reachable from every piece of user code, and never stored anywhere."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import structlog

from agents import Agent, AgentCall, ScriptedModel, ToolContext, call, tool
from network import Network, RoutingError, TemplateError, ThreadRef
from network.run.context import RunContext

pytestmark = pytest.mark.anyio

MARKER = "SANDBOX-7f3c"  # in the repr, str and attributes of the deps object


class Sandbox:
    """A client holding a lock: deep-copying or pickling it fails."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.name = MARKER
        self.commands: list[str] = []

    def __repr__(self) -> str:
        return f"Sandbox({MARKER})"

    __str__ = __repr__


class Seen:
    def __init__(self) -> None:
        self.by: dict[str, Any] = {}


def sandbox_network(seen: Seen) -> Network[Sandbox]:
    @tool
    def run_command(command: str, ctx: ToolContext[Sandbox]) -> str:
        """Run a shell command in the sandbox."""
        seen.by["tool"] = ctx.deps
        ctx.deps.commands.append(command)
        ctx.kv.set("ran", command)
        return f"ran {command}"

    def instructions(ctx: RunContext[Sandbox]) -> str:
        seen.by["instructions"] = ctx.deps
        return "You drive a sandbox."

    def on_start(call_: AgentCall) -> None:
        seen.by["on_start"] = call_.deps

    def on_finish(call_: AgentCall) -> None:
        seen.by["on_finish"] = call_.deps

    agent = Agent(
        "coder",
        system=instructions,
        tools=[run_command],
        model=ScriptedModel([call("run_command", command="ls"), "done"]),
        hooks={"on_start": on_start, "on_finish": on_finish},
    )

    def route(ctx: RunContext[Sandbox]) -> Any:
        seen.by["router"] = ctx.deps
        return agent if ctx.call_count < 2 else None

    return Network("sandboxed", agents=[agent], router=route, deps_type=Sandbox)


async def test_deps_reach_tools_routers_hooks_and_instructions_as_the_same_object() -> None:
    seen = Seen()
    sandbox = Sandbox()
    result = await sandbox_network(seen).run("list files", deps=sandbox)
    assert set(seen.by) == {"tool", "instructions", "on_start", "on_finish", "router"}
    assert all(value is sandbox for value in seen.by.values())  # never copied
    assert sandbox.commands == ["ls"]
    assert result["ran"] == "ls"


async def test_run_sync_stream_and_agent_run_take_deps() -> None:
    seen = Seen()
    sandbox = Sandbox()
    network = sandbox_network(seen)
    async with network.stream("go", deps=sandbox) as events:
        async for _ in events:
            pass
    assert seen.by["tool"] is sandbox

    @tool
    def whoami(ctx: ToolContext[Sandbox]) -> str:
        """Name the sandbox."""
        return ctx.deps.name

    agent = Agent("solo", tools=[whoami], model=ScriptedModel([call("whoami"), "ok"]))
    result = await agent.run("who", deps=sandbox)
    assert result.results[0].tool_calls[0].content == MARKER


def test_run_sync_takes_deps() -> None:
    seen = Seen()
    sandbox = Sandbox()
    sandbox_network(seen).run_sync("go", deps=sandbox)
    assert seen.by["router"] is sandbox


async def test_deps_are_not_in_state_json_nor_in_any_event() -> None:
    seen = Seen()
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    result = await sandbox_network(seen).run("go", deps=Sandbox(), sinks=[sink])
    assert MARKER not in result.state.to_json()
    assert events
    for event in events:
        assert MARKER not in event.model_dump_json()


async def test_deps_are_not_in_the_thread_store(tmp_path: Path) -> None:
    seen = Seen()
    path = tmp_path / "threads.db"
    network = sandbox_network(seen)
    await network.run("go", deps=Sandbox(), thread=ThreadRef("t1", store=str(path)))
    assert path.read_bytes()  # the thread was written
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            for row in db.execute(f'select * from "{table}"'):
                assert MARKER not in json.dumps(row, default=str)
    # the thread's next run gets its own deps, not the first run's
    other = Sandbox()
    other.name = "other"
    await sandbox_network(seen).run("again", deps=other, thread=ThreadRef("t1", store=str(path)))
    assert seen.by["tool"] is other


async def test_a_template_never_fills_a_placeholder_from_deps() -> None:
    agent = Agent("a", system="Sandbox: {deps?}.", model=ScriptedModel(["ok"]))
    result = await agent.run("go", deps=Sandbox())
    assert result.results[0].prompt[0].content == "Sandbox: ."
    strict = Agent("b", system="Sandbox: {deps}.", model=ScriptedModel(["ok"]))
    with pytest.raises(TemplateError, match="no key 'deps'"):
        await strict.run("go", deps=Sandbox())


async def test_deps_are_not_in_log_lines() -> None:
    out = io.StringIO()
    structlog.configure(
        processors=[structlog.processors.KeyValueRenderer()],
        logger_factory=structlog.PrintLoggerFactory(out),
        wrapper_class=structlog.make_filtering_bound_logger(10),
    )
    try:
        await sandbox_network(Seen()).run("go", deps=Sandbox())
    finally:
        structlog.reset_defaults()
    assert "run.started" in out.getvalue()  # logging was on
    assert MARKER not in out.getvalue()


async def test_a_resumed_run_takes_its_deps_again() -> None:
    from tests.network.agui.networks import recipe_network

    calls: list[str] = []
    network = recipe_network(confirm=True, calls=calls)
    first = await network.run("pancakes", state={"servings": 2}, deps=Sandbox())
    fresh = Sandbox()
    seen: list[Any] = []
    network.router = _spy(network.router, seen)
    await network.run(first.resume([first.interrupts[0].accept()]), deps=fresh)
    assert seen and all(value is fresh for value in seen)


def _spy(router: Any, seen: list[Any]) -> Any:
    def route(ctx: RunContext[Any]) -> Any:
        seen.append(ctx.deps)
        return router(ctx)

    return route


async def test_a_context_shown_as_text_does_not_show_its_deps() -> None:
    # "never logged": a router that returned its context by mistake put the whole context's
    # repr, deps (a key) and all, in the RoutingError, which a server passes to its client
    secret = {"api_key": "sk-SECRET-0123456789"}
    agent = Agent("a", model=ScriptedModel(["x"]))
    network = Network("n", agents=[agent], router=lambda ctx: [ctx])
    with pytest.raises(RoutingError) as caught:
        await network.run("go", deps=secret)
    assert "sk-SECRET" not in str(caught.value)
    seen: list[str] = []

    def route(ctx: RunContext) -> Any:
        seen.append(repr(ctx))
        return None

    await Network("m", agents=[agent], router=route).run("go", deps=secret)
    assert seen and "sk-SECRET" not in seen[0]
