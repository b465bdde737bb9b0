"""`StepRunner`: the hook through which a durable engine records a run's steps.

A run whose context has `steps` set hands each router decision, model call, context-policy
summary and tool call to it instead of calling it directly; the runner may execute the call
(and record its outcome) or return the outcome recorded by an earlier attempt of the same run
without executing it. `network.durable` is the one implementation. A run without a runner
(`ctx.engine.steps is None`, the default) pays one attribute check per call site and nothing else.

The runner also returns the state writes a replayed call made: a recorded router decision
or tool call re-applies them (validated like any write) so that a resumed run sees exactly
the state it had.

A `Parallel` fan-out asks the runner for one runner per branch (`fork`) and hands it to the
branch's context: the branches run concurrently, so each branch's steps must be recorded and
found again under that branch, whatever order the branches happen to make their calls in.
`join` tells the runner the branches ended.

The protocol is defined beside `RunContext` (its `route` takes one, and the context holds
the runner); this module is its address.
"""

from __future__ import annotations

from network.run.context import StepRunner

__all__ = ["StepRunner"]
