"""Live state over real HTTP, read by the official `@ag-ui/client` (npm, pinned): a running
tool's progress, and predictive state from a tool the client declares (a frontend tool).

`client/live.mjs` prints each event the moment the client hands it over, so the test reacts
while the run goes on: the walking tool does not take its next step until the client has
shown the step before, which can only happen if its STATE_DELTA left the server before the
tool returned.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
import structlog

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network
from network.agui import app
from tests.fakes.processes import node_with
from tests.network.agui.live import CLIENT_DIR, drive, serve

STEPS = ["gather", "draft", "review"]
DOCUMENT = "# Bruce\n\nBruce was a good dog. He liked long walks and naps in the sun."
WRITE_DOCUMENT = {
    "name": "write_document",
    "description": "Write the whole document.",
    "parameters": {
        "type": "object",
        "properties": {"document": {"type": "string"}},
        "required": ["document"],
    },
}
WAIT = 5.0  # seconds the tool waits for the client to show a step


class Progress:
    """What the test thread saw of the steps (set as the client's events arrive)."""

    def __init__(self) -> None:
        self.shown = [threading.Event() for _ in STEPS]
        self.waited: list[bool] = []


def walking_network(progress: Progress) -> Network:
    """One tool walks through the steps, awaiting the client's view of each before the next."""

    @tool
    async def plan_trip(ctx: ToolContext) -> str:
        """Plan the trip, step by step."""
        ctx.kv.set("steps", [{"description": name, "status": "pending"} for name in STEPS])
        for index in range(len(STEPS)):
            steps = ctx.kv.get("steps")
            steps[index]["status"] = "completed"
            ctx.kv.set("steps", steps)
            seen = await anyio.to_thread.run_sync(progress.shown[index].wait, WAIT)
            progress.waited.append(seen)
            if not seen:
                return f"the client never showed step {index}"
        return "planned"

    agent = Agent("planner", tools=[plan_trip], model=ScriptedModel([[call("plan_trip")]]))
    return Network("planner", agents=[agent])


def document_network() -> Network:
    """The dojo's predictive-state page: `write_document` is the client's, not the server's."""
    writer = Agent(
        "writer",
        model=ScriptedModel(
            lambda request: (
                [call("write_document", document=DOCUMENT)]
                if any(t["function"]["name"] == "write_document" for t in request.tools)
                else "I have no way to write documents here."
            )
        ),
    )
    return Network(
        "documents",
        agents=[writer],
        state_schema={"document": {"type": str}},
        predict_state={"document": {"tool": "write_document", "tool_argument": "document"}},
    )


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("@ag-ui/client", CLIENT_DIR)


@pytest.fixture
def quiet() -> Iterator[None]:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()


@pytest.mark.usefixtures("quiet")
def test_a_running_tool_s_progress_reaches_the_client_before_the_tool_returns(node: str) -> None:
    progress = Progress()
    network = walking_network(progress)
    served = app(network)

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] != "STATE_DELTA":
            return
        for op in event["delta"]:
            if op["path"] == "/steps":
                for index, step in enumerate(op["value"]):
                    if step["status"] == "completed":
                        progress.shown[index].set()

    with serve(served) as url:
        events, done = drive(node, f"{url}/", "trip", {"message": "plan my trip"}, on_event)
    assert done["status"] == 200 and done["problems"] == []
    assert progress.waited == [True, True, True]  # each step was on the client's screen first
    types = [event["type"] for event in events]
    deltas = [i for i, kind in enumerate(types) if kind == "STATE_DELTA"]
    assert len(deltas) >= 3 and deltas[2] < types.index("TOOL_CALL_RESULT")
    expected = [{"description": name, "status": "completed"} for name in STEPS]
    assert done["state"] == {"steps": expected}
    record = served.state.threads.peek("trip")
    assert record is not None and record.state == done["state"]  # the client ends in sync


@pytest.mark.usefixtures("quiet")
def test_predictive_state_follows_a_tool_the_client_declares(node: str) -> None:
    served = app(document_network())
    with serve(served) as url:
        events, done = drive(
            node, f"{url}/", "doc", {"message": "write about Bruce", "tools": [WRITE_DOCUMENT]}
        )
    assert done["status"] == 200 and done["problems"] == []
    types = [event["type"] for event in events]
    assert types[:3] == ["RUN_STARTED", "CUSTOM", "STATE_SNAPSHOT"]
    assert events[1]["name"] == "PredictState" and events[1]["value"] == [
        {"state_key": "document", "tool": "write_document", "tool_argument": "document"}
    ]
    streaming = types[types.index("TOOL_CALL_START") : types.index("TOOL_CALL_END")]
    assert streaming.count("STATE_DELTA") >= 3  # the document grows as the arguments stream
    assert "TOOL_CALL_RESULT" not in types  # the client runs it
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["result"]["stopReason"] == "client_tool"
    assert done["state"] == {"document": DOCUMENT}
    record = served.state.threads.peek("doc")
    assert record is not None and record.state == {"document": DOCUMENT}


@pytest.mark.usefixtures("quiet")
def test_a_client_that_does_not_declare_the_tool_gets_no_prediction_and_no_error(
    node: str,
) -> None:
    served = app(document_network())
    with serve(served) as url:
        events, done = drive(node, f"{url}/", "plain", {"message": "write about Bruce"})
    assert done["status"] == 200 and done["problems"] == []
    (announced,) = [event for event in events if event["type"] == "CUSTOM"]
    assert announced["value"] == []  # this run offers no `write_document`
    assert "TOOL_CALL_START" not in [event["type"] for event in events]
    assert done["state"] == {}


@pytest.mark.usefixtures("quiet")
def test_a_declared_tool_named_like_a_server_tool_is_refused(node: str) -> None:
    @tool
    def write_document(document: str) -> str:
        """Write the document on the server."""
        return "written"

    agent = Agent("writer", tools=[write_document], model=ScriptedModel(["unused"]))
    network = Network(
        "documents",
        agents=[agent],
        predict_state={"document": {"tool": "write_document", "tool_argument": "document"}},
    )
    with serve(app(network)) as url:
        events, done = drive(
            node, f"{url}/", "both", {"message": "write", "tools": [WRITE_DOCUMENT]}
        )
    assert done["status"] == 422 and events == []
    assert "invalid_tool" in done["problems"][0] and "write_document" in done["problems"][0]
