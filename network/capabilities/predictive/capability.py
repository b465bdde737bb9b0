"""The predictive state capability, built by `Network(predict_state=...)`.

Stages: run started (a run with sinks announces CUSTOM "PredictState" and follows tool
arguments as they stream: `network.capabilities.predictive.streaming`), the answer's tool
calls (those handed to a client, a frontend tool's, commit their predicted keys now:
`...predictive.writes.commit_handed`), each tool call (the predicted keys take the arguments'
values before the tool runs: `...predictive.writes`), the tool results (predictions whose call
did not commit are taken back before the results go out).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from network.capabilities.predictive.writes import commit_handed, write_predicted
from network.errors import StateError, ToolError
from network.history.messages import ToolCall
from network.history.results import ToolCallRecord
from network.run.agent_call import AgentCall, ToolUse
from network.run.capability import Capability
from network.run.context import CallSettler, RunContext


class PredictiveState(Capability):
    """A network's `predict_state` (checked: `network.run.predictive_config`)."""

    def __init__(self, predict_state: Mapping[str, Mapping[str, Any]]) -> None:
        self.predict_state = predict_state

    async def run_started(self, run: RunContext) -> None:
        if run.engine.emitter.active:  # predictions reach only a run's sinks
            from network.capabilities.predictive.streaming import install  # noqa: PLC0415 (only runs with a sink need it)

            run.local(self, _Following).predictor = await install(run)

    async def tool_calls(self, call: AgentCall, calls: list[ToolCall]) -> list[ToolCall]:
        commit_handed(self.predict_state, call, calls)  # a client's calls: committed now
        return calls

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        call = use.call
        try:
            write_predicted(self.predict_state, use.tool, call, use.state.kv)
        except ToolError as exc:
            return ToolCallRecord.failed(call, str(exc), type(exc).__name__, _now())
        except StateError as exc:
            message = f"tool {call.name!r} state update failed: {exc}"
            return ToolCallRecord.failed(call, message, type(exc).__name__, _now())
        return await proceed()

    async def tool_results(
        self, call: AgentCall, records: list[ToolCallRecord]
    ) -> list[ToolCallRecord]:
        predictor = call.run.local(self, _Following).predictor
        if predictor is not None:  # before the results go out: what did not commit goes back
            await predictor.settle(call.run, records)
        return records

    def __repr__(self) -> str:
        return f"PredictiveState({dict(self.predict_state)!r})"


class _Following:
    """What the capability keeps per run (`RunContext.local`): the predictor following tool
    arguments, on a run with sinks."""

    __slots__ = ("predictor",)

    def __init__(self) -> None:
        self.predictor: CallSettler | None = None


def _now() -> float:
    return time.perf_counter()
