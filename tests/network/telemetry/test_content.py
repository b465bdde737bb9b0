"""Privacy: no content in any span by default; opt-in content never shows `temp:` values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.network.telemetry.ops_network import SECRET, build
from tests.network.telemetry.otel import Recorder, every_value

pytestmark = pytest.mark.anyio

TASK = "Check the weather in Paris, then deploy."
CONTENT = [
    "Check the weather",  # the user's input
    "You run operations",  # the system instructions
    "Paris",  # a tool argument and a state value
    "sunny",  # a tool result
    "testing",  # an argument of the failing tool (and its error message)
    "production",  # the argument of the confirmed tool
    "All done",  # the final completion
]


async def _run(recorder: Recorder) -> None:
    network = build(recorder.telemetry)
    first = await network.run(TASK, state={"temp:token": SECRET})
    await network.run(first.resume([first.interrupts[0].accept()]))


async def test_no_content_attribute_by_default(
    quiet_logs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    recorder = Recorder()
    await _run(recorder)
    values = "\n".join(every_value(recorder.spans))
    for text in [*CONTENT, SECRET]:
        assert text not in values
    names = {key for span in recorder.spans for key in span.attributes}
    assert not names & {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "agent_network.state.values",
    }


async def test_the_environment_variable_turns_content_on_without_temp_values(
    quiet_logs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    recorder = Recorder()
    await _run(recorder)
    values = "\n".join(every_value(recorder.spans))
    for text in CONTENT:
        assert text in values
    assert SECRET not in values  # rendered into the instructions, scrubbed from them
    chat = recorder.named("chat scripted-ops")[0]
    instructions = json.loads(chat.attributes["gen_ai.system_instructions"])
    assert instructions == [{"type": "text", "content": "You run operations. Token: [temp:token]"}]
    assert json.loads(chat.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": TASK}]}
    ]
    output = json.loads(chat.attributes["gen_ai.output.messages"])
    assert [part["name"] for part in output[0]["parts"]] == ["lookup", "lookup", "explode"]
    explode = recorder.only("execute_tool explode")
    assert json.loads(explode.attributes["gen_ai.tool.call.arguments"]) == {"reason": "testing"}
    assert "boom because testing" in explode.attributes["gen_ai.tool.call.result"]
    step = recorder.named("invoke_agent ops")[0]
    assert json.loads(step.attributes["agent_network.state.values"]) == {"seen": ["Paris", "Oslo"]}


async def test_redact_changes_or_drops_content_attributes(quiet_logs: None) -> None:
    seen: list[str] = []

    def redact(name: str, value: Any) -> Any:
        seen.append(name)
        if name == "gen_ai.tool.call.arguments":
            return None  # dropped
        if name == "gen_ai.tool.call.result":
            return "[redacted]"
        return value

    recorder = Recorder(capture_content=True, redact=redact)
    await _run(recorder)
    tools = [s for s in recorder.spans if s.name.startswith("execute_tool")]
    assert tools
    for span in tools:
        assert "gen_ai.tool.call.arguments" not in span.attributes
        assert span.attributes["gen_ai.tool.call.result"] == "[redacted]"
    assert "gen_ai.input.messages" in seen


async def test_the_option_wins_over_the_environment(
    quiet_logs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    recorder = Recorder(capture_content=False)
    await _run(recorder)
    values = "\n".join(every_value(recorder.spans))
    assert "sunny" not in values


CONTENT_ATTRIBUTES = (
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "agent_network.state.values",
)


async def test_masking_temp_values_keeps_every_content_attribute_valid_json(
    quiet_logs: None,
) -> None:
    """Short texts and numbers in `temp:` keys: masked inside the texts only, never in the
    JSON's structure ("content", "role", ...) nor in its numbers."""
    from agents import Agent, ScriptedModel, tool
    from agents.models.scripted import call
    from network import Network

    @tool
    def count(items: int, label: str) -> dict[str, Any]:
        """Count things."""
        return {"items": items, "total": items * 3 + 5, "label": label}

    model = ScriptedModel(
        [call("count", items=5, label="content in en"), "The content is in en: 5 of 15."]
    )
    agent = Agent(
        "writer",
        system="Answer in {temp:lang}, at most {temp:n} items.",
        model=model,
        tools=[count],
        output_key="answer",
    )
    recorder = Recorder(capture_content=True)
    network = Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.call_count < 2 else None,  # the tool call, then the answer
        telemetry=recorder.telemetry,
    )
    await network.run("Count, please.", state={"temp:lang": "en", "temp:n": 5})

    found = {}
    for span in recorder.spans:
        for name in CONTENT_ATTRIBUTES:
            if name in span.attributes:
                found.setdefault(name, []).append(json.loads(span.attributes[name]))
    assert set(found) == set(CONTENT_ATTRIBUTES)  # each one recorded, each one valid JSON
    first_chat = found["gen_ai.system_instructions"][0]
    assert first_chat == [
        {"type": "text", "content": "Answer in [temp:lang], at most 5 items."}
    ]  # the text masked; the number (not a text) kept
    assert found["gen_ai.tool.call.arguments"] == [
        {"items": 5, "label": "cont[temp:lang]t in [temp:lang]"}
    ]
    assert found["gen_ai.tool.call.result"][0] == {
        "items": 5,
        "total": 20,
        "label": "cont[temp:lang]t in [temp:lang]",
    }
    output = found["gen_ai.output.messages"][-1]
    assert output == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "The cont[temp:lang]t is in [temp:lang]: 5 of 15."}
            ],
        }
    ]
    assert found["agent_network.state.values"] == [
        {"answer": "The cont[temp:lang]t is in [temp:lang]: 5 of 15."}
    ]


@pytest.mark.parametrize("hook", ["none", "keeps", "drops"])
async def test_a_failed_runs_message_masks_temp_values_and_goes_through_redact(
    hook: str, quiet_logs: None
) -> None:
    """With content on, the root's status says why the run failed: an error that quotes a
    `temp:` value (a router's, say) had it written to the span as it was."""
    from agents import Agent, ScriptedModel
    from network import Network, RunContext

    agent = Agent("ops", model=ScriptedModel(["Done."]))

    def router(ctx: RunContext) -> Any:
        if ctx.last_result is None:
            return agent
        raise RuntimeError(f"cannot route with token {ctx.kv.get('temp:token')}")

    seen: dict[str, Any] = {}

    def redact(name: str, value: Any) -> Any:
        seen[name] = value
        return None if hook == "drops" and name == "exception.message" else value

    recorder = Recorder(capture_content=True, redact=None if hook == "none" else redact)
    network = Network("ops-net", agents=[agent], router=router, telemetry=recorder.telemetry)
    with pytest.raises(RuntimeError):
        await network.run("Go.", state={"temp:token": SECRET})

    root = recorder.only("invoke_workflow ops-net")
    assert root.status.status_code.name == "ERROR"
    assert root.attributes["error.type"] == "RuntimeError"
    assert SECRET not in "\n".join(every_value(recorder.spans))
    if hook == "drops":
        assert not root.status.description
    else:
        assert root.status.description == "RuntimeError: cannot route with token [temp:token]"
    if hook != "none":  # the hook sees the message as it was, as it sees every attribute
        assert seen["exception.message"] == f"RuntimeError: cannot route with token {SECRET}"
