"""OpenTelemetry: a fan-out's branches are sibling `invoke_agent` spans under the run, each
carrying what every agent span carries (role, provider, model, its chat span) and its branch,
live from the branch's start to its end; a failed branch's span says so."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, tool
from agents.models.scripted import call
from network import ModelError, Network, Parallel
from tests.network.parallel.helpers import text_agent
from tests.network.parallel.test_failures import failing_agent
from tests.network.telemetry.otel import Recorder, tree

pytestmark = pytest.mark.anyio


async def test_branches_are_sibling_agent_spans_with_their_branch(quiet_logs: None) -> None:
    recorder = Recorder()
    first = text_agent("first", "plan", delay=0)
    a, b = text_agent("a", delay=0.01), failing_agent("b")
    fork = Parallel(a, b, on_error="continue", name="pair")

    def router(ctx: Any) -> Any:
        return [first, fork][ctx.call_count] if ctx.call_count < 2 else None

    network = Network("n", agents=[first, a, b], router=router, telemetry=recorder.telemetry)
    result = await network.run("go")
    assert [f.branch for f in result.failed_branches] == ["pair/b"]

    assert tree(recorder.spans) == [
        (
            "invoke_workflow n",
            [
                ("invoke_agent first", [("chat scripted", [])]),
                ("invoke_agent a", [("chat scripted", [])]),
                ("invoke_agent b", [("chat scripted", [])]),
            ],
        )
    ]
    plain = recorder.only("invoke_agent first")
    spans = {s.name: s for s in recorder.named("invoke_agent a") + recorder.named("invoke_agent b")}
    for span in spans.values():  # what every agent span carries, a branch's too
        for key in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"):
            assert span.attributes[key] == plain.attributes[key], key
        assert span.attributes["agent_network.role"] == "agent"
    assert spans["invoke_agent a"].attributes["agent_network.branch"] == "pair/a"
    assert spans["invoke_agent a"].attributes["agent_network.call_index"] == 1
    assert "gen_ai.usage.output_tokens" in spans["invoke_agent a"].attributes
    failed = spans["invoke_agent b"]
    assert failed.attributes["agent_network.branch"] == "pair/b"
    assert failed.attributes["error.type"] == ModelError.__name__
    assert failed.status.status_code.name == "ERROR"
    (failed_chat,) = [s for s in recorder.named("chat scripted") if s.parent == failed.context]
    assert failed_chat.status.status_code.name == "ERROR"


async def test_a_branch_span_ends_when_its_branch_ends(quiet_logs: None) -> None:
    """The quick branch's spans (one per call of its tool loop, with its tool span) are
    exported while the slow one runs."""
    recorder = Recorder()
    seen_while_slow_ran: list[list[str]] = []

    @tool
    async def wait_for_quick() -> str:
        """Run until the quick branch's span is out (or 5 s)."""
        with anyio.move_on_after(5):
            while len(recorder.named("invoke_agent quick")) < 2:
                await anyio.sleep(0.01)
        seen_while_slow_ran.append(sorted(s.name for s in recorder.spans))
        return "done"

    @tool
    def note() -> str:
        """A quick tool."""
        return "noted"

    quick = Agent("quick", model=ScriptedModel([call("note"), "quick done"]), tools=[note])
    slow = Agent(
        "slow", model=ScriptedModel([call("wait_for_quick"), "slow done"]), tools=[wait_for_quick]
    )
    fork = Parallel(quick, slow, name="race")

    def router(ctx: Any) -> Any:
        return fork if ctx.call_count == 0 else None

    network = Network("n", agents=[quick, slow], router=router, telemetry=recorder.telemetry)
    await network.run("go")

    assert seen_while_slow_ran == [
        [
            "chat scripted",  # quick's tool call
            "chat scripted",  # its answer
            "execute_tool note",
            "invoke_agent quick",
            "invoke_agent quick",
        ]
    ]  # the run and the slow branch still open; the quick one done
    quick_spans, slow_spans = (
        recorder.named("invoke_agent quick"),
        recorder.named("invoke_agent slow"),
    )
    assert all(s.end_time is not None for s in quick_spans + slow_spans)
    assert max(s.end_time for s in quick_spans) < max(s.end_time for s in slow_spans)


async def test_a_failing_fan_out_ends_its_branch_spans_with_the_error(quiet_logs: None) -> None:
    recorder = Recorder()
    a, b = text_agent("a", delay=5), failing_agent("b", after=0.05)
    fork = Parallel(a, b, name="pair")  # on_error="fail": b's failure cancels a

    def router(ctx: Any) -> Any:
        return fork if ctx.call_count == 0 else None

    network = Network("n", agents=[a, b], router=router, telemetry=recorder.telemetry)
    with pytest.raises(ModelError):
        await network.run("go")
    names = sorted(s.name for s in recorder.spans)
    assert names == ["chat scripted", "invoke_agent a", "invoke_agent b", "invoke_workflow n"]
    for name in ("invoke_agent a", "invoke_agent b"):
        span = recorder.only(name)
        assert span.status.status_code.name == "ERROR", name
        assert span.attributes["agent_network.role"] == "agent"
