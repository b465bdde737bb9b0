"""`network.run(..., durable=True)`: the run executed in this process as a DBOS workflow; a
stopped run's continuation (`network.run(Resume(...) | ToolResults(...), durable=True)`),
likewise (`network.durable.continuation`).

The run's options come whole (`RunOptions`, declared once by `Network.run`): the data among
them is recorded with the workflow (`RunRequest`), the live ones (`deps`, `resources`,
`limits`, `sinks`) wait for the execution in this process (`Attachments`).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import anyio

from network.continuing import claim_in_memory, stopped_on_thread
from network.durable.continuation import Continuation, Kind, Stopped
from network.durable.engine import (
    another_network_named,
    launch,
    launched,
    registered_workflow,
)
from network.durable.process import (
    DurableConfigError,
    RunCancelledError,
    RunIdInUseError,
    network_of,
)
from network.durable.workflow import (
    Attachments,
    DurableRunError,
    RunRequest,
    attachments,
    executing,
)
from network.errors import ConfigurationError
from network.ids import new_id
from network.logger import get_logger
from network.run.client_results import result_messages
from network.run.definition import RunnableNetwork
from network.run.inputs import Resume, RunInput, ToolResults
from network.run.interrupts import check_edits, pending_answers
from network.run.max_iter import check_max_iter
from network.run.options import RunOptions
from network.state.state import State
from network.threads.ids import check_id


def run_request(input: str, options: RunOptions, *, continuation: bool = False) -> dict[str, Any]:
    """A durable run's inputs as data (a live store object cannot be recorded).

    A continuation's thread is the stopped run's (in its `Stopped`): `thread=` only says the
    store, user and app to reopen it with, and no state seeds it. `max_iter` is checked as a
    plain run checks it (the request's model would coerce "3" or True, and refuse NaN with a
    pydantic error naming no run option).
    """
    check_max_iter(
        "max_iter", options.max_iter, optional=True, hint="leave it out for the network's"
    )
    thread = options.thread
    store = None if thread is None else thread.store
    if store is not None and not isinstance(store, str):
        raise ConfigurationError(
            "a durable run's store= must be a URL or an SQLite path (a store object cannot be "
            "recorded with the run)"
        )
    state = None if continuation else options.state
    if isinstance(state, State):
        state = state.snapshot()
    request = RunRequest(
        input=input,
        max_iter=options.max_iter,
        thread_id=None if thread is None or continuation else thread.id,
        user_id=None if thread is None else thread.user_id,
        app_name=None if thread is None else thread.app_name,
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


async def run_durably(network: RunnableNetwork, input: RunInput, options: RunOptions) -> Any:
    """Run `network` on `input` as a DBOS workflow whose id is the run id; its `RunResult`.

    DBOS is launched on its default SQLite file with this network when the process has not
    launched it. Give each new run a new id: the id of a run that finished returns its
    recorded outcome (a `RunResult` with its output and final state) without running anything.
    A continuation (`Resume`, `ToolResults`) is a workflow of its own
    (`network.durable.continuation`).
    """
    engine = launched()
    if engine is not None and engine.networks.get(network.name, network) is not network:
        # The workflow runs the launched network of this name, not this one: refused before
        # anything is recorded (or a stopped run's answers claimed).
        raise another_network_named(network.name)
    if isinstance(input, str):
        state = options.state
        if state is not None and not isinstance(state, State):
            # Refused here exactly as a plain run refuses it (the same check, the same error),
            # before anything is recorded; what it keeps is recorded as given (`run_request`).
            network.new_state(state)
        return await start_workflow(network, run_request(input, options), options)
    return await continue_durably(network, input, options)


async def continue_durably(
    network: RunnableNetwork, request: Resume | ToolResults, options: RunOptions
) -> Any:
    """Continue the run `request` answers as a DBOS workflow whose id is `options.run_id`.

    The answers are validated against the stopped run here, so nothing is recorded for
    answers that do not match.
    """
    stopped = request.stopped
    if stopped is None:  # by thread id: what the stored thread waits on
        if options.thread is None:
            raise ConfigurationError(
                f"{type(request).__name__} needs the run it continues: stopped=<RunResult>, "
                "or thread= naming the thread whose pending calls it answers"
            )
        stopped = await stopped_on_thread(network, options.thread, request)
    answers: Any
    if isinstance(request, Resume):
        answered = pending_answers(stopped, request.answers)
        check_edits(network, answered)
        kind: Kind = "resume"
        answers = [answer for _, answer in answered]
    else:
        messages = result_messages(stopped, request.results)
        kind = "answer_tool_calls"
        answers = {message.tool_call_id: message.content for message in messages}
    run_id = options.run_id
    if run_id is not None and run_id == getattr(stopped, "run_id", None):
        # DBOS would hand back the stopped run's recorded outcome under its own id, silently
        # continuing nothing; a continuation is a run of its own.
        raise DurableConfigError(
            f"run id {run_id!r} is the stopped run's own: give its continuation a new id"
        )
    given = run_id is not None
    run_id = new_id("run_") if run_id is None else run_id  # "" is refused, not replaced
    options = replace(options, run_id=run_id)
    continued = Continuation(kind, Stopped.of(stopped), answers)
    data = run_request(continued.stopped.input, options, continuation=True)
    # Whatever refuses the id is refused before the answers are claimed: a refused
    # continuation leaves the stopped run to be answered again.
    await ready_to_start(network, run_id, given=given, continues=stopped.run_id)
    if stopped.persisted:  # on a thread, the store claims the answers in the workflow
        return await start_workflow(network, data, options, continued=continued, ready=True)
    claimed_before = stopped.continued_by
    claim_in_memory(stopped, run_id)
    try:
        return await start_workflow(network, data, options, continued=continued, ready=True)
    except Exception:
        # Nothing recorded (its inputs could not be, say): nothing was answered either.
        if not await anyio.to_thread.run_sync(recorded, run_id):
            stopped.continued_by = claimed_before
        raise


async def start_workflow(
    network: RunnableNetwork,
    request: dict[str, Any],
    options: RunOptions,
    *,
    continued: Any = None,
    ready: bool = False,
) -> Any:
    """Execute the run's workflow in this process (a new run, or a `Continuation`);
    `ready`: `ready_to_start` was awaited for its id already."""
    from dbos import SetWorkflowID, error  # noqa: PLC0415 (dbos is optional and heavy)

    given = options.run_id is not None
    run_id = new_id("run_") if options.run_id is None else options.run_id
    if not ready:
        await ready_to_start(network, run_id, given=given)
    live = attachments[run_id] = Attachments(options)
    workflow = registered_workflow()
    args = (network.name, request) if continued is None else (network.name, request, continued)
    try:
        with SetWorkflowID(run_id):
            outcome = await workflow(*args)
    except DurableRunError:
        if live.error is not None:
            raise live.error from None
        raise
    except error.DBOSAwaitedWorkflowCancelledError as exc:
        if exc.workflow_id != run_id:
            raise
        raise RunCancelledError(run_id) from None
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(hand_back, run_id)
            except Exception as exc:  # the cancellation goes on; the run waits for a takeover
                get_logger().warning("durable.hand_back_failed", run_id=run_id, error=repr(exc))
        raise
    finally:
        attachments.pop(run_id, None)
    if live.result is not None:
        return live.result
    return recorded_result(network, outcome)


def hand_back(run_id: str) -> None:
    """A run whose caller was cancelled goes on from its last recorded step, on this
    process's own queue (as a run taken over from a dead process does).

    Its execution stopped with its caller, but its record is PENDING under this live
    process's executor id: no process takes over the runs of a live one, so it would wait
    for this process to die, and a call with its id (or `DurableClient.result`) with it.
    Nothing is moved when an execution of this process runs it still (the caller cancelled
    was one waiting for it), when it ended, or when the engine was shut down (its runs are
    taken over by the next process)."""
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    engine = launched()
    if engine is None or engine.takeover is None or run_id in executing:
        return
    for info in DBOS.list_workflows(workflow_ids=[run_id], load_output=False):
        if info.status == "PENDING" and info.executor_id == engine.executor_id:
            DBOS.resume_workflow(run_id, queue_name=engine.takeover.queue)
            get_logger().info("durable.run_handed_back", run_id=run_id)


async def ready_to_start(
    network: RunnableNetwork, run_id: str, *, given: bool, continues: str | None = None
) -> None:
    """Check the run id and launch DBOS (with `network`) when needed, before the run starts.

    `continues`: the run id of the stopped run a continuation continues."""
    # The id names the workflow in the database: the rules of a thread's id ("" refused).
    check_id("run_id", run_id)
    engine = launched()
    if engine is None or network.name not in engine.networks:
        launch([network], db=engine.db if engine is not None else None)
    if given:  # a new id names no run yet: one query saved
        await anyio.to_thread.run_sync(check_run_id_free, run_id, network.name, continues)


def check_run_id_free(run_id: str, network: str, continues: str | None = None) -> None:
    """`RunIdInUseError` when `run_id` names a run of another network (the id of this
    network's own run is allowed: it returns that run's outcome, or waits for it); for a
    continuation of run `continues`, `DurableConfigError` when it names a run that is not a
    continuation of that run (its outcome would be returned, and nothing continued)."""
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    for info in DBOS.list_workflows(workflow_ids=[run_id], load_output=False):
        owner = network_of(info)
        if owner != network:
            raise RunIdInUseError(run_id, owner)
        if continues is not None and continued_run(info) != continues:
            raise DurableConfigError(
                f"run id {run_id!r} names another run of network {network!r}, not a "
                f"continuation of run {continues!r}: give this continuation a new id"
            )


def continued_run(info: Any) -> str | None:
    """The run id of the stopped run the workflow `info` (input loaded) continues, if any."""
    inputs: dict[str, Any] = info.input if isinstance(info.input, dict) else {}
    args: tuple[Any, ...] = tuple(inputs.get("args") or ())
    continued = args[2] if len(args) > 2 else None
    return continued.stopped.run_id if isinstance(continued, Continuation) else None


def recorded(run_id: str) -> bool:
    """Whether a workflow of id `run_id` was recorded."""
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    return bool(DBOS.list_workflows(workflow_ids=[run_id], load_output=False))


def recorded_result(network: RunnableNetwork, outcome: Mapping[str, Any]) -> Any:
    """The `RunResult` of a run that finished before (its recorded outcome, no history)."""
    from network.run.result import RunResult  # noqa: PLC0415 (only for recorded runs)

    return RunResult(
        stop_reason=outcome["stop_reason"],
        state=network.new_state(outcome["state"]),
        run_id=outcome["run_id"],
        output=outcome["output"],
        thread_id=outcome["thread_id"],
    )
