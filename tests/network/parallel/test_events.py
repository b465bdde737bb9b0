"""AG-UI events of a fan-out: every event a branch emits carries its branch id (in its
`metadata`); the merged state is streamed once, at the join, inside the fan-out's own step."""

from __future__ import annotations

from typing import Any

import pytest

from network import Network, Parallel
from tests.network.parallel.helpers import text_agent, writer_agent

pytestmark = pytest.mark.anyio


async def test_branch_events_carry_the_branch_and_state_streams_at_the_join() -> None:
    a = writer_agent("a", {"found": ["a"]}, delay=0.01)
    b = text_agent("b", "b speaks")

    def router(ctx: Any) -> Any:
        return Parallel(a, b, name="pair") if ctx.call_count == 0 else None

    network = Network(
        "n", agents=[a, b], router=router, state_schema={"found": {"type": list[str]}}
    )
    events = []
    async with network.stream("go") as stream:
        async for event in stream:
            events.append(event)

    kinds = [(e.type.value, (e.metadata or {}).get("branch")) for e in events]
    fork_start = kinds.index(("STEP_STARTED", None))
    fork_end = kinds.index(("STEP_FINISHED", None))
    assert events[fork_start].step_name == events[fork_end].step_name == "pair"
    inside = kinds[fork_start + 1 : fork_end]
    branch_events = [k for k in inside if k[0] != "STATE_DELTA"]
    assert {branch for _, branch in branch_events} == {"pair/a", "pair/b"}
    assert ("TEXT_MESSAGE_START", "pair/b") in branch_events
    assert ("TOOL_CALL_START", "pair/a") in branch_events
    assert ("STEP_FINISHED", "pair/a") in branch_events
    # the state changes once, merged, after both branches finished
    deltas = [i for i, k in enumerate(inside) if k[0] == "STATE_DELTA"]
    assert len(deltas) == 1
    assert deltas[0] > max(i for i, k in enumerate(inside) if k[0] == "STEP_FINISHED")
    delta = events[fork_start + 1 + deltas[0]].model_dump(mode="json")["delta"]
    assert delta == [{"op": "add", "path": "/found", "value": ["a"]}]
    # the branch travels on the wire too, in the event's metadata (AG-UI's place for it)
    wire = next(e for e in events if e.type.value == "TEXT_MESSAGE_START")
    assert '"metadata":{"branch":"pair/b"}' in wire.model_dump_json(by_alias=True)
    fork = events[fork_start].model_dump(mode="json", by_alias=True, exclude_none=True)
    assert fork["metadata"] == {"fanOut": "pair"}
