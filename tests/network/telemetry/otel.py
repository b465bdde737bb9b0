"""The real OpenTelemetry SDK, wired to in-memory exporters, and span-tree helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from network.telemetry import Telemetry


class Recorder:
    """A tracer provider and a meter provider that keep what they record, in memory."""

    def __init__(self, **options: Any) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.metric_reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metric_reader])
        self.telemetry = Telemetry(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return sorted((s for s in self.spans if s.name == name), key=_order)

    def only(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans]
        return found[0]

    def clear(self) -> None:
        self.exporter.clear()


def _order(span: ReadableSpan) -> tuple[int, str]:
    return (span.start_time or 0, str(span.attributes.get("gen_ai.tool.call.id", "")))


def tree(spans: Sequence[ReadableSpan]) -> list[Any]:
    """`[(name, [children...]), ...]` from the roots down, siblings in start order."""
    ids = {span.context.span_id for span in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)

    def build(parent: int | None) -> list[Any]:
        return [
            (span.name, build(span.context.span_id))
            for span in sorted(children.get(parent, []), key=_order)
        ]

    return build(None)


def every_value(spans: Sequence[ReadableSpan]) -> list[str]:
    """Every attribute value of every span, event and link, as text."""
    values: list[str] = [span.name for span in spans]
    for span in spans:
        sources = [span.attributes or {}]
        sources += [event.attributes or {} for event in span.events]
        sources += [link.attributes or {} for link in span.links]
        if span.status.description:
            values.append(span.status.description)
        for attributes in sources:
            values.extend(str(value) for value in attributes.values())
    return values
