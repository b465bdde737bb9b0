"""Messages: plain slotted records, validated when they cross a boundary."""

import json
import weakref
from typing import Any

import pytest
from pydantic import ValidationError

from network import (
    AssistantMessage,
    InferenceResult,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from network.history.messages import message_adapter


def test_the_role_is_the_class_s_and_the_content_comes_first() -> None:
    assert UserMessage("hi") == UserMessage(content="hi")
    assert UserMessage("hi").role == "user"
    assert ToolMessage("call_1", "ok").to_dict() == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "ok",
        "name": None,
        "is_error": False,
        "id": None,
        "model_only": None,
    }
    with pytest.raises(TypeError):
        UserMessage("hi", role="assistant")  # type: ignore[call-arg]  # the class fixes the role


def test_records_hold_no_per_instance_dict() -> None:
    # The point of the records: a run keeps thousands of them.
    for record in (UserMessage("hi"), ToolCall("1", "t"), Usage(), InferenceResult("a")):
        assert not hasattr(record, "__dict__")
    weakref.ref(AssistantMessage("x"))  # the wire cache keys messages by weak reference


def test_bad_data_from_outside_is_a_validation_error_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="tool_call_id"):
        message_adapter().validate_python({"role": "tool", "content": "ok"})
    with pytest.raises(ValidationError, match="tool_calls"):
        AssistantMessage.from_dict({"content": "x", "tool_calls": [{"name": "t"}]})
    with pytest.raises(ValidationError, match="usage"):
        InferenceResult.from_json('{"agent": "a", "usage": {"prompt_tokens": "many"}}')


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        (AssistantMessage, {"role": "user", "content": "hi"}),
        (UserMessage, {"role": "assistant", "content": "hi"}),
        (ToolMessage, {"role": "user", "tool_call_id": "c", "content": "ok"}),
        (SystemMessage, {"role": "tool", "content": "be brief"}),
    ],
)
def test_a_role_that_is_not_the_class_s_is_a_validation_error_naming_it(
    cls: type[Any], data: dict[str, Any]
) -> None:
    # it was ignored: a dict with role "user" became an AssistantMessage
    with pytest.raises(ValidationError, match=r"(?s)^1 validation error.*\nrole\n"):
        cls.from_dict(data)
    with pytest.raises(ValidationError, match=r"(?s)\nrole\n"):
        cls.from_json(json.dumps(data))
    own = {**data, "role": cls.__dataclass_fields__["role"].default}
    assert cls.from_dict(own).role == own["role"]
    assert cls.from_dict({k: v for k, v in data.items() if k != "role"}).role == own["role"]


def test_messages_handed_in_are_checked_where_they_enter() -> None:
    from agents import ScriptedModel
    from network import MessageError, State

    with pytest.raises(MessageError, match=r"message 0, content") as refused:
        State(messages=[UserMessage(123)])  # type: ignore[arg-type]
    assert (refused.value.index, refused.value.field) == (0, "content")
    state = State(messages=[{"role": "user", "content": "hi"}])  # dicts become messages
    assert list(state.messages) == [UserMessage("hi")]
    with pytest.raises(ValidationError, match=r"tool_calls\.0\.name"):
        ScriptedModel([AssistantMessage(None, [ToolCall("1", None)])])  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_bad_user_message_for_a_thread_changes_nothing() -> None:
    from network.threads import MemoryStore

    store = MemoryStore()
    await store.create_thread("t", app_name="app")
    with pytest.raises(ValidationError, match="content"):
        await store.append_user_message("t", ["not", "text"], revision=0)
    thread = await store.get_thread("t")
    assert thread is not None and thread.revision == 0 and thread.messages == []
