"""Both model clients against a real model: llama-cpp-python's server running SmolLM2-135M.

What is asserted is what the library guarantees (a clear outcome, no crash, consistent state),
never what a 135M model says. The server comes from `tests.fakes.llama_server`; these tests
fail, not skip, when it is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agents import Agent, ModelRequest, TextDelta, ToolContext, tool
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from network import ModelError, Network, RoutingError, SystemMessage, UserMessage
from network.agui import app
from routers import routing_agent
from tests.fakes.llama_server import LlamaServer
from tests.network.agui.protocol import parse_sse, replay

pytest_plugins = ["tests.fakes.llama_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

PARAMS = {"temperature": 0.0, "max_tokens": 24, "seed": 7}


def native(base_url: str, **options: Any) -> Any:
    options = {"max_retries": 0, **PARAMS, **options}
    return OpenAIModel("openai/smollm2", api_base=base_url, **options)


def through_litellm(base_url: str, **options: Any) -> Any:
    # No key, as for the native client: the server needs none (docs/models.md, Keys and servers)
    options = {"max_retries": 0, **PARAMS, **options}
    return LiteLLMModel("openai/smollm2", api_base=base_url, **options)


@pytest.fixture(params=[native, through_litellm], ids=["native", "litellm"])
def client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return request.param  # type: ignore[no-any-return]


@tool
def remember(note: str, ctx: ToolContext) -> str:
    """Remember a short note."""
    ctx.kv.set("notes", note)
    return "noted"


def ask(text: str) -> ModelRequest:
    return ModelRequest([SystemMessage("You are terse.")], [UserMessage(text)])


def assert_tool_calls_answered(messages: list[Any]) -> None:
    """Every tool call in the history is followed by exactly one result with its id."""
    pending: list[str] = []
    for message in messages:
        if message.role == "assistant":
            assert not pending, f"tool calls left unanswered: {pending}"
            pending = [call.id for call in message.tool_calls]
        elif message.role == "tool":
            assert message.tool_call_id in pending
            pending.remove(message.tool_call_id)
    assert not pending


async def test_plain_and_streamed_answers(llama_server: LlamaServer, client: Any) -> None:
    model = client(llama_server.base_url)
    plain = await model.complete(ask("Say hello."))
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    streamed = await model.complete(ask("Say hello."), on_chunk)

    for response in (plain, streamed):
        assert response.message.content  # an answer, never an empty success
        assert response.finish_reason in ("stop", "length")
        assert response.usage.completion_tokens > 0
    assert "".join(c.text for c in seen if isinstance(c, TextDelta)) == streamed.message.content
    # This server sends no usage in streams: the figure is an estimate and says so.
    assert streamed.usage.estimated is True
    assert plain.usage.estimated is False


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_prompt_past_the_context_window_is_a_model_error_naming_the_model(
    llama_server: LlamaServer, client: Any, streamed: bool
) -> None:
    # The server refuses before evaluating anything (a few ms): a whole request with HTTP 400
    # and its words; a streamed one with a 200 and a stream closed before any chunk.
    model = client(llama_server.base_url, max_retries=1, retry_delay=0.01)
    with pytest.raises(ModelError) as caught:
        await model.complete(ask("word " * 3000), ignore if streamed else None)
    error = caught.value
    assert error.model == "openai/smollm2"
    assert "'openai/smollm2'" in str(error)
    assert len(error.attempts) == 1  # the same prompt would overflow again: not retried
    if streamed:
        assert error.status_code is None
        assert "without a finish reason" in str(error)
    else:
        assert error.status_code == 400
        assert "maximum context length is 2048 tokens" in str(error)


async def ignore(chunk: Any) -> None:
    pass


async def test_parallel_streams_on_one_server_each_finish(
    llama_server: LlamaServer, client: Any
) -> None:
    # llama-cpp-python's server cuts off a stream when another request arrives unless it runs
    # with `--interrupt_requests False` (the fixture's, as docs/models.md says): three streams
    # side by side must each come back whole.
    import anyio

    model = client(llama_server.base_url, max_tokens=16)
    answers: list[Any] = [None] * 3
    streamed: list[list[str]] = [[], [], []]

    async def one(index: int) -> None:
        async def on_chunk(chunk: Any) -> None:
            if isinstance(chunk, TextDelta):
                streamed[index].append(chunk.text)

        answers[index] = await model.complete(ask(f"Count to {index + 3}."), on_chunk)

    async with anyio.create_task_group() as group:
        for index in range(3):
            group.start_soon(one, index)
    for index, answer in enumerate(answers):
        assert answer.finish_reason in ("stop", "length"), answer
        assert answer.message.content
        assert "".join(streamed[index]) == answer.message.content


async def test_a_forced_tool_call_lands_in_state(llama_server: LlamaServer, client: Any) -> None:
    agent = Agent(
        "scribe",
        system="Take notes.",
        tools=[remember],
        tool_choice="remember",
        model=client(llama_server.base_url),
    )
    result = await Network(
        "notes", agents=[agent], router=lambda ctx: None if ctx.last_result else agent
    ).run("Remember that the sky is blue.")
    (record,) = result.results[0].tool_calls
    assert record.name == "remember"
    if record.is_error:  # the model's arguments were refused: said to it, state untouched
        assert "notes" not in result.state.kv
    else:
        assert result["notes"] == record.arguments["note"]


async def test_a_three_turn_agent_loop_with_tool_results(
    llama_server: LlamaServer, client: Any
) -> None:
    agent = Agent(
        "scribe",
        system="Take notes.",
        tools=[remember],
        tool_choice="remember",
        model=client(llama_server.base_url),
    )
    # Every turn must call the tool, so the loop runs its three steps, each request carrying
    # the earlier tool calls (assistant messages without text) and their results.
    result = await agent.run("Note three facts about water.", max_steps=3)

    assert result.stop_reason == "max_iter"
    assert len(result.results) == 3
    assert all(r.tool_calls and r.tool_calls[0].name == "remember" for r in result.results)
    assert_tool_calls_answered(result.state.messages)


async def test_a_network_with_the_routing_agent(llama_server: LlamaServer, client: Any) -> None:
    model = client(llama_server.base_url)
    writer = Agent("writer", description="Writes one short sentence.", model=model)
    critic = Agent("critic", description="Criticises the sentence.", model=model)
    network = Network("team", agents=[writer, critic], router=routing_agent(model), max_iter=3)
    try:
        result = await network.run("Write a sentence about rain, then criticise it.")
    except RoutingError as error:  # the router named no valid agent: said clearly
        assert "router" in str(error)
        return
    assert result.stop_reason in ("max_iter", "router_done", "router_text", "done")
    assert {r.agent for r in result.results} <= {"writer", "critic"}
    assert all(r.output and r.output[0].content for r in result.results)


async def test_the_server_killed_mid_stream(own_llama_server: LlamaServer, client: Any) -> None:
    model = client(own_llama_server.base_url, max_tokens=400)
    seen: list[Any] = []

    async def kill_on_first_chunk(chunk: Any) -> None:
        seen.append(chunk)
        own_llama_server.kill()

    with pytest.raises(ModelError) as caught:
        await model.complete(ask("Tell a long story about a cat."), kill_on_first_chunk)
    assert caught.value.model == "openai/smollm2"
    assert own_llama_server.base_url.split("//")[1].split("/")[0] in str(caught.value)
    with pytest.raises(ModelError, match="connection refused"):
        await model.complete(ask("Anyone there?"))  # and afterwards: refused, said so


async def test_the_server_killed_mid_run_over_agui(
    own_llama_server: LlamaServer, client: Any
) -> None:
    @tool
    def stop_server() -> str:
        """Stop the model server."""
        own_llama_server.kill()
        return "stopped"

    agent = Agent(
        "worker",
        tools=[stop_server],
        tool_choice="stop_server",
        model=client(own_llama_server.base_url),
    )
    network = Network(
        "n", agents=[agent], router=lambda ctx: agent, max_iter=3
    )  # calls again after the tool
    asgi = app(network)
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=asgi), base_url="http://t", timeout=30
    )
    user = {"id": "u", "role": "user", "content": "go"}
    payload = {"threadId": "t", "runId": "r", "messages": [user]}

    response = await http.post("/", json=payload)

    run = replay(parse_sse(response.text), state={}, thread_id="t", run_id="r", allow_error=True)
    assert run.types[-1] == "RUN_ERROR"
    # refused, or (a kept-alive connection to the killed server) disconnected: named either way
    message = run.error["message"]
    assert "connection refused" in message or "disconnected" in message.lower(), message
    assert "TOOL_CALL_START" in run.types  # the first call went through before the crash
    # The AG-UI server lives on: the thread is free and the next run is answered (and fails
    # the same clear way, the model server being gone).
    again = await http.post("/", json={**payload, "runId": "r2"})
    assert again.status_code == 200
    assert parse_sse(again.text)[-1]["type"] == "RUN_ERROR"
    await http.aclose()
