"""Handoffs: an agent hands the conversation to another through a `transfer_to_<agent>` tool.

    faq = Agent("faq", description="Answers questions about the airline.", ...)
    booking = Agent("booking", description="Changes seats on a flight.", ...)
    triage = Agent("triage", handoffs=[faq, handoff(booking, on_handoff=remember_flight)])
    network = Network("airline", agents=[triage, faq, booking])  # no router: handoffs lead

Each target is offered to the model as one tool, `transfer_to_<name>` (the name made safe for
every provider: lower case, `[a-z0-9_-]`, at most 64 characters), described by
`handoff(description=...)` or else by the target's own `description`. Its one optional
argument, `reason`, is kept with the handoff.

A call of it, when it succeeds, is the call's `HandoffRecord` (`InferenceResult.handoff`,
`ctx.handoff` for routers): the target becomes the active agent, the run goes on with it
unless the router chooses otherwise, and a thread's next turn starts with it. What can go
wrong is an error result the model reads, never a crash: a target that is not in the network,
a tool the agent was not offered (a handoff not in its list), an `on_handoff` that raised or
whose state write did not validate (its writes are then undone, as for any tool). When one
answer asks for several handoffs, the first is made and the others are refused.

`on_handoff(ctx)` (sync or async) runs when the handoff is made, with the call's
`ToolContext`: it may write state (`ctx.kv.set(...)`), validated like any write.
`input_filter(history)` (sync or async) decides what the target is sent of the conversation
as it stood at the handoff, for the target's calls in the run that handed it the
conversation (what the target adds after it is sent whole). `without_tool_calls` is one.
"""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from agents.tools.tool import Tool
from agents.tools.tool_context import ToolContext
from network.errors import ConfigurationError, StateError, ToolError
from network.history.handoffs import HandoffRecord
from network.history.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    check_messages,
)
from network.history.results import ToolCallRecord
from network.run.context import AgentLike, RunContext

TOOL_PREFIX = "transfer_to_"
_UNSAFE = re.compile(r"[^a-z0-9_-]+")
_MAX_TOOL_NAME = 64  # what OpenAI-compatible servers accept

OnHandoff = Callable[[ToolContext], Any]
InputFilter = Callable[[list[Message]], Sequence[Message] | Awaitable[Sequence[Message]]]


def handoff_tool_name(agent_name: str) -> str:
    """`transfer_to_<agent_name>`, made safe as a tool name (see the module docstring)."""
    safe = _UNSAFE.sub("_", agent_name.strip().lower()).strip("_") or "agent"
    return (TOOL_PREFIX + safe)[:_MAX_TOOL_NAME]


class Handoff:
    """A handoff an agent may make; build one with `handoff(...)` (a bare agent in
    `Agent(handoffs=[...])` is `handoff(agent)`).

    Attributes:
        agent: the target (an agent, or an agent's name).
        target: the target's name.
        tool_name: the tool the model calls (`transfer_to_<target>`).
        description: what the model reads about it.
        on_handoff: `fn(ctx: ToolContext)`, sync or async, run when the handoff is made.
        input_filter: `fn(history) -> history`, sync or async: what the target is sent.
    """

    __slots__ = ("agent", "description", "input_filter", "on_handoff", "target", "tool_name")

    def __init__(
        self,
        agent: AgentLike | str,
        *,
        description: str | None = None,
        on_handoff: OnHandoff | None = None,
        input_filter: InputFilter | None = None,
        tool_name: str | None = None,
    ) -> None:
        target = agent if isinstance(agent, str) else getattr(agent, "name", None)
        if not isinstance(target, str) or not target:
            raise ConfigurationError(f"handoff: {agent!r} is not an agent or an agent's name")
        for label, function in (("on_handoff", on_handoff), ("input_filter", input_filter)):
            if function is not None and not callable(function):
                raise ConfigurationError(f"handoff to {target!r}: {label} must be a function")
        if description is not None and not isinstance(description, str):
            raise ConfigurationError(f"handoff to {target!r}: description must be a string")
        name = tool_name if tool_name is not None else handoff_tool_name(target)
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            raise ConfigurationError(
                f"handoff to {target!r}: tool name {name!r} must be 1 to 64 letters, digits, "
                "'_' or '-'"
            )
        self.agent = agent
        self.target = target
        self.tool_name = name
        self.description = description
        self.on_handoff = on_handoff
        self.input_filter = input_filter

    def tool_description(self) -> str:
        """What the model reads about the tool: the description given, else the target's."""
        if self.description:
            return self.description
        about = "" if isinstance(self.agent, str) else getattr(self.agent, "description", "")
        text = f"Hand the conversation over to the agent {self.target!r}."
        return f"{text} {about}" if about else text

    def __repr__(self) -> str:
        return f"handoff({self.target!r}, tool_name={self.tool_name!r})"


def handoff(
    agent: AgentLike | str,
    *,
    description: str | None = None,
    on_handoff: OnHandoff | None = None,
    input_filter: InputFilter | None = None,
    tool_name: str | None = None,
) -> Handoff:
    """A handoff to `agent` for `Agent(handoffs=[...])` (see the module docstring).

    Args:
        agent: the target: an agent, or the name of an agent of the network.
        description: what the model reads about the `transfer_to_...` tool (default: the
            target's `description`).
        on_handoff: `fn(ctx: ToolContext)`, sync or async, run when the handoff is made; its
            state writes are validated like any tool's, and undone (with the handoff refused
            to the model) when one fails or the function raises.
        input_filter: `fn(history: list[Message]) -> Sequence[Message]`, sync or async: what
            the target is sent of the conversation as it was at the handoff (for its calls in
            that run). `without_tool_calls` is one.
        tool_name: the tool's name (default `transfer_to_<target>`, made safe).
    """
    return Handoff(
        agent,
        description=description,
        on_handoff=on_handoff,
        input_filter=input_filter,
        tool_name=tool_name,
    )


def without_tool_calls(history: list[Message]) -> list[Message]:
    """An `input_filter`: the conversation without tool calls and their results (assistant
    messages keep their text; those that only called tools are left out)."""
    kept: list[Message] = []
    for message in history:
        if isinstance(message, ToolMessage):
            continue
        if isinstance(message, AssistantMessage) and message.tool_calls:
            if not message.content:
                continue
            message = AssistantMessage(message.content, [], message.id, message.name)
        kept.append(message)
    return kept


def coerce_handoffs(owner: str, items: Sequence[Any]) -> list[Any]:
    """`Agent(handoffs=...)` checked: agents, names and `Handoff`s (a `ConfigurationError`
    naming the agent for anything else)."""
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise ConfigurationError(f"agent {owner!r}: handoffs must be a list, got {items!r}")
    for item in items:
        as_handoff(owner, item)
    return list(items)


def as_handoff(owner: str, item: Any) -> Handoff:
    """One item of an agent's `handoffs` as a `Handoff`."""
    if isinstance(item, Handoff):
        return item
    if isinstance(item, str) or (
        isinstance(getattr(item, "name", None), str) and callable(getattr(item, "call", None))
    ):
        return Handoff(item)
    raise ConfigurationError(
        f"agent {owner!r}: handoffs takes agents, agent names and handoff(...), got {item!r}"
    )


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
            self.tools[name] = Tool(_transfer(spec), name=name, description=spec.tool_description())
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


def in_model_order(
    calls: Sequence[ToolCall],
    records: list[ToolCallRecord],
    refused: dict[str, ToolCallRecord],
) -> list[ToolCallRecord]:
    """The records of the calls run and of the refused handoffs, in the model's order (calls
    that did not run here, a client's or a person's to answer, have no record)."""
    ordered: list[ToolCallRecord] = []
    ran = iter(records)
    pending = next(ran, None)
    for call in calls:
        if call.id in refused:
            ordered.append(refused.pop(call.id))
        elif pending is not None and pending.id == call.id:
            ordered.append(pending)
            pending = next(ran, None)
    if pending is not None:
        ordered.append(pending)
    ordered.extend(ran)
    return ordered


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


async def handed_history(agent: AgentLike, ctx: RunContext, history: Any) -> Any:
    """The history `agent` is sent: `history` as it is, unless a handoff in this run handed
    the agent the conversation with an `input_filter`; then the filter's view of the
    conversation up to the handoff, and whole what came after it."""
    results = ctx.state.results
    count = len(results)
    own = 0  # messages the agent's own calls added since the handoff
    for back in range(1, min(ctx.call_count, count) + 1):
        result = results[count - back]
        made = result.handoff
        if made is None and result.agent == agent.name and result.branch is None:
            if not result.skipped:
                own += len(result.output) + len(result.tool_calls)
            continue
        if made is None or made.target != agent.name:
            return history
        source = ctx.network.agents.get(made.source)
        tools = getattr(source, "handoff_tools", None)
        spec = tools().spec_for(agent.name) if callable(tools) else None
        if spec is None or spec.input_filter is None:
            return history
        messages = list(history)
        cut = len(messages) - own
        kept = spec.input_filter(messages[:cut])
        if inspect.isawaitable(kept):
            kept = await kept
        if isinstance(kept, str) or not isinstance(kept, Sequence):
            raise ConfigurationError(
                f"handoff from {made.source!r} to {agent.name!r}: input_filter must return a "
                f"list of messages, got {type(kept).__name__}"
            )
        try:
            kept = check_messages(kept)  # dicts become messages; anything else is refused
        except ValueError as exc:  # pydantic's ValidationError names the message and field
            raise ConfigurationError(
                f"handoff from {made.source!r} to {agent.name!r}: input_filter returned a "
                f"message that is not one: {exc}"
            ) from exc
        return [*kept, *messages[cut:]]
    return history
