"""A network routed by `sequence`, run durably in child processes and killed mid-run.

`sequence(first, Parallel(left, right, max_concurrency=1), last)`: `sequence` keeps no place
of its own, it reads it from the run's calls (`ctx.call_count` and the history), so a resumed
run must go on where it was from the calls its replay restored. The fan-out runs one branch at
a time (declared order) so that the side effects come in one order on every attempt.

Every router decision and model call appends one line to the file named by `AN_DURABLE_LOG`
(`crash_network.effect`, which also blocks the chosen call so the test can kill the process).
"""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel
from network import Network, Parallel, RunContext
from routers import sequence
from tests.network.durable.crash_network import effect

SEQUENCE = [
    "router",
    "model:first",
    "router",
    "model:left",
    "model:right",
    "router",
    "model:last",
    "router",
]
"""The side effects of one run, in order (each line ends with the run's input)."""


def answer(request: Any) -> str:
    effect(f"model:{request.agent}", request.history[0].content)
    return f"{request.agent} done"


def _agent(name: str) -> Agent:
    return Agent(name, description=f"the {name}", system="Work.", model=ScriptedModel(answer))


first, left, right, last = (_agent(n) for n in ("first", "left", "right", "last"))
steps = sequence(first, Parallel(left, right, max_concurrency=1, name="pair"), last)


def route(ctx: RunContext) -> Any:
    effect("router", ctx.input)
    return steps(ctx)


team = Network("chain", agents=[first, left, right, last], router=route)
