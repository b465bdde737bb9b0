"""A merge handler's own exception: as it is where the caller's code writes, a tool's failure
(an error result the model sees, the tool's writes undone) where a tool writes, as
docs/errors.md says."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext


class MergeRefused(Exception):
    """The handler's own exception type."""


def refuse_odd(old: Any, new: Any) -> Any:
    if new % 2:
        raise MergeRefused(f"{new} is odd")
    return new


SCHEMA = {"even": {"type": int, "handler": refuse_odd}, "note": {"type": str}}


def test_a_handler_s_exception_in_a_router_passes_through_as_it_is() -> None:
    solo = Agent("solo", model=ScriptedModel(["hi"]))

    def route(ctx: RunContext) -> Any:
        ctx.kv.set("even", 3)
        return solo

    network = Network("n", agents=[solo], router=route, state_schema=SCHEMA)
    with pytest.raises(MergeRefused, match="3 is odd") as raised:
        network.run_sync("go", state={"even": 2})
    assert raised.value.partial_result["even"] == 2  # type: ignore[attr-defined]


def test_a_handler_s_exception_in_a_tool_is_an_error_result_the_model_sees() -> None:
    @tool
    def write(value: int, ctx: ToolContext) -> str:
        """Write both keys."""
        ctx.kv.set("note", "written")
        ctx.kv.set("even", value)
        return "ok"

    worker = Agent("worker", tools=[write], model=ScriptedModel([call("write", value=5), "done"]))
    result = Network("n", agents=[worker], state_schema=SCHEMA).run_sync("go", state={"even": 2})
    record = result.state.results[0].tool_calls[0]
    assert record.is_error
    assert "MergeRefused" in record.content and "5 is odd" in record.content
    assert result["even"] == 2
    assert "note" not in result.state.kv.keys()  # the tool's other write was rolled back too
