"""An agent uses the tools of a real MCP server started over stdio (`server_app.py`)."""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, MCPServerError, ScriptedModel, call, tool
from network.errors import ConfigurationError
from tests.agents.capabilities.mcp.servers import stdio_server

pytestmark = pytest.mark.anyio


def offered(model: ScriptedModel, request: int = 0) -> dict[str, Any]:
    """The tools the model was offered in request `request`, by name."""
    return {s["function"]["name"]: s["function"] for s in model.requests[request].tools or []}


def records(result: Any) -> list[Any]:
    return [record for step in result.state.results for record in step.tool_calls]


async def test_agent_calls_an_mcp_tool_and_reads_its_result() -> None:
    model = ScriptedModel([call("add", a=2, b=3), "2 + 3 = 5"])
    agent = Agent("calc", tools=[stdio_server()], model=model)
    result = await agent.run("add 2 and 3")
    assert result.output == "2 + 3 = 5"
    record = records(result)[0]
    assert not record.is_error, record.error
    assert record.result == {"result": 5}
    tools = offered(model)
    assert tools["add"]["description"] == "Add two integers."
    assert tools["add"]["parameters"]["required"] == ["a", "b"]
    assert tools["add"]["parameters"]["properties"]["a"]["type"] == "integer"
    # what the model reads back is the tool message of the next request
    assert '{"result": 5}' in [m.content for m in model.requests[1].messages if m.role == "tool"]


async def test_allow_list_and_predicate_choose_the_tools_offered() -> None:
    model = ScriptedModel(["nothing to do"])
    server = stdio_server(
        allowed_tools=["add", "echo", "shout"], tool_filter=lambda t: t.name != "echo"
    )
    await Agent("calc", tools=[server], model=model).run("hi")
    assert set(offered(model)) == {"add", "shout"}


async def test_a_name_taken_by_a_local_tool_is_prefixed_with_the_server_name() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Local addition."""
        return 100

    model = ScriptedModel([[call("add", a=1, b=1), call("testfs__add", a=1, b=1)], "done"])
    agent = Agent("calc", tools=[add, stdio_server(allowed_tools=["add", "echo"])], model=model)
    result = await agent.run("add")
    assert set(offered(model)) == {"add", "testfs__add", "echo"}
    assert [r.result for r in records(result)] == [100, {"result": 2}]


async def test_two_servers_offering_the_same_tool_are_both_prefixed() -> None:
    model = ScriptedModel([call("left__echo", text="l"), "done"])
    left = stdio_server(name="left", allowed_tools=["echo"])
    right = stdio_server(name="right", allowed_tools=["echo", "add"])
    result = await Agent("two", tools=[left, right], model=model).run("x")
    assert set(offered(model)) == {"left__echo", "right__echo", "add"}
    assert records(result)[0].result == {"result": "l"}


async def test_same_named_servers_with_the_same_tool_are_a_configuration_error() -> None:
    model = ScriptedModel(["never asked"])
    servers = [stdio_server(name="fs", allowed_tools=["echo"]) for _ in range(2)]
    with pytest.raises(ConfigurationError, match="'fs__echo'"):
        await Agent("two", tools=servers, model=model).run("x")


async def test_arguments_are_validated_against_the_server_schema_before_the_call() -> None:
    model = ScriptedModel([call("add", a="two", b=3), call("add", a=2), "gave up"])
    result = await Agent("calc", tools=[stdio_server()], model=model).run("x")
    first, second = records(result)
    assert first.is_error and "invalid arguments" in first.error and "a: 'two'" in first.error
    assert second.is_error and "'b' is a required property" in second.error
    assert result.output == "gave up"


async def test_a_tool_error_result_is_an_error_the_model_reads_and_the_run_goes_on() -> None:
    model = ScriptedModel([call("fail"), call("echo", text="again"), "recovered"])
    result = await Agent("x", tools=[stdio_server()], model=model).run("x")
    failed, echoed = records(result)
    assert failed.is_error and "disk is full" in failed.error
    assert failed.content.startswith("Error: ")
    assert not echoed.is_error and echoed.result == {"result": "again"}
    assert result.output == "recovered"


async def test_a_call_past_the_timeout_is_an_error_and_the_session_still_works() -> None:
    model = ScriptedModel([call("slow", seconds=30), call("echo", text="still here"), "ok"])
    result = await Agent("x", tools=[stdio_server(timeout=1)], model=model).run("x")
    slow, echoed = records(result)
    assert slow.is_error and "timed out after 1 s" in slow.error
    assert echoed.result == {"result": "still here"}
    assert result.output == "ok"


async def test_the_agents_tool_timeout_applies_to_mcp_tools() -> None:
    model = ScriptedModel([call("slow", seconds=30), "ok"])
    agent = Agent("x", tools=[stdio_server()], model=model, tool_timeout=1)
    result = await agent.run("x")
    assert "timed out after 1 s" in records(result)[0].error


async def test_a_server_that_dies_gives_error_results_and_the_run_goes_on() -> None:
    model = ScriptedModel([call("die"), call("echo", text="anyone?"), "the server is gone"])
    result = await Agent("x", tools=[stdio_server()], model=model).run("x")
    died, after = records(result)
    # as docs/mcp.md shows it: naming the tool and the server
    assert died.is_error and died.error.startswith("tool 'die' failed: MCP server 'testfs' failed")
    assert after.error.startswith("tool 'echo' failed: MCP server 'testfs' failed")
    assert result.output == "the server is gone"
    assert str(result.stop_reason) == "agent_answered"


async def test_text_json_and_image_content_are_mapped_as_documented() -> None:
    model = ScriptedModel(
        [[call("shout", text="hi"), call("listing"), call("picture"), call("add", a=1, b=2)], "ok"]
    )
    result = await Agent("x", tools=[stdio_server()], model=model).run("x")
    text, listing, picture, structured = (r.result for r in records(result))
    assert text == "HI"  # text content: the string
    assert listing == {"files": ["main.py", "test_main.py"]}  # JSON text: parsed
    assert picture == "data:image/png;base64," + base64.b64encode(b"\x89PNG-test").decode()
    assert structured == {"result": 3}  # structuredContent: as sent


async def test_code_generation_results_land_in_state_through_outputs_to_state(
    tmp_path: Path,
) -> None:
    files = {"main.py": "print('hello')\n", "test_main.py": "def test(): pass\n"}
    model = ScriptedModel(
        [
            [call("write_file", path=path, content=text) for path, text in files.items()],
            "wrote the program and its test",
        ]
    )
    filesystem = stdio_server(
        tmp_path,
        allowed_tools=["write_file"],
        outputs_to_state={"write_file": {"files": {"source": "path"}, "last_write": {}}},
    )
    coder = Agent("coder", tools=[filesystem], model=model)
    result = await coder.run(
        "write a program with a test", state_schema={"files": {"type": list[str]}}
    )
    assert result.state.kv.get("files") == ["main.py", "test_main.py"]
    assert result.state.kv.get("last_write") == {"path": "test_main.py", "bytes": 17}
    assert (tmp_path / "main.py").read_text() == files["main.py"]
    assert result.output == "wrote the program and its test"


async def test_a_failed_call_writes_nothing_to_state(tmp_path: Path) -> None:
    model = ScriptedModel([call("fail"), "ok"])
    server = stdio_server(tmp_path, outputs_to_state={"fail": {"oops": {}}})
    result = await Agent("x", tools=[server], model=model).run("x")
    assert not result.state.kv.has("oops")


async def test_a_server_that_cannot_start_fails_the_run_naming_it() -> None:
    server = MCPServerError  # keep the import used by name below
    bad = stdio_server(name="broken").__class__.stdio(
        "/nonexistent/mcp-server-binary", name="broken"
    )
    with pytest.raises(server, match="'broken' could not be started") as caught:
        await Agent("x", tools=[bad], model=ScriptedModel(["never"])).run("x")
    assert caught.value.server == "broken"


def test_bad_definitions_are_configuration_errors() -> None:
    from agents import MCPServer

    with pytest.raises(ConfigurationError, match="command"):
        MCPServer()
    with pytest.raises(ConfigurationError, match="url must be"):
        MCPServer.http("ftp://example.com")
    with pytest.raises(ConfigurationError, match="timeout"):
        MCPServer.stdio("x", timeout=0)
    with pytest.raises(ConfigurationError, match="allowed_tools"):
        MCPServer.stdio("x", allowed_tools="add")
    with pytest.raises(ConfigurationError, match="unknown fields"):
        MCPServer.stdio("x", outputs_to_state={"add": {"k": {"src": "a"}}})
    server = MCPServer.stdio("x")
    with pytest.raises(ConfigurationError, match="given twice"):
        Agent("a", tools=[server, server])


async def test_tool_choice_may_name_an_mcp_tool_listed_only_in_the_run() -> None:
    model = ScriptedModel([call("echo", text="forced"), "ok"])
    agent = Agent("x", tools=[stdio_server()], model=model, tool_choice="echo")
    result = await agent.run("x")
    assert model.requests[0].tool_choice == "echo"
    assert records(result)[0].result == {"result": "forced"}


async def test_names_from_a_real_server_are_safe_for_providers_and_unique() -> None:
    """A server named `mcp-servers/everything` whose tools have dots, slashes, spaces and a
    71-character name: every name offered matches `^[a-zA-Z0-9_-]{1,64}$`, none is offered
    twice, and each one calls its own tool on the server."""
    import os
    import re
    import sys
    from pathlib import Path

    from agents import MCPServer
    from tests.agents.capabilities.mcp.odd_names_app import NAMES

    @tool
    def echo(text: str) -> str:
        """A local echo: the server's `echo` is then offered with the server's name."""
        return text

    app = str(Path(__file__).with_name("odd_names_app.py"))
    server = MCPServer.stdio(
        sys.executable, [app], env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    )
    probe = ScriptedModel(["nothing"])
    await Agent("probe", tools=[echo, server], model=probe).run("x")
    names = [schema["function"]["name"] for schema in probe.requests[0].tools or []]
    assert len(names) == len(set(names)) == 1 + len(NAMES)
    for name in names:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name), name
    assert "mcp-servers_everything__echo" in names
    assert "files_list_all" in names
    remote = [n for n in names if n != "echo"]

    model = ScriptedModel([[call(name) for name in remote], "done"])
    result = await Agent("caller", tools=[echo, server], model=model).run("x")
    answered = {record.name: record.result for record in records(result)}
    assert sorted(answered.values(), key=str) == sorted(
        ({"result": name} for name in NAMES), key=str
    )  # each offered name reached its own tool
    assert all(not record.is_error for record in records(result))


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"command": "", "name": "files"}, "'files': command must be a non-empty string"),
        ({"command": ""}, """MCP server "MCPServer.stdio('')": command must be a non-empty"""),
        ({"command": "srv", "env": ["A=1"]}, "'srv': env must map names to strings, got list"),
        ({"command": "srv", "env": "A=1"}, "'srv': env must map names to strings, got str"),
        ({"command": "srv", "env": {"PORT": 8080}}, "'srv': env['PORT'] must be a string"),
        ({"command": "srv", "env": {"A=B": "c"}}, "'srv': env has a bad name 'A=B'"),
        ({"command": "srv", "env": {"": "c"}}, "'srv': env has a bad name ''"),
        ({"command": "srv", "env": {3: "c"}}, "'srv': env has a bad name 3"),
        ({"command": "srv", "env": {"A": "b\0c"}}, "'srv': env['A'] must be a string without NUL"),
        ({"command": "srv", "cwd": 3}, "'srv': cwd must be a path"),
        # before: a TypeError ('NoneType' object is not iterable), or a process started with
        # the word 'None' as its argument, or a NUL byte failing only at the first run
        ({"command": "srv\0x"}, "'srv\\x00x': command must be a non-empty string without NUL"),
        ({"command": "srv", "args": None}, "'srv': args must be a list of strings"),
        ({"command": "srv", "args": 5}, "'srv': args must be a list of strings"),
        ({"command": "srv", "args": ["-v", None]}, "'srv': args[1] must be a string"),
        ({"command": "srv", "args": ["a\0b"]}, "'srv': args[0] must be a string without NUL"),
        ({"command": "srv", "allowed_tools": 5}, "'srv': allowed_tools must be a list of tool"),
        ({"command": "srv", "allowed_tools": [["a"]]}, "'srv': allowed_tools holds ['a']"),
        ({"command": "srv", "allowed_tools": [None]}, "'srv': allowed_tools holds None"),
        ({"command": "srv", "cache_tools": "no"}, "'srv': cache_tools must be True or False"),
        # before: accepted, and every run failed with a TypeError adding None to a time
        ({"command": "srv", "connect_timeout": None}, "'srv': connect_timeout (seconds) must"),
    ],
)
def test_a_bad_command_or_env_is_a_configuration_error_naming_the_server(
    options: dict[str, Any], says: str
) -> None:
    from agents import MCPServer

    command = options.pop("command")
    with pytest.raises(ConfigurationError) as caught:
        MCPServer.stdio(command, **options)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        # a token read from a file with its line break: h11 refused it at the first run, and
        # its error ('Illegal header value b"Bearer sk-..."') quoted the token in the run's
        # error, which a served network tells its remote client
        ({"Authorization": "Bearer sk-live-123\n"}, "headers['Authorization'] holds a line"),
        ({"Authorization": "Bearer sk-live-123 "}, "a space at either end"),
        ({"Authorization": "Bearer sk-live-123\x00"}, "headers['Authorization'] holds"),
        ({"X-Key": "sk-live-123\u00e9"}, "a character past ASCII"),
        ({"Bad Name": "sk-live-123"}, "headers: 'Bad Name' is not an HTTP header name"),
    ],
)
def test_a_header_the_client_cannot_send_is_refused_without_showing_it(
    headers: dict[str, str], says: str
) -> None:
    from agents import MCPServer

    with pytest.raises(ConfigurationError) as caught:
        MCPServer.http("http://127.0.0.1:1/mcp", headers=headers, name="docs")
    assert "MCP server 'docs': " in str(caught.value) and says in str(caught.value)
    if "Bad Name" not in headers:
        assert "sk-live" not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://user:secret@exa mple.com/mcp",
        "http://user:secret@127.0.0.1:99999/mcp",
        "http://user:secret@[::1/mcp",
        "http://user:secret@127.0.0.1:9/mcp\r\nX: y",
        "https://user:secret@",
    ],
)
def test_a_url_no_request_can_be_sent_to_is_refused_when_made(url: str) -> None:
    """Before, each was accepted and every run failed at its connection (an InvalidURL, an
    OverflowError, 'missing an http:// or https:// protocol')."""
    from agents import MCPServer

    with pytest.raises(ConfigurationError, match="url must be an http\\(s\\) URL") as caught:
        MCPServer.http(url)
    assert "secret" not in str(caught.value) and "user:***@" in str(caught.value)


def test_an_env_value_is_never_shown_in_its_refusal() -> None:
    from agents import MCPServer

    with pytest.raises(ConfigurationError) as caught:
        MCPServer.stdio("srv", env={"API_KEY": "sk-live-123\x00"})
    assert "env['API_KEY'] must be a string without NUL bytes" in str(caught.value)
    assert "sk-live" not in str(caught.value)


def test_allowed_tools_may_be_any_iterable_of_names() -> None:
    from agents import MCPServer

    server = MCPServer.stdio("srv", allowed_tools=(name for name in ["add", "echo"]))
    assert server.allowed_tools == {"add", "echo"}


def test_args_may_be_paths_and_ints() -> None:
    from agents import MCPServer

    server = MCPServer.stdio("srv", [Path("tools/serve.py"), "--port", 8080])
    assert server.args == ["tools/serve.py", "--port", "8080"]
    given = (arg for arg in ["serve", Path("a.py")])  # any iterable, read once
    assert MCPServer.stdio("srv", given).args == ["serve", "a.py"]


def test_bad_headers_are_a_configuration_error_naming_the_server() -> None:
    from agents import MCPServer

    with pytest.raises(ConfigurationError, match="'docs': headers\\['X-Key'\\] must be a string"):
        MCPServer.http("http://127.0.0.1:1/mcp", headers={"X-Key": 5}, name="docs")


async def test_a_failed_call_under_a_live_sink_reads_as_without_one() -> None:
    """A call asking for progress (a sink watches) that fails gives the model the same error
    text: the server's failure, not a task group's wrapper."""
    model = ScriptedModel([call("fail"), call("die"), "done"])
    watched: list[Any] = []
    result = await Agent("x", tools=[stdio_server()], model=model).run("x", sinks=[watched.append])
    failed, died = records(result)
    assert failed.is_error and "disk is full" in failed.error
    assert died.error.startswith("tool 'die' failed: MCP server 'testfs' failed")
    assert result.output == "done"


async def test_progress_reaches_a_live_sink_bounded_and_in_order() -> None:
    """A server's `notifications/progress` become TOOL_CALL_PROGRESS events; one that does
    not increase is dropped, a long message is cut."""
    events: list[Any] = []
    model = ScriptedModel([call("steps"), "ok"])
    agent = Agent("x", tools=[stdio_server()], model=model)
    result = await agent.run("x", sinks=[events.append])
    assert records(result)[0].result == {"result": "stepped"}
    kinds = [event.type.value for event in events]
    progress = [e.value for e in events if e.type.value == "CUSTOM"]
    assert [p["progress"] for p in progress] == [1, 2]
    call_id = records(result)[0].id
    assert progress[0] == {
        "toolCallId": call_id,
        "tool": "steps",
        "server": "testfs",
        "progress": 1,
        "total": 2,
        "message": "one",
    }
    assert progress[1]["message"] == "x" * 1000
    # between the call's end and its result
    assert kinds.index("TOOL_CALL_END") < kinds.index("CUSTOM")
    assert kinds.index("TOOL_CALL_RESULT") > len(kinds) - 1 - kinds[::-1].index("CUSTOM")


async def test_a_call_past_its_timeout_is_cancelled_on_the_server(tmp_path: Path) -> None:
    """The timed-out call is cancelled on the server (`notifications/cancelled`), which stays
    up: the held server is still running when its handler sees the cancellation."""
    server = stdio_server(tmp_path, timeout=1)
    async with server:
        model = ScriptedModel([call("wait", seconds=30), "ok"])
        result = await Agent("x", tools=[server], model=model).run("x")
        assert "timed out after 1 s" in records(result)[0].error
        with anyio.fail_after(5):
            while not (tmp_path / "cancelled").exists():
                await anyio.sleep(0.05)


def test_progress_that_is_not_a_finite_increasing_number_is_dropped() -> None:
    from agents.capabilities.mcp._progress import ProgressRelay

    relay = ProgressRelay(None, "c1", "t", "s")
    kept = []
    for progress, total in ((math.nan, 1), (math.inf, 1), (True, 1), (-1, 1), (2, math.inf)):
        anyio.run(relay.report, progress, total, None)
        kept.append(relay._latest)
    assert kept[:4] == [None] * 4
    assert kept[4] is not None and kept[4]["progress"] == 2 and kept[4]["total"] is None


async def test_a_result_past_max_result_bytes_is_an_error_naming_server_tool_and_size() -> None:
    # 4 MB of text from the server (not 50: the SDK's stdio reader joins and splits its buffer
    # at every 64 KB chunk of a line, so a 50 MB line alone takes it a minute of CPU)
    huge = 4 * 1024 * 1024
    model = ScriptedModel(
        [
            [
                call("blob", size=huge),
                call("blob", size=1_000_000),  # the default limit, to the byte: shown
                call("blob", size=1_000_001),
                call("blob", size=400_000, char="é"),  # 800,000 bytes in UTF-8: over 500,000
            ],
            "too big",
        ]
    )
    agent = Agent("reader", tools=[stdio_server(name="files")], model=model)
    result = await agent.run("read it")
    over, exact, one_over, accented = records(result)
    assert over.is_error and over.error is not None
    assert over.error == (
        "tool 'blob' failed: MCP server 'files' sent a result of 4,194,304 bytes, over the "
        "limit of 1,000,000 (max_result_bytes); none of it is shown"
    )
    assert not exact.is_error and exact.content == "x" * 1_000_000
    assert one_over.is_error and "1,000,001 bytes" in (one_over.error or "")
    assert not accented.is_error  # under the default limit
    told = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert max(len(text) for text in told) < 1_000_100  # the 4 MB never reached the model
    assert result.output == "too big"  # the run went on

    model = ScriptedModel([call("blob", size=400_000, char="é"), "too big"])
    server = stdio_server(name="files", max_result_bytes=500_000)
    result = await Agent("reader", tools=[server], model=model).run("read it")
    (accented,) = records(result)
    assert accented.is_error and "a result of 800,000 bytes, over the limit of 500,000" in (
        accented.error or ""
    )


@pytest.mark.parametrize("bad", [0, -1, 1.5, math.nan, math.inf, True, "1000"])
def test_max_result_bytes_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="MCP server 'files': max_result_bytes"):
        stdio_server(name="files", max_result_bytes=bad)


@pytest.mark.parametrize("number", [math.nan, math.inf])
async def test_a_non_finite_argument_is_refused_before_the_server_is_called(number: float) -> None:
    model = ScriptedModel([call("slow", seconds=number), "no"])
    result = await Agent("waiter", tools=[stdio_server()], model=model).run("wait")
    (record,) = records(result)
    # the SDK would have sent it as null, and the server said "not a number" about null
    assert record.is_error and record.error == (
        f"tool 'slow': invalid arguments: seconds: Input should be a finite number, got {number}"
    )
