"""OpenTelemetry: a fan-out's branches are sibling `invoke_agent` spans under the run, each
with its chat span and its branch; a failed branch's span says so."""

from __future__ import annotations

from typing import Any

import pytest

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
                ("invoke_agent b", []),
                ("invoke_agent a", [("chat scripted", [])]),
            ],
        )
    ]
    spans = {s.name: s for s in recorder.named("invoke_agent a") + recorder.named("invoke_agent b")}
    assert spans["invoke_agent a"].attributes["agent_network.branch"] == "pair/a"
    assert spans["invoke_agent a"].attributes["agent_network.call_index"] == 1
    failed = spans["invoke_agent b"]
    assert failed.attributes["agent_network.branch"] == "pair/b"
    assert failed.attributes["error.type"] == ModelError.__name__
    assert failed.status.status_code.name == "ERROR"
