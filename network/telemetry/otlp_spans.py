"""A tracer whose spans OTLP can always encode (`network.telemetry._otlp_text`).

Every span a run writes goes through `OtlpTracer`: span names, attributes, event names and
attributes, link attributes and status descriptions are mended of lone surrogates on the way
in, so one odd character can no longer cost the export of a whole batch of spans. The span
writers keep using the API as they would on the SDK's spans.

Imported only once a run is traced: it subclasses `opentelemetry.trace.Span` (the API finds
a parent span in a context only when it is one), and `import network` never imports
`opentelemetry`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanContext, Status, StatusCode

from network.telemetry._otlp_text import otlp_attributes, otlp_text
from network.utf8 import utf8_text


class OtlpTracer:
    """`tracer`, with spans whose text has a UTF-8 form (`OtlpSpan`)."""

    __slots__ = ("tracer",)

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: Any = trace.SpanKind.INTERNAL,
        attributes: Any = None,
        links: Sequence[Any] | None = None,
        start_time: int | None = None,
    ) -> OtlpSpan:
        """Start a span, as `opentelemetry.trace.Tracer.start_span`."""
        if links:
            links = [trace.Link(link.context, otlp_attributes(link.attributes)) for link in links]
        span = self.tracer.start_span(
            utf8_text(name),
            context=context,
            kind=kind,
            attributes=otlp_attributes(attributes),
            links=links,
            start_time=start_time,
        )
        return OtlpSpan(span)


class OtlpSpan(trace.Span):
    """An SDK (or no-op) span whose text is mended as it is set."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def get_span_context(self) -> Any:
        return self.span.get_span_context()

    def is_recording(self) -> bool:
        return bool(self.span.is_recording())

    def set_attributes(self, attributes: Any) -> None:
        self.span.set_attributes(otlp_attributes(attributes))

    def set_attribute(self, key: str, value: Any) -> None:
        self.span.set_attribute(utf8_text(key), otlp_text(value))

    def add_event(self, name: str, attributes: Any = None, timestamp: int | None = None) -> None:
        self.span.add_event(utf8_text(name), otlp_attributes(attributes), timestamp)

    def add_link(self, context: SpanContext, attributes: Any = None) -> None:
        self.span.add_link(context, otlp_attributes(attributes))

    def update_name(self, name: str) -> None:
        self.span.update_name(utf8_text(name))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if isinstance(status, Status) and status.description:  # content: a failed run's message
            status = Status(status.status_code, utf8_text(status.description))
        self.span.set_status(status, None if description is None else utf8_text(description))

    def record_exception(
        self,
        exception: BaseException,
        attributes: Any = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        self.span.record_exception(exception, otlp_attributes(attributes), timestamp, escaped)

    def end(self, end_time: int | None = None) -> None:
        self.span.end(end_time)
