"""agent-network on the benchmark workloads, built the way the library is meant to be used.

W1/W2: one agent with an `append_item` tool that appends to a `list[str]` state key (declared in
the schema, so `merge_lists` and validation apply), a scripted in-process model asking for one
tool call per step, and a plain-function router that stops when the list holds N items.
W3: the same network over HTTP against the shared fake OpenAI server, through the native client
(`--mode native`, `OpenAIModel`) or litellm (`--mode openai` / `--mode hosted_vllm`, litellm's
two routes to an OpenAI-compatible server); W3s is W3 with the model streaming.

The library logs nothing unless the application turns logging on (`network.logger`); this
script leaves logging off, as a newcomer's program does, so no event objects are built.

    python benchmarks/ours_bench.py [--quick] [--workloads w1,w2,w3] [--base-url URL]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

# AGENT_NETWORK_SOURCE: another checkout of the library to measure (run_all.py --before REF
# exports one), with this script's workloads; default: the checkout this script is in.
sys.path.insert(0, os.environ.get("AGENT_NETWORK_SOURCE") or str(Path(__file__).parent.parent))

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

from agents import Agent, ToolContext, call, tool
from agents.models.base import ModelRequest, ModelResponse
from agents.models.scripted import _message
from network import Network, RunContext, Usage

SCHEMA = {"items": {"type": list[str]}, "target": {"type": int}}


@tool
def append_item(item: str, ctx: ToolContext) -> str:
    """Append one item to the list in state."""
    ctx.kv.set("items", item)
    return "ok"


class InstantModel:
    """A model that asks for one `append_item` call at once, or after `latency_s`."""

    name = "instant"

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.usage = Usage()

    async def complete(self, request: ModelRequest, on_chunk: Any = None) -> ModelResponse:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        k = len(request.history)
        return ModelResponse(_message(None, [call("append_item", item=f"item-{k}")]), self.usage)


def build(model: Any) -> Network:
    worker = Agent("worker", tools=[append_item], model=model)

    def until_n_items(ctx: RunContext) -> Any:
        # kv.view reads without copying: the documented read for a value checked every step
        # (kv.get would copy the whole list each time, as long as the list is).
        return None if len(ctx.kv.view("items", ())) >= ctx.kv.get("target") else worker

    return Network(
        "bench", agents=[worker], router=until_n_items, state_schema=SCHEMA, max_iter=10**6
    )


def make_run(model: Any):
    network = build(model)

    async def run(n: int) -> int:
        result = await network.run(f"Append {n} items.", state={"target": n})
        return len(result["items"])

    return run


def main() -> None:
    args = parse_args(
        "agent-network on the benchmark workloads.", modes=("native", "openai", "hosted_vllm")
    )
    if args.w2_once:
        w2_child_main(make_run(InstantModel(W2_LATENCY_S)), args)
        return
    metrics: dict = {}
    notes = [
        "Agent + @tool writing a list[str] state key (schema-validated, RFC 6902 deltas "
        "recorded, provenance kept), code router; logging left off (the library's default).",
    ]
    versions = package_versions("agent-network", "pydantic", "anyio", "litellm")
    versions["python"] = sys.version.split()[0]
    if "w1" in args.workloads:
        log("agent-network W1")
        metrics.update(measure_steps("w1", make_run(InstantModel()), args.w1_sizes, args, True))
    if "w2" in args.workloads:
        log("agent-network W2")
        metrics.update(measure_w2(str(Path(__file__).resolve()), [], args))
    if "w3" in args.workloads:
        log(f"agent-network W3 ({args.mode})")
        if args.mode == "native":
            notes.append("W3: OpenAIModel('openai/fake', api_base=...), the native client.")
        else:  # litellm's openai/ route, or its lighter hosted_vllm/ one
            notes.append(f"W3: LiteLLMModel('{args.mode}/fake', api_base=...) through litellm.")

        def http_run(base_url: str, stream: bool):
            if args.mode == "native":
                from agents.models.openai_native import OpenAIModel

                model: Any = OpenAIModel("openai/fake", api_base=base_url, stream=stream)
            else:
                from agents.models.litellm_model import LiteLLMModel

                route = f"{args.mode}/fake"
                model = LiteLLMModel(route, api_base=base_url, api_key="x", stream=stream)
            return make_run(model)

        def w3(base_url: str) -> None:
            for prefix, stream in (("w3", False), ("w3s", True)):
                run = http_run(base_url, stream)
                metrics.update(measure_steps(prefix, run, args.w3_sizes, args, True))

        if args.base_url:
            w3(args.base_url)
        else:
            with FakeOpenAIServer() as server:
                w3(server.base_url)
    emit("agent-network", args.mode, versions, metrics, notes)


if __name__ == "__main__":
    main()
