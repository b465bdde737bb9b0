"""`as_tool(on_failure="raise")`: a sub-agent whose run failed fails its caller's run.

By default a failed sub-run is an error result the supervisor's model reads, and the run goes
on (`RunResult.tool_errors` lists it). A tool made with `on_failure="raise"` instead ends the
caller's agent call with a `ToolError` naming the sub-agent and what it said: the run fails
with it (`error.partial_result` as for any failure), committing nothing of that call. The
check runs once the answer's tool calls are done (the `tool_results` stage), so calls that ran
beside it finished first.
"""

from __future__ import annotations

from network.errors import ToolError
from network.history.results import ToolCallRecord
from network.run.agent_call import AgentCall
from network.run.capability import Capability


class FailingSubagents(Capability):
    """Fails the call when a sub-agent tool made with `on_failure="raise"` failed; built by
    `Agent` when one of its tools is such a tool."""

    async def tool_results(
        self, call: AgentCall, records: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        tools = call.tools or {}
        for record in records:
            if not record.is_error:
                continue
            spec = getattr(tools.get(record.name), "subagent", None)
            if spec is not None and spec.on_failure == "raise":
                raise ToolError(
                    f"{spec.label} failed, and its tool {record.name!r} fails the run "
                    f"(on_failure='raise'): {record.error or record.content}",
                    tool=record.name,
                )
        return records


def raises_on_failure(tool: object) -> bool:
    """Whether `tool` is a sub-agent tool made with `on_failure="raise"`."""
    spec = getattr(tool, "subagent", None)
    return spec is not None and getattr(spec, "on_failure", None) == "raise"


__all__ = ["FailingSubagents", "raises_on_failure"]
