"""Haystack peer benchmark (haystack-ai; runs in benchmarks/.venv-peers).

One Agent, built once per model:
- state_schema {"items": list[str], "target": int}
- one Tool "append_item" with outputs_to_state={"items": {"source": "item"}} (the list handler
  appends), with both a sync function and an async_function so each mode runs it natively
- the code router: an "after_tool" hook that sets the Agent's `stop_run` state key once the
  item list holds `target` items, so every run makes exactly N model calls
- the model: a custom @component ChatGenerator (run / run_async) that answers every call with
  one append_item tool call (W1, W2), or OpenAIChatGenerator against the fake server (W3)
- --mode sync: Agent.run (W1, W3). --mode async: Agent.run_async (W1, W2, W3).

    benchmarks/.venv-peers/bin/python benchmarks/peers/haystack_bench.py --mode async [--quick]
"""

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no network here
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_common import (
    W2_LATENCY_S,
    emit,
    log,
    measure_steps,
    measure_w2,
    package_versions,
    parse_args,
    w2_child_main,
)
from fake_openai_server import FakeOpenAIServer
from haystack import component
from haystack.components.agents import Agent
from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.hooks import hook
from haystack.tools import Tool


def append_item(item: str) -> dict:
    return {"item": item}


async def append_item_async(item: str) -> dict:
    return {"item": item}


APPEND_TOOL = Tool(
    name="append_item",
    description="Append one item to the list in state.",
    parameters={
        "type": "object",
        "properties": {"item": {"type": "string"}},
        "required": ["item"],
    },
    function=append_item,
    async_function=append_item_async,
    outputs_to_state={"items": {"source": "item"}},
)


@hook
def stop_when_full(state: State) -> None:
    if len(state.get("items") or ()) >= state.get("target"):
        state.set("stop_run", "list full")


@component
class ScriptedChatGenerator:
    """Answers every call instantly (or after latency_s, async) with one append_item call."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s

    @staticmethod
    def _reply(messages: list[ChatMessage]) -> dict:
        k = len(messages)
        call = ToolCall(tool_name="append_item", arguments={"item": f"item-{k}"}, id=f"call_{k}")
        return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict:
        return self._reply(messages)

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any
    ) -> dict:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._reply(messages)


def build_agent(chat_generator: Any) -> Agent:
    agent = Agent(
        chat_generator=chat_generator,
        tools=[APPEND_TOOL],
        system_prompt="You append items to a list with the append_item tool.",
        state_schema={"items": {"type": list[str]}, "target": {"type": int}},
        max_agent_steps=100_000,
        hooks={"after_tool": [stop_when_full]},
    )
    agent.warm_up()
    return agent


def make_runner(chat_generator: Any, is_async: bool):
    agent = build_agent(chat_generator)
    if is_async:

        async def arun(n: int) -> int:
            msgs = [ChatMessage.from_user(f"Append {n} items.")]
            return len((await agent.run_async(messages=msgs, items=[], target=n))["items"])

        return arun

    def run(n: int) -> int:
        msgs = [ChatMessage.from_user(f"Append {n} items.")]
        return len(agent.run(messages=msgs, items=[], target=n)["items"])

    return run


def openai_generator(base_url: str) -> Any:
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    return OpenAIChatGenerator(
        api_key=Secret.from_token("x"), model="fake", api_base_url=base_url, max_retries=0
    )


def main() -> None:
    args = parse_args("Haystack peer benchmark.", modes=("async", "sync"))
    is_async = args.mode == "async"
    if args.w2_once:
        w2_child_main(
            make_runner(ScriptedChatGenerator(latency_s=W2_LATENCY_S), is_async=True), args
        )
        return
    metrics: dict = {}
    notes = [
        "Agent(state_schema, Tool with outputs_to_state, after_tool hook setting stop_run when "
        "the list is full); custom ChatGenerator for W1/W2, OpenAIChatGenerator for W3; "
        "telemetry off.",
    ]
    if "w1" in args.workloads:
        log(f"haystack ({args.mode}) W1")
        run = make_runner(ScriptedChatGenerator(), is_async)
        metrics.update(measure_steps("w1", run, args.w1_sizes, args, is_async))
    if "w2" in args.workloads:
        if is_async:
            log("haystack W2")
            script = str(Path(__file__).resolve())
            metrics.update(measure_w2(script, ["--mode", "async"], args))
        else:
            notes.append("W2 not run in sync mode (1000 concurrent runs need the async API).")
    if "w3" in args.workloads:
        log(f"haystack ({args.mode}) W3")
        server = None if args.base_url else FakeOpenAIServer().__enter__()
        try:
            run = make_runner(openai_generator(args.base_url or server.base_url), is_async)
            metrics.update(measure_steps("w3", run, args.w3_sizes, args, is_async))
        finally:
            if server:
                server.stop()
    versions = package_versions("haystack-ai", "openai")
    emit("Haystack", args.mode, versions, metrics, notes)


if __name__ == "__main__":
    main()
