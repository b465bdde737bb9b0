"""AG-UI messages (`ag_ui.core`) to the network's own messages.

The client owns the conversation in AG-UI: every request carries all of it, including the
assistant messages and tool results it rebuilt from earlier runs' events. They become the
run's conversation as they are; the text of the last user message is the run's input.
Activity and reasoning messages are display-only and are left out.
"""

from __future__ import annotations

import json
from typing import Any

from network.history.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def text_of(content: Any) -> str:
    """Plain text of a message's content: a string, or the text parts of a part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def _arguments(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text  # kept as sent: a tool given it fails with an error the model sees


def convert(messages: list[Any]) -> list[Any]:
    """The network's messages for a list of AG-UI messages."""
    out: list[Any] = []
    for message in messages:
        role = message.role
        if role == "user":
            out.append(
                UserMessage(content=text_of(message.content), id=message.id, name=message.name)
            )
        elif role == "assistant":
            calls = [
                ToolCall(
                    id=call.id,
                    name=call.function.name,
                    arguments=_arguments(call.function.arguments),
                )
                for call in message.tool_calls or ()
            ]
            out.append(
                AssistantMessage(
                    content=message.content or None,
                    tool_calls=calls,
                    id=message.id,
                    name=message.name,
                )
            )
        elif role == "tool":
            out.append(
                ToolMessage(
                    tool_call_id=message.tool_call_id,
                    content=text_of(message.content),
                    is_error=message.error is not None,
                    id=message.id,
                )
            )
        elif role in ("system", "developer"):
            out.append(SystemMessage(content=text_of(message.content), id=message.id))
    return out


def input_text(messages: list[Any]) -> str:
    """The run's input: the text of the last user message ("" when there is none)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content
    return ""
