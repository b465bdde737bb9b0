"""`Replay`: today's network run against a recorded thread, the model answered from it.

Three stages of the seam, and nothing in the kernel:

- `next_call`: before each agent call (or fan-out), the agent today's router chose is
  compared with the one the recording called there; the recorded call is paired with it;
- `wrap_model`: today's request is compared with the recorded one (instructions,
  conversation, tools offered: `network.capabilities.replay.compare`), then answered with the
  recorded answer, without asking the model; a call that asks again (typed output's re-ask)
  gets the recording's next answer;
- `wrap_tool`: with `tools="recorded"`, a tool call gets its recorded result and makes its
  recorded state writes again, and the tool does not run (no side effect); with
  `tools="live"`, it runs and its result is compared with the recorded one.

At the first divergence, `on_divergence` says what happens: "stop" ends the run there (stop
reason `replay_diverged`; the call under way commits nothing), "live" goes on with the real
model and tools from there (the steps after are reported `live`), "continue" goes on
answering from the recording while the agents called line up with it (a routing divergence
stops the run).

The capability serves one replay (`network.replay` makes it, and runs the recorded runs one
after another on a network of its own): the replay's progress (`ReplaySession`) lives with
it, not per run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from network.capabilities.replay.compare import (
    CONVERSATION,
    INSTRUCTIONS,
    REQUESTS,
    ROUTING,
    TOOL_CALLS,
    TOOL_RESULTS,
    TOOLS,
    Difference,
    compare_request,
    routing_difference,
    tool_result_difference,
)
from network.capabilities.replay.recording import RecordedTurn, answer_response
from network.capabilities.replay.report import LIVE, NOT_REPLAYED, StepReport
from network.capabilities.replay.tool_writes import apply_operations, tool_operations
from network.errors import RunStopped
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import InferenceResult, ToolCallRecord
from network.run.agent_call import AgentCall, ToolUse
from network.run.capability import Capability, ModelProceed
from network.run.context import RunContext
from network.run.parallel import Parallel
from network.run.result import Stop

OnDivergence = Literal["stop", "live", "continue"]
ToolSource = Literal["recorded", "live"]

REPLAY_DIVERGED = "replay_diverged"
"""The stop reason of a replayed run stopped at a divergence (`on_divergence="stop"`)."""


class ReplayDiverged(RunStopped):
    """A replayed run departed from its recording and stops there (`on_divergence="stop"`)."""

    stop_reason = REPLAY_DIVERGED


@dataclass(slots=True)
class Paired:
    """A call of today's run and the recorded call it stands for."""

    recorded: InferenceResult
    step: StepReport
    tool_ops: dict[str, list[dict[str, Any]]] | None = None  # by tool call id, when asked


@dataclass(slots=True)
class ReplaySession:
    """A replay's progress: the recorded runs, the one replayed now, the steps so far."""

    turns: list[RecordedTurn]
    tools: ToolSource = "live"
    on_divergence: OnDivergence = "stop"
    turn: int = 0
    live: bool = False  # went live after a divergence: nothing is answered or compared
    steps: list[StepReport] = field(default_factory=list)
    current: Paired | None = None  # the call under way (outside a fan-out)
    branches: dict[str, Paired] = field(default_factory=dict)  # a fan-out's, by branch id

    def paired(self, ctx: RunContext) -> Paired | None:
        """The recorded call paired with the call under way in `ctx` (a branch's own)."""
        branch = ctx.branch
        if branch is not None:
            return self.branches.get(branch.id)
        return self.current

    def finish_turn(self, calls_made: int, router_ended: bool = True) -> None:
        """The run of the current turn ended after `calls_made` calls: the recorded calls it
        did not make are reported as not replayed (the first with the routing difference,
        when today's router ended the run: `router_ended`)."""
        recorded = self.turns[self.turn].calls
        reported = {step.index for step in self.steps if step.turn == self.turn}
        for index in range(calls_made, len(recorded)):
            if self.live:
                break
            if index in reported:  # the call that stopped at a divergence
                continue
            step = StepReport(self.turn, index, None, recorded[index].agent, NOT_REPLAYED)
            if router_ended:
                difference = routing_difference([recorded[index].agent], [])
                if difference is not None:
                    step.differences.append(difference)
                router_ended = False
            self.steps.append(step)
        self.current = None
        self.branches = {}


class Replay(Capability):
    """Answers a run from its recording and reports where it departs (module docstring)."""

    def __init__(self, session: ReplaySession) -> None:
        self.session = session

    # -- the run ---------------------------------------------------------------------------

    def next_call(self, run: RunContext) -> Stop | None:
        session = self.session
        if session.live:
            self._live_step(run)
            return None
        upcoming = run.stack[0]
        calls = session.turns[session.turn].calls
        index = run.call_count
        today = _agents_of(upcoming)
        recorded = calls[index : index + len(today)]
        difference = routing_difference([r.agent for r in recorded], today)
        if isinstance(upcoming, Parallel) or any(r.branch is not None for r in recorded):
            self._pair_branches(run, upcoming, recorded, index)
        else:
            self._pair(recorded[0] if recorded else None, today[0], index)
        if difference is None:
            return None
        steps = session.steps[-len(today) :]
        for step in steps:
            step.diverge(difference)
        if session.on_divergence == "live":
            session.live = True
            for step in steps:
                step.status = LIVE if step.recorded_agent is None else step.status
            return None
        return Stop(REPLAY_DIVERGED, difference.summary)  # nothing to answer it with

    def _pair(self, recorded: InferenceResult | None, agent: str, index: int) -> None:
        session = self.session
        step = StepReport(session.turn, index, agent, None if recorded is None else recorded.agent)
        step.checked.append(ROUTING)
        session.steps.append(step)
        session.current = None if recorded is None else Paired(recorded, step)

    def _pair_branches(
        self, run: RunContext, upcoming: Any, recorded: list[InferenceResult], index: int
    ) -> None:
        session = self.session
        session.current = None
        session.branches = {}
        by_branch = {r.branch: r for r in recorded if r.branch is not None}
        branches = getattr(upcoming, "branches", None) or ()
        for offset, branch in enumerate(branches):
            found = by_branch.get(branch.id)
            agent = getattr(branch.agent, "name", str(branch.agent))
            step = StepReport(
                session.turn, index + offset, agent, None if found is None else found.agent
            )
            step.checked.append(ROUTING)
            session.steps.append(step)
            if found is not None:
                session.branches[branch.id] = Paired(found, step)

    def _live_step(self, run: RunContext) -> None:
        """After going live, each call is still listed (status `live`)."""
        session = self.session
        for offset, agent in enumerate(_agents_of(run.stack[0])):
            session.steps.append(
                StepReport(session.turn, run.call_count + offset, agent, None, LIVE)
            )
        session.current = None
        session.branches = {}

    # -- one agent call --------------------------------------------------------------------

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        session = self.session
        paired = None if session.live else session.paired(call.run)
        if paired is None:  # live, or a call the recording does not have (already reported)
            return await proceed(request)
        step = paired.step
        asked = step.requests
        step.requests += 1
        recorded = paired.recorded
        differences: list[Difference] = []
        if asked == 0:  # a re-ask's request carries feedback the recording did not keep
            step.checked.extend((INSTRUCTIONS, CONVERSATION, TOOLS))
            differences = compare_request(
                recorded.prompt,
                recorded.history,
                recorded.offered_tools,
                call.prompt,
                call.history,
                call.schemas or [],
            )
        response = answer_response(recorded, asked)
        if response is None:
            differences.append(
                Difference(
                    REQUESTS,
                    f"today's call asks the model {asked + 1} times; the recording answered "
                    f"{asked}",
                    f"-requests: {asked}\n+requests: {asked + 1}",
                )
            )
        if asked == 0:
            step.checked.append(REQUESTS)
        for difference in differences:
            step.diverge(difference)
        if differences and self._departs(response is None):
            return await proceed(request)  # live from here
        assert response is not None
        step.answered_from_recording += 1
        if session.tools == "recorded" and paired.tool_ops is None:
            paired.tool_ops = tool_operations(recorded)
        return response

    def _departs(self, nothing_to_answer: bool) -> bool:
        """A divergence was found: stop (raise), go live (True), or go on (False)."""
        session = self.session
        mode = session.on_divergence
        if mode == "stop" or (mode == "continue" and nothing_to_answer):
            raise ReplayDiverged(
                "the replay departed from its recording", summary="replay diverged"
            )
        if mode == "live":
            session.live = True
            return True
        return False

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        session = self.session
        paired = None if session.live else session.paired(use.run)
        if paired is None:
            return await proceed()
        recorded = _recorded_call(paired.recorded, use.call.id)
        step = paired.step
        if TOOL_CALLS not in step.checked:
            step.checked.append(TOOL_CALLS)
        if recorded is None or recorded.name != use.call.name:
            step.diverge(
                Difference(
                    TOOL_CALLS,
                    f"tool call {use.call.id!r} ({use.call.name}) has no recorded result",
                    f"+call {use.call.name}",
                )
            )
            if session.on_divergence == "live":
                session.live = True
            return await proceed()  # the answer was the recording's: it is already there
        if session.tools == "recorded":
            step.tools_from_recording += 1
            apply_operations(use.state.kv, (paired.tool_ops or {}).get(use.call.id, []))
            return ToolCallRecord.from_dict(recorded.to_dict())
        record = await proceed()
        if TOOL_RESULTS not in step.checked:
            step.checked.append(TOOL_RESULTS)
        difference = tool_result_difference(use.call.name, recorded, record)
        if difference is not None:
            step.diverge(difference)
        return record

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        session = self.session
        paired = None if session.live else session.paired(call.run)
        if paired is not None and paired.recorded.skipped != result.skipped:
            said = "skipped" if result.skipped else "made"
            paired.step.diverge(
                Difference(
                    REQUESTS,
                    f"today's call was {said}; the recording's was not",
                    f"-skipped: {paired.recorded.skipped}\n+skipped: {result.skipped}",
                )
            )
        return result


def _agents_of(upcoming: Any) -> list[str]:
    """The agent names about to be called: one agent, or a fan-out's branches."""
    if isinstance(upcoming, Parallel):
        return [getattr(b.agent, "name", str(b.agent)) for b in upcoming.branches]
    return [upcoming.name]


def _recorded_call(result: InferenceResult, call_id: str) -> ToolCallRecord | None:
    for record in result.tool_calls:
        if record.id == call_id:
            return record
    return None
