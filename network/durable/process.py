"""The process-wide state of durable runs: what DBOS was launched with, and its networks.

DBOS itself is global to the process; so is this (`network.durable.engine` sets it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from network.errors import AgentNetworkError, ConfigurationError


class DurableConfigError(ConfigurationError):
    """Durable runs are misconfigured: no extra installed, a second database, an unknown network."""


class RunIdInUseError(DurableConfigError):
    """A durable run id already names a run of another network (`network` names it)."""

    def __init__(self, run_id: str, network: str | None) -> None:
        super().__init__(
            f"run id {run_id!r} is taken by a durable run of "
            + (f"network {network!r}" if network else "another workflow")
            + ": give this run a new id"
        )
        self.run_id = run_id
        self.network = network


class UnrecordableStepError(DurableConfigError):
    """A step's outcome cannot be recorded (DBOS pickles it): names the step and the run.

    The step ran (a tool's side effects happened), but a resumed run could not replay it,
    so the run fails here rather than going on with a step it may run again."""

    def __init__(self, run_id: str, step: str, error: BaseException) -> None:
        kind, _, what = step.partition(":")
        named = {"tool": "tool", "model": "model call of agent", "summary": "summary for agent"}
        subject = f"the result of {named[kind]} {what!r}" if kind in named else f"step {step!r}"
        super().__init__(
            f"durable run {run_id!r}: {subject} cannot be recorded "
            f"({type(error).__name__}: {error}); a durable run records it with pickle, so "
            "return picklable data (str, numbers, lists, dicts, dataclasses, pydantic models)"
        )
        self.run_id = run_id
        self.step = step


class RecordedStepError(AgentNetworkError):
    """A step's error as recorded when pickle could not record the exception itself (one
    holding a lock or a live client, or whose class cannot be rebuilt from its `args`): its
    type's name and its message. The execution that met the error raises the error itself;
    a replay of the step raises this (`error_type` names the original type)."""

    def __init__(self, message: str, error_type: str = "") -> None:
        super().__init__(message)
        self.error_type = error_type

    def __reduce__(self) -> Any:  # pickled by the record, rebuilt by a replay
        return (RecordedStepError, (str(self), self.error_type))


class RunCancelledError(AgentNetworkError):
    """The durable run was cancelled (`DurableClient.cancel`): raised to a caller awaiting
    it, and for its id given again; `run_id` names it."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"durable run {run_id!r} was cancelled (DurableClient.cancel): it ran no further, "
            "and its id returns this error; give a new run a new id"
        )
        self.run_id = run_id


class UnknownRunError(AgentNetworkError, KeyError):
    """No durable run has this id (a `KeyError` too, as a lookup by id that found nothing)."""

    def __init__(self, run_id: str) -> None:
        shown = run_id if len(run_id) <= 100 else f"{run_id[:100]}..."  # the id is outside data
        super().__init__(f"no durable run {shown!r}")
        self.run_id = run_id

    def __str__(self) -> str:
        return str(self.args[0])


def network_of(info: Any) -> str | None:
    """The network a DBOS workflow listing (`WorkflowStatus`, input loaded) runs."""
    inputs = info.input if isinstance(info.input, dict) else {}
    args = inputs.get("args") or ()
    return args[0] if args and isinstance(args[0], str) else None


@dataclass
class Engine:
    """What this process launched: its database and the networks it runs by name."""

    db: str
    networks: dict[str, Any] = field(default_factory=dict)
    worker: bool = False
    executor_id: str | None = None
    takeover: Any = None  # its `network.durable.takeover.Takeover`, once launched
    dispatcher: Any = None  # its `network.durable.dispatch.Dispatcher`, once launched


class Process:
    """Holder of the one engine this process launched (None until `launch`)."""

    engine: Engine | None = None


def network_named(name: str) -> Any:
    """The registered network `name` (a run resumed here needs it)."""
    engine = Process.engine
    network = engine.networks.get(name) if engine is not None else None
    if network is None:
        known = ", ".join(engine.networks) if engine is not None else "none"
        raise DurableConfigError(
            f"no network named {name!r} was given to network.durable.launch (known: {known})"
        )
    return network
