"""The replay report: per step, whether today's code sent what the recording sent.

A step is one agent call, numbered by its turn (the recorded run it belongs to) and its place
in that turn. Its status:

- `match`: every part checked agrees with the recording, and the model was answered from it;
- `diverged`: some part differs (`differences` says which, with a diff of each);
- `live`: the replay went on live after an earlier divergence (`on_divergence="live"`):
  nothing is compared any more;
- `not_replayed`: the recording made this call and today's run did not (it stopped, or its
  router ended earlier);
- `unsupported`: a recorded call a replay cannot make again (the tool calls a person
  approved, resumed in a run of their own).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from network.capabilities.replay.compare import Difference
from network.json_fields import json_fields

MATCH = "match"
DIVERGED = "diverged"
LIVE = "live"
NOT_REPLAYED = "not_replayed"
UNSUPPORTED = "unsupported"


@dataclass(slots=True)
class StepReport:
    """One step of a replay (see the module docstring for `status`).

    Attributes:
        turn: the recorded run it belongs to (0 is the thread's first).
        index: its place in that run's agent calls.
        agent: the agent today's run called (None when it made no call here).
        recorded_agent: the agent the recording called (None when it made none here).
        status: `match`, `diverged`, `live`, `not_replayed` or `unsupported`.
        checked: the parts compared (`instructions`, `conversation`, ...).
        differences: how it departs from the recording, in the order found.
        requests: how many model requests today's call made.
        answered_from_recording: how many of them the recording answered.
        tools_from_recording: how many tool calls were answered from the recording.
    """

    turn: int
    index: int
    agent: str | None
    recorded_agent: str | None
    status: str = MATCH
    checked: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    requests: int = 0
    answered_from_recording: int = 0
    tools_from_recording: int = 0

    def diverge(self, difference: Difference) -> None:
        """Add a difference: the step has diverged."""
        self.differences.append(difference)
        self.status = DIVERGED

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON data: its fields, camelCase names (`network.json_fields`)."""
        return json_fields(self)


@dataclass(slots=True)
class ReplayReport:
    """What a replay found, step by step (`network.replay` returns it).

    Attributes:
        thread_id: the recorded thread.
        steps: every step, in order (`StepReport`).
        stop_reasons: each replayed run's stop reason, in order.
        outputs: each replayed run's output text, in order.
        tools: "recorded" or "live": where tool results came from.
        on_divergence: what the replay did at a divergence ("stop", "live", "continue").
        routing: "today" (today's router chose, compared with the recording) or "recorded".
        results: the replayed runs' `RunResult`s (not in the JSON form).
        error: the exception that ended a replayed run, if one failed (its stop reason is
            then "error"; the JSON form names its type only).
    """

    thread_id: str | None
    steps: list[StepReport] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)
    outputs: list[str | None] = field(default_factory=list)
    tools: str = "live"
    on_divergence: str = "stop"
    routing: str = "today"
    results: list[Any] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def diverged(self) -> bool:
        """Whether any step departs from the recording (or was not replayed)."""
        return any(step.status in (DIVERGED, NOT_REPLAYED) for step in self.steps)

    @property
    def first_divergence(self) -> StepReport | None:
        """The first step that departs from the recording, or None."""
        for step in self.steps:
            if step.status in (DIVERGED, NOT_REPLAYED):
                return step
        return None

    @property
    def matched(self) -> int:
        """How many steps matched the recording."""
        return sum(1 for step in self.steps if step.status == MATCH)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data (what `agent-network replay --json` prints)."""
        first = self.first_divergence
        where = None if first is None else {"turn": first.turn, "index": first.index}
        return {
            "threadId": self.thread_id,
            "diverged": self.diverged,
            "firstDivergence": where,
            "matched": self.matched,
            "tools": self.tools,
            "onDivergence": self.on_divergence,
            "routing": self.routing,
            "stopReasons": list(self.stop_reasons),
            "outputs": list(self.outputs),
            "error": None if self.error is None else type(self.error).__name__,
            "steps": [step.to_dict() for step in self.steps],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def render(self) -> str:
        """The report as text: a line per step, then the first divergence's diffs."""
        lines = [f"replay of thread {self.thread_id!r}: tools {self.tools}, routing {self.routing}"]
        for step in self.steps:
            agent = step.agent or "-"
            if step.recorded_agent is not None and step.recorded_agent != step.agent:
                agent = f"{agent} (recorded: {step.recorded_agent})"
            said = "; ".join(difference.summary for difference in step.differences)
            lines.append(
                f"  turn {step.turn} step {step.index}  {step.status:<12} {agent}"
                + (f"  {said}" if said else "")
            )
        first = self.first_divergence
        if first is None:
            lines.append(f"no divergence: {self.matched} of {len(self.steps)} steps matched")
        else:
            lines.append(
                f"first divergence: turn {first.turn} step {first.index} "
                f"({first.recorded_agent or first.agent})"
            )
            for difference in first.differences:
                lines.append(f"  {difference.summary}")
                lines.extend(f"    {line}" for line in difference.diff.splitlines())
        if self.stop_reasons:
            lines.append(f"stop reasons: {', '.join(self.stop_reasons)}")
        if self.error is not None:  # its type only, as in the JSON form (the dev UI serves it)
            lines.append(f"a replayed run failed: {type(self.error).__name__} (report.error)")
        return "\n".join(lines)
