"""Messages and results: plain slotted records, validated when they cross a boundary."""

import weakref

import pytest
from pydantic import ValidationError

from network import AssistantMessage, InferenceResult, ToolCall, ToolMessage, Usage, UserMessage
from network.messages import message_adapter


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


def test_a_result_round_trips_through_dicts_and_json() -> None:
    result = InferenceResult(
        "a",
        output=[AssistantMessage("x", [ToolCall("1", "t", {"k": 1})], name="a")],
        usage=Usage(1, 2, 3),
        state_delta=[{"op": "add", "path": "/k", "value": 1}],
    )
    assert InferenceResult.from_dict(result.to_dict()) == result
    assert InferenceResult.from_json(result.to_json()) == result
    assert result.to_dict(mode="json", exclude={"history"}).keys() == {
        "agent", "input", "prompt", "output", "tool_calls", "raw", "usage", "started_at",
        "duration_ms", "state_delta", "skipped",
    }  # fmt: skip
    assert Usage(1, 2, 3) + Usage(1, 1, 1) == Usage(2, 3, 4)
