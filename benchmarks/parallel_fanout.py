"""Benchmark (not a test): a fan-out of 10 agents whose model calls each take 10 ms.

Issue 21's target: the fan-out finishes in at most 1.2 times one call's time plus the join.
Reported: the wall time of one run (router -> `Parallel` of 10 branches -> join -> stop), the
ratio to one 10 ms call, and the per-branch overhead beside W1's per-step figure: the same
run with instant model calls (fork + join cost per branch) against 10 sequential calls.
Each branch writes one item to a `list[str]` key, so the join merges ten writes.

Run: `python benchmarks/parallel_fanout.py` (median of 15 repeats after a warmup).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import anyio

from agents import Agent, ScriptedModel, ToolContext, tool
from network import Network, Parallel
from network.history.messages import ToolCall

BRANCHES = 10
REPEATS = 15


@tool
def note(ctx: ToolContext) -> str:
    """Note one finding."""
    ctx.kv.set("found", [ctx.agent.name])
    return "ok"


def agent(name: str, delay: float) -> Agent:
    async def script(request: Any) -> Any:
        if delay:
            await anyio.sleep(delay)
        return ToolCall(f"{name}-call", "note", {})

    return Agent(name, tools=[note], model=ScriptedModel(script))


def network(delay: float, parallel: bool) -> Network:
    agents = [agent(f"a{i}", delay) for i in range(BRANCHES)]

    def router(ctx: Any) -> Any:
        if ctx.call_count:
            return None
        return Parallel(*agents) if parallel else list(agents)

    return Network(
        "bench", agents=agents, router=router, state_schema={"found": {"type": list[str]}}
    )


async def timed(delay: float, parallel: bool) -> float:
    net = network(delay, parallel)
    await net.run("go")  # warmup
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = await net.run("go")
        times.append(time.perf_counter() - started)
        assert len(result["found"]) == BRANCHES
    return statistics.median(times)


async def main() -> None:
    one_call = 0.010
    fan_out = await timed(one_call, parallel=True)
    instant_parallel = await timed(0.0, parallel=True)
    instant_sequential = await timed(0.0, parallel=False)
    print(f"fan-out of {BRANCHES} x 10 ms calls: {fan_out * 1000:.2f} ms wall")
    print(f"  ratio to one 10 ms call: {fan_out / one_call:.2f} (target <= 1.2 + join)")
    print(
        f"  instant calls, fan-out:  {instant_parallel * 1e6 / BRANCHES:.0f} us per branch "
        f"(fork, branch call, join)"
    )
    print(
        f"  instant calls, in turn:  {instant_sequential * 1e6 / BRANCHES:.0f} us per call "
        "(the W1 kind of step)"
    )
    print(
        f"  per-branch overhead:     "
        f"{(instant_parallel - instant_sequential) * 1e6 / BRANCHES:.0f} us"
    )


if __name__ == "__main__":
    anyio.run(main)
