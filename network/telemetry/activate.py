"""Whether a run is traced, and its sink when it is.

Asked once per run. Without `Telemetry` providers and with `opentelemetry` never imported, no
SDK can be configured: the answer is None at the cost of a dict lookup, and `opentelemetry`
stays unimported. Otherwise the global providers count only when they are an SDK's (the API
alone hands out proxies and no-ops): the library never installs a provider.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from network.logger import get_logger
from network.run.context import RunContext
from network.run.temp_sources import run_masks
from network.telemetry.content import ContentRecorder
from network.telemetry.conventions import INSTRUMENTATION, SCHEMA_URL
from network.telemetry.metrics import Instruments
from network.telemetry.options import DEFAULT, Telemetry
from network.telemetry.run_trace import run_trace
from network.telemetry.spans import RunSpans
from network.version import library_version

_tracers: dict[int, tuple[Any, Any]] = {}  # id(provider) -> (provider, tracer)
_instruments: dict[int, tuple[Any, Any]] = {}  # id(provider) -> (provider, Instruments)


def run_spans(ctx: RunContext) -> Any:
    """The telemetry sink of this run (`RunSpans`), or None when nothing would record it."""
    options: Telemetry = getattr(ctx.network, "telemetry", None) or DEFAULT
    if not options.enabled:
        return None
    if (
        options.tracer_provider is None
        and options.meter_provider is None
        and "opentelemetry.trace" not in sys.modules
    ):
        return None
    tracer_provider = options.tracer_provider or _global_tracer_provider()
    meter_provider = options.meter_provider or _global_meter_provider()
    if tracer_provider is None and meter_provider is None:
        return None
    try:
        return _sink(ctx, options, tracer_provider, meter_provider)
    except Exception as error:
        # The application's provider or span processor failed as the run's root span started
        # (a processor's `on_start` raising reaches the caller of `start_span`): the run goes
        # on untraced rather than failing, as a failure while it is traced is only logged.
        ctx.engine.trace_id = ctx.engine.span_id = None
        run_trace(ctx).here = None  # a run started in its code is no child of a span never made
        get_logger().warning("telemetry.failed", run_id=ctx.run_id, error=repr(error))
        return None


def _sink(ctx: RunContext, options: Telemetry, tracer_provider: Any, meter_provider: Any) -> Any:
    """The run's `RunSpans`, its root span started."""
    from opentelemetry.trace import NoOpTracer  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    tracer = _tracer(tracer_provider) if tracer_provider is not None else NoOpTracer()
    instruments = _instruments_of(meter_provider) if meter_provider is not None else None
    content = None
    if options.captures_content():
        content = ContentRecorder(functools.partial(run_masks, ctx), options.redact)
    return RunSpans(ctx, tracer, instruments, content)


def _global_tracer_provider() -> Any:
    if "opentelemetry.trace" not in sys.modules:
        return None
    from opentelemetry import trace  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return provider


def _global_meter_provider() -> Any:
    if "opentelemetry.metrics" not in sys.modules:
        return None
    from opentelemetry import metrics  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider) or type(provider).__name__.startswith(
        "_Proxy"
    ):
        return None
    return provider


def _tracer(provider: Any) -> Any:
    """The provider's tracer for our scope, its spans' text mended for OTLP (`otlp_spans`)."""
    cached = _tracers.get(id(provider))
    if cached is None or cached[0] is not provider:
        from network.telemetry.otlp_spans import OtlpTracer  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

        tracer = provider.get_tracer(
            INSTRUMENTATION, instrumenting_library_version=library_version(), schema_url=SCHEMA_URL
        )
        cached = _tracers[id(provider)] = (provider, OtlpTracer(tracer))
    return cached[1]


def _instruments_of(provider: Any) -> Any:
    cached = _instruments.get(id(provider))
    if cached is None or cached[0] is not provider:
        meter = provider.get_meter(
            INSTRUMENTATION, version=library_version(), schema_url=SCHEMA_URL
        )
        cached = _instruments[id(provider)] = (provider, Instruments(meter))
    return cached[1]
