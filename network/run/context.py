"""`RunContext`: what routers, hooks, instruction functions and agents see of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from network.history.results import InferenceResult, Usage
from network.run.emitter import Emitter
from network.state.state import State

if TYPE_CHECKING:
    from network.network import Network


@dataclass(slots=True, eq=False)
class RunContext:
    """The live context of one run.

    Routers read `state`, `input`, `last_result`, `call_count` and `stack` (the agents queued
    to run next, in order). `agent` is the agent whose call is under way, if any.
    """

    network: Network
    state: State
    input: str
    run_id: str
    thread_id: str | None = None
    call_count: int = 0
    stack: list[Any] = field(default_factory=list)
    last_result: InferenceResult | None = None
    agent: Any = None
    prompt_tokens: int = 0  # usage totals, summed as ints (cheaper than a model per step)
    completion_tokens: int = 0
    total_tokens: int = 0
    emitter: Emitter = field(default_factory=Emitter)
    extras: dict[str, Any] = field(default_factory=dict)  # room for extensions (AG-UI, ...)

    @property
    def usage(self) -> Usage:
        """Token usage of the run so far."""
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
        )

    def add_usage(self, usage: Usage) -> None:
        """Count one inference's tokens (routers may count theirs too)."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.total_tokens += usage.total_tokens

    @property
    def kv(self) -> Any:
        """Shortcut for `state.kv`."""
        return self.state.kv

    @property
    def results(self) -> list[InferenceResult]:
        """Shortcut for `state.results`."""
        return self.state.results
