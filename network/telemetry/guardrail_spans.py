"""The spans of a run's guardrail checks: one `apply_guardrail {name}` span per check.

Written, like chat and tool spans, after the fact from the run's records
(`RunContext.engine.guardrails`, `network.run.guardrails.GuardrailCheck`) with the times recorded
there: under the span of the agent call they checked (`RunSpans` writes them when that call
ends, tripped or not), each with the chat spans of the model requests a guardrail agent made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from network.telemetry import conventions as c


def guardrail_spans(
    tracer: Any,
    trace: Any,
    checks: Any,
    parent: Any,
    chat: Callable[[Any, Any, Any], None],
    fail: Callable[[Any, str], None],
) -> None:
    """Write a span per check in `checks` under the context `parent`; `chat(call, parent,
    None)` writes a model request's span, `fail(span, error_type)` marks a failure."""
    for check in checks:
        start = int(check.started_at * 1e9)
        attributes: dict[str, Any] = {
            c.OPERATION: c.APPLY_GUARDRAIL,
            c.GUARDRAIL_NAME: check.guardrail,
            c.GUARDRAIL_SOURCE: check.kind,
        }
        if check.agent:
            attributes[c.AGENT_NAME] = check.agent
        if check.tool is not None:
            attributes[c.TOOL_NAME] = check.tool
            attributes[c.TOOL_CALL_ID] = check.tool_call_id or ""
        result = check.result
        if result is not None:
            attributes[c.GUARDRAIL_TRIPPED] = result.tripped
            if result.rejects:
                attributes[c.GUARDRAIL_REJECTED] = True
        if check.cancelled:
            attributes[c.GUARDRAIL_CANCELLED] = True
        span = tracer.start_span(
            f"{c.APPLY_GUARDRAIL} {check.guardrail}",
            context=parent,
            attributes=attributes,
            start_time=start,
        )
        if check.model_calls:
            inner = trace.set_span_in_context(span)
            for call in check.model_calls:
                chat(call, inner, None)
        if check.error is not None:
            fail(span, check.error)
        span.end(end_time=start + int(check.duration_ms * 1e6))
