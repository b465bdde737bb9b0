"""`A2AModel`: a remote A2A agent as a member of a team and as a sub-agent tool, against real
server processes on loopback (`tests/agents/models/a2a_remotes.py`): the official a2a-sdk
reference server (1.0, and its 0.3 compatibility mode), pydantic-ai's fasta2a server, our
own `agent-network serve --a2a`, and a hostile server.

- a team member: its answer is the agent's, its progress streams as reasoning and its answer
  as text, its reported usage is the run's, counted against the caller's limits;
- a tool (`agent.as_tool()`): its events stream between SUBAGENT_STARTED and
  SUBAGENT_FINISHED, its usage is the caller's, a caller's limit stops the caller;
- timeouts (the whole call, a quiet stream, a trickling one), size, malformed events, a
  failed task: a `ModelError` naming the remote, which a supervisor's model reads as a tool
  error; each call is one remote task (counted).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agents import Agent, ScriptedModel, call
from agents.models.a2a import A2AModel
from network import Network, ThreadRef, UsageLimits
from network.errors import ConfigurationError, ModelError
from tests.agents.models.a2a_remotes import running
from tests.network.agui.live import serve

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("a2a-remote") / "calls.txt"


@pytest.fixture(scope="module")
def reference(calls: Path) -> Iterator[str]:
    with running("reference", calls) as url:
        yield url


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    with running("hostile") as url:
        yield url


def counted(calls: Path, text: str) -> int:
    return calls.read_text().splitlines().count(text)


def until_answered(agent: Any) -> Any:
    return lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None


async def test_a_remote_agent_answers_as_a_member_of_a_team(reference: str, calls: Path) -> None:
    remote = Agent("remote", description="Echoes remotely.", model=A2AModel(reference))
    planner = Agent("planner", model=ScriptedModel(["Ask the remote about tides."]))

    def route(ctx: Any) -> Any:
        return {0: planner, 1: remote}.get(len(ctx.state.results))

    team = Network("team", agents=[planner, remote], router=route)
    events: list[Any] = []
    result = await team.run("Plan the trip", sinks=[events.append])
    # It reads the new turn: the user's message and the planner's answer (another agent's
    # turn, named as such: network.capabilities.view), one task.
    sent = "Plan the trip\n\n[agent 'planner' answered] Ask the remote about tides."
    assert result.output.startswith(f"echo: {sent} (turn 1 of context ")
    assert counted(calls, sent.replace("\n", " ")) == 1
    # Its reported usage is the call's, and the run's.
    answered = result.state.results[-1]
    assert answered.usage.prompt_tokens == 7 and answered.usage.completion_tokens == 5
    assert result.usage.prompt_tokens >= 7
    # Its progress streamed as reasoning, its answer as text.
    kinds = [event.type for event in events]
    assert "REASONING_MESSAGE_CONTENT" in kinds
    reasoning = "".join(e.delta for e in events if e.type == "REASONING_MESSAGE_CONTENT")
    assert f"looking at {sent}" in reasoning
    text = "".join(e.delta for e in events if e.type == "TEXT_MESSAGE_CONTENT")
    assert result.output in text


async def test_a_remote_agent_as_a_tool_streams_as_a_sub_agent(reference: str, calls: Path) -> None:
    remote = Agent("remote", description="Echoes remotely.", model=A2AModel(reference))
    boss_model = ScriptedModel([call("remote", input="find tides"), "Found them."])
    boss = Agent("boss", tools=[remote.as_tool()], model=boss_model)
    desk = Network("desk", agents=[boss], router=until_answered(boss))
    events: list[Any] = []
    result = await desk.run("Go", sinks=[events.append])
    assert result.output == "Found them."
    tool_result = boss_model.requests[1].history[-1].content
    assert tool_result.startswith("echo: find tides (turn 1 of context ")
    started = next(e for e in events if e.type == "SUBAGENT_STARTED")
    inner = {
        e.type for e in events if getattr(e, "subagent_run_id", None) == started.subagent_run_id
    }
    assert {"REASONING_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "SUBAGENT_FINISHED"} <= inner
    assert result.usage.prompt_tokens >= 7  # the remote's reported usage is the caller's
    assert counted(calls, "find tides") == 1


async def test_a_remote_agents_reported_usage_counts_against_the_callers_limits(
    reference: str,
) -> None:
    remote = Agent("remote", model=A2AModel(reference))
    boss_model = ScriptedModel([call("remote", input="usage 5000 10"), "never asked"])
    boss = Agent("boss", tools=[remote.as_tool()], model=boss_model)
    desk = Network("desk", agents=[boss], router=until_answered(boss))
    result = await desk.run("Go", limits=UsageLimits(max_input_tokens=1000))
    assert result.stop_reason == "usage_limit"
    assert result.limit_exceeded.limit == "max_input_tokens"
    assert result.limit_exceeded.actual >= 5000
    assert len(boss_model.requests) == 1  # stopped before the boss asked again


async def test_the_whole_call_is_bounded_in_time_and_cancels_the_remote_task(
    reference: str, calls: Path
) -> None:
    remote = Agent("remote", model=A2AModel(reference, timeout=1))
    with pytest.raises(ModelError, match="did not finish within 1 s") as caught:
        await remote.run("slow 20")
    assert caught.value.model == f"a2a:{reference}"
    # the remote was told, not left working its 20 s (its task notes the cancellation once its
    # process gets to it, which a loaded machine may let come after the call's end)
    with anyio.fail_after(10):
        while counted(calls, "cancelled: slow 20") == 0:
            await anyio.sleep(0.05)
    assert counted(calls, "cancelled: slow 20") == 1


async def test_a_cancelled_caller_cancels_the_remote_task(reference: str, calls: Path) -> None:
    remote = Agent("remote", model=A2AModel(reference))
    async with anyio.create_task_group() as group:
        group.start_soon(remote.run, "slow 21")
        # cancelled once the remote works on it and its task has had time to reach the
        # caller (a fixed 1 s from the start ran out before it did at load 8; a caller
        # cancelled before the task's id reaches it has nothing to name in a CancelTask)
        with anyio.fail_after(30):
            while counted(calls, "slow 21") == 0:
                await anyio.sleep(0.02)
        await anyio.sleep(0.5)
        group.cancel_scope.cancel()
    assert counted(calls, "cancelled: slow 21") == 1


async def test_a_caller_cancelled_before_the_task_id_arrives_still_cancels_the_remote_task(
    reference: str, calls: Path
) -> None:
    # the remote sends its task (and with it the id a CancelTask names) 2 s after it took the
    # message; the caller is cancelled in between: the remote's task went on working
    remote = Agent("remote", model=A2AModel(reference))
    async with anyio.create_task_group() as group:
        group.start_soon(remote.run, "late 2")
        with anyio.fail_after(30):
            while counted(calls, "late 2") == 0:  # the remote has the message, not yet a task
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    with anyio.fail_after(10):
        while counted(calls, "cancelled: late 2") == 0:
            await anyio.sleep(0.05)
    assert counted(calls, "method: CancelTask") >= 1


async def test_a_caller_cancelled_before_a_remote_that_never_names_its_task_ends_anyway(
    hostile: str,
) -> None:
    # nothing to cancel ever arrives: the reading kept for the id ends within its grace
    remote = Agent("remote", model=A2AModel(hostile))
    with anyio.fail_after(30):  # the grace is 5 s
        async with anyio.create_task_group() as group:
            group.start_soon(remote.run, "mute")
            await anyio.sleep(1)
            group.cancel_scope.cancel()


async def test_a_failed_remote_task_reaches_the_supervisors_model(reference: str) -> None:
    remote = Agent("remote", model=A2AModel(reference))
    boss_model = ScriptedModel([call("remote", input="fail"), "It failed."])
    boss = Agent("boss", tools=[remote.as_tool()], model=boss_model)
    desk = Network("desk", agents=[boss], router=until_answered(boss))
    result = await desk.run("Go")
    told = boss_model.requests[1].history[-1]
    assert told.is_error and "ended its task failed: the tank is empty" in told.content
    assert result.output == "It failed."


async def test_input_required_is_the_remotes_question_answered_in_its_task(
    reference: str, calls: Path
) -> None:
    """The a2a-sdk reference server's question stops the caller's run on an interrupt; the
    answer (`respond`) is the next message of that same task, sent once."""
    remote = Agent("remote", model=A2AModel(reference))
    team = Network("desk", agents=[remote], router=until_answered(remote))
    result = await team.run("ask")
    assert result.output == "Which city?"
    assert result.stop_reason == "interrupted"
    [question] = result.interrupts
    assert question.message == "Which city?"
    done = await team.run(result.resume([question.respond("Lyon")]))
    context = question.arguments["context_id"]
    assert done.output == f"echo: Lyon (turn 1 of context {context})"
    assert counted(calls, "Lyon") == 1


HOSTILE = [
    ("huge", "sent an answer past 1000000 bytes"),
    ("quiet", "sent nothing for 1 s"),
    ("trickle", "did not finish within 3 s"),
    ("garbage", "sent what is not A2A"),
    ("empty part", "sent what is not A2A: a part with no content"),
    ("negative usage", "sent what is not A2A: a usage whose inputTokens is -5"),
    ("absurd usage", "sent what is not A2A: a usage whose inputTokens is 1e"),
    ("nan usage", "sent what is not A2A"),
    ("other task", "sent what is not A2A: an update of another task"),
    ("no end", "stopped before its task finished"),
]


@pytest.mark.parametrize(("text", "error"), HOSTILE, ids=[text for text, _ in HOSTILE])
async def test_a_hostile_server_is_a_clear_model_error(hostile: str, text: str, error: str) -> None:
    # the short bounds only where they are what is tested: on a loaded machine the server can
    # take over 1 s to send the first megabyte of "huge"
    timeout = 3 if text == "trickle" else 30
    idle_timeout = 1 if text == "quiet" else 10
    model = A2AModel(hostile, timeout=timeout, idle_timeout=idle_timeout, max_bytes=1_000_000)
    with pytest.raises(ModelError, match=error):
        await Agent("remote", model=model).run(text)
    # and the same model answers the next well-formed call
    assert (await Agent("remote", model=model).run("fine")).output == "hostile: fine"


async def test_a_card_naming_another_server_is_refused() -> None:
    with running("elsewhere") as url:
        model = A2AModel(url, token="secret-token-0123456789")
        with pytest.raises(ModelError, match=r"endpoint is on another server \(http://127.0.0.2"):
            await Agent("remote", model=model).run("hi")


async def test_the_0_3_compatibility_mode_and_a_peer_server(
    reference: str, calls: Path, tmp_path: Path
) -> None:
    await Agent("remote", model=A2AModel(reference)).run("new")
    assert "method: SendStreamingMessage" in calls.read_text()  # 1.0 to the 1.0 reference
    legacy = tmp_path / "legacy.txt"
    with running("reference-0.3", legacy) as url:
        result = await Agent("remote", model=A2AModel(url)).run("old")
        assert result.output.startswith("echo: old (turn 1 of context ")
        assert result.state.results[-1].usage.prompt_tokens == 7
        assert counted(legacy, "method: message/stream") == 1  # spoken in 0.3
    with running("peer") as url:  # pydantic-ai's fasta2a, its timestamps without a zone
        result = await Agent("remote", model=A2AModel(url)).run("hi")
        assert result.output == "peer: hi (turn 1)"


async def test_our_own_server_as_a_remote_agent(tmp_path: Path) -> None:
    from tests.network.a2a.servers import TOKENS, serve, token_file

    with serve(str(tmp_path / "threads.db"), token_file(tmp_path)) as url:
        model = A2AModel(url, token=TOKENS["alice"])
        remote = Agent("till", model=model)
        team = Network("front", agents=[remote], router=until_answered(remote))
        thread = ThreadRef("th-1", store=str(tmp_path / "front.db"))  # not the default store
        first = await team.run("hello", thread=thread)
        second = await team.run("recall", thread=thread)
        assert first.output == "echo: hello"
        # our server reports its run's usage (`metadata.usage`), counted here
        assert first.state.results[-1].usage.total_tokens > 0
        assert second.output == "recall: hello | recall"  # the remote thread went on
        asked = await Agent("till", model=A2AModel(url, token=TOKENS["alice"])).run("pay 5")
        # input-required: the remote's question, its data part (the approval) as JSON; an
        # interrupt of the caller's run (answered in tests/agents/capabilities/remote_a2a)
        assert asked.output.startswith("waiting for approval of pay")
        assert '"tool": "pay"' in asked.output
        assert [i.tool for i in asked.interrupts] == ["a2a_input_required"]
        with pytest.raises(ModelError, match="failed: .*401|Unauthorized|unauth"):
            await Agent("till", model=A2AModel(url, token="wrong-token-0123456789")).run("hi")


@pytest.mark.parametrize(
    "options",
    [{"timeout": math.nan}, {"timeout": -1}, {"idle_timeout": math.inf}, {"max_bytes": 0}],
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="A2AModel"):
        A2AModel("http://127.0.0.1:9", **options)
    with pytest.raises(ConfigurationError, match="url"):
        A2AModel("ftp://127.0.0.1:9")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"token": "s3cret\nX-Injected: 1"}, "token"),
        ({"token": "s3cr\u00e9t"}, "token"),
        ({"token": ""}, "token"),
        ({"token": 12345}, "token"),
        ({"headers": {"x-key": 1}}, "headers\\['x-key'\\]"),
        ({"headers": {"x-key": "s3cret\r\n"}}, "headers\\['x-key'\\]"),
        ({"headers": {"x-key": "s3cret "}}, "a space at either end"),  # h11 refused it
        ({"headers": {"x key": "v"}}, "headers: 'x key'"),
        ({"headers": "x-key: v"}, "headers must be a mapping"),
        ({"name": 5}, "name"),
    ],
)
def test_headers_a_client_cannot_send_are_refused_when_made(
    options: dict[str, Any], field: str
) -> None:
    # Each failed every call, blaming the remote: "could not be reached" (a line break), "sent
    # what is not A2A" (an accent), or a TypeError; the token or value is never shown.
    with pytest.raises(ConfigurationError, match=field) as refused:
        A2AModel("http://127.0.0.1:9", **options)
    assert "s3cr" not in str(refused.value)
    for url in ("http://", "https://:443/a2a", "http://host name", "http://h:99999"):
        with pytest.raises(ConfigurationError, match="url"):
            A2AModel(url)


def test_the_token_is_not_in_its_repr() -> None:
    assert "s3cret" not in repr(A2AModel("http://127.0.0.1:9", token="s3cret"))


async def test_a_credential_in_the_url_is_in_no_error_name_or_repr() -> None:
    # A URL's user info (`https://user:pass@host/a2a`) was shown whole: in the model's
    # default name (traces, usage) and in every error, which a supervisor's model reads as
    # the tool's error
    async def refuse(request: Any) -> PlainTextResponse:
        return PlainTextResponse(f"no: {request.url}", status_code=401)

    asgi = Starlette(routes=[Route("/{path:path}", refuse, methods=["GET", "POST"])])
    with serve(asgi) as url:
        for where in (url, "http://127.0.0.1:9"):  # an answer quoting the URL; no server
            host = where.removeprefix("http://")
            model = A2AModel(f"http://agent:s3cret@{host}/a2a")
            assert model.name == f"a2a:http://{host}/a2a"
            with pytest.raises(ModelError) as caught:
                await Agent("remote", model=model).run("hi")
            shown = f"{caught.value} {caught.value.model} {model!r}"
            assert f"http://{host}/a2a" in shown, shown
            assert "s3cret" not in shown and "agent:" not in shown, shown


def test_a_url_with_a_query_or_fragment_is_refused_when_made() -> None:
    # The card was read at `<url>/.well-known/agent-card.json`, which after a query or a
    # fragment is no path: every call failed, blaming the remote's card
    for url in ("http://127.0.0.1:9/a2a?key=k3y", "http://127.0.0.1:9/a2a#fr4g"):
        with pytest.raises(ConfigurationError, match="no query or fragment") as refused:
            A2AModel(url)
        assert "k3y" not in str(refused.value) and "fr4g" not in str(refused.value)
