"""Replay: today's network run against a recorded thread, offline, with a report of where it
departs from the recording.

    report = await network.replay(ThreadRef("t1", store="threads.db"), tools="recorded")
    print(report.render())  # per step: match / diverged, and the first divergence's diff

A thread already keeps what a replay needs (`network.capabilities.replay.recording`); the
`Replay` capability answers each model request from it and compares what today's code sends
(`capability`); `driver` runs the recorded runs one after another; `report` is what it says.
See docs/evals.md.
"""

from network.capabilities.replay.capability import (
    REPLAY_DIVERGED,
    Replay,
    ReplayDiverged,
    ReplaySession,
)
from network.capabilities.replay.compare import Difference
from network.capabilities.replay.driver import replay_thread
from network.capabilities.replay.recording import RecordedTurn, recorded_turns
from network.capabilities.replay.report import ReplayReport, StepReport
from network.capabilities.replay.router import RecordedRouter

__all__ = [
    "REPLAY_DIVERGED",
    "Difference",
    "RecordedRouter",
    "RecordedTurn",
    "Replay",
    "ReplayDiverged",
    "ReplayReport",
    "ReplaySession",
    "StepReport",
    "recorded_turns",
    "replay_thread",
]
