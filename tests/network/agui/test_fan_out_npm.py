"""A parallel fan-out served over AG-UI, read by the official `@ag-ui/client` (npm, pinned).

`@ag-ui/client` 1.0 removes from every event what the protocol does not define, warning each
time ("Removed unrecognised material"), so where an event happened must ride in the event's
`metadata`: the branch of each branch's event, the fan-out of its step. `client/live.mjs`
counts any warning of the client as a problem and prints each event as the client handed it
over, after its checks.
"""

from __future__ import annotations

from typing import Any

import pytest

from network import Network, Parallel
from network.agui import app
from tests.fakes.processes import node_with
from tests.network.agui.live import CLIENT_DIR, drive, serve
from tests.network.parallel.helpers import text_agent, writer_agent

pytestmark = pytest.mark.usefixtures("quiet_logs")


def fan_out_network() -> Network:
    a = writer_agent("a", {"found": ["a"]})
    b = text_agent("b", "b speaks")

    def router(ctx: Any) -> Any:
        return Parallel(a, b, name="pair") if ctx.call_count == 0 else None

    return Network("n", agents=[a, b], router=router, state_schema={"found": {"type": list[str]}})


def test_the_client_keeps_each_events_branch_without_a_warning() -> None:
    node = node_with("@ag-ui/client", CLIENT_DIR)
    with serve(app(fan_out_network())) as url:
        events, done = drive(node, url + "/", "fan-thread", {"message": "go"})
    assert done["status"] == 200 and done["problems"] == []
    assert done["state"] == {"found": ["a"]}
    where = [(e["type"], (e.get("metadata") or {}).get("branch")) for e in events]
    assert ("TEXT_MESSAGE_START", "pair/b") in where
    assert ("TOOL_CALL_START", "pair/a") in where
    assert ("STEP_FINISHED", "pair/a") in where
    fork = next(e for e in events if e["type"] == "STEP_STARTED" and e["stepName"] == "pair")
    assert fork["metadata"] == {"fanOut": "pair"}
