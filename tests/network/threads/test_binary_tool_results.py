"""A tool's result is hostile input too: bytes that are no UTF-8 text (a tool that reads an
image or any binary file and returns what it read) are committed to every store (memory,
SQLite, PostgreSQL) as `{"base64": ...}` in the stored record, which is what the model read
(`network.utf8.bytes_text`: one rule for the model and the stores), and the run goes on.
Before, the call's commit failed with pydantic's PydanticSerializationError ("invalid utf-8
sequence"): the run crashed after its tool had run, and an approval answered with
`respond(b"...")` was spent on a run that committed nothing."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network, Resume, ThreadRef
from network.history.results import InferenceResult, ToolCallRecord
from network.threads import ThreadStore

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n\xff\x00"


@tool
def read_logo() -> bytes:
    """Read the logo file."""
    return PNG


@tool(requires_confirmation=True)
def scan(page: int) -> str:
    """Scan a page."""
    return f"scanned {page}"


def network(tools: list[Any], first: Any) -> Network:
    def script(request: Any) -> Any:
        last = request.history[-1]
        return f"got {len(str(last.content))} characters" if last.role == "tool" else first

    agent = Agent("reader", model=ScriptedModel(script), tools=tools)

    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return Network("files", agents=[agent], router=route)


async def test_a_tool_returning_binary_bytes_is_committed_on_every_store(
    open_store: Callable[[], ThreadStore],
) -> None:
    runs = network([read_logo], call("read_logo"))
    result = await runs.run("show the logo", thread=ThreadRef("t", store=open_store()))
    assert result.stop_reason == "router_finished" and result.output.startswith("got ")
    assert result.results[0].tool_calls[0].result == PNG  # the run's own record, as returned
    thread = await open_store().get_thread("t")
    assert thread is not None and thread.revision == 2
    stored = thread.results[0].tool_calls[0]
    assert stored.result == {"base64": base64.b64encode(PNG).decode("ascii")}
    assert stored.content == result.results[0].tool_calls[0].content  # what the model read
    again = await runs.run("again", thread=ThreadRef("t", store=open_store()))
    assert again.stop_reason == "router_finished"


async def test_an_approval_answered_with_bytes_is_committed_not_spent(
    open_store: Callable[[], ThreadStore],
) -> None:
    runs = network([scan], call("scan", page=1))
    stopped = await runs.run("scan page 1", thread=ThreadRef("t", store=open_store()))
    assert stopped.stop_reason == "interrupted"
    (approval,) = stopped.interrupts
    answered = Resume([approval.respond(PNG)])
    done = await runs.run(answered, thread=ThreadRef("t", store=open_store()))
    assert done.stop_reason == "router_finished"
    thread = await open_store().get_thread("t")
    assert thread is not None and thread.pending_interrupts == []
    tool_message = [m for m in thread.messages if m.role == "tool"]
    assert len(tool_message) == 1 and tool_message[0].tool_call_id == approval.tool_call_id


def test_only_bytes_that_are_no_utf8_text_are_mended() -> None:
    record = ToolCallRecord("c1", "read_logo", {}, result={"logo": [PNG]}, content="...")
    text = InferenceResult(agent="reader", tool_calls=[record]).to_json()
    assert '"logo":[{"base64":"iVBORw0KGgr/AA=="}]' in text
    assert record.result == {"logo": [PNG]}  # not mended in place
    plain = ToolCallRecord("c2", "read_logo", {}, result=b"ok", content="ok")
    assert '"result":"ok"' in InferenceResult(agent="reader", tool_calls=[plain]).to_json()
