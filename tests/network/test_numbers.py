"""Every numeric option refuses NaN, infinity, negatives and bools, naming the option; and a
fan-out is checked against `max_model_calls` before it starts, as against `max_iter`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, ContextPolicy, LiteLLMModel, OpenAIModel, Price, ScriptedModel, tool
from network import ConfigurationError, Network, Parallel, RetryPolicy, StopReason, UsageLimits
from network.agui import ThreadRegistry
from network.numbers import check_number, check_sizes
from network.threads import SQLStore
from routers import routing_agent

BAD = [math.nan, math.inf, -math.inf, -1, True]


def noop() -> str:
    """Do nothing."""
    return ""


OPTIONS: dict[str, Callable[[Any], Any]] = {
    "UsageLimits.max_cost_usd": lambda v: UsageLimits(max_cost_usd=v),
    "UsageLimits.max_model_calls": lambda v: UsageLimits(max_model_calls=v),
    "RetryPolicy.backoff": lambda v: RetryPolicy(backoff=v),
    "RetryPolicy.max_delay": lambda v: RetryPolicy(max_delay=v),
    "RetryPolicy.backoff_factor": lambda v: RetryPolicy(backoff_factor=v),
    "RetryPolicy.max_attempts": lambda v: RetryPolicy(max_attempts=v),
    "ContextPolicy.max_tokens": lambda v: ContextPolicy(max_tokens=v),
    "ContextPolicy.summary_target": lambda v: ContextPolicy(summary_target=v),
    "Price.input": lambda v: Price(input=v, output=1),
    "tool 'noop': timeout": lambda v: tool(timeout=v)(noop),
    "tool 'noop': model_retries": lambda v: tool(model_retries=v)(noop),
    "agent 'a': tool_timeout": lambda v: Agent("a", tool_timeout=v),
    "network 'n': max_iter": lambda v: Network("n", agents=[Agent("a")], max_iter=v),
    "Parallel 'p': max_concurrency": lambda v: Parallel(Agent("a"), name="p", max_concurrency=v),
    "model 'm': timeout": lambda v: OpenAIModel("m", timeout=v),
    "model 'openai/m': retry_delay": lambda v: LiteLLMModel("openai/m", retry_delay=v),
    "model 'm': max_retries": lambda v: OpenAIModel("m", max_retries=v),
    "routing agent 'r': history_limit": lambda v: routing_agent(
        model="m", name="r", history_limit=v
    ),
    "ThreadRegistry: max_bytes": lambda v: ThreadRegistry(max_bytes=v),
    "SQLStore: busy_timeout": lambda v: SQLStore("sqlite:///never-opened.db", busy_timeout=v),
}


@pytest.mark.parametrize("value", BAD, ids=repr)
@pytest.mark.parametrize("field", list(OPTIONS))
def test_a_bad_number_is_refused_naming_the_option(field: str, value: Any) -> None:
    if field.endswith(
        ("max_attempts", "max_iter", "max_concurrency", "history_limit", "max_bytes")
    ):
        value = 0 if value == -1 else value  # their least value is 1
    with pytest.raises(ConfigurationError) as caught:
        OPTIONS[field](value)
    assert field in str(caught.value) and repr(value) in str(caught.value)


def test_the_helper_says_what_it_wants() -> None:
    with pytest.raises(ConfigurationError, match=r"x must be a finite number >= 0, got nan"):
        check_number("x", math.nan)
    with pytest.raises(ValueError, match=r"n must be an int > 0 and <= 3, got 4"):
        check_number("n", 4, integer=True, above=True, maximum=3, error=ValueError)
    assert check_number("y", None, optional=True) is None
    assert check_number("z", 2.5) == 2.5


def test_an_int_past_a_floats_range_is_refused_not_an_overflow() -> None:
    # `math.isfinite(10**400)` raised OverflowError out of every float option
    for field in (
        "UsageLimits.max_cost_usd",
        "RetryPolicy.backoff",
        "Price.input",
        "tool 'noop': timeout",
    ):
        with pytest.raises(ConfigurationError, match=f"{field}.* got a huge int"):
            OPTIONS[field](10**400)
    assert check_number("n", 10**400, integer=True) == 10**400  # an int option: no float
    assert check_number("x", 10**300) == 10**300  # within a float's range


MAKERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "agent 'a'": lambda params: Agent("a", params=params),
    "model 'm'": lambda params: OpenAIModel("m", **params),
    "model 'openai/m'": lambda params: LiteLLMModel("openai/m", **params),
}


@pytest.mark.parametrize("owner", list(MAKERS))
@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"temperature": math.nan}, "parameter 'temperature' must be a finite number"),
        ({"top_p": math.inf}, "parameter 'top_p' must be a finite number"),
        ({"extra_body": {"w": [1, -math.inf]}}, "parameter 'extra_body'['w'][1] must be a fin"),
        ({"temperature": -0.5}, "parameter 'temperature' must be a finite number >= 0, got -0.5"),
        ({"max_tokens": 0}, "parameter 'max_tokens' must be an int >= 1, got 0"),
        ({"max_completion_tokens": 2.5}, "parameter 'max_completion_tokens' must be an int"),
        ({"n": True}, "parameter 'n' must be an int >= 1, got True"),
    ],
    ids=repr,
)
def test_a_model_parameter_json_cannot_carry_or_no_provider_takes_is_refused(
    owner: str, params: dict[str, Any], said: str
) -> None:
    """Sent, a NaN was `NaN` in the request body (a provider's 400 at the first call)."""
    with pytest.raises(ConfigurationError) as caught:
        MAKERS[owner](params)
    assert str(caught.value).startswith(f"{owner}: {said}")


@pytest.mark.parametrize("params", [[("temperature", 0.2)], "temperature=0.2", 0, ""], ids=repr)
def test_agent_params_that_are_not_a_mapping_are_refused_naming_the_agent(params: Any) -> None:
    """`Agent(params=[...])` was an AttributeError naming nothing (and a falsy `0` or `""`
    was taken for no parameters)."""
    with pytest.raises(ConfigurationError, match=r"^agent 'a': params must be a mapping"):
        Agent("a", params=params)


def test_model_parameters_any_provider_may_take_are_kept() -> None:
    params = {"temperature": 0.2, "max_tokens": 10, "stop": None, "seed": -1, "logit_bias": {}}
    assert Agent("a", params=params).params == params
    assert OpenAIModel("m", **params).params == params


@pytest.mark.anyio
async def test_a_run_refuses_a_bad_max_iter() -> None:
    network = Network("n", agents=[Agent("a", model=ScriptedModel(["hi"]))])
    with pytest.raises(ConfigurationError, match="max_iter"):
        await network.run("go", max_iter=0)


@pytest.mark.anyio
async def test_a_fan_out_past_max_model_calls_is_not_started() -> None:
    calls: list[str] = []

    def counted(name: str) -> Agent:
        def answer(request: Any) -> str:
            calls.append(name)
            return f"{name} done"

        return Agent(name, model=ScriptedModel(answer))

    agents = [counted(name) for name in ("a", "b", "c")]
    fork = Parallel(*agents, name="three")
    network = Network("n", agents=agents, router=lambda ctx: fork if ctx.call_count == 0 else None)
    result = await network.run("go", limits=UsageLimits(max_model_calls=2))
    assert calls == []
    assert result.stop_reason == StopReason.USAGE_LIMIT
    exceeded = result.limit_exceeded
    assert exceeded is not None and (exceeded.limit, exceeded.value) == ("max_model_calls", 2)
    assert str(exceeded) == (
        "usage limit max_model_calls=2 would be passed by a fan-out of 3 branches (0 used)"
    )
    fits = await network.run("go", limits=UsageLimits(max_model_calls=3))
    assert fits.stop_reason == StopReason.ROUTER_FINISHED and sorted(calls) == ["a", "b", "c"]


@pytest.mark.parametrize("bad", [*BAD, 0, 1.5, None])
def test_check_sizes_refuses_all_but_whole_numbers_of_one_or_more(bad: Any) -> None:
    check_sizes("Box", max_items=1, max_bytes=10**9)  # fine: nothing raised
    with pytest.raises(ConfigurationError, match=r"^Box: max_bytes must be an int >= 1, got "):
        check_sizes("Box", max_items=1, max_bytes=bad)
    with pytest.raises(ValueError, match=r"^max_items must be an int >= 1, got "):
        check_sizes("", ValueError, max_items=bad)
