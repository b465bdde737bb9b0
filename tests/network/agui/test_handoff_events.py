"""A handoff served over AG-UI: the CUSTOM `Handoff` event on the wire, and the next run on the
thread starting with the agent that has the conversation (on a SQLite store, and in the
server's in-memory threads, where the client sends the conversation back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import call
from network.agui import app
from tests.agents.airline import team
from tests.network.agui.test_server import Client, body

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


@pytest.fixture(params=["store", "memory"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(request.param)


async def test_the_handoff_event_reaches_the_client_and_the_thread_keeps_the_active_agent(
    tmp_path: Path, served: str
) -> None:
    network, triage, faq, _ = team(
        [call("transfer_to_faq_agent", reason="bags")], ["Two bags.", "Wifi is free."]
    )
    store = tmp_path / "threads.db" if served == "store" else None
    client = Client(app(network, store=store))

    first = await client.run(body("t-1", "r-1", "How many bags?"))

    (handoff,) = [e for e in first.of("CUSTOM") if e["name"] == "Handoff"]
    (started,) = first.of("TOOL_CALL_START")
    assert handoff["value"] == {
        "sourceAgent": "triage",
        "targetAgent": "FAQ Agent",
        "toolCallId": started["toolCallId"],
        "reason": "bags",
    }
    order = [e["type"] for e in first.events]
    at = first.events.index(handoff)
    assert order[at - 1] == "TOOL_CALL_RESULT" and order[at + 1] == "STEP_FINISHED"

    if served == "store":  # the thread holds the conversation: the new message alone
        second = await client.run(body("t-1", "r-2", "And wifi?"))
    else:  # the client sends the conversation back, as AG-UI clients do
        sent = [
            {"id": "r-1-u", "role": "user", "content": "How many bags?"},
            {"id": "a-1", "role": "assistant", "content": "Two bags."},
            {"id": "r-2-u", "role": "user", "content": "And wifi?"},
        ]
        second = await client.run({"threadId": "t-1", "runId": "r-2", "messages": sent})

    steps = [e["stepName"] for e in second.of("STEP_STARTED")]
    assert steps == ["FAQ Agent"]
    assert len(triage.model.requests) == 1 and len(faq.model.requests) == 2
