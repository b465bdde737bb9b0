"""A sub-run's errors are screened like the run's own, over the real AG-UI server (uvicorn on
127.0.0.1, httpx): a router's or a delegate model's exception inside `as_tool` reaches neither
SUBAGENT_ERROR nor the supervisor's TOOL_CALL_RESULT (nor the supervisor's model), only a
reference the server logs the exception under; the library's own errors still read as they
are. And `@tool(private_errors=True)`: the model reads the tool's exception, the client does
not, on this run or when it comes back to the thread."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from agents import Agent, OpenAIModel, ScriptedModel, call, tool
from network import Network, RunContext
from network.agui import app
from network.errors import RoutingError
from tests.fakes.openai_server import FakeOpenAIServer
from tests.network.agui.live import serve
from tests.network.agui.protocol import parse_sse, replay

pytest_plugins = ["tests.fakes.openai_server"]

SECRET = "postgres://admin:hunter2@db.internal/prod"
REFERENCE = re.compile(r"internal error \(reference (err_[0-9a-f]+)\)")


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The library's ERROR lines through stdlib logging (no structlog configured)."""
    structlog.reset_defaults()
    with caplog.at_level(logging.ERROR, logger="agent_network"):
        yield caplog


def body(thread: str, run: str, text: str = "go", **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": text}],
        **extra,
    }


def post(base: str, payload: dict[str, Any]) -> tuple[str, Any]:
    response = httpx.post(f"{base}/", json=payload, timeout=60)
    assert response.status_code == 200, response.text
    return response.text, replay(
        parse_sse(response.text), thread_id=payload["threadId"], run_id=payload["runId"]
    )


def supervisor(delegate: Any, name: str) -> tuple[Network, ScriptedModel]:
    """A supervisor that calls `delegate` (an `as_tool`) once, then says what it read."""

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"The team said: {last.content}"
        return call(name, input="look it up")

    model = ScriptedModel(script)
    boss = Agent("boss", tools=[delegate], model=model)
    again = lambda ctx: boss if ctx.last_result is None or ctx.last_result.tool_calls else None  # noqa: E731
    return Network("desk", agents=[boss], router=again), model


def failing_team(router: Any) -> Network:
    member = Agent("member", model=ScriptedModel(["never asked"]))
    return Network("team", agents=[member], router=router)


def crashing_router(ctx: RunContext) -> Any:
    raise ConnectionError(f"cannot reach {SECRET}")


class ProviderSDKError(Exception):
    """What a provider's own SDK raises (not one of the library's errors)."""


class LeakyModel:
    """A model client of an application's own whose provider's exception carries its key."""

    name = "leaky"
    provider = "acme"

    async def complete(self, request: Any, on_chunk: Any = None) -> Any:
        raise ProviderSDKError(f"401 from acme: key sk-live-{SECRET} is revoked")


@pytest.mark.parametrize("where", ["a sub-network's router", "a delegate agent's model"])
def test_a_sub_runs_foreign_exception_reaches_the_client_as_a_reference(
    logs: pytest.LogCaptureFixture, where: str
) -> None:
    if where == "a sub-network's router":
        delegate, name = failing_team(crashing_router).as_tool(), "team"
    else:
        delegate, name = Agent("member", model=LeakyModel()).as_tool(), "member"
    network, model = supervisor(delegate, name)
    with serve(app(network)) as base:
        text, run = post(base, body("t", "r"))
    assert "hunter2" not in text  # not in SUBAGENT_ERROR, TOOL_CALL_RESULT or anywhere else
    (failed,) = run.of("SUBAGENT_ERROR")
    assert failed["code"] == "internal_error"
    reference = REFERENCE.search(failed["message"])
    assert reference is not None, failed["message"]
    (result,) = [e for e in run.of("TOOL_CALL_RESULT") if "subagentRunId" not in e]
    assert f"reference {reference.group(1)}" in result["content"]
    assert run.finished is not None  # the supervisor's run went on and finished
    # The supervisor's model read the same screened text: the secret never left the server.
    assert "hunter2" not in str([m.content for r in model.requests for m in r.history])
    # The operator finds the whole exception, traceback included, under the reference.
    (record,) = [r for r in logs.records if reference.group(1) in r.getMessage()]
    assert record.exc_info is not None and "hunter2" in str(record.exc_info[1])
    assert "Traceback" in logs.text and "hunter2" in logs.text


def test_a_sub_runs_library_error_still_reads_as_it_is() -> None:
    network, _ = supervisor(failing_team(lambda ctx: "nobody").as_tool(), "team")
    with serve(app(network)) as base:
        _, run = post(base, body("t", "r"))
    (failed,) = run.of("SUBAGENT_ERROR")
    assert failed["code"] == RoutingError.__name__
    assert "'nobody'" in failed["message"] and "network 'team'" in failed["message"]
    (result,) = [e for e in run.of("TOOL_CALL_RESULT") if "subagentRunId" not in e]
    assert "'nobody'" in result["content"]


@tool(private_errors=True)
def query_orders(customer: str) -> str:
    """Look up a customer's orders."""
    raise ConnectionError(f"cannot reach {SECRET} for {customer}")


def test_a_private_tool_error_is_the_models_to_read_not_the_clients(
    logs: pytest.LogCaptureFixture, openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.add_tool_calls(("query_orders", {"customer": "ann"}))
    openai_server.add_text("The order database is down, sorry.")
    openai_server.add_text("Still down.")  # the next turn
    model = OpenAIModel("openai/fake", api_base=openai_server.base_url, api_key="sk-test")
    clerk = Agent("clerk", tools=[query_orders], model=model)
    again = lambda ctx: clerk if ctx.last_result is None or ctx.last_result.tool_calls else None  # noqa: E731
    network = Network("shop", agents=[clerk], router=again)
    with serve(app(network, store=str(tmp_path / "threads.db"))) as base:
        first, run = post(base, body("t", "r1", "my orders?"))
        # A client coming back to the thread gets its conversation (MESSAGES_SNAPSHOT).
        second, later = post(base, body("t", "r2", "and now?"))
    assert "hunter2" not in first and "hunter2" not in second
    (result,) = run.of("TOOL_CALL_RESULT")
    reference = REFERENCE.search(result["content"])
    assert reference is not None and "query_orders" in result["content"]
    assert later.of("MESSAGES_SNAPSHOT"), "the returning client got the conversation"
    # The model read the exception, in this run and, from the thread, on the next turn.
    _, answered, next_turn = openai_server.requests
    read = [m["content"] for m in answered["messages"] if m["role"] == "tool"]
    assert len(read) == 1 and SECRET in read[0] and reference.group(1) in read[0]
    assert SECRET in str(next_turn["messages"])
    assert any(reference.group(1) in r.getMessage() for r in logs.records)
