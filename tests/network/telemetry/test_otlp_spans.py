"""`OtlpTracer`: every span a run writes has text OTLP can encode, whatever the run's text
holds; checked on a receiver on 127.0.0.1 that decodes what any OTLP backend would get."""

from __future__ import annotations

import logging

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.telemetry import Telemetry
from network.telemetry.otlp_spans import OtlpTracer
from tests.network.telemetry.otlp import (
    Receiver,
    attributes,
    exporting_provider,
    received,
    receiver,
)

__all__ = ["receiver"]  # the fixture, used by name

pytestmark = pytest.mark.anyio


async def test_a_lone_surrogate_costs_no_span_of_any_run(
    receiver: Receiver, caplog: pytest.LogCaptureFixture, quiet_logs: None
) -> None:
    # A custom model called a tool named with a lone surrogate (a JSON "\udcff" parses to
    # one), a tool returned text read with errors="surrogateescape", a model was named with
    # one: OTLP text is UTF-8, which such text has no form in. The exporter failed to encode
    # the whole batch ("Failed to encode span batch"): every span of it was lost, those of the
    # run beside it too. Each lone surrogate is now written as U+FFFD.
    @tool
    def read_name(path: str) -> str:
        """Reads a file name from disk."""
        return "report-\udcff.txt"

    provider = exporting_provider(receiver)
    plain = Network(
        "plain",
        agents=[Agent("plain", model=ScriptedModel(["Fine."], name="plain-model"))],
        telemetry=Telemetry(tracer_provider=provider),
    )
    odd_model = ScriptedModel(
        [[call("read_name", path="/tmp"), call("no\udcffpe", x=1)], "Done."], name="odd\udcff"
    )
    odd = Network(
        "odd",
        agents=[Agent("reader", model=odd_model, tools=[read_name])],
        telemetry=Telemetry(tracer_provider=provider, capture_content=True),
    )
    with caplog.at_level(logging.WARNING, logger="opentelemetry"):
        await plain.run("Go.")
        result = await odd.run("Go.")
        assert provider.force_flush()
    provider.shutdown()

    assert [call.name for call in result.results[0].tool_calls] == ["read_name", "no\udcffpe"]
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]
    spans = {span.name: span for span in received(receiver)}
    assert "invoke_workflow plain" in spans and "chat plain-model" in spans
    assert {"invoke_workflow odd", "chat odd\ufffd", "execute_tool no\ufffdpe"} <= set(spans)
    tool_span = attributes(spans["execute_tool read_name"])
    assert tool_span["gen_ai.tool.call.result"] == "report-\ufffd.txt"
    assert attributes(spans["execute_tool no\ufffdpe"])["gen_ai.tool.name"] == "no\ufffdpe"


def test_every_text_of_a_span_is_mended_and_a_child_finds_its_parent() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = OtlpTracer(provider.get_tracer("test"))
    root = tracer.start_span("root \udc80", attributes={"names": ("a\ud800", 3), "n": 1})
    root.set_attribute("k", "v\udfff")
    root.set_attributes({"j": ["x", "y\udc00"]})
    root.add_event("event \udc01", {"e": "f\udc02"})
    root.update_name("renamed \udc03")
    root.set_status(Status(StatusCode.ERROR, "message \udc04"))
    child = tracer.start_span("child", context=trace.set_span_in_context(root))
    child.end()
    root.end()
    provider.shutdown()

    done_child, done_root = exporter.get_finished_spans()
    assert done_child.parent is not None
    assert done_child.parent.span_id == root.get_span_context().span_id
    assert done_root.name == "renamed \ufffd"
    assert dict(done_root.attributes or {}) == {
        "names": ("a\ufffd", 3),
        "n": 1,
        "k": "v\ufffd",
        "j": ("x", "y\ufffd"),
    }
    (event,) = done_root.events
    assert event.name == "event \ufffd"
    assert dict(event.attributes or {}) == {"e": "f\ufffd"}
    assert done_root.status.description == "message \ufffd"
