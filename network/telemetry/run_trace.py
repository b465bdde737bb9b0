"""Where a run is in its trace: what telemetry keeps for each run (`RunContext.local`).

The kernel knows no span. Telemetry is a capability of the run like any other, and keeps its
per-run data behind the seam every capability uses, `RunContext.local`:

- `links`: the (trace id, span id) of the roots of the runs this one continues (the answers
  to their interrupts), which its root span links to; given by whoever prepares the
  continuation (`network.continuing`, a server's admission) with `link_to`;
- `here`: (trace id, span id, sampled) of where a run started inside this run's own code
  nests (`await other.run(...)` in a tool, a hook, a router): the live agent span of the call
  under way, else the root; written by the run's `RunSpans`;
- `subagents`: the live tool spans the sub-runs of this run's tools (`agents.as_tool`) nest
  under, by subagent run id; written by `SubagentToolSpans` when SUBAGENT_STARTED passes;
- `remote`: the span of another process the run continues (a served request's
  `traceparent`: `network.telemetry.propagation`), and `tracestate`, the trace's
  vendor state its requests carry on (the root span's).

A sub-run finds its parent span in its caller's (`network.run.subrun.caller_of`) when its
own root span starts: `parent_of`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from network.run.context import RunContext
from network.run.subrun import caller_of

SpanIds = tuple[str, str, bool]
"""(trace id, span id, sampled): a span as a run nested under it sees it (hex ids; `sampled`
is its sampler's decision, which a run nested under it follows)."""


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A remote span a run continues (a served request's `traceparent`,
    `network.telemetry.propagation`): its hex ids, its sampled flag, and the trace's
    `tracestate` (None when it has none)."""

    trace_id: str
    span_id: str
    sampled: bool
    tracestate: str | None = None


@dataclass(slots=True, eq=False)
class RunTrace:
    """Telemetry's per-run data (see the module docstring); shared with the run's branches."""

    links: tuple[tuple[str, str], ...] = ()
    here: SpanIds | None = None
    subagents: dict[str, SpanIds] = field(default_factory=dict)
    remote: TraceParent | None = None
    tracestate: str | None = None


def run_trace(ctx: RunContext) -> RunTrace:
    """The `RunTrace` of `ctx`'s run, made on first use."""
    return ctx.local(RunTrace, RunTrace)


def link_to(ctx: RunContext, links: Sequence[tuple[str, str]]) -> None:
    """`ctx`'s run continues the runs whose root spans are `links`: its root links to them."""
    if links:
        run_trace(ctx).links = tuple(links)


def parent_of(ctx: RunContext) -> SpanIds | None:
    """The span `ctx`'s root nests under, for a sub-run: the tool span of its caller's call
    that started it, else (a run started in the caller's own code, with no live tool span)
    where the caller is, its agent call's span or its root, in the caller's trace and under
    its sampler's decision. None for a run of its own, or a caller that is not traced."""
    caller = caller_of(ctx)
    if caller is None:
        return None
    found: RunTrace | None = caller.engine.locals.get(RunTrace)
    if found is None:
        return None
    return found.subagents.get(ctx.run_id) or found.here
