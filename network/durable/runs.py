"""`network.run(..., durable=True)`: the run executed in this process as a DBOS workflow; a
stopped run's continuation (`network.run(Resume(...) | ToolResults(...), durable=True)`),
likewise (`network.durable.continuation`).

The run's options come whole (`RunOptions`, declared once by `Network.run`): the data among
them is recorded with the workflow (`RunRequest`), the live ones (`deps`, `resources`,
`limits`, `sinks`) wait for the execution in this process (`Attachments`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from network.continuing import claim_in_memory, stopped_on_thread
from network.durable.continuation import Continuation, Kind, Stopped
from network.durable.engine import launch, launched, registered_workflow
from network.durable.process import DurableConfigError
from network.durable.workflow import Attachments, DurableRunError, RunRequest, attachments
from network.errors import ConfigurationError
from network.ids import new_id
from network.run.client_results import result_messages
from network.run.inputs import Resume, RunInput, ToolResults
from network.run.interrupts import check_edits, pending_answers
from network.run.options import RunOptions
from network.state.state import State
from network.threads.ids import check_id


def run_request(input: str, options: RunOptions, *, continuation: bool = False) -> dict[str, Any]:
    """A durable run's inputs as data (a live store object cannot be recorded).

    A continuation's thread is the stopped run's (in its `Stopped`): `thread=` only says the
    store, user and app to reopen it with, and no state seeds it.
    """
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
        state=dict(state) if state is not None else None,
        max_iter=options.max_iter,
        thread_id=None if thread is None or continuation else thread.id,
        user_id=None if thread is None else thread.user_id,
        app_name=None if thread is None else thread.app_name,
        store=store,
    )
    return request.model_dump(mode="json")


async def run_durably(network: Any, input: RunInput, options: RunOptions) -> Any:
    """Run `network` on `input` as a DBOS workflow whose id is the run id; its `RunResult`.

    DBOS is launched on its default SQLite file with this network when the process has not
    launched it. Give each new run a new id: the id of a run that finished returns its
    recorded outcome (a `RunResult` with its output and final state) without running anything.
    A continuation (`Resume`, `ToolResults`) is a workflow of its own
    (`network.durable.continuation`).
    """
    if isinstance(input, str):
        return await start_workflow(network, run_request(input, options), options)
    return await continue_durably(network, input, options)


async def continue_durably(network: Any, request: Resume | ToolResults, options: RunOptions) -> Any:
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
    run_id = run_id or new_id("run_")
    if not stopped.persisted:  # on a thread, the store claims the answers in the workflow
        claim_in_memory(stopped, run_id)
    options = replace(options, run_id=run_id)
    continued = Continuation(kind, Stopped.of(stopped), answers)
    data = run_request(continued.stopped.input, options, continuation=True)
    return await start_workflow(network, data, options, continued=continued)


async def start_workflow(
    network: Any, request: dict[str, Any], options: RunOptions, *, continued: Any = None
) -> Any:
    """Execute the run's workflow in this process (a new run, or a `Continuation`)."""
    from dbos import SetWorkflowID  # noqa: PLC0415 (dbos is optional and heavy)

    engine = launched()
    if engine is None or network.name not in engine.networks:
        launch([network], db=engine.db if engine is not None else None)
    run_id = options.run_id or new_id("run_")
    # The id names the workflow in the database: the rules of a thread's id.
    check_id("run_id", run_id)
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
    finally:
        attachments.pop(run_id, None)
    if live.result is not None:
        return live.result
    return recorded_result(network, outcome)


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
