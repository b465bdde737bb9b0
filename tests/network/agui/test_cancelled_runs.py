"""A run cancelled from inside while its client listens, read by the official `@ag-ui/client`
(npm, pinned) and checked against the pinned `@ag-ui/core` schemas
(`network.agui.cancelled_runs`).

The run ends with `RUN_FINISHED` whose outcome is `{"type": "cancelled"}` (AG-UI 1.0's
`RunFinishedCancelledOutcome`), the stream ends as for any run, and the thread is free for the
next. Before, the `CancelledError` left the ASGI app and cut the stream: the client reported
`TypeError: terminated` and never read RUN_FINISHED."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest

from agents import Agent, ScriptedModel, tool
from agents.models.base import ModelRequest
from network import Network
from network.agui import app
from network.history.messages import AssistantMessage, ToolCall
from tests.fakes.processes import node_with
from tests.network.agui.live import CLIENT_DIR, drive, serve

pytestmark = pytest.mark.usefixtures("quiet_logs")

# Each event through the pinned schemas the client is built on: the union of every event,
# and RUN_FINISHED's own (with its outcome's discriminated union).
VALIDATE = """
import { EventSchema, RunFinishedEventSchema } from "@ag-ui/core/schemas";
const events = JSON.parse(process.argv[1]);
const refused = [];
for (const event of events) {
  const own = event.type === "RUN_FINISHED" ? [RunFinishedEventSchema] : [];
  for (const schema of [EventSchema, ...own]) {
    const parsed = schema.safeParse(event);
    if (!parsed.success) refused.push({ type: event.type, issues: parsed.error.issues });
    else if (JSON.stringify(parsed.data.outcome) !== JSON.stringify(event.outcome)) {
      refused.push({ type: event.type, outcomeStripped: parsed.data.outcome ?? null });
    }
  }
}
process.stdout.write(JSON.stringify(refused));
"""


@tool
async def wait_for_report() -> str:
    """Wait for the nightly report."""
    report = asyncio.get_running_loop().create_future()
    report.cancel()  # cancelled by whoever was making it: no one cancelled this request
    return str(await report)


def script(request: ModelRequest) -> Any:
    if any(message.role == "tool" for message in request.history):
        return "the report is ready"
    return AssistantMessage(None, [ToolCall("call-1", "wait_for_report", {})])


def test_a_run_cancelled_from_inside_ends_with_a_cancelled_outcome_the_client_reads() -> None:
    node = node_with("@ag-ui/client", CLIENT_DIR)
    model = ScriptedModel(script)
    agent = Agent("reporter", tools=[wait_for_report], model=model)
    asgi = app(Network("reports", agents=[agent]))
    with serve(asgi) as url:
        events, done = drive(node, url + "/", "nightly", {"message": "the report?"})
        assert done["status"] == 200 and done["problems"] == []
        last = events[-1]
        assert (last["type"], last["outcome"]) == ("RUN_FINISHED", {"type": "cancelled"})
        assert "TOOL_CALL_END" in [event["type"] for event in events]  # closed before the end
        checked = subprocess.run(
            [node, "--input-type=module", "-e", VALIDATE, json.dumps(events)],
            cwd=CLIENT_DIR,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(checked.stdout) == []
        assert asgi.state.threads.peek("nightly").run_id is None  # the thread is free
        _, again = drive(node, url + "/", "nightly", {"message": "and now?"})
        assert again["status"] == 200 and again["problems"] == []
