"""The step ids of a fan-out's branches: each branch replays its own steps, whatever the timing.

DBOS identifies a workflow's steps by number (`function_id`): one counter per workflow,
drawn in the order the workflow asks (`DurableSteps` draws from DBOS's counter, as DBOS's own
steps do). A replay matches each step to the recording with the same number (and checks its
name). The run's own steps draw in a deterministic order: the loop is sequential, and the tool
calls of one answer are started in order and draw before any await. A fan-out's branches do
not: they run concurrently, and whether branch A's second step or branch B's first asks first
depends on the latency of each model and tool, which differs from one attempt to the next.
Drawn from the shared counter, a replay could hand branch A's recorded answer (or its tool's
state writes) to branch B.

So a branch's steps do not draw: their numbers are computed. At the fork the run's counter
stands at `base` (its last step); with `width` branches, branch `i`'s `k`-th step (k = 0, 1,
...; in call order within the branch, deterministic for the same reasons the run's are) is
number `base + 1 + k * width + i`. The numbers interleave, so a branch may take any number of
steps, and two branches never share one. At the join the run's counter moves to `base + K *
width`, K being the most steps one branch took: past every number a branch used, and the same
on every execution that replays the fan-out (each branch takes the same steps again), so the
run's later steps keep their numbers. Each branch step is also named after its branch
(`model:writer@survey/writer`): were a number ever to point at another branch's record, the
replay would refuse it (`DBOSUnexpectedStepError`) rather than replay it.

Why not the alternatives: a child workflow per branch (DBOS's usual tool) is recovered by
DBOS on its own, from its arguments, but a branch runs on its parent's live state (the store,
history and conversation at the fork, the live agents, deps and resources) and cannot be
rebuilt without it. A block of numbers reserved per branch at the fork needs a bound on a
branch's steps, and an agent call has none. Recording each branch's outcome as one step
would run a killed branch's completed model and tool calls again.

The numbers are the workflow context's counter (`function_id`), which DBOS's own steps draw
from too; the join moves it (DBOS 3.x; the extra pins `dbos<4`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _context() -> Any:
    from dbos._context import get_local_dbos_context  # noqa: PLC0415 (dbos is optional and heavy)

    ctx = get_local_dbos_context()
    if ctx is None or not ctx.is_workflow():
        raise RuntimeError("a durable fan-out runs inside its run's workflow")
    return ctx


class FanOut:
    """The step numbers of one fan-out's branches, from its fork to its join."""

    def __init__(self, branch_ids: Sequence[str]) -> None:
        self.width = len(branch_ids)
        self.base: int = _context().function_id
        self.branches = [BranchSlots(self, index, id) for index, id in enumerate(branch_ids)]

    def join(self) -> None:
        """Move the run's counter past every number the branches may have used."""
        ctx = _context()
        if ctx.function_id != self.base:
            # A step of the run drew a number in between: it may hold a branch's number.
            raise RuntimeError(
                f"a step of the run was recorded during a fan-out (step {ctx.function_id}, "
                f"fork at {self.base}); its number may collide with a branch's"
            )
        taken = max((branch.taken for branch in self.branches), default=0)
        ctx.function_id = self.base + taken * self.width


class BranchSlots:
    """One branch's step numbers: `base + 1 + k * width + index` for its k-th step."""

    def __init__(self, fan_out: FanOut, index: int, id: str) -> None:
        self.fan_out = fan_out
        self.index = index
        self.id = id
        self.taken = 0

    def draw(self) -> int:
        """The number of this branch's next step (call before any await)."""
        fan = self.fan_out
        number = fan.base + 1 + self.taken * fan.width + self.index
        self.taken += 1
        return number
