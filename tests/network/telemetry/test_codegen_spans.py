"""The span tree of the code-generation example, on its scripted models, with the real SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.codegen import TASK, build_network
from network import ThreadRef
from tests.network.telemetry.otel import Recorder, tree

pytestmark = pytest.mark.anyio


def _agent(name: str, tool: str | None) -> tuple[str, list[object]]:
    children: list[object] = [(f"chat scripted-{name}", [])]
    if tool is not None:
        children.append((f"execute_tool {tool}", []))
    return (f"invoke_agent {name}", children)


async def test_codegen_run_is_one_trace_with_the_exact_tree(
    tmp_path: Path, quiet_logs: None
) -> None:
    recorder = Recorder()
    network = build_network()
    network.telemetry = recorder.telemetry
    result = await network.run(TASK, thread=ThreadRef("thread-1", store=str(tmp_path / "t.db")))

    assert tree(recorder.spans) == [
        (
            "invoke_workflow codegen",
            [
                _agent("planner", None),
                _agent("coder", "write_files"),
                _agent("reviewer", "review"),
                _agent("coder", "write_files"),
                _agent("reviewer", "review"),
            ],
        )
    ]
    spans = recorder.spans
    assert {f"{span.context.trace_id:032x}" for span in spans} == {result.trace_id}
    root = recorder.only("invoke_workflow codegen")
    assert f"{root.context.span_id:016x}" == result.span_id
    assert root.parent is None
    assert dict(root.attributes) == {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.agent.name": "codegen",
        "gen_ai.conversation.id": "thread-1",
        "agent_network.run_id": result.run_id,
        "agent_network.stop_reason": "router_finished",
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": result.usage.completion_tokens,
    }

    coders = recorder.named("invoke_agent coder")
    first_coder = result.results[1]
    assert dict(coders[0].attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "scripted",
        "gen_ai.agent.name": "coder",
        "agent_network.role": "agent",
        "agent_network.call_index": 1,
        "gen_ai.request.model": "scripted-coder",
        "gen_ai.agent.description": "Writes the files the plan asks for.",
        "gen_ai.conversation.id": "thread-1",
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": first_coder.usage.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": 0,
        "agent_network.state.keys_written": ("files",),
    }
    assert [span.attributes["agent_network.call_index"] for span in coders] == [1, 3]
    planner = recorder.only("invoke_agent planner")
    assert planner.attributes["agent_network.state.keys_written"] == ("plan",)

    chats = recorder.named("chat scripted-coder")
    assert [chat.parent.span_id for chat in chats] == [c.context.span_id for c in coders]
    assert chats[0].kind.name == "CLIENT"
    assert dict(chats[0].attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted-coder",
        "gen_ai.agent.name": "coder",
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": first_coder.usage.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": 0,
    }

    writes = recorder.named("execute_tool write_files")
    assert [w.parent.span_id for w in writes] == [c.context.span_id for c in coders]
    assert dict(writes[0].attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "write_files",
        "gen_ai.tool.call.id": first_coder.tool_calls[0].id,
        "gen_ai.tool.type": "function",
    }
    # Each child lies within its agent's span: the recorded times, not the sink's.
    for span in spans:
        if span.parent is not None and span is not root:
            parent = next(s for s in spans if s.context.span_id == span.parent.span_id)
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time
