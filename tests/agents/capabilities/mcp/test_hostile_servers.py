"""Servers that answer as careless or hostile ones may (`hostile_server.py`, a real process over
stdio): what they send reaches the model bounded, as a value or an error it can read, and
never fails the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, MCPServer, MCPServerError, ScriptedModel, call
from agents.capabilities.mcp._bounds import MAX_DESCRIPTION
from agents.capabilities.mcp.tool import DEFAULT_CALL_TIMEOUT, MCPTool

HOSTILE = Path(__file__).with_name("hostile_server.py")

pytestmark = pytest.mark.anyio


def hostile(mode: str, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [str(HOSTILE), mode], **options)


def records(result: Any) -> list[Any]:
    return [record for step in result.state.results for record in step.tool_calls]


def told(model: ScriptedModel, request: int) -> list[str]:
    return [str(m.content) for m in model.requests[request].messages if m.role == "tool"]


async def test_a_text_nested_past_any_parser_is_kept_as_text() -> None:
    # "a text holding a JSON object or array is parsed": one no parser can take stays a text
    # (it was an error result reading "raised RecursionError")
    model = ScriptedModel([call("deep"), "read it"])
    result = await Agent("a", tools=[hostile("nested")], model=model).run("x")
    (record,) = records(result)
    assert not record.is_error, record.error
    assert record.result == "[" * 100_000 + "]" * 100_000
    assert result.output == "read it"


async def test_an_error_past_max_result_bytes_is_not_shown_either() -> None:
    # the server's JSON-RPC error of 2 MB ('boom yyy...'): the model reads its size, as for
    # a result that big (it read the 2 MB)
    model = ScriptedModel([call("deep"), "failed"])
    server = hostile("loud", max_result_bytes=10_000)
    result = await Agent("a", tools=[server], model=model).run("x")
    (record,) = records(result)
    assert record.is_error
    assert record.error == (
        "tool 'deep' failed: MCP server 'hostile' failed with an error of 2,000,005 bytes, over "
        "the limit of 10,000 (max_result_bytes); none of it is shown"
    )
    assert max(len(text) for text in told(model, 1)) < 1000
    assert result.output == "failed"


async def test_with_no_limit_the_error_is_shown_whole() -> None:
    model = ScriptedModel([call("deep"), "failed"])
    server = hostile("loud", max_result_bytes=None)
    result = await Agent("a", tools=[server], model=model).run("x")
    (record,) = records(result)
    assert record.is_error and record.error is not None
    assert record.error.startswith(
        "tool 'deep' failed: MCP server 'hostile' failed: MCPError: boom"
    )
    assert len(record.error) > 2_000_000


async def test_a_listing_never_answered_fails_naming_the_deadline() -> None:
    import mcp.client.client  # noqa: F401 (loaded first: the deadline is the server's)

    # the handshake answered, the listing never: it read "listing its tools failed: TimeoutError"
    agent = Agent("a", tools=[hostile("mute", connect_timeout=3)], model=ScriptedModel(["no"]))
    with pytest.raises(MCPServerError) as raised:
        await agent.run("x")
    assert str(raised.value) == (
        "MCP server 'hostile': listing its tools failed: no answer within connect_timeout=3 s"
    )


async def test_an_unknown_tool_among_hundreds_is_an_error_of_bounded_size() -> None:
    # 500 names listed whole (an MCP server's 20,000 made an error of 149,000 characters)
    model = ScriptedModel([call("t500"), "no such tool"])
    result = await Agent("a", tools=[hostile("crowded")], model=model).run("x")
    (record,) = records(result)
    assert record.is_error and record.error is not None
    assert record.error.startswith("unknown tool 't500' (available: t0, t1, ")
    assert record.error.endswith(", t49 and 450 more)")
    assert len(model.requests[0].tools or []) == 500  # every one offered, only the error is cut


async def test_an_answer_the_sdk_refuses_is_told_by_where_and_why() -> None:
    # the SDK checks a listing as a whole, so `allowed_tools` cannot leave a tool of it out: a
    # tool it refuses fails every one (pydantic's text, links and input echoes, is not shown)
    server = hostile("sloppy", allowed_tools=["deep"])
    with pytest.raises(MCPServerError) as raised:
        await Agent("a", tools=[server], model=ScriptedModel(["no"])).run("x")
    assert str(raised.value) == (
        "MCP server 'hostile': listing its tools failed: its answer is not a valid "
        "ListToolsResult: tools.1.inputSchema.type: Field required"
    )


async def test_a_call_answered_with_what_is_not_a_result_is_an_error_the_model_reads() -> None:
    model = ScriptedModel([call("deep"), "failed"])
    result = await Agent("a", tools=[hostile("garbled")], model=model).run("x")
    (record,) = records(result)
    assert record.error == (
        "tool 'deep' failed: MCP server 'hostile' failed: its answer is not a valid "
        "CallToolResult: content: Input should be a valid list"
    )
    assert result.output == "failed"


async def test_a_reference_the_schema_cannot_resolve_is_an_error_naming_it() -> None:
    # it read "tool 'deep' raised _WrappedReferencingError: PointerToNowhere: ... within
    # {the whole schema}"; nothing is fetched, and the call is not sent
    model = ScriptedModel([[call("deep", a=1), call("deep", b=2), call("deep")], "done"])
    result = await Agent("a", tools=[hostile("referring")], model=model).run("x")
    web, nowhere, plain = records(result)
    assert web.error == (
        "tool 'deep': its inputSchema cannot be checked: the reference "
        "'https://example.com/a.json' does not resolve within it (references are not fetched)"
    )
    assert nowhere.error is not None and "the reference '/$defs/nope' does not" in nowhere.error
    assert plain.result == "deep"  # arguments that reach no reference are checked and sent


async def test_max_result_bytes_counts_the_text_the_model_reads_escapes_and_all() -> None:
    # 600,000 bytes of text in two blocks, under the limit; the model reads the blocks as a JSON
    # list, each control character escaped to six: 3.6 MB reached it
    model = ScriptedModel([call("deep"), "too big"])
    result = await Agent("a", tools=[hostile("escaped")], model=model).run("x")
    (record,) = records(result)
    size = len(json.dumps(["\x01" * 300_000] * 2))
    assert record.error == (
        f"tool 'deep' failed: MCP server 'hostile' sent a result of {size:,} bytes, over the "
        "limit of 1,000,000 (max_result_bytes); none of it is shown"
    )
    assert max(len(text) for text in told(model, 1)) < 1000


async def test_an_error_results_joined_text_is_held_to_the_limit_too() -> None:
    # no text at all in its 2,000 blocks, but 1,999 newlines join them for the model
    model = ScriptedModel([call("deep"), "failed"])
    result = await Agent("a", tools=[hostile("blank", max_result_bytes=1000)], model=model).run("x")
    (record,) = records(result)
    assert record.error == (
        "tool 'deep' failed: MCP server 'hostile' sent a result of 1,999 bytes, over the "
        "limit of 1,000 (max_result_bytes); none of it is shown"
    )


async def test_an_error_told_in_structured_content_alone_reaches_the_model() -> None:
    # before: 'the server reported an error without a message', its details dropped
    model = ScriptedModel([call("deep"), "failed"])
    result = await Agent("a", tools=[hostile("terse")], model=model).run("x")
    (record,) = records(result)
    assert record.error == (
        "tool 'deep' failed on MCP server 'hostile': "
        '{"error": "quota exceeded", "retry_after": 30}'
    )


async def test_the_name_a_server_gives_itself_is_kept_to_100_characters() -> None:
    # it is in every error the model reads of the server's: 100,000 characters were
    model = ScriptedModel([call("deep"), "failed"])
    result = await Agent("a", tools=[hostile("vain")], model=model).run("x")
    (record,) = records(result)
    name = "h" * 100
    assert record.error == f"tool 'deep' failed: MCP server '{name}' failed: MCPError: no"


async def test_a_call_never_answered_ends_at_the_default_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # neither the server, the agent nor the network set a timeout: the call waited forever
    assert MCPTool.default_timeout == DEFAULT_CALL_TIMEOUT == 60.0
    monkeypatch.setattr(MCPTool, "default_timeout", 1.0)  # the test's minute
    model = ScriptedModel([call("deep"), "gave up"])
    with anyio.fail_after(30):
        result = await Agent("a", tools=[hostile("hung")], model=model).run("x")
    (record,) = records(result)
    assert record.is_error and record.error is not None and "1 s" in record.error, record.error
    assert result.output == "gave up"


async def test_a_timeout_the_user_set_wins_over_the_default() -> None:
    model = ScriptedModel([call("deep"), "gave up"])
    agent = Agent("a", tools=[hostile("hung")], model=model, tool_timeout=0.5)
    with anyio.fail_after(30):  # not the default minute
        result = await agent.run("x")
    (record,) = records(result)
    assert record.error is not None and "0.5 s" in record.error, record.error


async def test_a_description_of_megabytes_reaches_the_model_cut() -> None:
    model = ScriptedModel([call("deep"), "done"])
    result = await Agent("a", tools=[hostile("wordy")], model=model).run("x")
    (offered,) = model.requests[0].tools or []
    description = offered["function"]["description"]
    assert description == "w" * MAX_DESCRIPTION + "... (cut: 2,000,000 characters)"
    assert records(result)[0].result == "deep"  # the tool stays usable


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("tower", "its inputSchema is nested more than 32 levels deep"),
        ("heavy", "its inputSchema is 200,"),
        # the model is not sent it, but the SDK compiles it and checks each result by it
        ("tower-out", "its outputSchema is nested more than 32 levels deep"),
        ("heavy-out", "its outputSchema is 200,"),
    ],
)
async def test_a_schema_too_deep_or_too_large_fails_the_listing_naming_the_tool(
    mode: str, why: str
) -> None:
    with pytest.raises(MCPServerError) as raised:
        await Agent("a", tools=[hostile(mode)], model=ScriptedModel(["no"])).run("x")
    message = str(raised.value)
    assert message.startswith(f"MCP server 'hostile': tool 'deep': {why}"), message
    assert message.endswith("leave the tool out with allowed_tools") and len(message) < 300
    # the server's other tools can still be offered, the bad one left out unread
    model = ScriptedModel([call("fine"), "done"])
    server = hostile(mode, allowed_tools=["fine"])
    result = await Agent("a", tools=[server], model=model).run("x")
    assert records(result)[0].result == "fine"


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("throng", "it lists more than 1,000 tools"),
        ("bulky", "its tools' descriptions and schemas take more than 1,000,000 bytes"),
    ],
)
async def test_too_many_tools_or_bytes_fail_the_listing_naming_the_server(
    mode: str, why: str
) -> None:
    with pytest.raises(MCPServerError) as raised:
        await Agent("a", tools=[hostile(mode)], model=ScriptedModel(["no"])).run("x")
    assert str(raised.value) == (
        f"MCP server 'hostile': its tool listing is unusable: {why}; name the tools to offer "
        "with allowed_tools"
    )
    model = ScriptedModel([call("t7"), "done"])
    server = hostile(mode, allowed_tools=["t7", "t8"])
    result = await Agent("a", tools=[server], model=model).run("x")
    assert records(result)[0].result == "t7"


async def test_a_server_that_asks_for_sampling_elicitation_or_roots_is_told_no() -> None:
    """The client declares none of these capabilities; a server that asks all the same is
    answered each time with an error saying so, and its call goes on (docs/mcp.md)."""
    model = ScriptedModel([call("deep"), "done"])
    with anyio.fail_after(60):
        result = await Agent("a", tools=[hostile("asking", timeout=30)], model=model).run("x")
    (record,) = records(result)
    assert not record.is_error and result.output == "done"
    assert record.result == {
        "sampling/createMessage": {"code": -32600, "message": "Sampling not supported"},
        "elicitation/create": {"code": -32600, "message": "Elicitation not supported"},
        "roots/list": {"code": -32600, "message": "List roots not supported"},
    }
