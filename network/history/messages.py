"""Conversation messages: slotted dataclasses that serialize to JSON and back.

A message is one of four roles, told apart by the `role` field, so a list of them round-trips
through JSON with `message_adapter()` / `message_list_adapter()`. The role is fixed by the class
(not an argument), so `UserMessage("hi")` and `ToolMessage("call_1", "ok")` read naturally.
Building a message does not validate it (the run loop builds several per step); anything read
from outside (JSON, a client, a thread store, `State(messages=...)`) is validated: see
`check_messages`. Messages take weak
references: `agents.models._wire` caches each one's wire form beside it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from network.history.record import Record

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema


@dataclass(slots=True)
class ToolCall(Record):
    """A tool call requested by the model.

    `arguments` is the parsed JSON object the model sent; when the model sent text that is not
    valid JSON it holds that text unchanged, and the tool call fails with an error the model sees.

    Attributes:
        id: the call's id, which its `ToolMessage` answers.
        name: the tool's name.
        arguments: the parsed arguments (see above).
    """

    id: str
    name: str
    arguments: Any = field(default_factory=dict)


class _Role(Record):
    """Base of the four messages: validating one reads its `role` field, which must be the
    class's (`AssistantMessage.from_dict({"role": "user", ...})` is a `ValidationError` at
    `role`; the field is `init=False`, so pydantic used to skip it and build the class asked
    for whatever role the data said)."""

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        if schema["type"] == "dataclass":
            for spec in schema["schema"]["fields"]:
                if spec["name"] == "role":  # its Literal, checked as the other fields are
                    spec["init"] = True
        return schema


@dataclass(slots=True, weakref_slot=True)
class SystemMessage(_Role):
    """Instructions for the model.

    Attributes:
        role: always "system".
        content: the instructions.
        id: a message id, if the caller gave one.
    """

    role: Literal["system"] = field(default="system", init=False)
    content: str
    id: str | None = None


@dataclass(slots=True, weakref_slot=True)
class UserMessage(_Role):
    """Input from the person or program that started the run.

    Attributes:
        role: always "user".
        content: the text.
        id: a message id, if the caller gave one.
        name: who wrote it, if known.
    """

    role: Literal["user"] = field(default="user", init=False)
    content: str
    id: str | None = None
    name: str | None = None


@dataclass(slots=True, weakref_slot=True)
class AssistantMessage(_Role):
    """A model's answer: text, tool calls, or both. `name` is the agent that produced it.

    Attributes:
        role: always "assistant".
        content: the text, or None when the model only called tools.
        tool_calls: the `ToolCall`s the model asked for.
        id: the message id (the AG-UI message id when the run streamed).
        name: the agent that produced it.
        reasoning: a reasoning model's thinking before this answer, when the server sent it
            (`reasoning_content` / `reasoning`), or an AG-UI client's reasoning message. Kept
            for the record and the UI; never sent back to the model.
    """

    role: Literal["assistant"] = field(default="assistant", init=False)
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    id: str | None = None
    name: str | None = None
    reasoning: str | None = None


@dataclass(slots=True, weakref_slot=True)
class ToolMessage(_Role):
    """The result of one tool call, as the model will read it.

    Attributes:
        role: always "tool".
        tool_call_id: the id of the `ToolCall` this answers.
        content: the text the model reads.
        name: the tool's name.
        is_error: True when the call failed; `content` says why.
        id: a message id, if any.
        model_only: text the model reads after `content` and no client is sent (the
            exception of a tool made with `private_errors=True`; `content` then holds only a
            reference to the server's log). Kept with the thread, for the model's later turns.
    """

    role: Literal["tool"] = field(default="tool", init=False)
    tool_call_id: str
    content: str
    name: str | None = None
    is_error: bool = False
    id: str | None = None
    model_only: str | None = None


class _ByRole:
    """`Annotated` marker: pydantic picks a message's class from its `role` field.

    The same tagged union as `Field(discriminator="role")` (same errors, same JSON schema),
    without importing pydantic when `network` is imported: the schema is built on first use.
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic_core import core_schema  # noqa: PLC0415 (pydantic: first validation only)

        choices: dict[Any, CoreSchema] = {
            cls.__dataclass_fields__["role"].default: handler.generate_schema(cls)
            for cls in get_args(source)
        }
        return core_schema.tagged_union_schema(choices, "role", from_attributes=True)


Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, _ByRole()]
"""Any message; pydantic picks the class from `role`."""

MESSAGE_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)


@functools.cache
def message_adapter() -> TypeAdapter[Message]:
    """Validates any one message from Python data or JSON."""
    from pydantic import TypeAdapter  # noqa: PLC0415 (pydantic: built on first use)

    return TypeAdapter(Message)


@functools.cache
def message_list_adapter() -> TypeAdapter[list[Message]]:
    """Validates a list of messages from Python data or JSON."""
    from pydantic import TypeAdapter  # noqa: PLC0415 (pydantic: built on first use)

    return TypeAdapter(list[Message])


@functools.cache
def _checking_adapter() -> TypeAdapter[list[Message]]:
    # Message instances are passed through unchecked by default; here every field is checked.
    from pydantic import ConfigDict, TypeAdapter  # noqa: PLC0415 (pydantic: built on first use)

    return TypeAdapter(list[Message], config=ConfigDict(revalidate_instances="always"))


def check_messages(messages: Any) -> list[Any]:
    """Messages handed in by a caller, checked field by field (dicts become messages).

    Returns new message objects; raises pydantic's `ValidationError`, which names the message's
    position and the bad field (`0.user.content: Input should be a valid string`).
    """
    return _checking_adapter().validate_python(list(messages))


def text_of(message: Any) -> str | None:
    """The text content of an assistant message, or None when it has none."""
    content = getattr(message, "content", None)
    return content if content else None


def shown_id(message: Any, index: int) -> str:
    """The id `message`, at `index` in its conversation, has as a client sees it.

    Its own id, else (a message stored without one: a run in Python writes its user message
    so) a tool result the id its result event was streamed with (`<toolCallId>:result`), and
    any other message an id made from its position, stable from snapshot to snapshot of the
    same thread. A client that sends the conversation back names each message by this id,
    which is how a server tells the messages it holds from the client's new ones.
    """
    if message.id:
        return str(message.id)
    if isinstance(message, ToolMessage):
        return f"{message.tool_call_id}:result"
    return f"msg_{index}"
