"""A router's decision as a durable run records it: typed JSON data, fan-outs included.

The router step stores what the loop queues next, resolved by the network: agents by name,
and each `Parallel` fan-out whole (its name, `on_error`, `max_concurrency`, `max_steps` and
its branches: id, agent, own input, mapped item). A replayed decision therefore queues the
very fan-out the first execution ran, with the same branch ids, and the branches find their
own recorded steps by them (`network.durable.fan_out`). The live execution goes through the
same record, so a decision that cannot be recorded fails the run at once, never only on
replay.

A `Parallel.map` item is recorded as JSON: it must be JSON data (str, number, bool, None,
lists and dicts with str keys) that reads back equal, or the decision fails with a
`DurableConfigError` naming the fan-out and the branch. Map over ids, not live objects.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from network.durable.process import DurableConfigError
from network.run.context import NetworkLike
from network.run.parallel import DEFAULT_MAX_STEPS, Branch, Parallel
from network.run.result import Stop, StopReason


class RecordedBranch(BaseModel):
    """One branch of a recorded fan-out."""

    id: str
    agent: str
    input: str | None = None
    item: Any = None  # JSON data (checked when recorded)


class RecordedFanOut(BaseModel):
    """A `Parallel` fan-out, as its router step recorded it."""

    name: str
    on_error: Literal["fail", "continue"]
    max_concurrency: int | None = None
    # a record made before it was kept has none: the default, as that run had unless told
    max_steps: int = DEFAULT_MAX_STEPS
    branches: list[RecordedBranch]


class RecordedStop(BaseModel):
    """A router's `Stop`."""

    reason: str
    summary: str | None = None


class RouteRecord(BaseModel):
    """A router's decision: what it queued (agent names and fan-outs), or its `Stop`, or
    neither (it returned None)."""

    queued: list[str | RecordedFanOut] | None = None
    stop: RecordedStop | None = None


PLAIN_KEYS = {"queued", "stop"}
"""The keys of a record that queued agents only (`record_choice`'s quick form)."""


def record_choice(network: NetworkLike, choice: Any) -> dict[str, Any]:
    """The record of the router's answer `choice` (resolved by `network`; unknown agents
    raise its `RoutingError`), as JSON data."""
    if choice is None:
        return RouteRecord().model_dump(mode="json")
    if isinstance(choice, Stop):
        stop = RecordedStop(reason=str(choice.reason), summary=choice.summary)
        return RouteRecord(stop=stop).model_dump(mode="json")
    resolved = network.resolve(choice)
    if not any(isinstance(entry, Parallel) for entry in resolved):  # agents only: no model needed
        return {"queued": [entry.name for entry in resolved], "stop": None}
    queued: list[str | RecordedFanOut] = []
    for entry in resolved:
        queued.append(_fan_out(entry) if isinstance(entry, Parallel) else entry.name)
    return RouteRecord(queued=queued).model_dump(mode="json")


def replayed_choice(data: Any) -> Any:
    """The router's answer a record stands for: `Stop`, None, or a list of agent names and
    `Parallel` fan-outs (of agent names) for the network to resolve."""
    if type(data) is dict and data.keys() == PLAIN_KEYS and data["stop"] is None:
        queued = data["queued"]  # agent names only (the commonest record): no model needed
        if queued is None or (type(queued) is list and all(type(q) is str for q in queued)):
            return None if queued is None else list(queued)
    record = RouteRecord.model_validate(data)
    if record.stop is not None:
        reason = record.stop.reason
        known = reason in StopReason._value2member_map_
        return Stop(StopReason(reason) if known else reason, record.stop.summary)
    if record.queued is None:
        return None
    return [entry if isinstance(entry, str) else _parallel(entry) for entry in record.queued]


def _fan_out(fork: Parallel) -> RecordedFanOut:
    return RecordedFanOut(
        name=fork.name,
        on_error=fork.on_error,  # type: ignore[arg-type]  # checked by Parallel
        max_concurrency=fork.max_concurrency,
        max_steps=fork.max_steps,
        branches=[
            RecordedBranch(
                id=branch.id,
                agent=branch.agent.name,
                input=branch.input,
                item=_json_item(fork, branch),
            )
            for branch in fork.branches
        ],
    )


def _json_item(fork: Parallel, branch: Branch) -> Any:
    item = branch.item
    try:
        same = json.loads(json.dumps(item, allow_nan=False)) == item
    except (TypeError, ValueError):
        same = False
    if not same:
        raise DurableConfigError(
            f"Parallel {fork.name!r}, branch {branch.id!r}: its item "
            f"({type(item).__name__}) is not JSON data that reads back equal; a durable run "
            "records a fan-out's items as JSON (map over ids or plain data)"
        )
    return item


def _parallel(recorded: RecordedFanOut) -> Parallel:
    branches = [
        Branch(b.id, b.agent, index, b.input, b.item) for index, b in enumerate(recorded.branches)
    ]
    return Parallel.restore(
        recorded.name,
        branches,
        on_error=recorded.on_error,
        max_concurrency=recorded.max_concurrency,
        max_steps=recorded.max_steps,
    )
