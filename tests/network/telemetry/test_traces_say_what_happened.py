"""What an OTLP receiver on 127.0.0.1 gets from runs on a real model client: the model name
sent on the wire, the provider apart, the provider's error as `error.type` and a chat span
per attempt; and tracing (or logging, or a thread) never changes the model request."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from agents import Agent, LiteLLMModel
from agents.models.openai_native import OpenAIModel
from network import ModelError, Network, ThreadRef
from network.telemetry import Telemetry
from tests.fakes.openai_server import FakeOpenAIServer
from tests.network.telemetry.otlp import (
    Receiver,
    attributes,
    exporting_provider,
    parent_names,
    received,
    receiver,
)

__all__ = ["receiver"]  # the fixture, used by name

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]
pytest_plugins = ["tests.fakes.openai_server"]


def _native(server: FakeOpenAIServer, **options: object) -> OpenAIModel:
    return OpenAIModel(
        "openai/gpt-4o-mini", api_base=server.base_url, api_key="x", retry_delay=0, **options
    )


async def test_the_receiver_sees_the_wire_model_and_the_provider_apart(
    receiver: Receiver, openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    provider = exporting_provider(receiver)
    native = Agent("native", model=_native(openai_server))
    routed = Agent(
        "routed",
        model=LiteLLMModel("openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x"),
    )
    network = Network(
        "pair",
        agents=[native, routed],
        router=lambda ctx: [native, routed][ctx.call_count] if ctx.call_count < 2 else None,
        telemetry=Telemetry(tracer_provider=provider),
    )
    openai_server.add_text("one").add_text("two")
    await network.run("Hi.")
    provider.force_flush()
    provider.shutdown()

    sent = {request["model"] for request in openai_server.requests}
    assert sent == {"gpt-4o-mini"}
    spans = received(receiver)
    agent_and_chat = [s for s in spans if s.name != "invoke_workflow pair"]
    assert sorted(s.name for s in agent_and_chat) == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "invoke_agent native",
        "invoke_agent routed",
    ]
    for span in agent_and_chat:
        assert attributes(span)["gen_ai.request.model"] == "gpt-4o-mini", span.name
        assert attributes(span)["gen_ai.provider.name"] == "openai", span.name
    (root,) = [s for s in spans if s.name == "invoke_workflow pair"]
    assert attributes(root)["gen_ai.agent.name"] == "pair"  # v0.1.0: not gen_ai.workflow.name
    assert attributes(root)["gen_ai.operation.name"] == "invoke_workflow"
    assert "gen_ai.workflow.name" not in attributes(root)


@pytest.mark.parametrize("status", [401, 500])
async def test_error_type_is_the_http_status_and_every_attempt_is_a_chat_span(
    receiver: Receiver, openai_server: FakeOpenAIServer, quiet_logs: None, status: int
) -> None:
    provider = exporting_provider(receiver)
    agent = Agent("greeter", model=_native(openai_server, max_retries=2))
    network = Network("n", agents=[agent], telemetry=Telemetry(tracer_provider=provider))
    for _ in range(3):
        openai_server.add_error(status, "no")
    with pytest.raises(ModelError) as failure:
        await network.run("Hi.")
    provider.force_flush()
    provider.shutdown()

    attempts = 1 if status == 401 else 3  # a 401 is never retried; a 500 twice
    assert len(openai_server.requests) == attempts
    assert [call.error for call in failure.value.attempts] == [str(status)] * attempts
    spans = received(receiver)
    assert parent_names(spans)["invoke_agent greeter"] == ["chat gpt-4o-mini"] * attempts
    chats = [s for s in spans if s.name == "chat gpt-4o-mini"]
    assert [attributes(s)["error.type"] for s in chats] == [str(status)] * attempts
    assert all(s.status.code == s.status.STATUS_CODE_ERROR for s in chats)
    assert all("AttemptFailed" not in str(attributes(s)) for s in spans)


REFUSING = "http://127.0.0.1:9/v1"  # nothing listens on the discard port: refused at once


@pytest.mark.parametrize(
    "model",
    [
        lambda: OpenAIModel("openai/gpt-4o-mini", api_base=REFUSING, max_retries=0),
        lambda: LiteLLMModel("openai/gpt-4o-mini", api_base=REFUSING, api_key="x", max_retries=0),
        lambda: LiteLLMModel("hosted_vllm/gpt-4o-mini", api_base=REFUSING, max_retries=0),
    ],
    ids=["native", "litellm", "litellm-hosted_vllm"],
)
async def test_a_request_failing_in_transport_names_the_transport_error(
    receiver: Receiver, quiet_logs: None, model: Any
) -> None:
    """The transport's own exception, whichever client: not litellm's wrapper of it (which
    reads "InternalServerError", a 500 no server sent), as the OTLP receiver gets it."""
    provider = exporting_provider(receiver)
    network = Network(
        "n", agents=[Agent("a", model=model())], telemetry=Telemetry(tracer_provider=provider)
    )
    with pytest.raises(ModelError) as failure:
        await network.run("Hi.")
    provider.force_flush()
    provider.shutdown()
    assert [call.error for call in failure.value.attempts] == ["ClientConnectorError"]
    (chat,) = [s for s in received(receiver) if s.name == "chat gpt-4o-mini"]
    assert attributes(chat)["error.type"] == "ClientConnectorError"  # aiohttp's, not a wrapper
    assert chat.status.code == chat.status.STATUS_CODE_ERROR


@pytest.fixture
def info_logs() -> Iterator[None]:
    """structlog at INFO, going nowhere: a run subscribes its logging sink."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.ReturnLoggerFactory(),
    )
    yield
    structlog.reset_defaults()


async def test_tracing_logging_and_threads_never_make_a_request_stream(
    openai_server: FakeOpenAIServer, info_logs: None, tmp_path: Path
) -> None:
    from tests.network.telemetry.otel import Recorder

    recorder = Recorder()
    agent = Agent("greeter", model=_native(openai_server))
    traced = Network("n", agents=[agent], telemetry=recorder.telemetry)
    openai_server.add_text("plain").add_text("plain").add_text("streamed")
    result = await traced.run("Hi.")  # traced and logged
    assert result.output == "plain"
    await traced.run("Hi.", thread=ThreadRef("t", store=str(tmp_path / "t.db")))  # on a thread too
    assert recorder.named("chat gpt-4o-mini")
    assert [request.get("stream", False) for request in openai_server.requests] == [False, False]

    async with traced.stream("Hi.") as events:  # a consumer reading the answer live: streams
        async for _ in events:
            pass
    assert openai_server.requests[-1]["stream"] is True


async def test_metrics_name_the_wire_model_too(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    from tests.network.telemetry.otel import Recorder

    recorder = Recorder()
    network = Network(
        "n", agents=[Agent("a", model=_native(openai_server))], telemetry=recorder.telemetry
    )
    openai_server.add_text("hi")
    await network.run("Hi.")
    data = recorder.metric_reader.get_metrics_data()
    models = {
        point.attributes["gen_ai.request.model"]
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    }
    assert models == {"gpt-4o-mini"}
