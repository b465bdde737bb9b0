"""LangGraph peer benchmark (runs in benchmarks/.venv-peers).

The graph, built once per model: START -> "model" -> "tools" -> conditional edge back to
"model" while the state's item list is short of the run's target, else END.
- state: messages (add_messages reducer), items (Annotated[list[str], operator.add]), target
- "model": a LangChain chat model bound to the tool (bind_tools); W1/W2 use a scripted
  BaseChatModel subclass that always asks for one tool call, W3 uses ChatOpenAI against the
  fake OpenAI server
- "tools": the prebuilt ToolNode; the tool updates graph state by returning a Command
  (items += [item], plus its ToolMessage)
- --mode sync: graph.invoke with a sync tool (W1, W3). --mode async: graph.ainvoke with an async
  tool (W1, W2, W3).

    benchmarks/.venv-peers/bin/python benchmarks/peers/langgraph_bench.py --mode async [--quick]
"""

import asyncio
import operator
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

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
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import InjectedToolCallId, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    items: Annotated[list[str], operator.add]
    target: int


@tool("append_item")
def append_item_sync(item: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Append one item to the list in state."""
    return Command(
        update={"items": [item], "messages": [ToolMessage("ok", tool_call_id=tool_call_id)]}
    )


@tool("append_item")
async def append_item_async(item: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Append one item to the list in state."""
    return Command(
        update={"items": [item], "messages": [ToolMessage("ok", tool_call_id=tool_call_id)]}
    )


class ScriptedChatModel(BaseChatModel):
    """Answers every call instantly (or after latency_s, async) with one append_item call."""

    latency_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: list, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    @staticmethod
    def _reply(messages: list) -> ChatResult:
        k = len(messages)
        call = {"name": "append_item", "args": {"item": f"item-{k}"}, "id": f"call_{k}"}
        message = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._reply(messages)


def build_graph(model: BaseChatModel, is_async: bool):
    tool_ = append_item_async if is_async else append_item_sync
    bound = model.bind_tools([tool_])

    def call_model(state: State) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    async def acall_model(state: State) -> dict:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def route(state: State) -> str:
        return "model" if len(state["items"]) < state["target"] else END

    graph = StateGraph(State)
    graph.add_node("model", acall_model if is_async else call_model)
    graph.add_node("tools", ToolNode([tool_]))
    graph.add_edge(START, "model")
    graph.add_edge("model", "tools")
    graph.add_conditional_edges("tools", route, ["model", END])
    return graph.compile()


def _inputs(n: int) -> tuple[dict, dict]:
    state = {"messages": [HumanMessage(f"Append {n} items.")], "items": [], "target": n}
    return state, {"recursion_limit": 2 * n + 10}


def make_runner(model: BaseChatModel, is_async: bool):
    graph = build_graph(model, is_async)
    if is_async:

        async def arun(n: int) -> int:
            state, config = _inputs(n)
            return len((await graph.ainvoke(state, config))["items"])

        return arun

    def run(n: int) -> int:
        state, config = _inputs(n)
        return len(graph.invoke(state, config)["items"])

    return run


def openai_model(base_url: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="fake", base_url=base_url, api_key="x", max_retries=0)


def main() -> None:
    args = parse_args("LangGraph peer benchmark.", modes=("async", "sync"))
    is_async = args.mode == "async"
    if args.w2_once:
        w2_child_main(make_runner(ScriptedChatModel(latency_s=W2_LATENCY_S), is_async=True), args)
        return
    metrics: dict = {}
    notes = [
        "StateGraph: model node -> prebuilt ToolNode -> conditional edge (items < target); "
        "tool returns Command(update=...); scripted BaseChatModel for W1/W2, ChatOpenAI for W3.",
    ]
    if "w1" in args.workloads:
        log(f"langgraph ({args.mode}) W1")
        run = make_runner(ScriptedChatModel(), is_async)
        metrics.update(measure_steps("w1", run, args.w1_sizes, args, is_async))
    if "w2" in args.workloads:
        if is_async:
            log("langgraph W2")
            script = str(Path(__file__).resolve())
            metrics.update(measure_w2(script, ["--mode", "async"], args))
        else:
            notes.append("W2 not run in sync mode (1000 concurrent runs need the async API).")
    if "w3" in args.workloads:
        log(f"langgraph ({args.mode}) W3")
        server = None if args.base_url else FakeOpenAIServer().__enter__()
        try:
            run = make_runner(openai_model(args.base_url or server.base_url), is_async)
            metrics.update(measure_steps("w3", run, args.w3_sizes, args, is_async))
        finally:
            if server:
                server.stop()
    versions = package_versions("langgraph", "langchain-core", "langchain-openai", "openai")
    emit("LangGraph", args.mode, versions, metrics, notes)


if __name__ == "__main__":
    main()
