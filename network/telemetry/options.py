"""`Telemetry`: how a network's runs are traced (all optional)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})

Redactor = Callable[[str, Any], Any]
"""`redact(attribute_name, value) -> value` for content attributes: return the value to record
(changed or as is), or None to leave the attribute out."""


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Options of a network's OpenTelemetry traces and metrics.

    Args:
        tracer_provider: the provider to trace with; default: the global one, when an SDK
            provider was installed (`opentelemetry.trace.set_tracer_provider`).
        meter_provider: the provider of the metrics; default: the global one, likewise.
        capture_content: record prompts, completions, tool arguments and results, and the
            state values each step wrote. Default: off, unless the environment variable
            `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`. Values of `temp:`
            keys are never recorded, even then.
        redact: `redact(attribute_name, value)` filters every content attribute (see
            `Redactor`).
        enabled: False turns tracing off for this network even when an SDK is configured.
    """

    tracer_provider: Any = None
    meter_provider: Any = None
    capture_content: bool | None = None
    redact: Redactor | None = None
    enabled: bool = True

    def captures_content(self) -> bool:
        """Whether content attributes are recorded (the option, else the environment)."""
        if self.capture_content is not None:
            return self.capture_content
        return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


DEFAULT = Telemetry()
