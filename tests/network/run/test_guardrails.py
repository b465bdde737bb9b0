"""`network.run.guardrails`: the result type, the coercion of what a caller gives, and running
several checks at once (the first trip cancels the others, each run is recorded)."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest

from network import ConfigurationError, GuardrailResult
from network.run.guardrails import Guardrail, GuardrailLog, coerce_guardrails, run_guardrails

pytestmark = pytest.mark.anyio


class Run:
    guardrails: GuardrailLog | None = None
    budget = None


def test_a_result_says_whether_it_tripped_and_how() -> None:
    assert GuardrailResult.allow("ok") == GuardrailResult(False, "ok")
    assert GuardrailResult.trip({"why": 1}).tripped
    rejected = GuardrailResult.reject("no", info=3)
    assert rejected.rejects and rejected.message == "no" and rejected.info == 3
    assert not GuardrailResult.trip().rejects
    with pytest.raises(ConfigurationError, match="tripped must be True or False"):
        GuardrailResult("yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="message must be a string"):
        GuardrailResult(True, None, 5)  # type: ignore[arg-type]


def test_functions_and_guardrails_are_coerced_and_checked() -> None:
    def named(ctx: Any, value: Any) -> GuardrailResult:
        return GuardrailResult.allow()

    (made,) = coerce_guardrails("agent 'a'", "input", [named])
    assert (made.name, made.kind, made.blocking) == ("named", "input", False)
    with pytest.raises(ConfigurationError, match="needs a name"):
        Guardrail(functools.partial(named), kind="input")
    with pytest.raises(ConfigurationError, match="kind must be one of"):
        Guardrail(named, kind="sideways")
    with pytest.raises(ConfigurationError, match="blocking must be True or False"):
        Guardrail(named, kind="input", blocking="yes")  # type: ignore[arg-type]
    assert coerce_guardrails("x", "output", None) == ()


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
    assert run.guardrails is not None
    recorded = {check.guardrail: check for check in run.guardrails.checks}
    assert recorded["slow"].cancelled and recorded["slow"].result is None
    assert recorded["fast"].result == GuardrailResult.trip("fast said no")


async def test_a_failing_check_raises_its_own_error_and_is_recorded() -> None:
    def broken(ctx: Any, value: Any) -> GuardrailResult:
        raise KeyError("model down")

    run = Run()
    with pytest.raises(KeyError):
        await run_guardrails(run, [Guardrail(broken, kind="input")], "x", agent="a")
    assert run.guardrails is not None and run.guardrails.checks[0].error == "KeyError"
