"""`as_tool(on_failure="raise")`: a sub-agent whose run failed fails its caller's run.

By default a failed sub-run is an error result the supervisor's model reads, and the run goes
on (`RunResult.tool_errors` lists it). A tool made with `on_failure="raise"` instead ends the
caller's agent call with a `ToolError` naming the sub-agent and what it said: the run fails
with it (`error.partial_result` as for any failure), committing nothing of that call; its
`__cause__` is the sub-run's own exception (kept for the run by `keep_cause` when the sub-run
failed, as the tool's record holds only its text). The check runs once the answer's tool
calls are done (the `tool_results` stage), so calls that ran beside it finished first.
"""

from __future__ import annotations

from network.errors import ToolError
from network.history.results import ToolCallRecord
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.context import RunContext

_CAUSES = "agents.subagents.failing.causes"  # the run's local: tool call id -> exception


def keep_cause(run: RunContext, tool_call_id: str, error: BaseException) -> None:
    """Keep the exception a sub-run of a tool made with `on_failure="raise"` failed with,
    for the `ToolError` that fails the caller's run to chain (`__cause__`)."""
    causes: dict[str, BaseException] = run.local(_CAUSES, dict)
    causes[tool_call_id] = error


class FailingSubagents(Capability):
    """Fails the call when a sub-agent tool made with `on_failure="raise"` failed; built by
    `Agent` when one of its tools is such a tool."""

    async def tool_results(
        self, call: AgentCall, records: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        tools = call.tools or {}
        causes: dict[str, BaseException] = call.run.local(_CAUSES, dict)
        for record in records:
            if not record.is_error:
                continue
            spec = getattr(tools.get(record.name), "subagent", None)
            if spec is not None and spec.on_failure == "raise":
                raise ToolError(
                    f"{spec.label} failed, and its tool {record.name!r} fails the run "
                    f"(on_failure='raise'): {record.error or record.content}",
                    tool=record.name,
                ) from causes.pop(record.id, None)
        for record in records:  # kept for this answer's calls only
            causes.pop(record.id, None)
        return records


def raises_on_failure(tool: object) -> bool:
    """Whether `tool` is a sub-agent tool made with `on_failure="raise"`."""
    spec = getattr(tool, "subagent", None)
    return spec is not None and getattr(spec, "on_failure", None) == "raise"


__all__ = ["FailingSubagents", "keep_cause", "raises_on_failure"]
