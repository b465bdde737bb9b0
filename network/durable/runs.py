"""`network.run(..., durable=True)`: the run executed in this process as a DBOS workflow;
`network.resume(..., durable=True)` / `answer_tool_calls(..., durable=True)`: a stopped
run's continuation, likewise (`network.durable.continuation`)."""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from network.durable.continuation import Continuation, Kind, Stopped
from network.durable.engine import launch, launched, registered_workflow
from network.durable.process import DurableConfigError, RunIdInUseError, network_of
from network.durable.workflow import Attachments, DurableRunError, RunRequest, attachments
from network.errors import ConfigurationError
from network.ids import new_id
from network.state.state import State
from network.threads.ids import check_id


def run_request(
    input: str,
    *,
    state: Mapping[str, Any] | State | None,
    max_iter: int | None,
    thread_id: str | None,
    user_id: str | None,
    store: Any,
    app_name: str | None,
) -> dict[str, Any]:
    """A durable run's inputs as data (a live store object cannot be recorded)."""
    if store is not None and not isinstance(store, str):
        raise ConfigurationError(
            "a durable run's store= must be a URL or an SQLite path (a store object cannot be "
            "recorded with the run)"
        )
    if isinstance(state, State):
        state = state.snapshot()
    request = RunRequest(
        input=input,
        max_iter=max_iter,
        thread_id=thread_id,
        user_id=user_id,
        app_name=app_name,
        store=store,
    ).model_dump(mode="json")
    # The state goes as given, not through JSON: the workflow's inputs are pickled, so a
    # datetime, a set, bytes or NaN reach the run as a plain run gets them.
    request["state"] = recordable_state(state) if state is not None else None
    return request


def recordable_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """`state` as a dict, each value checked to be recordable (picklable), naming the key."""
    if not isinstance(state, Mapping):
        raise ConfigurationError(f"state must be a mapping or a State, got {type(state).__name__}")
    values = dict(state)
    for key, value in values.items():
        try:
            pickle.dumps(value)
        except Exception as exc:
            raise DurableConfigError(
                f"state key {key!r} cannot be recorded with a durable run "
                f"({type(exc).__name__}: {exc}): a durable run's inputs are pickled"
            ) from None
    return values


async def run_durably(
    network: Any,
    input: str,
    *,
    state: Mapping[str, Any] | State | None = None,
    max_iter: int | None = None,
    run_id: str | None = None,
    sinks: Sequence[Any] = (),
    thread_id: str | None = None,
    user_id: str | None = None,
    store: Any = None,
    app_name: str | None = None,
    deps: Any = None,
    resources: Any = None,
    limits: Any = None,
) -> Any:
    """Run `network` as a DBOS workflow whose id is the run id, and return its `RunResult`.

    DBOS is launched on its default SQLite file with this network when the process has not
    launched it. Give each new run a new id: the id of a run that finished returns its
    recorded outcome (a `RunResult` with its output and final state) without running anything.
    """
    if state is not None and not isinstance(state, State):
        # Refused here exactly as a plain run refuses it (the same check, the same error),
        # before anything is recorded; what it keeps is recorded as given (`run_request`).
        network.new_state(state)
    request = run_request(
        input,
        state=state,
        max_iter=max_iter,
        thread_id=thread_id,
        user_id=user_id,
        store=store,
        app_name=app_name,
    )
    return await start_workflow(
        network,
        request,
        run_id=run_id,
        sinks=sinks,
        deps=deps,
        resources=resources,
        limits=limits,
    )


async def continue_durably(
    network: Any,
    kind: Kind,
    stopped: Any,
    answers: Sequence[Any] | Mapping[str, str],
    *,
    sinks: Sequence[Any] = (),
    max_iter: int | None = None,
    run_id: str | None = None,
    store: Any = None,
    user_id: str | None = None,
    app_name: str | None = None,
    deps: Any = None,
    resources: Any = None,
    limits: Any = None,
) -> Any:
    """Continue `stopped` as a DBOS workflow whose id is `run_id`; returns its `RunResult`.

    `answers` were validated against `stopped` by the caller (`network.resume` /
    `answer_tool_calls`), so nothing is recorded for answers that do not match.
    """
    if run_id is not None and run_id == getattr(stopped, "run_id", None):
        # DBOS would hand back the stopped run's recorded outcome under its own id, silently
        # continuing nothing; a continuation is a run of its own.
        raise DurableConfigError(
            f"run id {run_id!r} is the stopped run's own: give its continuation a new id"
        )
    continued = Continuation(kind, Stopped.of(stopped), answers)
    request = run_request(
        continued.stopped.input,
        state=None,
        max_iter=max_iter,
        thread_id=None,  # the stopped run's thread, when it has one, is in `Stopped`
        user_id=user_id,
        store=store,
        app_name=app_name,
    )
    return await start_workflow(
        network,
        request,
        run_id=run_id,
        sinks=sinks,
        deps=deps,
        resources=resources,
        limits=limits,
        continued=continued,
    )


async def start_workflow(
    network: Any,
    request: dict[str, Any],
    *,
    run_id: str | None,
    sinks: Sequence[Any],
    deps: Any,
    resources: Any,
    limits: Any,
    continued: Any = None,
) -> Any:
    """Execute the run's workflow in this process (a new run, or a `Continuation`)."""
    from dbos import SetWorkflowID  # noqa: PLC0415 (dbos is optional and heavy)

    given = run_id is not None
    run_id = new_id("run_") if run_id is None else run_id
    # The id names the workflow in the database: the rules of a thread's id ("" refused).
    check_id("run_id", run_id)
    engine = launched()
    if engine is None or network.name not in engine.networks:
        launch([network], db=engine.db if engine is not None else None)
    if given:  # a new id names no run yet: one query saved
        await anyio.to_thread.run_sync(check_run_id_free, run_id, network.name)
    live = attachments[run_id] = Attachments(list(sinks), deps, resources, limits)
    workflow = registered_workflow()
    args = (network.name, request) if continued is None else (network.name, request, continued)
    try:
        with SetWorkflowID(run_id):
            outcome = await workflow(*args)
    except DurableRunError:
        if live.error is not None:
            raise live.error from None
        raise
    finally:
        attachments.pop(run_id, None)
    if live.result is not None:
        return live.result
    return recorded_result(network, outcome)


def check_run_id_free(run_id: str, network: str) -> None:
    """`RunIdInUseError` when `run_id` names a run of another network (the id of this
    network's own run is allowed: it returns that run's outcome, or waits for it)."""
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    for info in DBOS.list_workflows(workflow_ids=[run_id], load_output=False):
        owner = network_of(info)
        if owner != network:
            raise RunIdInUseError(run_id, owner)


def recorded_result(network: Any, outcome: Mapping[str, Any]) -> Any:
    """The `RunResult` of a run that finished before (its recorded outcome, no history)."""
    from network.run.result import RunResult  # noqa: PLC0415 (only for recorded runs)

    return RunResult(
        stop_reason=outcome["stop_reason"],
        state=network.new_state(outcome["state"]),
        run_id=outcome["run_id"],
        output=outcome["output"],
        thread_id=outcome["thread_id"],
    )
