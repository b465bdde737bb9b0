"""Tool retry policy: transparent retries only where repeating is safe, `Retry` for the model
with a per-run budget, attempt numbers and idempotency keys, failed tries leave no writes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, Retry, RetryPolicy, ScriptedModel, ToolContext, tool
from network import ConfigurationError, Network
from network.history.messages import ToolCall

pytestmark = pytest.mark.anyio

FAST = {"backoff": 0.001, "jitter": False}


def calling(tool_name: str, times: int = 1, **arguments: Any) -> ScriptedModel:
    """A model that calls `tool_name` `times` times (one call per step), then answers."""
    calls = iter(range(times))

    def script(request: Any) -> Any:
        index = next(calls, None)
        if index is None:
            return "done"
        return ToolCall(f"call-{index}", tool_name, arguments)

    return ScriptedModel(script)


def until_answer(agent: Agent) -> Network:
    def router(ctx: Any) -> Any:
        last = ctx.last_result
        return agent if last is None or last.tool_calls else None

    return Network("n", agents=[agent], router=router)


class Flaky:
    """A tool body failing `failures` times with `error`, counting every call (the counter
    lives outside the tool)."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0
        self.seen: list[tuple[int, int, str]] = []

    def __call__(self, ctx: ToolContext) -> str:
        self.calls += 1
        self.seen.append((ctx.attempt, ctx.max_attempts, ctx.idempotency_key))
        ctx.kv.set("tries", [*ctx.kv.get("tries", []), ctx.attempt])
        if self.calls <= self.failures:
            raise self.error
        return f"ok on try {ctx.attempt}"


async def test_an_idempotent_tool_is_retried_transparently_and_failed_tries_leave_no_writes() -> (
    None
):
    flaky = Flaky(2, ConnectionError("reset by peer"))

    @tool(idempotent=True, retry=RetryPolicy(max_attempts=3, **FAST))
    def fetch(ctx: ToolContext) -> str:
        """Fetch a page."""
        return flaky(ctx)

    agent = Agent("a", tools=[fetch], model=calling("fetch"))
    result = await until_answer(agent).run("go", state={"tries": []})

    assert flaky.calls == 3
    (record,) = result.results[0].tool_calls
    assert (record.is_error, record.attempts, record.content) == (False, 3, "ok on try 3")
    assert result["tries"] == [3]  # tries 1 and 2 wrote too, and were rolled back
    assert [s[:2] for s in flaky.seen] == [(1, 3), (2, 3), (3, 3)]
    keys = {s[2] for s in flaky.seen}
    assert keys == {f"{result.run_id}:call-0"}  # one key for every try


async def test_a_tool_with_side_effects_is_never_silently_repeated() -> None:
    flaky = Flaky(1, ConnectionError("reset by peer"))

    @tool  # not idempotent, no explicit retry_on: the network's default policy does not apply
    def charge(ctx: ToolContext) -> str:
        """Charge the card."""
        return flaky(ctx)

    agent = Agent("a", tools=[charge], model=calling("charge"))
    network = until_answer(agent)
    network.tool_retry = RetryPolicy(max_attempts=5, **FAST)
    result = await network.run("go")

    assert flaky.calls == 1
    (record,) = result.results[0].tool_calls
    assert record.is_error and record.attempts == 1 and "reset by peer" in record.content
    assert flaky.seen[0][:2] == (1, 1)


async def test_explicit_retry_on_retries_only_those_errors() -> None:
    flaky = Flaky(1, LookupError("not yet"))
    other = Flaky(1, ValueError("bad input"))
    policy = RetryPolicy(max_attempts=3, retry_on=(LookupError,), **FAST)

    @tool(retry=policy)
    def lookup(ctx: ToolContext) -> str:
        """Look it up."""
        return flaky(ctx)

    @tool(retry=policy)
    def parse(ctx: ToolContext) -> str:
        """Parse it."""
        return other(ctx)

    def script(request: Any) -> Any:
        if request.history[-1].role == "tool":
            return "done"
        return [ToolCall("l", "lookup", {}), ToolCall("p", "parse", {})]

    agent = Agent("a", tools=[lookup, parse], model=ScriptedModel(script))
    result = await until_answer(agent).run("go")

    assert (flaky.calls, other.calls) == (2, 1)
    first, second = result.results[0].tool_calls
    assert (first.is_error, first.attempts) == (False, 2)
    assert (second.is_error, second.attempts, second.error_type) == (True, 1, "ValueError")


async def test_defaults_come_from_the_agent_then_the_network() -> None:
    flaky = Flaky(10, TimeoutError("slow upstream"))

    @tool(idempotent=True)
    def fetch(ctx: ToolContext) -> str:
        """Fetch."""
        return flaky(ctx)

    agent = Agent(
        "a", tools=[fetch], model=calling("fetch"), tool_retry=RetryPolicy(max_attempts=2, **FAST)
    )
    network = until_answer(agent)
    network.tool_retry = RetryPolicy(max_attempts=4, **FAST)
    await network.run("go")
    assert flaky.calls == 2  # the agent's policy wins over the network's

    flaky.calls = 0
    agent.tool_retry = None
    agent.model = calling("fetch")
    result = await network.run("go")
    assert flaky.calls == 4
    assert result.results[0].tool_calls[0].attempts == 4


async def test_a_timed_out_try_is_retried_within_the_tool_timeout() -> None:
    tries = 0

    @tool(idempotent=True, timeout=0.05, retry=RetryPolicy(max_attempts=2, **FAST))
    async def slow(ctx: ToolContext) -> str:
        """Slow the first time."""
        nonlocal tries
        tries += 1
        if ctx.attempt == 1:
            await anyio.sleep(10)
        return "fast now"

    agent = Agent("a", tools=[slow], model=calling("slow"))
    result = await until_answer(agent).run("go")
    assert tries == 2
    assert result.results[0].tool_calls[0].content == "fast now"


async def test_retry_after_on_the_error_is_waited_and_events_show_each_retry() -> None:
    class Throttled(Exception):
        retry_after = 0.02

    flaky = Flaky(1, Throttled("slow down"))

    @tool(retry=RetryPolicy(max_attempts=2, retry_on=(Throttled,), backoff=30))
    def call_api(ctx: ToolContext) -> str:
        """Call the API."""
        return flaky(ctx)

    agent = Agent("a", tools=[call_api], model=calling("call_api"))
    events: list[Any] = []
    with anyio.fail_after(10):  # a 30 s backoff would trip this: retry_after was used
        await until_answer(agent).run("go", sinks=[events.append])
    (retry,) = [e for e in events if e.type == "CUSTOM" and e.name == "TOOL_CALL_RETRY"]
    assert retry.value["attempt"] == 1
    assert retry.value["delay"] == 0.02
    assert retry.value["tool"] == "call_api" and "slow down" in retry.value["error"]


async def test_retry_asks_the_model_to_try_again_within_a_per_run_budget() -> None:
    attempts = 0

    @tool(model_retries=2)
    def book(date: str, ctx: ToolContext) -> str:
        """Book a date."""
        nonlocal attempts
        attempts += 1
        ctx.kv.set("booked", date)
        raise Retry(f"{date!r} is not an ISO date")

    agent = Agent("a", tools=[book], model=calling("book", times=4, date="next friday"))
    result = await until_answer(agent).run("go")

    records = [r.tool_calls[0] for r in result.results if r.tool_calls]
    assert attempts == 4
    assert [r.error_type for r in records] == [
        "Retry",
        "Retry",
        "RetryBudgetExceeded",
        "RetryBudgetExceeded",
    ]
    assert "try again" in records[0].content and "ISO date" in records[0].content
    assert "gives up" in records[2].content
    assert "booked" not in result  # every try's write was dropped
    again = await until_answer(Agent("a", tools=[book], model=calling("book", date="x"))).run("go")
    assert again.results[0].tool_calls[0].error_type == "Retry"  # a new run, a new budget


async def test_policies_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ConfigurationError, match="backoff"):
        RetryPolicy(backoff=-1)
    with pytest.raises(ConfigurationError, match="retry_on"):
        RetryPolicy(retry_on=("TimeoutError",))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="'f'.*RetryPolicy"):
        tool(lambda: None, name="f", retry=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="model_retries"):
        tool(lambda: None, name="f", model_retries=-1)
    assert RetryPolicy(retry_on=KeyError).retries(KeyError("k"))
    assert RetryPolicy(jitter=False, backoff=1, max_delay=3).delay(5) == 3


async def test_a_policys_tries_are_bounded_and_its_longest_wait_is_max_delay() -> None:
    """Before, `RetryPolicy(max_attempts=10**400)` was taken as it came, and the wait after
    try 400 with `backoff_factor=10` raised OverflowError out of the run."""
    for tries in (10**400, 1001):
        with pytest.raises(ConfigurationError, match=r"RetryPolicy\.max_attempts .*<= 1000"):
            RetryPolicy(max_attempts=tries)
    with pytest.raises(ConfigurationError, match=r"RetryPolicy\.max_attempts must be an int"):
        RetryPolicy(max_attempts=2.0)  # type: ignore[arg-type]
    policy = RetryPolicy(max_attempts=1000, backoff=1, backoff_factor=10, jitter=False)
    assert policy.delay(400) == policy.max_delay == 30
    assert RetryPolicy(backoff=0, backoff_factor=1e308, jitter=False).delay(3) == 0


async def test_a_retry_whose_reason_cannot_be_read_is_still_the_models_to_read() -> None:
    """Before, `raise Retry(obj)` with an `obj` whose `__str__` raises ended the run with
    that unrelated error, raised where the model's error result was written."""

    class Unreadable:
        def __str__(self) -> str:
            raise RuntimeError("unrelated")

        def __format__(self, spec: str) -> str:
            raise RuntimeError("unrelated")

    @tool
    def book(date: str) -> str:
        """Book a date."""
        raise Retry(Unreadable())  # type: ignore[arg-type]

    result = await Agent("a", tools=[book], model=calling("book", date="x")).run("go")
    record = result.results[0].tool_calls[0]
    assert record.error_type == "Retry"
    assert "asks you to try again: <the text of Unreadable could not be read" in record.content
    assert Retry(42).message == "42"


@pytest.mark.parametrize("field", ["jitter", "respect_retry_after"])
@pytest.mark.parametrize("value", [-0.5, 0.1, "no", None, float("nan")])
def test_a_policys_switches_are_bools(field: str, value: object) -> None:
    """LangGraph's `RetryPolicy(jitter=...)` is a switch, and so is ours (docs/coming-from-
    langgraph.md): `jitter=-0.5` or `jitter="no"` turned it on by being truthy."""
    with pytest.raises(ConfigurationError, match=rf"RetryPolicy\.{field} must be True or False"):
        RetryPolicy(**{field: value})  # type: ignore[arg-type]


async def test_the_trace_shows_how_many_tries_a_call_took(quiet_logs: None) -> None:
    from tests.network.telemetry.otel import Recorder

    recorder = Recorder()
    flaky = Flaky(1, TimeoutError("slow"))

    @tool(idempotent=True, retry=RetryPolicy(max_attempts=3, **FAST))
    def fetch(ctx: ToolContext) -> str:
        """Fetch."""
        return flaky(ctx)

    agent = Agent("a", tools=[fetch], model=calling("fetch"))
    network = until_answer(agent)
    network.telemetry = recorder.telemetry
    await network.run("go")
    span = recorder.only("execute_tool fetch")
    assert span.attributes["agent_network.tool.attempts"] == 2
    assert "error.type" not in span.attributes
