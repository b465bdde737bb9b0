"""A run's failure masks the `temp:` values of every store it ran: a failed parallel branch's
and a sub-run's too, in the `run.failed` log line and in what a server tells its client."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import structlog

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ModelError, Network, Parallel, ToolError
from network.agui import app
from tests.network.telemetry.otel import Recorder, every_value

pytestmark = pytest.mark.anyio
SECRET = "hunter2-5f0c9a"


@pytest.fixture(autouse=True)
def structlog_unconfigured() -> Any:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@tool
def stash(context: ToolContext) -> str:
    """Keep a secret for this run only."""
    context.state.kv.set("temp:token", SECRET)
    return "kept"


def leaking(name: str) -> Agent:
    """Its tool writes a temp: value to its own store; then its model fails quoting it."""

    def script(request: Any) -> Any:
        if request.history[-1].role != "tool":
            return call("stash")
        raise ModelError(f"provider echoed {SECRET}", model="scripted")

    return Agent(name, tools=[stash], model=ScriptedModel(script))


def branching(**options: Any) -> Network:
    fine = Agent("fine", model=ScriptedModel(lambda request: "ok"))
    failing = leaking("failing")
    fork = Parallel(fine, failing)
    return Network(
        "fan",
        agents=[fine, failing],
        router=lambda ctx: fork if ctx.call_count == 0 else None,
        **options,
    )


def calling_a_sub_agent(**options: Any) -> Network:
    helper = leaking("helper").as_tool(description="Helps.", on_failure="raise")
    boss = Agent("boss", tools=[helper], model=ScriptedModel([call("helper", input="go")]))
    return Network("boss", agents=[boss], **options)


@pytest.mark.parametrize("network", [branching, calling_a_sub_agent])
async def test_run_failed_masks_the_temp_values_of_a_branch_or_a_sub_run(network: Any) -> None:
    # masked with the run's own store only, the secret was logged as it was
    with structlog.testing.capture_logs() as logs, pytest.raises((ModelError, ToolError)) as caught:
        await network().run("go")
    error: BaseException | None = caught.value
    while error is not None and SECRET not in str(error):  # the caller reads it: in-process
        error = error.__cause__
    assert error is not None
    failed = [line for line in logs if line["event"] == "run.failed"]
    assert failed and all("[temp:token]" in line["error"] for line in failed)
    assert SECRET not in repr(failed)


@pytest.mark.parametrize("network", [branching, calling_a_sub_agent])
async def test_a_served_client_never_reads_them(network: Any) -> None:
    # the library's error reached the AG-UI client as it was, the secret in it
    asgi = app(network())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=asgi), base_url="http://t", timeout=30
    ) as http:
        messages = [{"id": "u", "role": "user", "content": "go"}]
        answer = await http.post("/", json={"threadId": "t", "runId": "r", "messages": messages})
    assert "RUN_ERROR" in answer.text and "[temp:token]" in answer.text
    assert SECRET not in answer.text


@pytest.mark.parametrize("network", [branching, calling_a_sub_agent])
async def test_the_failed_runs_span_masks_them(network: Any) -> None:
    recorder = Recorder(capture_content=True)
    with pytest.raises((ModelError, ToolError)):
        await network(telemetry=recorder.telemetry).run("go")
    assert any("[temp:token]" in value for value in every_value(recorder.spans))
    assert SECRET not in "\n".join(every_value(recorder.spans))
