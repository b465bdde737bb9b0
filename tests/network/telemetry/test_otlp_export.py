"""The same run, exported over OTLP/HTTP to a receiver on 127.0.0.1 and decoded with
`opentelemetry-proto`: what any OTLP backend (Jaeger, Langfuse, Phoenix, ...) would get."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agents import Agent, ModelResponse, ScriptedModel
from network import AssistantMessage, Network, Usage, UsageFigures, UsageLimits
from network.telemetry import Telemetry
from network.telemetry.conventions import SCHEMA_URL
from network.version import UNKNOWN_VERSION, library_version
from tests.network.telemetry.ops_network import SECRET, build
from tests.network.telemetry.otlp import (
    Receiver,
    attributes,
    exporting_provider,
    received,
    receiver,
    value_of,
)

__all__ = ["receiver"]  # the fixture, used by name

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[3]


async def test_a_run_reaches_an_otlp_http_receiver(receiver: Receiver, quiet_logs: None) -> None:
    # The three lines of docs/telemetry.md, with the provider passed in rather than set globally.
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint)))
    network = build(Telemetry(tracer_provider=provider))

    first = await network.run("Check the weather, then deploy.", state={"temp:token": SECRET})
    resumed = await network.run(first.resume([first.interrupts[0].accept()]))
    assert provider.force_flush()
    provider.shutdown()

    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    spans = [
        span
        for request in receiver.requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    scopes = {
        (scope_spans.scope.name, scope_spans.scope.version, scope_spans.schema_url)
        for request in receiver.requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
    }
    # the scope names the release that wrote the spans (a receiver shows it beside the name)
    assert scopes == {("agent_network", library_version(), SCHEMA_URL)}
    assert library_version() not in ("", UNKNOWN_VERSION)  # the suite runs on an install
    by_id = {span.span_id: span for span in spans}
    trace_ids = {span.trace_id.hex() for span in spans}
    assert trace_ids == {first.trace_id, resumed.trace_id}

    def path(span: Any) -> list[str]:
        names = [span.name]
        while span.parent_span_id:
            span = by_id[span.parent_span_id]
            names.append(span.name)
        return names[::-1]

    first_spans = sorted(
        (s for s in spans if s.trace_id.hex() == first.trace_id),
        key=lambda s: (s.start_time_unix_nano, s.name),
    )
    assert sorted(tuple(path(s)) for s in first_spans) == sorted(
        [
            ("invoke_workflow ops-net",),
            ("invoke_workflow ops-net", "invoke_agent ops"),
            ("invoke_workflow ops-net", "invoke_agent ops", "chat scripted-ops"),
            ("invoke_workflow ops-net", "invoke_agent ops", "execute_tool lookup"),
            ("invoke_workflow ops-net", "invoke_agent ops", "execute_tool lookup"),
            ("invoke_workflow ops-net", "invoke_agent ops", "execute_tool explode"),
            ("invoke_workflow ops-net", "invoke_agent ops"),
            ("invoke_workflow ops-net", "invoke_agent ops", "chat scripted-ops"),
        ]
    )
    explode = next(s for s in first_spans if s.name == "execute_tool explode")
    attributes = {kv.key: value_of(kv.value) for kv in explode.attributes}
    assert attributes["error.type"] == "ValueError"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    chat = next(s for s in first_spans if s.name == "chat scripted-ops")
    assert chat.kind == chat.SPAN_KIND_CLIENT

    resumed_root = next(
        s for s in spans if s.trace_id.hex() == resumed.trace_id and not s.parent_span_id
    )
    (link,) = resumed_root.links
    assert link.trace_id.hex() == first.trace_id
    assert link.span_id.hex() == first.span_id
    first_root = next(s for s in first_spans if not s.parent_span_id)
    assert [event.name for event in first_root.events] == ["agent_network.interrupt"]


def test_the_documented_lines_send_a_run_to_the_endpoint(receiver: Receiver) -> None:
    """docs/telemetry.md's OTLP block, as written, with only OTEL_EXPORTER_OTLP_ENDPOINT set."""
    page = (ROOT / "docs" / "telemetry.md").read_text()
    section = page.split("## OpenTelemetry traces", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    script = block.group(1) + textwrap.dedent(
        """
        import logging, structlog
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
        from examples.codegen import TASK, build_network
        print(build_network().run_sync(TASK).trace_id)
        provider.force_flush()
        """
    )
    endpoint = receiver.endpoint.removesuffix("/v1/traces")
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        },
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    trace_id = done.stdout.strip()
    names = sorted(
        span.name
        for request in receiver.requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
        if span.trace_id.hex() == trace_id
    )
    assert names.count("invoke_workflow codegen") == 1
    assert names.count("invoke_agent coder") == 2
    assert names.count("execute_tool review") == 2


async def test_ints_past_int64_reach_the_receiver_as_text(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    # OTLP's int is signed 64-bit: the exporter dropped such an attribute and logged an error
    # with a traceback for every span that had one. A server's own count past 2**53 - 1 is no
    # figure (the model layer estimates it), so the figures past int64 here are a session's
    # total (`usage=`) and the cap it reached.
    session = UsageFigures(input_tokens=2**63 - 10)
    answer = ModelResponse(AssistantMessage("Counted."), Usage(20, 5, 25), None)
    model = ScriptedModel([answer, "Never asked."], name="counter")
    agent = Agent("counter", model=model)
    turns = iter([agent, agent, None])
    provider = exporting_provider(receiver)
    network = Network(
        "counting",
        agents=[agent],
        router=lambda ctx: next(turns),
        telemetry=Telemetry(tracer_provider=provider),
    )
    with caplog.at_level(logging.WARNING, logger="opentelemetry"):
        result = await network.run(
            "Count.", usage=session, limits=UsageLimits(max_input_tokens=2**63)
        )
        assert provider.force_flush()
    provider.shutdown()

    assert result.stop_reason == "usage_limit"
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]
    by_name = {span.name: attributes(span) for span in received(receiver)}
    assert by_name["chat counter"]["gen_ai.usage.input_tokens"] == 20  # in range: an int
    assert by_name["invoke_agent counter"]["gen_ai.usage.output_tokens"] == 5
    root = by_name["invoke_workflow counting"]
    assert root["gen_ai.usage.input_tokens"] == 20  # the run's own total
    assert root["agent_network.usage_limit"] == "max_input_tokens"
    assert root["agent_network.usage_limit.value"] == str(2**63)
    assert root["agent_network.usage_limit.actual"] == str(2**63 + 10)


async def test_a_cancelled_run_reaches_the_receiver_ended(receiver: Receiver) -> None:
    """A run whose task is cancelled mid-request: its root ends with stop reason `cancelled`
    and no error, the agent call it cut short with `error.type` `cancelled`."""
    import anyio

    asked = anyio.Event()

    async def slow(request: Any) -> str:
        asked.set()
        await anyio.sleep(60)
        return "never"

    agent = Agent("slow", model=ScriptedModel(slow, name="slow-model"))
    provider = exporting_provider(receiver)
    network = Network("cancelling", agents=[agent], telemetry=Telemetry(tracer_provider=provider))
    async with anyio.create_task_group() as group:
        group.start_soon(network.run, "Go.")
        await asked.wait()
        group.cancel_scope.cancel()
    assert provider.force_flush()
    provider.shutdown()

    spans = {span.name: span for span in received(receiver)}
    assert set(spans) == {"invoke_workflow cancelling", "invoke_agent slow"}
    root, step = spans["invoke_workflow cancelling"], spans["invoke_agent slow"]
    assert attributes(root)["agent_network.stop_reason"] == "cancelled"
    assert root.status.code == root.status.STATUS_CODE_UNSET
    assert attributes(step)["error.type"] == "cancelled"
    assert step.status.code == step.status.STATUS_CODE_ERROR
    assert step.parent_span_id == root.span_id
