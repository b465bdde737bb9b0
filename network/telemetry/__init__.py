"""OpenTelemetry traces and metrics of runs, following the GenAI semantic conventions.

A subscriber to the run's events, like the structlog sink and the CLI trace: it exists only
when the application configured an OpenTelemetry SDK (or passed providers in `Telemetry`),
so a run without one pays nothing, and `import network` never imports `opentelemetry`. The
library never installs a tracer provider, meter provider or exporter: the application does.
See docs/telemetry.md for the span tree and its attributes.
"""

from __future__ import annotations

from network.telemetry.conventions import SEMCONV_VERSION
from network.telemetry.options import Redactor, Telemetry

__all__ = ["SEMCONV_VERSION", "Redactor", "Telemetry"]
