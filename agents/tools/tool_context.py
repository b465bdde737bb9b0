"""`ToolContext`: what a tool may ask for by annotating a parameter with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic

from network.errors import ConfigurationError
from network.run.context import AgentLike, DepsT, NetworkLike
from network.state.state import State


@dataclass(slots=True)
class ToolContext(Generic[DepsT]):
    """The run around a tool call. Injected, never shown to the model.

    `state` is the tool's own view of the run's state: reads see the run's state plus this
    tool's writes; the writes are applied when the call succeeds and dropped when it fails.
    `deps` is the run's `deps=` object (annotate `ToolContext[MyDeps]` to type it), and
    `await ctx.resource(name)` opens one of the run's resources.

    Attributes:
        network: the `Network` running the tool.
        agent: the `Agent` whose model asked for the call.
        state: the tool's view of the run's `State` (see above).
        tool_call_id: the id of this tool call.
        run: the `RunContext` of the run.
        attempt: which try of this call this is (1 for the first; see `@tool(retry=...)`).
        max_attempts: how many tries the call's `RetryPolicy` allows (1 without one).
    """

    network: NetworkLike
    agent: AgentLike
    state: State
    tool_call_id: str
    run: Any = None  # the RunContext
    attempt: int = 1
    max_attempts: int = 1

    @property
    def idempotency_key(self) -> str:
        """A key naming this call, the same on every try and when the run is resumed (a
        durable run replays the recorded model answer, and so the call's id): the thread id
        (else the run id) and the tool call id. Pass it to an external service that
        deduplicates requests, so that a retried call never acts twice.

        Inside a sub-run of a durable run (an agent used as a tool) it is not stable: a
        resume runs the sub-run again, whose model names its calls anew; key a side effect
        there on `run.run_id` (the same on every execution) and what the tool does."""
        run = self.run
        scope = None if run is None else (run.thread_id or run.run_id)
        return f"{scope or 'run'}:{self.tool_call_id}"

    @property
    def kv(self) -> Any:
        """Shortcut for `state.kv`."""
        return self.state.kv

    @property
    def deps(self) -> DepsT:
        """The run's `deps=` object, as given (None when the run has none)."""
        run = self.run
        return None if run is None else run.deps  # type: ignore[return-value]

    async def resource(self, name: str) -> Any:
        """The run's resource `name`, opened on first use and closed when the run ends."""
        if self.run is None:
            raise ConfigurationError(f"tool context has no run to open resource {name!r} in")
        return await self.run.resource(name)
