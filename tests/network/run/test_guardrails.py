"""`network.run.guardrails`: the result type and the coercion of what a caller gives."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from network import ConfigurationError, GuardrailResult
from network.run.guardrails import Guardrail, coerce_guardrails

pytestmark = pytest.mark.anyio


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
    with pytest.raises(ConfigurationError, match="reject: message must be a string"):
        GuardrailResult.reject(None)  # type: ignore[arg-type]  # else a trip: the run stops


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


@pytest.mark.parametrize(
    "fn",
    [
        lambda ctx: GuardrailResult.allow(),
        lambda: GuardrailResult.allow(),
        lambda ctx, value, extra: GuardrailResult.allow(),
        lambda *, ctx, value: GuardrailResult.allow(),
    ],
)
@pytest.mark.parametrize("kind", ["input", "output", "tool_input", "tool_output"])
def test_a_check_that_cannot_take_ctx_and_value_is_refused_when_given(fn: Any, kind: str) -> None:
    # Before, it was accepted and the run failed at the check, beside a model request already
    # made, with a TypeError naming `<lambda>` and neither the guardrail nor the agent.
    with pytest.raises(ConfigurationError, match=r"^guardrail 'g': a guardrail is called as fn"):
        Guardrail(fn, kind=kind, name="g")


async def test_a_check_that_cannot_take_ctx_and_value_is_refused_by_the_agent() -> None:
    from agents import Agent, ScriptedModel

    with pytest.raises(ConfigurationError, match=r"guardrail '<lambda>': a guardrail is called"):
        Agent("a", model=ScriptedModel(["x"]), input_guardrails=[lambda ctx: None])


@pytest.mark.parametrize(
    "fn",
    [
        lambda ctx, value: GuardrailResult.allow(),
        lambda ctx, value, extra=1: GuardrailResult.allow(),
        lambda *args: GuardrailResult.allow(),
        lambda ctx, *rest, **options: GuardrailResult.allow(),
    ],
)
def test_a_check_that_takes_ctx_and_value_is_kept(fn: Any) -> None:
    assert Guardrail(fn, kind="input", name="g").fn is fn
