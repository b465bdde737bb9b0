"""`RunOptions`: the options of one run, as one value.

`Network.run`'s keyword arguments are the one place the options are declared for callers
(`run_sync` and `stream` take exactly the same, by `ParamSpec`); `run` packs them into a
`RunOptions` that the run kernel (`network.kernel`) takes whole for every way a run is
carried out: a new run, a continuation (`Resume`, `ToolResults`), a sub-run, and the durable
engine, which records the data among them and keeps the live ones (`deps`, `resources`,
`limits`, `usage`, `budget`, `sinks`) for the execution in its process. A new option is
added to `run`'s signature and here, and a test keeps the two equal
(tests/network/run/test_run_signature.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from network.run.budgets.shared import SharedBudget
from network.run.emitter import Sink
from network.run.limits import UsageFigures, UsageLimits
from network.run.resources import ResourceFactory
from network.run.thread_ref import ThreadRef
from network.state.state import State

__all__ = ["RunOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """The options of one run (see `Network.run` for what each does)."""

    thread: ThreadRef | None = None
    state: Mapping[str, Any] | State | None = None
    deps: Any = None
    resources: Mapping[str, ResourceFactory] | None = None
    limits: UsageLimits | None = None
    usage: UsageFigures | None = None
    budget: SharedBudget | Sequence[SharedBudget] | None = None
    max_iter: int | None = None
    run_id: str | None = None
    sinks: Sequence[Sink] = ()
    durable: bool = False
