"""The one DBOS workflow of this library: run a registered network by name.

Its arguments are data only (the network's name and a `RunRequest`), so that any process
that launched the same networks can execute or resume it. What is live and not data (event
sinks, `deps`, `resources`, `limits` of an in-process caller) waits in `attachments`, keyed
by run id, and is picked up by the execution in that same process; a run resumed elsewhere
runs without them (the network's own resources and limits still apply).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, Field

from network import kernel
from network.durable.continuation import Continuation
from network.durable.event_log import EventLog
from network.durable.process import Process, network_named
from network.durable.replay_gate import ReplayGate
from network.durable.steps import DurableSteps
from network.errors import AgentNetworkError
from network.run.emitter import EventSink, Listener, typed_sink
from network.run.options import RunOptions
from network.run.thread_ref import ThreadRef


class RunRequest(BaseModel):
    """A durable run's inputs, as stored with its workflow (JSON data only)."""

    input: str
    state: dict[str, Any] | None = None
    max_iter: int | None = Field(default=None, ge=1)
    thread_id: str | None = None
    user_id: str | None = None
    app_name: str | None = None
    store: str | None = None

    def thread(self, continued: Continuation | None = None) -> ThreadRef | None:
        """The run's thread; a continuation's is the stopped run's (`Stopped` holds its id,
        the request the store, user and app to reopen it with)."""
        thread_id = self.thread_id
        if continued is not None:
            stopped = continued.stopped
            thread_id = stopped.thread_id if stopped.persisted else None
        if thread_id is None:
            return None
        return ThreadRef(thread_id, user_id=self.user_id, app_name=self.app_name, store=self.store)


class DurableRunError(AgentNetworkError):
    """A durable run failed; `error_type` names the exception it failed with."""

    def __init__(self, message: str, error_type: str = "") -> None:
        super().__init__(message)
        self.error_type = error_type

    def __reduce__(self) -> Any:  # recorded by DBOS (pickled) and raised where read
        return (DurableRunError, (str(self), self.error_type))


@dataclass
class Attachments:
    """An in-process caller's options for its run (the live ones are used: `sinks`, `deps`,
    `resources`, `limits`), and where its outcome goes."""

    options: RunOptions = field(default_factory=RunOptions)
    result: Any = None
    error: BaseException | None = None


attachments: dict[str, Attachments] = {}

executing: set[str] = set()
"""The run ids an execution of this process is running (`run_workflow` entered, not left)."""


async def run_workflow(
    network_name: str, request: dict[str, Any], continued: Continuation | None = None
) -> dict[str, Any]:
    """Execute (or resume) one durable run; returns its outcome as JSON data.

    `continued`: the run continues a stopped one (`network.durable.continuation`).
    """
    from dbos import DBOS  # noqa: PLC0415 (dbos is optional and heavy)

    run_id = DBOS.workflow_id
    assert run_id is not None
    executing.add(run_id)
    try:
        return await _execute(run_id, network_name, request, continued)
    finally:
        executing.discard(run_id)
        engine = Process.engine
        if engine is not None and engine.dispatcher is not None:
            engine.dispatcher.finished(run_id)  # a worker's slot is free


async def _execute(
    run_id: str, network_name: str, request: dict[str, Any], continued: Continuation | None
) -> dict[str, Any]:
    network = network_named(network_name)
    asked = RunRequest.model_validate(request)
    live = attachments.get(run_id) or Attachments()
    steps = DurableSteps()
    fresh = await steps.begin()
    log = EventLog(run_id, resumed=not fresh)
    steps.write_events_with_steps(log)
    consumers: list[EventSink] = [log, *(typed_sink(sink) for sink in live.options.sinks)]
    gate = steps.gate = ReplayGate(consumers, is_open=fresh, log=log)
    # What a new run and a continuation take alike: the request's data and this process's
    # live options, with the replay gate in front of every sink; the same run, not durable
    # again, its steps recorded.
    options = replace(
        live.options,
        thread=asked.thread(continued),
        # as given, not through the request's JSON model: a plain run's values (`run_request`)
        state=request.get("state"),
        max_iter=asked.max_iter,
        run_id=run_id,
        sinks=[Listener(gate)],
        durable=False,
    )
    try:
        if continued is not None:
            result = await continued.run(network, options, steps)
        else:
            result = await kernel.run(network, asked.input, options, steps=steps)
        await steps.settle()  # (written before RUN_FINISHED already, when the run sent one)
    except BaseException as exc:
        if not fails_the_run(exc):
            raise  # this execution stopped (its task cancelled): the run is not over
        live.error = exc
        await steps.settle(failed=True)  # a failed run's steps listed whole (its error wins)
        raise DurableRunError(f"{type(exc).__name__}: {exc}", type(exc).__name__) from None
    live.result = result
    return outcome_of(result)


def fails_the_run(error: BaseException) -> bool:
    """Whether `error`, raised out of a run's execution, ends the run (recorded ERROR) rather
    than stopping only this execution (the run resumed later, as a killed one is).

    Any `Exception` does. So does what the run's own code raises that is not one: a tool's
    `sys.exit()` (argparse in a helper, say), a `KeyboardInterrupt` off the main thread, a
    `CancelledError` while nobody cancelled the execution's task (a future another task
    cancelled, awaited by a tool). Left to DBOS, the first two stopped the event loop it runs
    a worker's runs on, and the third left the run PENDING: either way the worker lived on,
    holding the run (a live worker's runs are never taken over). A `KeyboardInterrupt` on
    the main thread may be the user's Ctrl-C of an in-process run, and a cancelled task is
    a caller or a shutdown stopping this execution: those leave the run to be resumed."""
    if isinstance(error, Exception | SystemExit):
        return True
    if isinstance(error, KeyboardInterrupt):
        return threading.current_thread() is not threading.main_thread()
    if isinstance(error, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is not None and task.cancelling() == 0
    return False


def outcome_of(result: Any) -> dict[str, Any]:
    """What a durable run's workflow returns (and any process reads by run id)."""
    usage = result.usage
    return {
        "run_id": result.run_id,
        "thread_id": result.thread_id,
        "output": result.output,
        "stop_reason": str(result.stop_reason),
        "state": result.state.snapshot(),
        "agents": [r.agent for r in result.state.results],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
    }
