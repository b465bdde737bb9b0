"""Logs are off until the application turns them on; off, they cost no event objects."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import structlog

from network import events as builders
from tests.network.agui.networks import codegen_network

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def structlog_unconfigured() -> Any:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


async def test_by_default_a_run_prints_nothing_and_builds_no_event(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an event was built with logging off")

    for name in builders.__all__:
        if name[0].islower():
            monkeypatch.setattr(builders, name, forbidden)
    await codegen_network().run("go")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


async def test_stdlib_logging_at_info_gets_the_runs_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agent_network")
    await codegen_network().run("go")
    lines = [r.getMessage() for r in caplog.records if r.name == "agent_network"]
    assert lines[0].startswith("run.started run_id=run_")
    assert lines[-1].startswith("run.finished ") and "outcome=success" in lines[-1]
    assert sum(line.startswith("tool.called ") for line in lines) == 4


async def test_stdlib_logging_at_warning_gets_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agent_network")
    await codegen_network().run("go")
    assert not [r for r in caplog.records if r.name == "agent_network"]


async def test_an_application_that_configured_structlog_gets_them_through_it() -> None:
    with structlog.testing.capture_logs() as logs:
        await codegen_network().run("go")
    assert logs[0]["event"] == "run.started" and logs[-1]["event"] == "run.finished"


async def test_run_failed_masks_temp_values_as_telemetry_does() -> None:
    """An error quoting a `temp:` value (a router's, say) was logged in full by `run.failed`,
    while telemetry masked it in the span's status (`network.state.temp_masks`)."""
    from agents import Agent, ScriptedModel
    from network import Network, RunContext

    agent = Agent("ops", model=ScriptedModel(["Done."]))
    secret = "tok-8c1f2e"

    def router(ctx: RunContext) -> Any:
        if ctx.last_result is None:
            return agent
        raise RuntimeError(f"cannot route with token {ctx.kv.get('temp:token')}")

    network = Network("ops-net", agents=[agent], router=router)
    with structlog.testing.capture_logs() as logs, pytest.raises(RuntimeError, match=secret):
        await network.run("Go.", state={"temp:token": secret})
    (failed,) = [line for line in logs if line["event"] == "run.failed"]
    assert failed["error"] == "RuntimeError: cannot route with token [temp:token]"
    assert secret not in repr(logs)


async def test_run_started_names_a_thread_only_when_the_run_has_one() -> None:
    """A run on no thread logged `thread_id=<its run id>` (the id its AG-UI events carry)."""
    from agents import Agent, ScriptedModel
    from network import Network, ThreadRef
    from network.threads import MemoryStore

    network = Network("one", agents=[Agent("a", model=ScriptedModel(["ok"], repeat_last=True))])
    with structlog.testing.capture_logs() as logs:
        alone = await network.run("hi")
        await network.run("hi", thread=ThreadRef("trip", store=MemoryStore()))
    started = [line for line in logs if line["event"] == "run.started"]
    assert [line["thread_id"] for line in started] == [None, "trip"]
    assert started[0]["run_id"] == alone.run_id


def test_run_started_names_the_thread_an_agui_client_gave() -> None:
    import httpx

    from agents import Agent, ScriptedModel
    from network import Network
    from network.agui import app
    from tests.network.agui.live import run_body, serve

    asgi = app(Network("echo", agents=[Agent("echo", model=ScriptedModel(lambda r: "hello"))]))
    with (
        structlog.testing.capture_logs() as logs,
        serve(asgi) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        assert client.post("/", json=run_body("client-thread", "r1", "hi")).status_code == 200
    started = [line for line in logs if line["event"] == "run.started"]
    assert [line["thread_id"] for line in started] == ["client-thread"]
