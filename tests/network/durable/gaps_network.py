"""A network whose LLM router spends tokens and whose writer's context policy summarises.

An LLM router (`routing_agent`, a scripted model answering with 100 + 10 tokens) sends the
writer three times, then says done. The writer keeps at most two messages in a request: its
third request needs a summary, made by a summarising agent. Its instructions show the router's
tokens and requests so far (`ctx.engine.router_usage`, `ctx.engine.router_calls`) and its
answers repeat them with the summary's nonce, so a run's output shows what the last request saw.

Every router model call, summariser model call and writer model call appends one line to the
`AN_DURABLE_LOG` file (see `crash_network.effect`, which also blocks the call chosen by
`AN_KILL_AT` so the test can kill the process in it).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from agents import Agent, ContextPolicy, ScriptedModel
from agents.models.base import ModelResponse
from network import Network, RunContext
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage
from routers import routing_agent
from tests.network.durable.crash_network import effect

WRITER_CALLS = 3
ROUTER_USAGE = Usage(100, 10, 110)
SEQUENCE = [
    "router-model",
    "writer-model",
    "router-model",
    "writer-model",
    "router-model",
    "summariser-model",
    "writer-model",
    "router-model",
]
"""The kinds of the side effects of one run, in order (each line also names what it saw)."""


def route_answer(request: Any) -> ModelResponse:
    done = request.system[0].content.count("writer: call") >= WRITER_CALLS
    effect("router-model", "done" if done else "writer")
    arguments = {"summary": "written"} if done else {"name": "writer", "reason": "more"}
    tool_call = ToolCall(
        f"route_{uuid.uuid4().hex[:8]}", "done" if done else "select_agent", arguments
    )
    return ModelResponse(message=AssistantMessage(None, [tool_call]), usage=ROUTER_USAGE)


def summarise_answer(request: Any) -> str:
    nonce = uuid.uuid4().hex[:8]  # a summary made again would differ
    effect("summariser-model", nonce)
    return f"nonce={nonce}"


def write_answer(request: Any) -> str:
    system = "\n".join(m.content or "" for m in request.system)
    call = re.search(r"call=(\d+)", system)
    tokens = re.search(r"router_tokens=(\d+ \(\d+\))", system)
    nonce = re.search(r"nonce=(\w+)", system)
    seen = (
        f"call {call.group(1) if call else '?'} router_tokens={tokens.group(1) if tokens else '?'}"
        f" summary={nonce.group(1) if nonce else '-'}"
    )
    effect("writer-model", seen)
    return seen


def instructions(ctx: RunContext) -> str:
    spent = ctx.engine.router_usage.total_tokens if ctx.engine.router_usage is not None else 0
    return (
        f"Write. call={ctx.call_count + 1} router_tokens={spent} ({len(ctx.engine.router_calls)})"
    )


summariser = Agent(
    "summariser",
    description="summarises",
    system="Summarise.",
    model=ScriptedModel(summarise_answer),
)
writer = Agent(
    "writer",
    description="writes",
    system=instructions,
    model=ScriptedModel(write_answer),
    context_policy=ContextPolicy(max_messages=2, summarize=summariser),
)
team = Network("gaps", agents=[writer], router=routing_agent(ScriptedModel(route_answer)))
