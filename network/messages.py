"""Conversation messages: pydantic models that serialize to JSON and back.

A message is one of four roles, told apart by the `role` field, so a list of them round-trips
through JSON with `MessageAdapter` / `MessageListAdapter`.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# Schemas are built on first use, not at import, so `import network` stays fast.
_LAZY = ConfigDict(defer_build=True)


class ToolCall(BaseModel):
    """A tool call requested by the model.

    `arguments` is the parsed JSON object the model sent; when the model sent text that is not
    valid JSON it holds that text unchanged, and the tool call fails with an error the model sees.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    name: str
    arguments: Any = Field(default_factory=dict)


class SystemMessage(BaseModel):
    """Instructions for the model."""

    model_config = _LAZY

    role: Literal["system"] = "system"
    content: str
    id: str | None = None


class UserMessage(BaseModel):
    """Input from the person or program that started the run."""

    model_config = _LAZY

    role: Literal["user"] = "user"
    content: str
    id: str | None = None
    name: str | None = None


class AssistantMessage(BaseModel):
    """A model's answer: text, tool calls, or both. `name` is the agent that produced it."""

    model_config = _LAZY

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    id: str | None = None
    name: str | None = None


class ToolMessage(BaseModel):
    """The result of one tool call, as the model will read it."""

    model_config = _LAZY

    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str
    name: str | None = None
    is_error: bool = False
    id: str | None = None


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
"""Any message; pydantic picks the class from `role`."""


@functools.cache
def message_adapter() -> TypeAdapter[Message]:
    """Validates any one message from Python data or JSON."""
    return TypeAdapter(Message)


@functools.cache
def message_list_adapter() -> TypeAdapter[list[Message]]:
    """Validates a list of messages from Python data or JSON."""
    return TypeAdapter(list[Message])


def text_of(message: Any) -> str | None:
    """The text content of an assistant message, or None when it has none."""
    content = getattr(message, "content", None)
    return content if content else None
