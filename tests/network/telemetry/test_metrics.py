"""The conventions' client metrics: token usage and duration histograms per model and agent."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from examples.codegen import TASK, build_network
from network import Network
from tests.network.telemetry.otel import Recorder

pytestmark = pytest.mark.anyio


def _points(recorder: Recorder, name: str) -> list[Any]:
    data = recorder.metric_reader.get_metrics_data()
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


async def test_token_usage_and_duration_histograms_per_model_and_agent(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build_network()
    network.telemetry = recorder.telemetry
    result = await network.run(TASK)

    durations = _points(recorder, "gen_ai.client.operation.duration")
    by_agent = {p.attributes["gen_ai.agent.name"]: p for p in durations}
    assert set(by_agent) == {"planner", "coder", "reviewer"}
    assert by_agent["coder"].count == 2  # two coder calls, one request each
    assert dict(by_agent["coder"].attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted-coder",
        "gen_ai.agent.name": "coder",
    }
    tokens = _points(recorder, "gen_ai.client.token.usage")
    output = {
        p.attributes["gen_ai.request.model"]: p.sum
        for p in tokens
        if p.attributes["gen_ai.token.type"] == "output"
    }
    expected: dict[str, int] = {}
    for call in result.results:
        model = f"scripted-{call.agent}"
        expected[model] = expected.get(model, 0) + call.usage.completion_tokens
    assert output == expected
    assert {p.attributes["gen_ai.token.type"] for p in tokens} == {"input", "output"}


async def test_a_model_named_with_a_lone_surrogate_is_recorded_mended(quiet_logs: None) -> None:
    # OTLP text is UTF-8: a lone surrogate in an attribute made the metrics exporter fail its
    # whole batch. The model's name is recorded with U+FFFD in its place.
    recorder = Recorder()
    agent = Agent("odd", model=ScriptedModel(["Fine."], name="odd\udcff"))
    network = Network("odd", agents=[agent], telemetry=recorder.telemetry)
    await network.run("Go.")

    points = _points(recorder, "gen_ai.client.operation.duration")
    assert [p.attributes["gen_ai.request.model"] for p in points] == ["odd\ufffd"]
