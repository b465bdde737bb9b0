"""`network.run.guardrail_checks`: several checks at once (the first trip cancels the others,
each run is recorded), and a model call beside its input guardrails."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from network import GuardrailResult, GuardrailTripped
from network.run.guardrail_checks import check_beside, run_guardrails
from network.run.guardrails import Guardrail, GuardrailLog

pytestmark = pytest.mark.anyio


class Books:
    guardrails: GuardrailLog | None = None
    budget = None


class Run:
    """What running a guardrail reads of a run: its bookkeeping's log and budget."""

    def __init__(self) -> None:
        self.engine = Books()


async def test_the_first_trip_cancels_the_others_and_every_check_is_recorded() -> None:
    finished: list[str] = []

    async def fast(ctx: Any, value: Any) -> GuardrailResult:
        finished.append("fast")
        return GuardrailResult.trip("fast said no")

    async def slow(ctx: Any, value: Any) -> GuardrailResult:
        await anyio.sleep(5)
        finished.append("slow")
        return GuardrailResult.allow()

    run = Run()
    checks = [Guardrail(slow, kind="output"), Guardrail(fast, kind="output")]
    with anyio.fail_after(3):
        trip = await run_guardrails(run, checks, "answer", agent="a")
    assert trip is not None and trip[0].name == "fast" and trip[1].info == "fast said no"
    assert finished == ["fast"]
    assert run.engine.guardrails is not None
    recorded = {check.guardrail: check for check in run.engine.guardrails.checks}
    assert recorded["slow"].cancelled and recorded["slow"].result is None
    assert recorded["fast"].result == GuardrailResult.trip("fast said no")


async def test_a_failing_check_raises_its_own_error_and_is_recorded() -> None:
    def broken(ctx: Any, value: Any) -> GuardrailResult:
        raise KeyError("model down")

    run = Run()
    with pytest.raises(KeyError):
        await run_guardrails(run, [Guardrail(broken, kind="input")], "x", agent="a")
    assert run.engine.guardrails is not None and run.engine.guardrails.checks[0].error == "KeyError"


async def test_a_trip_beside_a_call_cancels_it_and_a_pass_waits_for_the_checks() -> None:
    answered: list[str] = []

    async def ask() -> str:
        await anyio.sleep(5)
        answered.append("answer")
        return "answer"

    async def refuse(ctx: Any, value: Any) -> GuardrailResult:
        await anyio.sleep(0.01)
        return GuardrailResult.trip("no")

    run = Run()
    with anyio.fail_after(3), pytest.raises(GuardrailTripped) as raised:
        await check_beside(run, [Guardrail(refuse, kind="input")], "hi", "a", ask)
    assert answered == [] and raised.value.guardrail == "refuse"
    assert run.engine.guardrails is not None and run.engine.guardrails.tripped is raised.value

    async def quick() -> str:
        return "fast answer"

    async def slow_pass(ctx: Any, value: Any) -> GuardrailResult:
        await anyio.sleep(0.05)
        return GuardrailResult.allow()

    discarded: list[str] = []
    answer = await check_beside(
        Run(), [Guardrail(slow_pass, kind="input")], "hi", "a", quick, discarded.append
    )
    assert answer == "fast answer" and discarded == []
