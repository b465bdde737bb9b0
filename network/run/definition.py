"""`RunnableNetwork`: a network definition as the code that runs it reads it.

A `network.Network` is a definition: its agents, router, schema, limits, budgets, resources
and capabilities. The run kernel (`network.kernel`), continuations (`network.continuing`), the
durable engine and the protocol servers take one as data, by this shape, and never call back
into its run methods. `NetworkLike` is what a run's own loop reads of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from network.run.budgets.shared import SharedBudget
from network.run.context import NetworkLike, RunContext, RunStages
from network.run.limits import UsageLimits
from network.run.resources import ResourceFactory
from network.state.state import State


class RunnableNetwork(NetworkLike, Protocol):
    """A network definition a run is carried out from (`network.Network` is one)."""

    @property
    def resources(self) -> Mapping[str, ResourceFactory]: ...
    @property
    def limits(self) -> UsageLimits | None: ...
    @property
    def budget(self) -> tuple[SharedBudget, ...]: ...

    def new_state(self, data: Mapping[str, Any] | State | None = None) -> State: ...

    def run_stages_for(
        self, ctx: RunContext, *, metered: bool, live: bool = False
    ) -> RunStages: ...
