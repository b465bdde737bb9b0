"""`InferenceResult` and `Usage`: an agent call's record round-trips through dicts and JSON."""

from network import AssistantMessage, InferenceResult, ToolCall, Usage


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
        "duration_ms", "state_delta", "skipped", "model_calls", "output_value", "writes",
        "branch", "error", "handoff", "offered_tools", "answers",
    }  # fmt: skip
    assert Usage(1, 2, 3) + Usage(1, 1, 1) == Usage(2, 3, 4)
