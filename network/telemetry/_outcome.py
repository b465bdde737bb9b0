"""What every span writer of this package marks on a span: a failure, a tool call's outcome,
and a span's ids in the hex form the run's context carries."""

from __future__ import annotations

from typing import Any

from network.telemetry import conventions as c


def fail(span: Any, error_type: str, description: str | None = None) -> None:
    """Mark `span` failed: its error type, and an error status with `description`."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    span.set_attribute(c.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def tool_outcome(span: Any, record: Any, content: Any) -> None:
    """A tool call's record on its span: failed when the call failed, and its arguments and
    result when `content` (a `ContentRecorder`, or None) records them."""
    if record.is_error:
        fail(span, record.error_type or "_OTHER")
    if content is not None:
        content.set(span, c.TOOL_ARGUMENTS, record.arguments)
        content.set(span, c.TOOL_RESULT, record.content)


def hex_ids(span_context: Any) -> tuple[str, str]:
    """`span_context`'s trace id and span id as 32 and 16 hex digits."""
    return format(span_context.trace_id, "032x"), format(span_context.span_id, "016x")
