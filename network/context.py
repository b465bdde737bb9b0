"""`RunContext`: what routers, hooks, instruction functions and agents see of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from network.emitter import Emitter
from network.results import InferenceResult, Usage
from network.state import State

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
    usage: Usage = field(default_factory=Usage)
    emitter: Emitter = field(default_factory=Emitter)
    extras: dict[str, Any] = field(default_factory=dict)  # room for extensions (AG-UI, ...)

    @property
    def kv(self) -> Any:
        """Shortcut for `state.kv`."""
        return self.state.kv

    @property
    def results(self) -> list[InferenceResult]:
        """Shortcut for `state.results`."""
        return self.state.results
