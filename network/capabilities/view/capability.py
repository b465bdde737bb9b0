"""`ConversationView`: the conversation an agent's request sends, declared per agent.

The conversation is one list every agent call appends to. Sent as it is, another agent's
answer would reach a model as an assistant turn, which it reads as something it said itself.
So, in a network of several agents, each request shows another agent's turns as context, in
user messages that name that agent:

- its text answer: `[agent 'planner' answered] ...`;
- each tool call it made: `[agent 'search' called tool web_search with {"q": "owls"}]`;
- each of those calls' results: `[tool web_search returned to agent 'search'] ...`.

The agent's own turns (and turns no agent made: the user's, a client's) are sent as they are.
That is the default view, `"all"`. The others:

- `"input"`: only this run's input (the latest user message that is the run's input, or a
  mapped branch's own input) and the agent's own turns after it: nothing of earlier runs on
  the thread, nothing of other agents (ADK's `include_contents="none"`);
- a function `fn(ctx, messages) -> messages` (sync or async): given the run's context and
  the `"all"` view, returns the messages to send (checked as messages; the conversation
  itself, and what is recorded, never changes).

`Network(view=...)` sets every agent's default (a network of several agents gets `"all"`
without asking; one of a single agent needs none); `Agent(view=...)` replaces it for one
agent. Only what is sent changes: history, threads and results keep every message as it was.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from network.errors import ConfigurationError, MessageError
from network.history.messages import AssistantMessage, ToolMessage, UserMessage, check_messages
from network.run.agent_call import AgentCall
from network.run.capability import Capability

VIEWS = ("all", "input")


class ConversationView(Capability):
    """Shapes the history an agent's request sends (see the module docstring)."""

    agent_overrides_network = True  # an agent's own view replaces its network's

    def __init__(self, view: str | Callable[..., Any] = "all", *, where: str = "") -> None:
        if not callable(view) and view not in VIEWS:
            raise ConfigurationError(
                f"{where or 'view'}: view must be 'all', 'input' or a function "
                f"fn(ctx, messages) -> messages, got {view!r}"
            )
        self.view = view
        self.where = where

    async def request(self, call: AgentCall) -> None:
        history = call.sent_history if call.sent_history is not None else call.history
        me = call.agent.name
        view = self.view
        if view == "input":
            shown: Sequence[Any] = _this_input(history, me, call.run.input)
        else:
            shown = as_context(history, me)
            if callable(view):
                shown = await self._chosen(call, view, shown)
        if shown is not history:
            call.sent_history = shown

    async def _chosen(self, call: AgentCall, fn: Callable[..., Any], shown: Any) -> list[Any]:
        chosen = fn(call.run, list(shown))
        if inspect.isawaitable(chosen):
            chosen = await chosen
        try:
            return check_messages(chosen)
        except Exception as exc:
            from pydantic import ValidationError  # noqa: PLC0415 (kept out of `import network`)

            if not isinstance(exc, ValidationError | TypeError):
                raise
            raise MessageError(
                f"agent {call.agent.name!r}: its view function returned something that is not "
                f"a list of messages: {exc}",
                index=None,
                field="view",
            ) from None

    def __repr__(self) -> str:
        return f"ConversationView({self.view!r})"


def as_context(history: Sequence[Any], me: str) -> Sequence[Any]:
    """`history` as agent `me` is sent it: other agents' turns as context (see the module
    docstring); `history` itself when it holds none."""
    if not any(_other(message, me) for message in history):
        return history
    owners: dict[str, str] = {}  # tool call id -> the other agent that made it
    shown: list[Any] = []
    for message in history:
        if _other(message, me):
            name = message.name
            for tool_call in message.tool_calls:
                owners[tool_call.id] = name
                shown.append(UserMessage(_called(name, tool_call.name, tool_call.arguments)))
            if message.content:
                shown.append(UserMessage(f"[agent {name!r} answered] {message.content}"))
        elif isinstance(message, AssistantMessage) and message.tool_calls:
            # An id belongs to the latest call that used it: models reuse ids across turns
            # ("call_0"), so an own call may carry an id another agent's call had before.
            for tool_call in message.tool_calls:
                owners.pop(tool_call.id, None)
            shown.append(message)
        elif isinstance(message, ToolMessage) and message.tool_call_id in owners:
            owner = owners[message.tool_call_id]
            shown.append(UserMessage(f"[tool {message.name} returned to agent {owner!r}] "
                                     f"{message.content}"))  # fmt: skip
        else:
            shown.append(message)
    return shown


def _other(message: Any, me: str) -> bool:
    return isinstance(message, AssistantMessage) and message.name not in (None, me)


def _called(agent: str, tool: str, arguments: Any) -> str:
    try:
        shown = json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(arguments)
    return f"[agent {agent!r} called tool {tool} with {shown}]"


def _this_input(history: Sequence[Any], me: str, run_input: str) -> list[Any]:
    """The run's input and agent `me`'s own turns after it (see the module docstring)."""
    start = None
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, UserMessage) and message.content == run_input:
            start = index
            break
    if start is None:
        return [UserMessage(run_input)]
    shown: list[Any] = [history[start]]
    mine: set[str] = set()
    for message in history[start + 1 :]:
        if isinstance(message, AssistantMessage):
            if message.name in (None, me):
                shown.append(message)
                mine.update(tool_call.id for tool_call in message.tool_calls)
        elif isinstance(message, ToolMessage):
            if message.tool_call_id in mine:
                shown.append(message)
        else:
            shown.append(message)  # a user's or a client's message in this run
    return shown


__all__ = ["VIEWS", "ConversationView", "as_context"]
