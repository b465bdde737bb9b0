"""What one agent call produced (`InferenceResult`) and its parts.

These are pydantic models: they serialize to JSON and back (`model_dump_json` /
`model_validate_json`). The run loop builds them with `fastmodel.construct`, since every field
it fills is already of the right type; validation happens when they are read back from JSON.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from network.fastmodel import construct
from network.history import HistoryView
from network.messages import AssistantMessage, Message


def _jsonable(value: Any) -> Any:
    """A raw provider response as JSON where possible, else its repr."""
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # a provider object that cannot dump itself
            return repr(value)
    return repr(value)


RawResponse = Annotated[Any, PlainSerializer(_jsonable)]


class Usage(BaseModel):
    """Token counts of one inference, or totals over a run."""

    model_config = ConfigDict(defer_build=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return construct(
            Usage,
            {
                "prompt_tokens": self.prompt_tokens + other.prompt_tokens,
                "completion_tokens": self.completion_tokens + other.completion_tokens,
                "total_tokens": self.total_tokens + other.total_tokens,
            },
        )


class ToolCallRecord(BaseModel):
    """One tool call the model asked for, and what came of it."""

    model_config = ConfigDict(defer_build=True)

    id: str
    name: str
    arguments: Any = None
    result: Any = None  # what the handler returned (None on error)
    content: str = ""  # the text the model reads back
    is_error: bool = False
    error: str | None = None
    duration_ms: float = 0.0


class InferenceResult(BaseModel):
    """One agent call: one model inference plus the tool calls it asked for."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    agent: str
    input: str = ""
    prompt: list[Message] = Field(default_factory=list)  # the system instructions sent
    history: HistoryView | list[Message] = Field(default_factory=list)  # conversation sent
    output: list[Message] = Field(default_factory=list)  # the model's message(s)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    raw: RawResponse = None
    usage: Usage = Field(default_factory=Usage)
    started_at: float = 0.0  # seconds since the epoch
    duration_ms: float = 0.0
    state_delta: list[dict[str, Any]] = Field(default_factory=list)  # RFC 6902, temp: excluded
    skipped: bool = False  # on_start skipped the call

    @property
    def text(self) -> str | None:
        """The text of the agent's final message, if it had any."""
        for message in reversed(self.output):
            if isinstance(message, AssistantMessage) and message.content:
                return message.content
        return None

    def messages(self) -> list[Any]:
        """What this call adds to the conversation: its output, then its tool results."""
        from network.messages import ToolMessage

        if not self.tool_calls:
            return list(self.output)
        tool_messages = [
            construct(
                ToolMessage,
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": call.content,
                    "name": call.name,
                    "is_error": call.is_error,
                    "id": None,
                },
            )
            for call in self.tool_calls
        ]
        return [*self.output, *tool_messages]
