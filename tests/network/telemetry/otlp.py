"""An OTLP/HTTP trace receiver on 127.0.0.1, decoding with `opentelemetry-proto` what any
OTLP backend (Jaeger, Langfuse, Phoenix, ...) would get, and helpers to read its spans."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps each decoded `ExportTraceServiceRequest`."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        assert self.headers["Content-Type"] == "application/x-protobuf"
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def value_of(any_value: Any) -> Any:
    """An OTLP `AnyValue` as Python (arrays as tuples)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(v) for v in any_value.array_value.values)
    return getattr(any_value, kind)


def exporting_provider(receiver: Receiver) -> TracerProvider:
    """An SDK tracer provider exporting over OTLP/HTTP to `receiver` (as the docs set one up)."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint)))
    return provider


def received(receiver: Receiver) -> list[Any]:
    """Every span the receiver got."""
    return [
        span
        for request in receiver.requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def attributes(span: Any) -> dict[str, Any]:
    """A received span's attributes as a dict."""
    return {kv.key: value_of(kv.value) for kv in span.attributes}


def parent_names(spans: list[Any]) -> dict[str, list[str]]:
    """`{span name: [its children's names, in start order]}` over received spans."""
    by_id = {span.span_id: span for span in spans}
    children: dict[str, list[str]] = {span.name: [] for span in spans}
    for span in sorted(spans, key=lambda s: s.start_time_unix_nano):
        if span.parent_span_id in by_id:
            children[by_id[span.parent_span_id].name].append(span.name)
    return children
