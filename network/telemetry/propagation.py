"""W3C trace context across hops: what a run's requests to remote agents and MCP servers
carry, and what our servers read of a request's.

Outgoing (`outgoing_headers`): `traceparent` (and `tracestate`, when the trace has one) of the
current span: the running run's where one is under way and traced (its live agent span, else
its root: `RunTrace.here`), else OpenTelemetry's current span. The A2A client sends them on
every HTTP request of a call; the MCP client on its `tools/call` (in the message's `_meta`, as
MCP's SEP-414 says, and as HTTP headers).

Incoming (`incoming`): a request's `traceparent` read strictly. The W3C grammar, a lowercase
hex trace id and parent id that are not all zeros, a version other than `ff`; anything else
(malformed, longer than `MAX_TRACEPARENT`, all-zero ids) is no parent: the run starts a new
trace. Never an error, never echoed: the value is not logged or quoted. `tracestate` is kept
only beside a valid `traceparent`, and only when it is valid whole (W3C list-members, at
most `MAX_MEMBERS` in `MAX_TRACESTATE` characters).

A server makes the run's root span a child of what it read: `continue_remote(ctx, parent)` for
a run it prepares (its `RunTrace.remote`), `continued(parent)` around a run it starts with
`network.run` (the parent made OpenTelemetry's current span for the while). A span already
current where the root starts (an OpenTelemetry server instrumentation's, which read the same
header) stays the parent.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from network.run.budgets.caller import running_run
from network.run.context import RunContext
from network.telemetry.run_trace import RunTrace, TraceParent, run_trace

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
MAX_TRACEPARENT = 256  # a future version may add fields; past this it is refused unread
MAX_TRACESTATE = 512  # the W3C's bound a vendor may cut at (32 members of short keys)

_VERSION_00 = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
# a later version: its first four fields as version 00's, then more after a dash
_LATER = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-[ -~]*)?")
# a tracestate list-member (W3C): `key=value`, a simple or a multi-tenant key
_MEMBER = re.compile(
    r"(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})"
    r"=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
)
MAX_MEMBERS = 32
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16

__all__ = [
    "TRACEPARENT",
    "TRACESTATE",
    "TraceParent",
    "continue_remote",
    "continued",
    "current_parent",
    "incoming",
    "outgoing_headers",
    "parse",
    "span_context",
]


def parse(traceparent: Any, tracestate: Any = None) -> TraceParent | None:
    """The `TraceParent` of a `traceparent` header value (and its `tracestate`), or None
    when it is not a valid one (see the module docstring)."""
    if not isinstance(traceparent, str) or len(traceparent) > MAX_TRACEPARENT:
        return None
    value = traceparent.strip(" \t")
    match = _VERSION_00.fullmatch(value)
    if match is not None:
        trace_id, span_id, flags = match.groups()
    else:
        later = _LATER.fullmatch(value)
        if later is None or later.group(1) in ("00", "ff"):
            return None
        trace_id, span_id, flags = later.group(2, 3, 4)
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceParent(trace_id, span_id, bool(int(flags, 16) & 1), _tracestate(tracestate))


def _tracestate(value: Any) -> str | None:
    """`value` when it is a valid `tracestate` (W3C list-members, at most `MAX_MEMBERS`, in
    at most `MAX_TRACESTATE` characters), else None: checked here whole, so that nothing of
    a hostile one reaches OpenTelemetry's parser (which logs the members it refuses)."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TRACESTATE:
        return None
    members = [member.strip(" \t") for member in value.split(",")]
    members = [member for member in members if member]
    if not members or len(members) > MAX_MEMBERS:
        return None
    if not all(_MEMBER.fullmatch(member) for member in members):
        return None
    return ",".join(members)


def incoming(headers: Mapping[str, Any] | None) -> TraceParent | None:
    """The `TraceParent` a request's headers (or an MCP message's `_meta`) carry, or None."""
    if headers is None:
        return None
    try:
        return parse(headers.get(TRACEPARENT), headers.get(TRACESTATE))
    except Exception:  # an odd mapping: no parent, never the request's error
        return None


def continue_remote(ctx: RunContext, parent: TraceParent | None) -> None:
    """`ctx`'s run continues the trace of `parent` (a request's): its root span is a child of
    that remote span. Nothing when `parent` is None."""
    if parent is not None:
        run_trace(ctx).remote = parent


@contextmanager
def continued(parent: TraceParent | None) -> Iterator[None]:
    """Runs started inside (in this task) continue `parent`'s trace: the remote span is
    OpenTelemetry's current span for the while. Nothing without a parent, when a span is
    current already (it stays the parent), or when `opentelemetry` was never imported (then
    no run is traced)."""
    if parent is None or "opentelemetry.trace" not in sys.modules:
        yield
        return
    from opentelemetry import context, trace  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    if trace.get_current_span().get_span_context().is_valid:
        yield
        return
    token = context.attach(trace.set_span_in_context(trace.NonRecordingSpan(span_context(parent))))
    try:
        yield
    finally:
        context.detach(token)


def span_context(parent: TraceParent) -> Any:
    """`parent` as OpenTelemetry's remote `SpanContext`."""
    from opentelemetry import trace  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    flags = trace.TraceFlags.SAMPLED if parent.sampled else trace.TraceFlags.DEFAULT
    state = trace.TraceState()
    if parent.tracestate is not None:
        state = trace.TraceState.from_header([parent.tracestate])
    return trace.SpanContext(
        int(parent.trace_id, 16),
        int(parent.span_id, 16),
        is_remote=True,
        trace_flags=trace.TraceFlags(flags),
        trace_state=state,
    )


def current_parent() -> TraceParent | None:
    """The current span, as a request sent now carries it: the running run's live span when
    it is traced, else OpenTelemetry's current span; None when there is none."""
    run = running_run()
    if run is not None:
        books: RunTrace | None = run.engine.locals.get(RunTrace)
        if books is not None and books.here is not None:
            trace_id, span_id, sampled = books.here
            return TraceParent(trace_id, span_id, sampled, books.tracestate)
    if "opentelemetry.trace" not in sys.modules:
        return None
    from opentelemetry import trace  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

    found = trace.get_current_span().get_span_context()
    if not found.is_valid:
        return None
    state = found.trace_state.to_header() if found.trace_state else None
    return TraceParent(
        format(found.trace_id, "032x"),
        format(found.span_id, "016x"),
        bool(found.trace_flags.sampled),
        state or None,
    )


def outgoing_headers(parent: TraceParent | None = None) -> dict[str, str]:
    """The W3C headers of `parent` (default: `current_parent()`); {} when there is none."""
    if parent is None:
        parent = current_parent()
        if parent is None:
            return {}
    flags = "01" if parent.sampled else "00"
    headers = {TRACEPARENT: f"00-{parent.trace_id}-{parent.span_id}-{flags}"}
    if parent.tracestate:
        headers[TRACESTATE] = parent.tracestate
    return headers
