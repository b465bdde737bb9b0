"""`RecordedRouter`: the recording's choices as a replay's router (`routing="recorded"`).

It calls, in each replayed run, the agents the recorded run called, in order, then ends the
run (`router_finished`): an LLM router is not asked (no model, no cost), and the comparison of
routing is then trivially true. A recorded `Parallel` fan-out cannot be rebuilt from its
calls (its options are not recorded): such a recording is replayed with `routing="today"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from network.errors import ConfigurationError
from network.run.context import RunContext
from network.run.result import Stop, StopReason

if TYPE_CHECKING:
    from network.capabilities.replay.capability import ReplaySession


class RecordedRouter:
    """Chooses what the recording chose (see the module docstring)."""

    kind = "recorded"

    def __init__(self, session: ReplaySession) -> None:
        self.session = session

    def __call__(self, ctx: RunContext) -> Any:
        if ctx.stack:
            return None
        session = self.session
        calls = session.turns[session.turn].calls
        index = ctx.call_count
        if index >= len(calls):
            return Stop(StopReason.ROUTER_FINISHED)
        recorded = calls[index]
        if recorded.branch is not None:
            raise ConfigurationError(
                f"replay with routing='recorded': call {index} of run {session.turn} is a "
                f"branch of a Parallel fan-out ({recorded.branch!r}), which the recording "
                "cannot rebuild; replay it with routing='today'"
            )
        return recorded.agent
