"""The client tools capability: tools with no function, run by whoever called the network.

An agent's own client tools (`Agent(tools=[client_tool(...)])`) and the tools a caller
declares for one run (an AG-UI client's `RunAgentInput.tools`) are offered to the model; a
call of one is not run here: it joins `RunContext.engine.pending_tool_calls` and the run ends with
stop reason "client_tool" (see `network.run.client_tools` for the whole flow). A function tool
of the agent wins over a client tool of the same name.
"""

from __future__ import annotations

from collections.abc import Sequence

from network.history.messages import ToolCall
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.client_tools import ClientTool


class ClientTools(Capability):
    """Client tools: `offered` is True for tools the agent does not list itself (a run's
    declared tools, offered to every agent), False for an agent's own (already offered)."""

    def __init__(self, tools: Sequence[ClientTool], *, offered: bool) -> None:
        self.tools = tuple(tools)
        self.names = frozenset(tool.name for tool in self.tools)
        if not offered:
            self.request = None  # type: ignore[assignment]

    async def request(self, call: AgentCall) -> None:
        own = call.tools or {}
        extra = [tool.schema for tool in self.tools if tool.name not in own]
        if extra:
            call.schemas = [*(call.schemas or ()), *extra]

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        own = call.tools or {}
        names = self.names
        runnable: list[ToolCall] = []
        deferred: list[ToolCall] = []
        for tool_call in calls:
            if tool_call.name in names and tool_call.name not in own:
                deferred.append(tool_call)
            else:
                runnable.append(tool_call)
        if deferred:
            run = call.run
            run.engine.pending_tool_calls = (*run.engine.pending_tool_calls, *deferred)
        return runnable

    def __repr__(self) -> str:
        return f"ClientTools({sorted(self.names)!r})"
