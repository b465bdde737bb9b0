"""Sub-agents over AG-UI, as the pinned `@ag-ui/client` sees them.

A supervisor's tools are an agent and a network (`as_tool`); the network's refund waits for
an approval. The real server runs on 127.0.0.1 (in memory, and on an SQLite store);
`client/subagents.mjs` drives it with the official HttpAgent: a first run that stops on the
approval raised inside the sub-agent, a second that answers it, and a third turn. The client
accepts every run (it enforces AG-UI 1.0's order rules, SUBAGENT_* included), and every event
of the inner runs carries the `subagentRunId` of its SUBAGENT_STARTED.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import ScriptedModel, call
from network.agui import app
from tests.agents.capabilities.subagents.subagents import (
    REFUNDS,
    billing_network,
    researcher,
    supervised,
)
from tests.network.agui.live import leave_while_running, run_body, serve
from tests.network.agui.subagent_client import attributed, drive

INNER_TYPES = {"STEP_STARTED", "STEP_FINISHED", "TOOL_CALL_START", "TOOL_CALL_RESULT"}


def boss_script(request: Any) -> Any:
    """Researches the order, then has billing refund it, then reports; thanks get an answer."""
    last = request.history[-1]
    if last.role == "user":
        if "Thanks" in str(last.content):
            return "You are welcome."
        return call("researcher", input="order 7")
    if str(last.content).startswith("Research says"):
        return call("billing", input="refund order 7")
    return f"Done: {last.content}"


def desk(model: ScriptedModel) -> Any:
    return supervised(
        [researcher().as_tool(), billing_network().as_tool(description="Refunds orders.")], model
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, ScriptedModel]]]:
    models = {"/memory": ScriptedModel(boss_script), "/stored": ScriptedModel(boss_script)}
    apps = {
        "/memory": app(desk(models["/memory"]), path="/memory"),
        "/stored": app(desk(models["/stored"]), path="/stored", store=str(tmp_path / "t.db")),
    }

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        await apps[scope["path"]](scope, receive, send)

    REFUNDS.clear()
    with serve(asgi) as url:
        yield url, models


@pytest.mark.parametrize("path", ["/memory", "/stored"])
def test_the_client_sees_who_does_what(
    served: tuple[str, dict[str, ScriptedModel]], path: str
) -> None:
    url, models = served
    first, second, third = drive(url + path, f"thread-{path.strip('/')}")["runs"]

    # run 1: the researcher's work, then billing's, which stops on the refund's approval
    starts = [e for e in first["events"] if e["type"] == "SUBAGENT_STARTED"]
    assert [e["name"] for e in starts] == ["researcher", "billing"]
    calls = {
        e["toolCallId"]: e["toolCallName"]
        for e in first["events"]
        if e["type"] == "TOOL_CALL_START" and "subagentRunId" not in e
    }
    assert [calls[e["parentToolCallId"]] for e in starts] == ["researcher", "billing"]
    research, billing = (e["subagentRunId"] for e in starts)
    inner = attributed(first)
    assert {e["type"] for e in inner[research]} >= INNER_TYPES | {"TEXT_MESSAGE_START"}
    assert "TOOL_CALL_START" in {e["type"] for e in inner[billing]}
    suspended = [e for e in first["events"] if e["type"] == "SUBAGENT_FINISHED"][-1]
    assert suspended["subagentRunId"] == billing
    assert suspended["outcome"]["type"] == "suspended"
    (waiting,) = first["interrupts"]
    assert suspended["outcome"]["interruptIds"] == [waiting["id"]]
    assert waiting["subagentRunId"] == billing
    refund_call = next(e for e in inner[billing] if e["type"] == "TOOL_CALL_START")
    assert waiting["toolCallId"] == refund_call["toolCallId"]
    assert refund_call["toolCallName"] == "refund"
    results = [e["toolCallId"] for e in first["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert refund_call["toolCallId"] not in results  # not run before the approval
    # the client holds the sub-agents' messages, attributed
    assert {m.get("subagentRunId") for m in first["messages"]} - {None} == {
        research,
        billing,
    }

    # run 2: the answer continues the same sub-agent run; the refund runs once
    (again,) = [e for e in second["events"] if e["type"] == "SUBAGENT_STARTED"]
    assert again["subagentRunId"] == billing
    assert {e["type"] for e in attributed(second)[billing]} >= {
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
    }
    finished = [e for e in second["events"] if e["type"] == "SUBAGENT_FINISHED"]
    assert finished[-1]["result"] == "Billing: refunded 30"
    assert second["events"][-1]["type"] == "RUN_FINISHED"
    assert second["interrupts"] == []

    # run 3: the client sends everything it holds; the sub-agents' messages stay out of the
    # supervisor's conversation
    assert [e["type"] for e in third["events"]][-1] == "RUN_FINISHED"
    history = models[path].requests[-1].history
    assert [m.role for m in history].count("user") == 2
    assert all(getattr(m, "name", None) in (None, "boss") for m in history if m.role == "assistant")
    assert REFUNDS == [30]


@pytest.mark.anyio
async def test_the_capabilities_answer_lists_the_sub_agents() -> None:
    import httpx

    transport = httpx.ASGITransport(app=app(desk(ScriptedModel(boss_script))))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://agui.test", timeout=30
    ) as http:
        answer = (await http.get("/capabilities")).json()
    multi = answer["multiAgent"]
    assert multi["supported"] is True and multi["delegation"] is True
    assert multi["subagents"] == [
        {"name": "boss"},
        {"name": "researcher", "description": "Finds facts."},
        {"name": "billing", "description": "Refunds orders."},
    ]


def test_a_client_that_leaves_mid_sub_run_cancels_it_and_frees_the_thread() -> None:
    import threading

    import anyio
    import httpx

    from tests.network.agui.protocol import parse_sse

    started = threading.Event()
    answered: list[str] = []

    async def slow(request: Any) -> Any:
        started.set()
        await anyio.sleep(30)
        answered.append("late")  # a side effect that must never happen
        return "late"

    def boss(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool" or "hi" in str(last.content):
            return "Done."
        return call("researcher", input="slowly")

    asgi = app(supervised([researcher(ScriptedModel(slow)).as_tool()], ScriptedModel(boss)))
    with serve(asgi) as url:
        freed = leave_while_running(url, asgi, run_body("t", "r1", "go"), started)
        assert freed  # the run ended with the client
        with httpx.Client(base_url=url, timeout=30) as client:
            response = client.post("/", json=run_body("t", "r2", "hi"))
        assert [e["type"] for e in parse_sse(response.text)][-1] == "RUN_FINISHED"
    time.sleep(0.1)
    assert answered == []
