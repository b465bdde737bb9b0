"""OpenAI Agents SDK peer benchmark (openai-agents; runs in benchmarks/.venv-peers).

One Agent, built once per model, run with Runner.run (async):
- state: a dataclass passed as the run context (items, target); the function_tool appends to
  ctx.context.items
- the code router: tool_use_behavior, a function that ends the run (final output) once the list
  holds `target` items, so every run makes exactly N model calls
- the model: a custom Model implementation whose get_response returns one function call
  (W1, W2), or OpenAIChatCompletionsModel with an AsyncOpenAI client against the fake server
  (W3; the server speaks the Chat Completions API only)
- tracing disabled (RunConfig(tracing_disabled=True)): its default exporter would send spans to
  OpenAI, and this machine has no network

    benchmarks/.venv-peers/bin/python benchmarks/peers/openai_agents_bench.py [--quick]
"""

import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from openai.types.responses import ResponseFunctionToolCall

# `agents` is the openai-agents package: this script runs in the peers venv, where
# agent-network's own top-level `agents` package is not installed nor on sys.path.
from agents import (
    Agent,
    FunctionToolResult,
    Model,
    ModelResponse,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolsToFinalOutputResult,
    Usage,
    function_tool,
)


@dataclass
class ListState:
    target: int
    items: list[str] = field(default_factory=list)


@function_tool
def append_item(ctx: RunContextWrapper[ListState], item: str) -> str:
    """Append one item to the list in state.

    Args:
        item: The item to append.
    """
    ctx.context.items.append(item)
    return "ok"


def stop_when_full(
    ctx: RunContextWrapper[ListState], results: list[FunctionToolResult]
) -> ToolsToFinalOutputResult:
    if len(ctx.context.items) >= ctx.context.target:
        return ToolsToFinalOutputResult(is_final_output=True, final_output="list full")
    return ToolsToFinalOutputResult(is_final_output=False)


class ScriptedModel(Model):
    """Answers every call instantly (or after latency_s) with one append_item function call."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: Any = None,
        conversation_id: Any = None,
        prompt: Any = None,
    ) -> ModelResponse:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        k = len(input) if isinstance(input, list) else 1
        call = ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{k}",
            call_id=f"call_{k}",
            name="append_item",
            arguments=json.dumps({"item": f"item-{k}"}),
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("the benchmarks do not stream")


RUN_CONFIG = RunConfig(tracing_disabled=True)


def make_runner(model: Model):
    agent = Agent[ListState](
        name="appender",
        instructions="You append items to a list with the append_item tool.",
        tools=[append_item],
        model=model,
        tool_use_behavior=stop_when_full,
    )

    async def arun(n: int) -> int:
        state = ListState(target=n)
        await Runner.run(
            agent,
            f"Append {n} items.",
            context=state,
            max_turns=n + 5,
            run_config=RUN_CONFIG,
        )
        return len(state.items)

    return arun


def openai_model(base_url: str) -> Model:
    from openai import AsyncOpenAI

    from agents import OpenAIChatCompletionsModel

    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    return OpenAIChatCompletionsModel(model="fake", openai_client=client)


def main() -> None:
    args = parse_args("OpenAI Agents SDK peer benchmark.")
    if args.w2_once:
        w2_child_main(make_runner(ScriptedModel(latency_s=W2_LATENCY_S)), args)
        return
    metrics: dict = {}
    notes = [
        "Agent + Runner.run; state in the run context; tool_use_behavior function ends the run "
        "when the list is full; custom Model for W1/W2, OpenAIChatCompletionsModel for W3; "
        "tracing disabled.",
    ]
    if "w1" in args.workloads:
        log("openai-agents W1")
        run = make_runner(ScriptedModel())
        metrics.update(measure_steps("w1", run, args.w1_sizes, args, is_async=True))
    if "w2" in args.workloads:
        log("openai-agents W2")
        metrics.update(measure_w2(str(Path(__file__).resolve()), [], args))
    if "w3" in args.workloads:
        log("openai-agents W3")
        server = None if args.base_url else FakeOpenAIServer().__enter__()
        try:
            run = make_runner(openai_model(args.base_url or server.base_url))
            metrics.update(measure_steps("w3", run, args.w3_sizes, args, is_async=True))
        finally:
            if server:
                server.stop()
    versions = package_versions("openai-agents", "openai")
    emit("OpenAI Agents SDK", "async", versions, metrics, notes)


if __name__ == "__main__":
    main()
