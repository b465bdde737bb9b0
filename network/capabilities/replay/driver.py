"""`replay_thread`: today's network run against a recorded thread, run by run (`network.replay`).

The recorded thread is read, never written: the replay runs on a thread of its own in a
`MemoryStore` (same user and app, so instructions and scopes read the same), one run per
recorded run, each with the recorded input and the state its caller gave, on a copy of the
network that has the `Replay` capability (`Network.with_capabilities`), carried out by the run
kernel (`network.kernel`), never through the copy's own run methods. With
`routing="recorded"` the copy's router is the recording's choices (`RecordedRouter`): an LLM
router then costs nothing and needs no model; with `routing="today"` (the default) today's
router chooses and its choices are compared.

Decisions: `user:` and `app:` keys start empty in a replay (the recorded thread's current
values are not what its runs saw); pass `state=` to seed them. That `state=` is the caller's
input: a key the network's schema refuses raises its error (naming the key) before the thread
is read, as a run's `state=` does, not a replayed run's failure in the report. A replay stops
at the first run that stopped at a divergence or failed (the runs after it are reported
`not_replayed`). Runs that continued a stopped run (`Resume`, `ToolResults`) are not
replayed: their calls are reported `unsupported`. Guardrail agents, sub-agents used as tools
and a routing agent under `routing="today"` ask their own models, live.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from network import kernel
from network.capabilities.replay.capability import (
    REPLAY_DIVERGED,
    OnDivergence,
    Replay,
    ReplaySession,
    ToolSource,
)
from network.capabilities.replay.compare import ERROR, Difference
from network.capabilities.replay.report import UNSUPPORTED, ReplayReport, StepReport
from network.capabilities.replay.router import RecordedRouter
from network.errors import ConfigurationError
from network.ids import new_id
from network.run.capability import Capability
from network.run.options import RunOptions
from network.run.thread_ref import ThreadRef
from network.threads.memory import MemoryStore
from network.threads.recorded_runs import RecordedTurn, read_thread, recorded_turns, resumed
from network.threads.thread_load import write_initial

TOOL_SOURCES = ("live", "recorded")
ON_DIVERGENCE = ("stop", "live", "continue")
ROUTINGS = ("today", "recorded")


class ReplayableNetwork(Protocol):
    """What a replay needs of a network (`network.Network` is one)."""

    @property
    def name(self) -> str: ...

    def with_capabilities(self, *capabilities: Capability) -> Any: ...

    def new_state(self, data: Mapping[str, Any] | None = None) -> Any: ...


def check_options(tools: str, on_divergence: str, routing: str) -> None:
    """The replay's options, or a `ConfigurationError` naming the bad one."""
    for name, value, allowed in (
        ("tools", tools, TOOL_SOURCES),
        ("on_divergence", on_divergence, ON_DIVERGENCE),
        ("routing", routing, ROUTINGS),
    ):
        if value not in allowed:
            said = ", ".join(repr(choice) for choice in allowed)
            raise ConfigurationError(f"replay: {name} must be one of {said}, got {value!r}")


async def replay_thread(
    network: ReplayableNetwork,
    thread: ThreadRef,
    *,
    tools: ToolSource = "live",
    on_divergence: OnDivergence = "stop",
    routing: str = "today",
    state: Mapping[str, Any] | None = None,
) -> ReplayReport:
    """Replay the recorded `thread` with today's `network`; see `Network.replay`."""
    check_options(tools, on_divergence, routing)
    if state is not None and not isinstance(state, Mapping):
        raise ConfigurationError(f"replay: state must be a mapping of keys, got {state!r}")
    if state:  # the caller's keys, refused by name before anything is read or run
        write_initial(network.new_state(), state)
    found = await read_thread(thread, network.name)
    turns = recorded_turns(list(found.results))
    session = ReplaySession(turns, tools, on_divergence)
    replaying = network.with_capabilities(Replay(session))
    if routing == "recorded":
        replaying.router = RecordedRouter(session)
    ref = ThreadRef(
        new_id("replay_"), user_id=found.user_id, app_name=found.app_name, store=MemoryStore()
    )
    report = ReplayReport(thread.id, tools=tools, on_divergence=on_divergence, routing=routing)
    stopped = False
    before = 0  # the agent calls the replay's thread holds
    for number, turn in enumerate(turns):
        session.turn = number
        if stopped or _continued(turn):
            _not_replayed(session, turn, UNSUPPORTED if not stopped else None)
            continue
        seed = {**(state or {}), **turn.state}
        try:
            options = RunOptions(thread=ref, state=seed or None)
            result = await kernel.run(replaying, turn.input, options)
        except Exception as error:  # a failed run: what it made is reported, then we stop
            partial = getattr(error, "partial_result", None)
            _failed(session, error)
            report.error = error
            report.stop_reasons.append("error")
            report.outputs.append(None if partial is None else partial.output)
            session.finish_turn(_calls_of(partial, before), router_ended=False)
            before += _calls_of(partial, before)
            stopped = True
            continue
        report.results.append(result)
        report.stop_reasons.append(str(result.stop_reason))
        report.outputs.append(result.output)
        stopped = result.stop_reason == REPLAY_DIVERGED
        session.finish_turn(_calls_of(result, before), router_ended=not stopped)
        before = len(result.state.results)
    report.steps = session.steps
    return report


def _calls_of(result: Any, before: int) -> int:
    """How many agent calls a run (or a failed run's partial result) made, its thread having
    held `before`."""
    return 0 if result is None else len(result.state.results) - before


def _failed(session: ReplaySession, error: Exception) -> None:
    """Today's run failed: the step under way (if any) says so."""
    under_way = session.current
    if under_way is not None and not session.live:
        what = f"today's call failed: {type(error).__name__}"
        under_way.step.diverge(Difference(ERROR, what, f"+{what}"))


def _continued(turn: RecordedTurn) -> bool:
    """A run that continued a stopped one: its first call is the resumed tool calls' record."""
    return resumed(turn.calls[0])


def _not_replayed(session: ReplaySession, turn: RecordedTurn, status: str | None) -> None:
    """Every call of a turn the replay did not run, reported with `status` (default:
    `not_replayed`)."""
    for index, call in enumerate(turn.calls):
        step = StepReport(session.turn, index, None, call.agent)
        step.status = status or "not_replayed"
        session.steps.append(step)
