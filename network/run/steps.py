"""`StepRunner`: the hook through which a durable engine records a run's steps.

A run whose context has `steps` set hands each router decision, model call, context-policy
summary and tool call to it instead of calling it directly; the runner may execute the call
(and record its outcome) or return the outcome recorded by an earlier attempt of the same run
without executing it. `network.durable` is the one implementation. A run without a runner
(`ctx.steps is None`, the default) pays one attribute check per call site and nothing else.

The runner also returns the state writes a replayed call made: a recorded router decision
or tool call re-applies them (validated like any write) so that a resumed run sees exactly
the state it had.

A `Parallel` fan-out asks the runner for one runner per branch (`fork`) and hands it to the
branch's context: the branches run concurrently, so each branch's steps must be recorded and
found again under that branch, whatever order the branches happen to make their calls in.
`join` tells the runner the branches ended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from network.state.state import State

T = TypeVar("T")


class StepRunner(Protocol):
    """Runs (or replays) the recorded steps of one run."""

    async def route(self, ctx: Any, router: Callable[[Any], Any]) -> Any:
        """The router's decision for `ctx`: agent names and `Parallel` fan-outs (to resolve),
        a `Stop`, or None."""
        ...

    async def model(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """The answer of one model request of agent `agent`."""
        ...

    async def tool(self, name: str, state: State, call: Callable[[], Awaitable[T]]) -> T:
        """The record of one tool call that writes to `state`."""
        ...

    async def summary(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """The `Summary` a context policy made for a request of agent `agent` (its
        summariser's model call is recorded like the agent's own)."""
        ...

    async def step(self, name: str, call: Callable[[], Awaitable[T]]) -> T:
        """Any other recorded step (a thread's load or commit)."""
        ...

    def fork(self, branch_ids: Sequence[str]) -> Sequence[StepRunner]:
        """The runners of a fan-out's branches about to run (ids in declared order)."""
        ...

    def join(self) -> None:
        """The branches of the fan-out last forked have ended (however they ended)."""
        ...
