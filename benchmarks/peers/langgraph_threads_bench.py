"""LangGraph on long threads, for benchmarks/long_threads.py (runs in benchmarks/.venv-peers).

The same shape as ours: one run = a user message, a "model" node answering with one tool call
(a plain function: no chat model in the way, which only favours LangGraph), the prebuilt
ToolNode running the tool, END; the thread is kept by a checkpointer. A thread of L earlier
calls (3 x L messages) is written first with one `aupdate_state`; then runs are timed one by
one and the medians per run are printed (wall and CPU time), in milliseconds, per checkpointer
and length.

    benchmarks/.venv-peers/bin/python benchmarks/peers/langgraph_threads_bench.py \
        --postgres-url postgresql://... --lengths 10,1000,10000 --runs 30
"""

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@tool
def lookup(n: int) -> str:
    """Look a number up."""
    return f"found {n}"


def model(state: State) -> dict[str, Any]:
    call = {"name": "lookup", "args": {"n": 1}, "id": f"call_{uuid.uuid4().hex[:12]}"}
    return {"messages": [AIMessage("", tool_calls=[call], name="a")]}


def build(checkpointer: Any) -> Any:
    graph = StateGraph(State)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([lookup]))
    graph.add_edge(START, "model")
    graph.add_edge("model", "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=checkpointer)


def earlier_calls(count: int) -> list[Any]:
    messages: list[Any] = []
    for n in range(count):
        call_id = f"call_{n}"
        messages.append(HumanMessage(f"question {n}", id=f"h{n}"))
        call = {"name": "lookup", "args": {"n": n}, "id": call_id}
        messages.append(AIMessage("", tool_calls=[call], name="a", id=f"a{n}"))
        messages.append(ToolMessage("ok", tool_call_id=call_id, name="lookup", id=f"t{n}"))
    return messages


async def per_run(graph: Any, lengths: list[int], runs: int, tag: str) -> dict[str, Any]:
    """Median wall time and median CPU time (this process, all its threads) per run, in ms."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for length in lengths:
        config = {"configurable": {"thread_id": f"{tag}-{length}-{uuid.uuid4().hex[:6]}"}}
        await graph.aupdate_state(config, {"messages": earlier_calls(length)})
        await graph.ainvoke({"messages": [HumanMessage("warm up")]}, config)
        walls, cpus = [], []
        for n in range(runs):
            started, used = time.perf_counter(), time.process_time()
            await graph.ainvoke({"messages": [HumanMessage(f"message {n}")]}, config)
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - used) * 1000)
        wall[str(length)] = statistics.median(walls)
        cpu[str(length)] = statistics.median(cpus)
    return {"wall": wall, "cpu": cpu}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres-url", required=True)
    parser.add_argument("--lengths", default="10,1000,10000")
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    lengths = [int(n) for n in options.lengths.split(",")]
    figures: dict[str, Any] = {}
    figures["memory (InMemorySaver)"] = await per_run(
        build(InMemorySaver()), lengths, options.runs, "mem"
    )
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    with tempfile.TemporaryDirectory() as tmp:
        async with AsyncSqliteSaver.from_conn_string(f"{tmp}/lg.db") as saver:
            figures["sqlite (AsyncSqliteSaver)"] = await per_run(
                build(saver), lengths, options.runs, "sqlite"
            )
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(options.postgres_url) as saver:
        await saver.setup()
        figures["postgres (AsyncPostgresSaver)"] = await per_run(
            build(saver), lengths, options.runs, "pg"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
