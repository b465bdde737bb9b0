"""Servers that refuse `response_format`: `output_mode="auto"` falls back to tool mode.

llama-cpp-python's server answers a JSON-schema `response_format` with a 500 and a validation
message; the fake server (tests.fakes.openai_server) plays that part, and the real llama.cpp
server (tests.fakes.llama_server, SmolLM2) shows it for real.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import Agent, OpenAIModel
from agents.models._response_format import ResponseFormatRefused
from network import ModelError, OutputValidationError
from tests.fakes.llama_server import LlamaServer
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.openai_server", "tests.fakes.llama_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

# What llama-cpp-python 0.3 answers to `response_format: {"type": "json_schema", ...}`.
LLAMA_CPP_PYTHON_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


class City(BaseModel):
    name: str
    country: str


def model_on(server: FakeOpenAIServer, **options: Any) -> OpenAIModel:
    options = {"max_retries": 2, "retry_delay": 0.01, **options}
    return OpenAIModel("openai/fake", api_base=server.base_url, **options)


async def test_auto_mode_falls_back_to_tool_mode_without_retrying(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    openai_server.add_tool_calls(("final_output", {"name": "Rome", "country": "Italy"}))
    model = model_on(openai_server)
    agent = Agent("geo", model=model, output_type=City)

    first = await agent.run("Capital of France?")
    assert first.results[-1].output_value == City(name="Paris", country="France")
    refused, fallback = openai_server.requests  # one refusal, no retry of it
    assert refused["response_format"]["type"] == "json_schema"
    assert "response_format" not in fallback
    assert [t["function"]["name"] for t in fallback["tools"]] == ["final_output"]

    second = await agent.run("Capital of Italy?")  # remembered: straight to tool mode
    assert second.results[-1].output_value == City(name="Rome", country="Italy")
    assert len(openai_server.requests) == 3
    assert "response_format" not in openai_server.requests[2]


async def test_the_refused_request_is_counted_and_traced_as_a_request_of_its_own(
    openai_server: FakeOpenAIServer,
) -> None:
    """docs/models.md and docs/telemetry.md: every attempt is counted (usage limits) and is a
    `chat` span with its `error.type`. The refused request reached the server and was answered
    (500): it was dropped, so the call showed one request and one span."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from network import Network, UsageLimits
    from network.telemetry import Telemetry

    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    agent = Agent("geo", model=model_on(openai_server), output_type=City)
    network = Network("n", agents=[agent], telemetry=Telemetry(tracer_provider=provider))
    result = await network.run("Capital of France?", limits=UsageLimits(max_model_calls=5))
    assert result.results[-1].output_value == City(name="Paris", country="France")
    assert [call.error for call in result.results[-1].model_calls] == ["500", None]
    assert result.spent.model_calls == 2
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert [(s.attributes or {}).get("error.type") for s in chats] == ["500", None]
    (agent_span,) = [s for s in spans.get_finished_spans() if s.name == "invoke_agent geo"]
    assert agent_span.status.status_code.name != "ERROR"  # the call itself succeeded


async def test_a_refusal_got_past_is_not_drawn_as_the_failure_of_a_run_that_fails_later(
    openai_server: FakeOpenAIServer,
) -> None:
    """The refused request's records were left as the run's failed request: a run failing
    later in the call (its hook) drew a `chat` span with error 500 as the cause."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from network import Network
    from network.telemetry import Telemetry

    def broken(call: Any) -> None:
        raise RuntimeError("the hook failed")

    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    agent = Agent(
        "geo", model=model_on(openai_server), output_type=City, hooks={"on_finish": broken}
    )
    network = Network("n", agents=[agent], telemetry=Telemetry(tracer_provider=provider))
    with pytest.raises(RuntimeError, match="the hook failed"):
        await network.run("Capital of France?")
    errors = [(s.attributes or {}).get("error.type") for s in spans.get_finished_spans()]
    assert "500" not in errors and "RuntimeError" in errors


async def test_native_mode_asked_for_says_the_server_refused_it(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    agent = Agent("geo", model=model_on(openai_server), output_type=City, output_mode="native")
    with pytest.raises(ResponseFormatRefused, match="response_format") as caught:
        await agent.run("Capital of France?")
    assert isinstance(caught.value, ModelError) and caught.value.status_code == 500
    assert len(openai_server.requests) == 1  # not retried


async def test_a_500_that_is_not_about_response_format_is_still_retried(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, "the GPU fell over")
    openai_server.add_text('{"name": "Paris", "country": "France"}')
    agent = Agent("geo", model=model_on(openai_server), output_type=City)
    result = await agent.run("Capital of France?")
    assert result.results[-1].output_value == City(name="Paris", country="France")
    assert all("response_format" in r for r in openai_server.requests)  # native both times


async def test_llama_cpp_python_refuses_json_schema_and_the_agent_still_answers(
    llama_server: LlamaServer,
) -> None:
    # What a 135M model answers is not asserted: the outcome is a City or a clear
    # OutputValidationError, never the server's 500 retried until the run fails.
    model = OpenAIModel(
        "openai/smollm2", api_base=llama_server.base_url, temperature=0.0, max_tokens=60, seed=7
    )
    agent = Agent("geo", model=model, output_type=City, output_retries=1)
    with anyio.fail_after(120):
        try:
            result = await agent.run("Paris is the capital of France. Give the city and country.")
        except OutputValidationError as exc:  # the model's tool-mode answer did not validate
            assert exc.attempts == 2
        else:
            assert isinstance(result.results[-1].output_value, City)
    assert model.refuses_response_format  # the real server refused; the agent moved on


async def test_the_refused_request_is_counted_on_a_shared_budget_too(
    openai_server: FakeOpenAIServer,
) -> None:
    """The run counted the refused request (above); the shared budget gave its reservation
    back as for a failed request, so its ledger showed one request where two were sent."""
    from network import BudgetExceeded, Network, SharedBudget
    from network.threads import MemoryStore, budget_figures

    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    budget = SharedBudget("tenant:acme", store=MemoryStore(), max_requests=5)
    agent = Agent("geo", model=model_on(openai_server), output_type=City)
    result = await Network("n", agents=[agent]).run("Capital of France?", budget=budget)
    assert result.results[-1].output_value == City(name="Paris", country="France")
    figures = await budget_figures(budget)
    assert figures.requests == 2 == len(openai_server.requests)
    assert (figures.held_tokens, figures.held_requests) == (0, 0)  # both holds settled
    assert figures.tokens == result.usage.total_tokens  # the refusal spent no tokens

    # one request left: the refused one takes it, and the tool-mode request is not sent
    openai_server.reset()
    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    tight = SharedBudget("tenant:tight", store=MemoryStore(), max_requests=1)
    fresh = Agent("geo", model=model_on(openai_server), output_type=City)
    with pytest.raises(BudgetExceeded) as refused:
        await Network("n", agents=[fresh]).run("Capital of France?", budget=tight)
    assert refused.value.limit == "max_requests"
    assert len(openai_server.requests) == 1
    assert (await budget_figures(tight)).requests == 1


async def test_the_refused_request_is_counted_in_spent_without_limits_or_telemetry(
    openai_server: FakeOpenAIServer,
) -> None:
    """A run that records no requests (no usage limits, no traces, no budget) counted the
    call as one request, from its answer: `spent` said 1 where two were sent (and a shared
    budget counts 2). The call now records both, the refused one with no tokens."""
    from network import Network

    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    agent = Agent("geo", model=model_on(openai_server), output_type=City)
    result = await Network("n", agents=[agent]).run("Capital of France?")
    assert result.results[-1].output_value == City(name="Paris", country="France")
    assert result.spent.model_calls == 2 == len(openai_server.requests)
    assert [call.error for call in result.results[-1].model_calls] == ["500", None]
    assert result.spent.input_tokens == result.usage.prompt_tokens  # the refusal spent none
    assert result.spent.output_tokens == result.usage.completion_tokens
