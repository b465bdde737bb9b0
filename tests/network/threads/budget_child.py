"""A child process of the shared-budget test: `python -m tests.network.threads.budget_child
URL KEY CAP RUNS LOG` runs RUNS runs at once against `SharedBudget(KEY, max_tokens=CAP)` on
the database URL, and prints how many finished and how many a refusal stopped.

Each run's agent asks its model six times (five tool calls, then an answer). The model takes
20 ms a request, so many requests are under way at once, and each spends exactly 100
tokens; every answered request appends one line to LOG (opened for appending: the lines of
all processes land whole). A process starts its runs when the file `LOG.go` appears, after
it wrote `LOG.ready.<pid>`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from agents import Agent, tool
from agents.models.base import ModelRequest, ModelResponse
from network import BudgetExceeded, Network, SharedBudget
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage

STEPS = 5


class Slow:
    """Five tool calls, then an answer; 100 tokens and 20 ms a request."""

    name = "slow"

    def __init__(self, log: str) -> None:
        self.log = log

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        await anyio.sleep(0.02)
        with open(self.log, "a") as out:  # one short line, appended whole
            out.write(f"{os.getpid()}\n")
        done = sum(1 for message in request.history if message.role == "tool")
        message = (
            AssistantMessage("done")
            if done >= STEPS
            else AssistantMessage(None, [ToolCall(f"call_{done}", "step", {})])
        )
        return ModelResponse(message=message, usage=Usage(0, 100, 100))


@tool
def step() -> str:
    """Take a step."""
    return "stepped"


async def main(url: str, key: str, cap: int, runs: int, log: str) -> dict[str, int]:
    agent = Agent("worker", tools=[step], model=Slow(log), params={"max_tokens": 100})
    network = Network(
        "budgeted",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )
    budget = SharedBudget(key, max_tokens=cap, store=url)
    counts = {"finished": 0, "refused": 0}
    # every process starts its runs at once: ready, then wait for the test's go
    Path(f"{log}.ready.{os.getpid()}").touch()
    while not Path(f"{log}.go").exists():
        await anyio.sleep(0.01)

    async def one() -> None:
        try:
            await network.run("go", budget=budget)
            counts["finished"] += 1
        except BudgetExceeded:
            counts["refused"] += 1

    async with anyio.create_task_group() as group:
        for _ in range(runs):
            group.start_soon(one)
    return counts


if __name__ == "__main__":
    url, key, cap, runs, log = sys.argv[1:6]
    print(json.dumps(anyio.run(main, url, key, int(cap), int(runs), log)))
