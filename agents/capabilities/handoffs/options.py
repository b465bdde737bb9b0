"""Handoffs (the options of the handoffs capability): an agent hands the conversation to another
through a `transfer_to_<agent>` tool.

    faq = Agent("faq", description="Answers questions about the airline.", ...)
    booking = Agent("booking", description="Changes seats on a flight.", ...)
    triage = Agent("triage", handoffs=[faq, handoff(booking, on_handoff=remember_flight)])
    network = Network("airline", agents=[triage, faq, booking])  # no router: handoffs lead

Each target is offered to the model as one tool, `transfer_to_<name>` (the name made safe for
every provider: accents dropped, lower case, `[a-z0-9_-]`, at most 64 characters), described by
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

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents.tools.tool_context import ToolContext
from network.errors import ConfigurationError
from network.history.messages import AssistantMessage, Message, ToolMessage
from network.run.context import AgentLike
from network.run.tool_names import TOOL_NAME, made_safe

TOOL_PREFIX = "transfer_to_"
_MAX_TOOL_NAME = 64  # what OpenAI-compatible servers accept

OnHandoff = Callable[[ToolContext], Any]
InputFilter = Callable[[list[Message]], Sequence[Message] | Awaitable[Sequence[Message]]]


def handoff_tool_name(agent_name: str) -> str:
    """`transfer_to_<agent_name>`, made safe as a tool name (see the module docstring)."""
    safe = made_safe(agent_name).lower() or "agent"  # "Équipe": transfer_to_equipe
    return (TOOL_PREFIX + safe)[:_MAX_TOOL_NAME]


class Handoff:
    """A handoff to `agent` for `Agent(handoffs=[...])` (see the module docstring); a bare
    agent in the list is `handoff(agent)`. `handoff(...)` is the same.

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

    The options are kept as attributes of the same names (`tool_name` the one the model
    calls, given or made), and `target` is the target's name.
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
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
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


handoff = Handoff
"""`handoff(agent, ...)`: a `Handoff`, in the spelling the docs use."""


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
