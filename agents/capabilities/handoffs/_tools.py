"""The `transfer_to_<agent>` tools of an agent's handoffs: built from its `handoffs` list as it
is now, what each does when called, and which call of an answer made the handoff."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from agents.capabilities.handoffs.options import Handoff, as_handoff
from agents.tools.tool import Tool
from agents.tools.tool_context import ToolContext
from network.errors import ConfigurationError, StateError, ToolError
from network.history.handoffs import HandoffRecord
from network.history.messages import ToolCall
from network.history.results import ToolCallRecord


class HandoffTools:
    """The `transfer_to_...` tools of one agent's handoffs as they are now (`Agent.handoffs`
    is a list the application may still append to: these are rebuilt when it changed)."""

    __slots__ = ("by_tool", "key", "schemas", "tools")

    def __init__(self, owner: str, items: Sequence[Any], taken: Sequence[str]) -> None:
        self.key = tuple(id(item) for item in items)
        self.by_tool: dict[str, Handoff] = {}
        self.tools: dict[str, Tool] = {}
        for item in items:
            spec = as_handoff(owner, item)
            name = spec.tool_name
            if name in taken or name in self.by_tool:
                raise ConfigurationError(
                    f"agent {owner!r}: two tools would be named {name!r} (a handoff's "
                    f"`transfer_to_...` tool and another); give one handoff(tool_name=...)"
                )
            self.by_tool[name] = spec
            # `on_handoff` is the application's code (it may reach a database): what it raises
            # is the model's to read, screened from clients, as a sub-agent's failure is
            self.tools[name] = Tool(
                _transfer(spec),
                name=name,
                description=spec.tool_description(),
                private_errors=True,
            )
        self.schemas = [tool.schema for tool in self.tools.values()]

    def spec_for(self, target: str) -> Handoff | None:
        """The handoff to `target`, if the agent offers one."""
        for spec in self.by_tool.values():
            if spec.target == target:
                return spec
        return None

    def refuse_extra(
        self, calls: list[ToolCall]
    ) -> tuple[list[ToolCall], dict[str, ToolCallRecord]]:
        """Several handoffs in one answer: the first is made, the others are refused (error
        results, not run). The calls to run, and the refused calls' records by id."""
        first: ToolCall | None = None
        refused: dict[str, ToolCallRecord] = {}
        now = time.perf_counter()
        for call in calls:
            if call.name not in self.by_tool:
                continue
            if first is None:
                first = call
                continue
            target = self.by_tool[first.name].target
            message = (
                f"only one handoff per answer: this answer already hands the conversation to "
                f"{target!r}, so {call.name!r} was not made"
            )
            refused[call.id] = ToolCallRecord.failed(call, message, "MultipleHandoffs", now)
        if not refused:
            return calls, refused
        return [call for call in calls if call.id not in refused], refused

    def refuse_in_branch(
        self, calls: list[ToolCall], branch: str
    ) -> tuple[list[ToolCall], dict[str, ToolCallRecord]]:
        """Handoffs asked for inside parallel branch `branch`: each is refused (an error
        result the model reads, not run), since a branch is one of several side by side and
        none of them can take the conversation. The calls to run, and the refused ones'
        records by id."""
        now = time.perf_counter()
        refused = {
            call.id: ToolCallRecord.failed(
                call,
                f"{call.name!r} was not made: this agent runs in parallel branch {branch!r}, "
                "one of several side by side, where no handoff is followed; answer here instead",
                "HandoffInParallelBranch",
                now,
            )
            for call in calls
            if call.name in self.by_tool
        }
        if not refused:
            return calls, refused
        return [call for call in calls if call.id not in refused], refused

    def record_of(self, source: str, records: Sequence[ToolCallRecord]) -> HandoffRecord | None:
        """The handoff the call's tool records show made, if any (the first that succeeded)."""
        for record in records:
            spec = self.by_tool.get(record.name)
            if spec is None or record.is_error:
                continue
            arguments = record.arguments if isinstance(record.arguments, dict) else {}
            reason = arguments.get("reason")
            return HandoffRecord(
                source, spec.target, reason if isinstance(reason, str) else "", record.id
            )
        return None


def _transfer(spec: Handoff) -> Callable[..., Any]:
    """The function of `spec`'s tool: checks the target, runs `on_handoff`, answers."""

    async def transfer(
        ctx: ToolContext,
        reason: Annotated[str, "Why the conversation goes to this agent (optional)."] = "",
    ) -> str:
        network = ctx.network
        target = network.agents.get(spec.target)
        if target is None:
            raise ToolError(
                f"cannot hand off to agent {spec.target!r}: network {network.name!r} has no "
                f"such agent (agents: {', '.join(network.agents)})",
                tool=spec.tool_name,
            )
        if not isinstance(spec.agent, str) and target is not spec.agent:
            raise ToolError(
                f"cannot hand off to agent {spec.target!r}: the agent of that name in network "
                f"{network.name!r} is another one",
                tool=spec.tool_name,
            )
        if spec.on_handoff is not None:
            try:
                done = spec.on_handoff(ctx)
                if inspect.isawaitable(done):
                    await done
            except StateError as exc:
                raise ToolError(
                    f"handoff to {spec.target!r} refused: on_handoff's state write failed: {exc}",
                    tool=spec.tool_name,
                ) from exc
        return f"Transferred to {spec.target}: it has the conversation now."

    return transfer
