"""A process that dies holding a shared budget's reservation: `python -m
tests.network.threads.budget_hold_child URL KEY HOLD_SECONDS HANG` runs one run against
`SharedBudget(KEY, hold_seconds=HOLD_SECONDS)` (no caps) on the database URL; its model,
once its request is reserved, creates the file HANG and hangs, for the test to kill the
process (-9) with the reservation held."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from agents import Agent
from agents.models.base import ModelRequest, ModelResponse
from network import Network, SharedBudget


class Hang:
    """Says it is under way (the file), then never answers."""

    name = "hang"

    def __init__(self, hang: Path) -> None:
        self.hang = hang

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        self.hang.touch()
        await anyio.sleep(600)  # killed here, its reservation held
        raise AssertionError("never killed")


async def main(url: str, key: str, hold_seconds: float, hang: Path) -> None:
    agent = Agent("worker", model=Hang(hang), params={"max_tokens": 100})
    budget = SharedBudget(key, store=url, hold_seconds=hold_seconds)
    await Network("metered", agents=[agent], budget=budget).run("Hello")


if __name__ == "__main__":
    url, key, hold_seconds, hang = sys.argv[1:5]
    anyio.run(main, url, key, float(hold_seconds), Path(hang))
