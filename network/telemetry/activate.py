"""Whether a run is traced, and its sink when it is.

Asked once per run. Without `Telemetry` providers and with `opentelemetry` never imported, no
SDK can be configured: the answer is None at the cost of a dict lookup, and `opentelemetry`
stays unimported. Otherwise the global providers count only when they are an SDK's (the API
alone hands out proxies and no-ops): the library never installs a provider.
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections import OrderedDict
from collections.abc import Callable
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


class PerProvider:
    """What is made once per provider (our tracer of a tracer provider, our instruments of a
    meter provider), kept while the provider lives.

    Weakly keyed: a provider the application drops (a test's, a tenant's, one replaced at a
    reconfiguration) is freed with what was made of it, and an id a new provider reuses
    finds nothing. A provider that cannot be weakly referenced (or hashed) is kept among
    the `bound` most recently used ones, found by identity.
    """

    def __init__(self, make: Callable[[Any], Any], bound: int = 8) -> None:
        self.make = make
        self.bound = bound
        self.weak: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.strong: OrderedDict[int, tuple[Any, Any]] = OrderedDict()  # id -> (it, made)

    def get(self, provider: Any) -> Any:
        """What was made of `provider`, made now the first time."""
        try:
            found = self.weak.get(provider)
        except TypeError:  # no weak reference to it (or no hash): the bounded table
            return self._strongly(provider)
        if found is None:
            found = self.weak[provider] = self.make(provider)
        return found

    def _strongly(self, provider: Any) -> Any:
        key = id(provider)
        kept = self.strong.get(key)
        if kept is not None and kept[0] is provider:
            self.strong.move_to_end(key)
            return kept[1]
        made = self.make(provider)
        self.strong[key] = (provider, made)
        self.strong.move_to_end(key)
        while len(self.strong) > self.bound:
            self.strong.popitem(last=False)
        return made

    def __len__(self) -> int:
        return len(self.weak) + len(self.strong)


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


def _make_tracer(provider: Any) -> Any:
    """The provider's tracer for our scope, its spans' text mended for OTLP (`otlp_spans`)."""
    from network.telemetry.otlp_spans import OtlpTracer  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    tracer = provider.get_tracer(
        INSTRUMENTATION, instrumenting_library_version=library_version(), schema_url=SCHEMA_URL
    )
    return OtlpTracer(tracer)


def _make_instruments(provider: Any) -> Any:
    meter = provider.get_meter(INSTRUMENTATION, version=library_version(), schema_url=SCHEMA_URL)
    return Instruments(meter)


_tracers = PerProvider(_make_tracer)
_instruments = PerProvider(_make_instruments)


def _tracer(provider: Any) -> Any:
    return _tracers.get(provider)


def _instruments_of(provider: Any) -> Any:
    return _instruments.get(provider)
