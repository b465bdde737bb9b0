"""Servers that answer as careless or hostile ones may (`hostile_server.py`, a real process over
stdio): what they send reaches the model bounded, as a value or an error it can read, and
never fails the run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, MCPServer, ScriptedModel, call

HOSTILE = Path(__file__).with_name("hostile_server.py")

pytestmark = pytest.mark.anyio


def hostile(mode: str, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [str(HOSTILE), mode], **options)


def records(result: Any) -> list[Any]:
    return [record for step in result.state.results for record in step.tool_calls]


async def test_a_text_nested_past_any_parser_is_kept_as_text() -> None:
    # "a text holding a JSON object or array is parsed": one no parser can take stays a text
    # (it was an error result reading "raised RecursionError")
    model = ScriptedModel([call("deep"), "read it"])
    result = await Agent("a", tools=[hostile("nested")], model=model).run("x")
    (record,) = records(result)
    assert not record.is_error, record.error
    assert record.result == "[" * 100_000 + "]" * 100_000
    assert result.output == "read it"
