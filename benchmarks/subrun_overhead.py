"""Micro-benchmark: what a sub-run costs (an agent used as a tool, `agent.as_tool`).

A supervisor calls one tool and then answers, on `ScriptedModel`s. The tool is either a plain
async function answering at once, or an agent (one inference, answering at once) as a tool:
the difference is what a sub-run adds (its own network, context, state and run loop, its
budget and events). Run: `python benchmarks/subrun_overhead.py` (median of 7 repeats of
2,000 runs each; microseconds per supervisor run).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import anyio

from agents import Agent, ScriptedModel, call, tool
from network import Network


def supervisor(delegate: Any) -> Network:
    def script(request: Any) -> Any:
        return "done" if request.history[-1].role == "tool" else call("delegate", input="x")

    boss = Agent("boss", tools=[delegate], model=ScriptedModel(script))
    return Network(
        "desk",
        agents=[boss],
        router=lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


async def answer(input: str) -> str:
    """Answer at once."""
    return "answer"


def networks() -> dict[str, Network]:
    inner = Agent("delegate", description="Answers.", model=ScriptedModel(lambda r: "answer"))
    return {
        "plain async tool": supervisor(tool(answer, name="delegate")),
        "agent.as_tool (a sub-run)": supervisor(inner.as_tool()),
    }


async def per_run(network: Network, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        await network.run("go")
    return (time.perf_counter() - started) / count * 1e6


async def main(count: int = 2_000, repeats: int = 7) -> dict[str, float]:
    results: dict[str, float] = {}
    for label, network in networks().items():
        await per_run(network, 100)  # warm up
        results[label] = statistics.median([await per_run(network, count) for _ in range(repeats)])
    return results


if __name__ == "__main__":
    figures = anyio.run(main)
    for label, micros in figures.items():
        print(f"{label:32} {micros:8.1f} us per supervisor run")
    plain, subrun = figures.values()
    print(f"{'a sub-run adds':32} {subrun - plain:8.1f} us")
