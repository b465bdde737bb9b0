"""Running one answer's tool calls: errors reach the model, calls overlap, writes land in order."""

import gc
import warnings

import anyio
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State


def run_once(agent: Agent) -> Network:
    return Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None)


@pytest.mark.anyio
async def test_unknown_tools_and_raising_handlers_become_errors_the_model_sees() -> None:
    @tool
    def sync_fail() -> str:
        raise RuntimeError("sync broke")

    @tool
    async def async_fail() -> str:
        raise RuntimeError("async broke")

    model = ScriptedModel([[call("nope"), call("sync_fail"), call("async_fail")], "recovered"])
    agent = Agent("a", tools=[sync_fail, async_fail], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("x")
    unknown, sync_error, async_error = result.results[0].tool_calls
    assert unknown.is_error and "unknown tool 'nope'" in unknown.content
    assert sync_error.is_error and "sync broke" in sync_error.content
    assert async_error.is_error and "async broke" in async_error.content
    tool_messages = [m for m in model.requests[1].history if m.role == "tool"]
    assert [m.is_error for m in tool_messages] == [True, True, True]
    assert result.output == "recovered"  # the run went on


class _Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


class _UnreadableTimeout(TimeoutError):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


@pytest.mark.anyio
@pytest.mark.parametrize("private", [False, True])
async def test_an_exception_whose_text_cannot_be_read_is_still_the_models_error(
    private: bool,
) -> None:
    # before, the run failed with the RuntimeError of the exception's own __str__
    @tool(private_errors=private)
    def unreadable() -> str:
        """Fail oddly."""
        raise _Unreadable

    @tool(private_errors=private)
    def unreadable_timeout() -> str:
        """Fail oddly too."""
        raise _UnreadableTimeout

    model = ScriptedModel([[call("unreadable"), call("unreadable_timeout")], "recovered"])
    agent = Agent("a", tools=[unreadable, unreadable_timeout], model=model)
    result = await Network(
        "n", agents=[agent], router=lambda c: agent if c.call_count < 2 else None
    ).run("x")
    for record, kind in zip(
        result.results[0].tool_calls, ["_Unreadable", "_UnreadableTimeout"], strict=True
    ):
        told = record.model_only if private else record.content
        assert record.is_error and record.error_type in (kind, "TimeoutError")
        assert "could not be read" in (told or "")
    assert result.output == "recovered"


@pytest.mark.anyio
async def test_an_unknown_tool_name_is_echoed_to_the_model_bounded() -> None:
    model = ScriptedModel([[call("x" * 100_000)], "ok"])
    agent = Agent("a", model=model)
    result = await run_once(agent).run("x")
    (unknown,) = result.results[0].tool_calls
    assert unknown.is_error and "unknown tool 'xxx" in unknown.content
    assert len(unknown.content) < 300  # not the model's 100,000 characters again


@pytest.mark.anyio
async def test_invalid_json_arguments_are_reported_to_the_model() -> None:
    from network import AssistantMessage, ToolCall

    @tool
    def echo(text: str) -> str:
        return text

    broken = AssistantMessage(tool_calls=[ToolCall(id="c1", name="echo", arguments='{"text": ')])
    result = await run_once(Agent("a", tools=[echo], model=ScriptedModel([broken]))).run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "not valid JSON" in record.content


@pytest.mark.anyio
async def test_json_arguments_that_are_not_an_object_are_reported_as_such() -> None:
    from network import AssistantMessage, ToolCall

    @tool
    def echo(text: str) -> str:
        return text

    listed = AssistantMessage(tool_calls=[ToolCall(id="c1", name="echo", arguments='["hi"]')])
    result = await run_once(Agent("a", tools=[echo], model=ScriptedModel([listed]))).run("x")
    record = result.results[0].tool_calls[0]
    # valid JSON, so the model is told what is wrong with it, not that it is not JSON
    assert record.is_error and "not valid JSON" not in record.content
    assert "tool 'echo': arguments must be a JSON object, got a JSON array" in record.content


@pytest.mark.anyio
async def test_concurrent_calls_record_results_and_writes_in_model_order() -> None:
    started = []

    @tool
    async def slow_append(item: str, delay: float, state: State) -> str:
        started.append(item)
        await anyio.sleep(delay)
        state.kv.set("log", [item])
        state.kv.set("last", item)
        return item

    model = ScriptedModel(
        [
            [
                call("slow_append", item="first", delay=0.05),
                call("slow_append", item="second", delay=0),
            ]
        ]
    )
    agent = Agent("a", tools=[slow_append], model=model)
    schema = {"log": {"type": list[str]}, "last": {"type": str}}
    result = await Network(
        "n",
        agents=[agent],
        router=lambda c: agent if c.call_count == 0 else None,
        state_schema=schema,
    ).run("x")
    assert sorted(started) == ["first", "second"]
    assert [r.result for r in result.results[0].tool_calls] == ["first", "second"]
    assert result["log"] == ["first", "second"]  # model order, though "second" finished first
    assert result["last"] == "second"


@pytest.mark.anyio
async def test_concurrent_calls_really_overlap() -> None:
    log = []

    @tool
    async def nap(n: int) -> str:
        log.append(("start", n))
        await anyio.sleep(0.05)
        log.append(("end", n))
        return "z"

    agent = Agent("a", tools=[nap], model=ScriptedModel([[call("nap", n=n) for n in range(5)]]))
    await run_once(agent).run("x")
    # every call started before any finished: they ran at once, not one after another
    assert [kind for kind, _ in log] == ["start"] * 5 + ["end"] * 5


@pytest.mark.anyio
async def test_a_tool_that_raises_leaves_none_of_its_writes() -> None:
    @tool
    def half_done(ctx: ToolContext) -> str:
        ctx.kv.set("a", 1)
        ctx.kv.set("b", 2)
        raise RuntimeError("halfway")

    @tool
    def fine(ctx: ToolContext) -> str:
        ctx.kv.set("c", 3)
        return "ok"

    single = Agent("single", tools=[half_done], model=ScriptedModel([call("half_done")]))
    result = await run_once(single).run("x", state={"a": 0})
    assert result.state.kv.data == {"a": 0}
    assert result.results[0].state_delta == []

    pair = Agent(
        "pair", tools=[half_done, fine], model=ScriptedModel([[call("half_done"), call("fine")]])
    )
    result = await run_once(pair).run("x", state={"a": 0})
    assert result.state.kv.data == {"a": 0, "c": 3}


@pytest.mark.anyio
async def test_blocking_sync_tools_run_in_a_worker_thread() -> None:
    import threading

    threads = []

    @tool(blocking=True)
    def blocking() -> str:
        threads.append(threading.current_thread() is threading.main_thread())
        return "done"

    await run_once(Agent("a", tools=[blocking], model=ScriptedModel([call("blocking")]))).run("x")
    assert threads == [False]


@pytest.mark.anyio
@pytest.mark.usefixtures("quiet_logs")
async def test_a_key_set_then_deleted_in_one_answer_ends_deleted() -> None:
    @tool
    def remember(ctx: ToolContext) -> str:
        """Note a draft."""
        ctx.kv.set("draft", "v1")
        return "noted"

    @tool
    def forget(ctx: ToolContext) -> str:
        """Drop the draft."""
        ctx.kv.delete("draft")
        return "dropped"

    agent = Agent(
        "a", tools=[remember, forget], model=ScriptedModel([[call("remember"), call("forget")]])
    )
    result = await Network("n", agents=[agent]).run("go")
    assert "draft" not in result
    # and the other order: deleted first, then set, ends set
    agent = Agent(
        "b", tools=[remember, forget], model=ScriptedModel([[call("forget"), call("remember")]])
    )
    result = await Network("n", agents=[agent]).run("go", state={"draft": "v0"})
    assert result["draft"] == "v1"


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_result_no_text_can_be_made_of_is_the_tools_failure(kind: str) -> None:
    # an int of more than 4,300 digits is more than Python turns into a string
    huge = 10**5000

    @tool(name="huge")
    def huge_sync(state: State) -> dict[str, int]:
        """A huge number."""
        state.kv.set("wrote", True)
        return {"value": huge}

    @tool(name="huge")
    async def huge_async(state: State) -> int:
        """A huge number."""
        state.kv.set("wrote", True)
        return huge

    chosen = huge_sync if kind == "sync" else huge_async
    model = ScriptedModel([call("huge"), "recovered"])
    agent = Agent("a", tools=[chosen], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error
    assert record.error is not None and record.error.startswith(
        "tool 'huge' returned a value that cannot be made into text for the model: ValueError: "
        "Exceeds the limit (4300 digits)"
    )
    (told,) = [m for m in model.requests[1].history if m.role == "tool"]
    assert told.is_error and "tool 'huge' returned a value" in told.content
    assert not result.state.kv.has("wrote")  # a failed call's writes are dropped
    assert result.output == "recovered"  # the run went on


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_tool_that_returns_a_coroutine_fails_saying_so(kind: str) -> None:
    # a sync tool returning an async client's call (its await forgotten): the model read
    # "<coroutine object fetch_page at 0x...>" as the page, and Python warned at exit
    ran: list[str] = []

    async def fetch_page(url: str) -> str:
        ran.append(url)
        return "<html>"

    @tool(name="fetch")
    def fetch_sync(url: str, state: State) -> str:
        """Fetch a page."""
        state.kv.set("fetched", url)
        return fetch_page(url)  # type: ignore[return-value]

    @tool(name="fetch")
    async def fetch_async(url: str, state: State) -> str:
        """Fetch a page."""
        state.kv.set("fetched", url)
        return fetch_page(url)  # type: ignore[return-value]

    model = ScriptedModel([call("fetch", url="https://example.org"), "recovered"])
    agent = Agent("a", tools=[fetch_sync if kind == "sync" else fetch_async], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine ... was never awaited"
        result = await network.run("x")
        gc.collect()
    record = result.results[0].tool_calls[0]
    assert record.is_error and record.error is not None
    assert record.error.startswith(
        "tool 'fetch' returned a value that cannot be made into text for the model: TypeError: "
        "it is an awaitable (coroutine) nothing awaited: a tool that awaits is an `async def`"
    )
    (told,) = [m for m in model.requests[1].history if m.role == "tool"]
    assert "coroutine object" not in told.content and "nothing awaited" in told.content
    assert ran == [] and not result.state.kv.has("fetched")
    assert result.output == "recovered"


@pytest.mark.anyio
async def test_a_private_tools_result_with_no_text_is_screened_from_the_client() -> None:
    class Leaky:
        def __str__(self) -> str:
            raise RuntimeError("cannot show postgres://admin:hunter2@db")

    @tool(private_errors=True)
    def leaky() -> Leaky:
        """A value whose text fails, saying a secret."""
        return Leaky()

    model = ScriptedModel([call("leaky"), "recovered"])
    agent = Agent("a", tools=[leaky], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None)
    result = await network.run("x")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "hunter2" not in record.content
    assert "internal error (reference err_" in record.content  # what a client sees
    (told,) = [m for m in model.requests[1].history if m.role == "tool"]
    # the model reads it after the screened text (`model_only`), as a private tool's exception
    assert "hunter2" not in told.content and told.model_only is not None
    assert "tool 'leaky' returned a value that cannot be made into text" in told.model_only
    assert "hunter2" in told.model_only
