"""`Telemetry`: how a network's runs are traced (all optional)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError

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

    Raises:
        ConfigurationError: naming the field, for a value of the wrong kind (a flag that is
            not a bool: `capture_content="false"` would be true and record content; a
            provider without `get_tracer` / `get_meter`; a `redact` that cannot be called,
            or an async one, which spans, written synchronously, could never await),
            when the options are made rather than at a run.
    """

    tracer_provider: Any = None
    meter_provider: Any = None
    capture_content: bool | None = None
    redact: Redactor | None = None
    enabled: bool = True

    def __post_init__(self) -> None:
        _check_provider("tracer_provider", self.tracer_provider, "get_tracer")
        _check_provider("meter_provider", self.meter_provider, "get_meter")
        if self.capture_content is not None and not isinstance(self.capture_content, bool):
            raise ConfigurationError(
                "Telemetry.capture_content must be True, False or None (the environment "
                f"decides), got {self.capture_content!r}"
            )
        if self.redact is not None and not callable(self.redact):
            raise ConfigurationError(
                f"Telemetry.redact must be a function redact(name, value), got {self.redact!r}"
            )
        if _is_async(self.redact):  # spans are written synchronously: it would never run
            raise ConfigurationError(
                "Telemetry.redact must be a plain function (def, not async def): spans are "
                f"written synchronously, and an async hook is never awaited; got {self.redact!r}"
            )
        if not isinstance(self.enabled, bool):
            raise ConfigurationError(
                f"Telemetry.enabled must be True or False, got {self.enabled!r}"
            )

    def captures_content(self) -> bool:
        """Whether content attributes are recorded (the option, else the environment)."""
        if self.capture_content is not None:
            return self.capture_content
        return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


def _is_async(function: Any) -> bool:
    """An async function, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 - a callable object's async __call__
    )


def _check_provider(field: str, provider: Any, method: str) -> None:
    """An OpenTelemetry provider (an SDK's, or any object with its `method`), or None."""
    if provider is not None and not callable(getattr(provider, method, None)):
        raise ConfigurationError(
            f"Telemetry.{field} must be an OpenTelemetry provider (with {method}()), "
            f"got {provider!r}"
        )


DEFAULT = Telemetry()
