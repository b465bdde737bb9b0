"""What the page needs of a live run beyond the AG-UI events: each step's details.

AG-UI events carry the streamed answer, tool calls and state deltas, but not the prompt an
agent was sent, its token usage or duration, or which tool wrote which key. The page's AG-UI
server gives every run one more sink (`observers`, the server's `observers=`), an `Observer`
of the run's typed events that, when a step finishes (`StepFinished`), sends a `Custom` event
`agent_network.devui.step` (before STEP_FINISHED) holding the step's `steps.step_view` plus
the state writes made since the previous step (the state's own provenance log: key,
set/delete, agent, tool, source, time).
"""

from __future__ import annotations

from typing import Any

from network.devui.steps import step_view
from network.logger import LazyLogger
from network.run.context import RunContext
from network.run.emitter import Observer
from network.run.events import Custom, RunEvent, StepFinished

__all__ = ["STEP_EVENT", "StepDetails", "observers"]

STEP_EVENT = "agent_network.devui.step"
MAX_WRITES = 1_000  # state writes reported per step (the latest); a loop may make many more

log = LazyLogger("agent_network.devui")


def observers(ctx: RunContext) -> list[Observer]:
    """The page's sinks of run `ctx` (the AG-UI server's `observers=`): its step details,
    reading the run's typed events."""
    return [Observer(StepDetails(ctx))]


class StepDetails:
    """The sink sending `STEP_EVENT` before each STEP_FINISHED of a completed agent call."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.writes_seen = 0
        self.results_seen = len(ctx.state.results)

    async def __call__(self, event: RunEvent) -> None:
        if not isinstance(event, StepFinished):
            return
        state = self.ctx.state
        if len(state.results) <= self.results_seen:  # a step closed by an error: no result
            return
        self.results_seen = len(state.results)
        try:
            value = self.details(len(state.results) - 1)
        except Exception as error:  # the page loses one step's details; the run goes on
            log.warning("devui.step_details_failed", error=repr(error))
            return
        await self.ctx.engine.emitter.emit(Custom(STEP_EVENT, value))

    def details(self, index: int) -> dict[str, Any]:
        """The step view of result `index` with the writes since the previous step."""
        view = step_view(self.ctx.state.results[index], index)
        log_ = self.ctx.state.kv.write_log
        new = log_[self.writes_seen :]
        self.writes_seen = len(log_)
        view["writes"] = [
            {
                "key": record.key,
                "op": record.op,
                "agent": record.writer.agent,
                "tool": record.writer.tool,
                "source": record.writer.source,
                "at": record.at,
            }
            for record in new[-MAX_WRITES:]
        ]
        view["writes_dropped"] = max(0, len(new) - MAX_WRITES)  # the oldest, beyond the bound
        return view
