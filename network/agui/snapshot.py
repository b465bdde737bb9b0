"""A stored conversation as AG-UI messages, for the MESSAGES_SNAPSHOT a returning client gets.

MESSAGES_SNAPSHOT replaces the client's messages and drops every one it omits, so it carries
the whole conversation: user messages, assistant messages with their tool calls (arguments as
JSON text), tool results (`error` set for a failed call). A tool result without an id gets
the id its TOOL_CALL_RESULT was streamed with (`<toolCallId>:result`), so a client that saw
the run already holds it under that id; any other message without one gets an id made from
its position, stable from snapshot to snapshot of the same thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    MessagesSnapshotEvent,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from network.history import messages as ours


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, separators=(",", ":"), default=str)


def message_id(message: Any, index: int) -> str:
    """The id `message` (at `index` in its conversation) has in a snapshot (`shown_id`)."""
    return ours.shown_id(message, index)


def agui_messages(conversation: Iterable[Any]) -> list[Any]:
    """The AG-UI messages of a conversation of the network's own messages."""
    out: list[Any] = []
    for index, message in enumerate(conversation):
        message_id_ = message_id(message, index)
        if isinstance(message, ours.UserMessage):
            out.append(UserMessage(id=message_id_, content=message.content or ""))
        elif isinstance(message, ours.AssistantMessage):
            calls = [
                ToolCall(
                    id=call.id,
                    function=FunctionCall(name=call.name, arguments=_arguments(call.arguments)),
                )
                for call in message.tool_calls
            ]
            out.append(
                AssistantMessage(id=message_id_, content=message.content, tool_calls=calls or None)
            )
        elif isinstance(message, ours.ToolMessage):
            out.append(
                ToolMessage(
                    id=message_id_,
                    tool_call_id=message.tool_call_id,
                    content=message.content,
                    error=message.content if message.is_error else None,
                )
            )
    return out


def messages_snapshot(conversation: Iterable[Any]) -> MessagesSnapshotEvent:
    """MESSAGES_SNAPSHOT of the whole conversation."""
    return MessagesSnapshotEvent(messages=agui_messages(conversation))
