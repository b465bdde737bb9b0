"""Offline networks for the dev UI tests: code generation on ScriptedModels, and a long run."""

from __future__ import annotations

import threading
from typing import Any

import anyio

from agents import Agent, ScriptedModel, call, tool
from network import Network, RunContext, Stop, merge_dicts
from tests.network.agui.networks import codegen_network as agui_codegen_network
from tests.network.agui.networks import codegen_route


def codegen_network(
    *, confirm: bool = False, gate: threading.Event | None = None, summary: str | None = None
) -> Network:
    """Planner, coder (write_files), reviewer (one rejection, then approval).

    `summary`: the router ends the run with `Stop("approved", summary)` instead of None.

    `confirm`: write_files waits for a person's confirmation. `gate`: write_files waits until
    the test sets it (so the page can be looked at while the coder's step is running).
    """

    @tool(
        outputs_to_state={"files": {"source": "files", "handler": merge_dicts}},
        requires_confirmation=confirm,
    )
    async def write_files(files: dict[str, str]) -> dict[str, Any]:
        """Write source files."""
        if gate is not None:
            await anyio.to_thread.run_sync(gate.wait, 30)
        return {"files": files, "written": sorted(files)}

    def route(ctx: RunContext) -> Any:
        chosen = codegen_route(ctx)
        return Stop("approved", summary) if chosen is None and summary else chosen

    return agui_codegen_network(chunk_size=4, write_tool=write_files, router=route)


network = codegen_network()  # what `agent-network dev tests/network/devui/networks.py` serves

BLOB_ENTRIES = 20_000
BLOB_ENTRY = "x" * 250  # 20,000 entries of ~270 bytes: a state of more than 5 MB


def long_network(steps: int, blob_at: int) -> Network:
    """One agent called `steps` times; its call number `blob_at` stores a 5 MB `blob`."""

    @tool(outputs_to_state={"blob": {}})
    def make_blob(entries: int) -> dict[str, str]:
        """Make a large value."""
        return {f"entry-{i:05d}": BLOB_ENTRY for i in range(entries)}

    def worker(request: Any) -> Any:
        if request.history and request.history[-1].role == "tool":
            return "stored"
        system = "".join(m.content for m in request.system)
        if f"call {blob_at}." in system:
            return call("make_blob", entries=BLOB_ENTRIES)
        return "step done"

    def route(ctx: RunContext) -> Any:
        if ctx.call_count >= steps:
            return None
        return ctx.network.agents["worker"]

    def instructions(ctx: RunContext) -> str:
        return f"You are call {ctx.call_count}."

    agent = Agent(
        "worker",
        system=instructions,
        tools=[make_blob],
        model=ScriptedModel(worker),
        output_key="note",
    )
    return Network(
        "long",
        agents=[agent],
        router=route,
        state_schema={"note": {"type": str}, "blob": {"type": dict[str, str]}},
        max_iter=steps + 1,
    )
