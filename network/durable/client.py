"""`DurableClient`: put runs on the workers' queues and read them by run id, from any process.

The client is DBOS's `DBOSClient` on the system database: it enqueues without running
anything and without launching DBOS, so a web server (or a script) can hand runs to
`agent-network worker` processes and follow them.

An enqueue is DBOS's own: one transaction writing the run's row and its inputs; the database
announces it to the workers (`network.durable.queue_table`'s trigger). On PostgreSQL the
client's connections are not pinged before each use (DBOS's client pings: a round trip per
transaction); a connection the server dropped fails its statement and DBOS retries it on a new
one. A run id that exists already is found by the insert itself (DBOS's `reject` reuse
policy), so only then is the existing run read, to tell this network's run (its id is
returned) from another's (`RunIdInUseError`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from network.durable.engine import APP_NAME, WORKFLOW_NAME, system_database_url
from network.durable.event_log import STREAM_KEY
from network.durable.network_queues import network_queue
from network.durable.process import (
    DurableConfigError,
    RunIdInUseError,
    UnknownRunError,
    network_of,
)
from network.durable.runs import run_request
from network.durable.sqlite_journal import sqlite_file_exists, use_write_ahead_log
from network.errors import ConfigurationError, MessageError
from network.ids import new_id
from network.numbers import check_number
from network.run.inputs import check_text_input
from network.run.max_iter import check_max_iter
from network.run.options import RunOptions
from network.run.thread_ref import ThreadRef
from network.state.schema import check_key_form
from network.state.state import State
from network.threads.ids import check_id, check_ids
from network.threads.urls import check_store_url, shown_url

ENDED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
"""The statuses a run does not leave (DBOS's)."""


class DurableRunStatus(BaseModel):
    """Where a durable run is: its DBOS status, and its outcome once it finished.

    `status` is DBOS's: ENQUEUED (waiting for a worker that serves `network`: it waits as
    long as none runs), PENDING (running, or waiting to be resumed), SUCCESS, ERROR,
    CANCELLED, MAX_RECOVERY_ATTEMPTS_EXCEEDED.
    """

    run_id: str
    status: str
    network: str | None = None
    executor_id: str | None = None
    output: str | None = None
    stop_reason: str | None = None
    state: dict[str, Any] | None = None
    usage: dict[str, int] | None = None  # prompt_tokens, completion_tokens, total_tokens
    error: str | None = None


class DurableClient:
    """Enqueue durable runs and read their status, result and events by run id."""

    def __init__(self, db: str, *, migrate: bool = True) -> None:
        """A client of the system database `db`; `migrate` creates (or upgrades) its tables
        first, so runs can be enqueued before any worker has started. Without it the database
        must hold them already: else a `DurableConfigError` naming it (its password never
        shown), and no SQLite file is made."""
        from dbos import DBOS, DBOSClient  # noqa: PLC0415 (dbos is optional and heavy)

        url = system_database_url(db)
        if migrate:
            use_write_ahead_log(url)
            DBOS.migrate(url)
        elif not sqlite_file_exists(url):  # opening it would create an empty file
            raise DurableConfigError(
                f"durable runs database {shown_url(url)!r} does not exist: migrate=False opens "
                "one a launch, a worker or DurableClient(db) created"
            )
        self._engine: Any = None
        if url.startswith("postgresql"):
            import sqlalchemy  # noqa: PLC0415 (dbos brings it; loaded with dbos)

            self._engine = sqlalchemy.create_engine(
                sqlalchemy.make_url(url).set(drivername="postgresql+psycopg"),
                pool_size=5,
                max_overflow=0,
                pool_pre_ping=False,
                connect_args={"application_name": "agent_network_client"},
            )
        try:
            self._client = DBOSClient(
                system_database_url=url,
                system_database_engine=self._engine,
                application_name=APP_NAME,
            )
            if not migrate:  # its tables must be there: read one (a run no id names)
                self._client.list_workflows(workflow_ids=["-"], load_output=False)
        except Exception as error:
            if self._engine is not None:
                self._engine.dispose()
            if migrate:
                raise
            # the driver's text is the cause, not the message: it may quote the server's
            raise DurableConfigError(
                f"durable runs database {shown_url(url)!r} cannot be read as one "
                f"({type(error).__name__}): migrate=False opens one a launch, a worker or "
                "DurableClient(db) created"
            ) from error

    def enqueue(
        self,
        network: str,
        input: str,
        *,
        state: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        max_iter: int | None = None,
        thread_id: str | None = None,
        user_id: str | None = None,
        app_name: str | None = None,
        store: str | None = None,
    ) -> str:
        """Put a run of the network named `network` on that network's queue, for the workers
        that serve it; returns its run id. Until such a worker runs, the run waits there,
        ENQUEUED (`status`), however long: no other worker takes it, nothing fails it
        (`cancel` takes it off).

        Enqueuing a run id that exists already returns it without enqueuing it again; the
        id of another network's run is a `RunIdInUseError`.

        Refused here, before anything is written, by a typed error naming the field: what no
        network could run. The network name and the ids (`InvalidIdError` naming
        the field); an input that is not a message (`MessageError`, field `input`: not a
        string, a NUL, a lone surrogate); `max_iter` that is not an int >= 1, `store=`,
        `user_id=` or `app_name=` without a thread, and a `store=` no thread store takes (a
        URL of another database than SQLite or PostgreSQL, an in-memory SQLite)
        (`ConfigurationError` naming it); a state
        that is not a mapping, a key no state may have (`StateError` naming it: not a
        non-empty string, a NUL, a lone surrogate) or a value that cannot be recorded
        (`DurableConfigError` naming the key).

        Left to the worker, which fails the run with the reason (`status(run_id).error`):
        what depends on the network's schema: a closed schema's undeclared keys, values of
        the wrong type, and what an untyped key may hold (a typed key keeps bytes or NaN).
        Whether a worker serves a network of that name is not checked (workers need not have
        started, and none is registered anywhere the client could ask): the run waits.
        """
        from dbos import error  # noqa: PLC0415 (dbos is optional and heavy)

        run_id, request = enqueued_run(
            network,
            input,
            state=state,
            run_id=run_id,
            max_iter=max_iter,
            thread_id=thread_id,
            user_id=user_id,
            app_name=app_name,
            store=store,
        )
        options: Any = {
            "workflow_name": WORKFLOW_NAME,
            "queue_name": network_queue(network),  # for the workers of that network only
            "workflow_id": run_id,
            "workflow_id_reuse_policy": "reject",  # an existing run is told apart below
        }
        try:
            self._client.enqueue(options, network, request)
        except error.DBOSWorkflowIDInUseError:
            for info in self._client.list_workflows(workflow_ids=[run_id], load_output=False):
                if network_of(info) != network:
                    raise RunIdInUseError(run_id, network_of(info)) from None
        return run_id

    def status(self, run_id: str) -> DurableRunStatus:
        """The run's status (and outcome when it finished); `UnknownRunError` for an id no
        run has, `InvalidIdError` for one no run may have (as `enqueue` refuses it)."""
        check_id("run_id", run_id)  # a lone surrogate failed in the driver's encoding
        listed = self._client.list_workflows(workflow_ids=[run_id], load_output=True)
        if not listed:
            raise UnknownRunError(run_id)
        info = listed[0]
        status = DurableRunStatus(
            run_id=run_id,
            status=str(info.status),
            executor_id=info.executor_id,
            network=network_of(info),
            error=str(info.error) if info.error is not None else None,
        )
        output = info.output
        if isinstance(output, dict):
            status.output = output.get("output")
            status.stop_reason = output.get("stop_reason")
            status.state = output.get("state")
            status.usage = output.get("usage")
        return status

    def cancel(self, run_id: str) -> DurableRunStatus:
        """Cancel the run: a queued one is taken off its queue and never starts (a run of a
        network no worker serves, say); a running one stops at its next step. A run that
        has ended keeps its outcome. Its status afterwards; `UnknownRunError` for an id no
        run has, `InvalidIdError` for one no run may have."""
        if self.status(run_id).status not in ENDED:  # an unknown id raises here
            self._client.cancel_workflow(run_id)
        return self.status(run_id)

    def result(
        self, run_id: str, *, timeout: float | None = None, poll_every: float = 0.1
    ) -> DurableRunStatus:
        """Wait until the run has ended and return its status: the one way to wait for a
        durable run by id, from any process.

        It ends as SUCCESS (its output, stop reason, state and usage filled in), ERROR
        (`error` says why), CANCELLED or MAX_RECOVERY_ATTEMPTS_EXCEEDED. `UnknownRunError`
        for an id no run has; `TimeoutError` when `timeout` seconds pass first.
        """
        check_number("timeout", timeout, above=True, optional=True)
        check_number("poll_every", poll_every, above=True)
        check_id("run_id", run_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status(run_id)
            if status.status in ENDED:
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"durable run {run_id!r} is still {status.status}")
            time.sleep(poll_every)

    def events(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The run's AG-UI events (JSON form), as they are written, until the run ends;
        `UnknownRunError` for an id no run has, as `status` says."""
        from dbos import error  # noqa: PLC0415 (dbos is optional and heavy)

        check_id("run_id", run_id)
        try:
            for batch in self._client.read_stream(run_id, STREAM_KEY):
                yield from batch
        except error.DBOSNonExistentWorkflowError:
            raise UnknownRunError(run_id) from None

    def close(self) -> None:
        """Close the client's database connections."""
        self._client.destroy()
        if self._engine is not None:
            self._engine.dispose()


def enqueued_run(
    network: str,
    input: str,
    *,
    state: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    max_iter: int | None = None,
    thread_id: str | None = None,
    user_id: str | None = None,
    app_name: str | None = None,
    store: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The run id and the recorded request of a run `DurableClient.enqueue` is asked to queue,
    each argument checked as it says (`network.enqueue` checks them before it opens, and
    maybe creates, the database)."""
    check_id("network", network)
    if not isinstance(input, str):  # a continuation is `network.run`'s, with its results
        raise MessageError(
            f"the run's input must be the user's message (a string), got {type(input).__name__}",
            index=None,
            field="input",
        )
    check_text_input(input)  # as `network.run` checks it: the worker would fail it
    run_id = new_id("run_") if run_id is None else run_id
    check_id("run_id", run_id)  # "" is refused, not replaced
    check_max_iter("max_iter", max_iter, optional=True, hint="leave it out for the network's")
    thread = None
    if thread_id is not None:
        check_ids(thread_id=thread_id, user_id=user_id, app_name=app_name)
        if isinstance(store, str):  # recorded as given: the worker opens it
            check_store_url(store)
        thread = ThreadRef(thread_id, user_id=user_id, app_name=app_name, store=store)
    else:
        given = {"store": store, "user_id": user_id, "app_name": app_name}
        named = [f"{name}=" for name, value in given.items() if value is not None]
        if named:
            verb = "apply" if len(named) > 1 else "applies"
            raise ConfigurationError(f"{' and '.join(named)} {verb} only to a run with a thread_id")
    if state is not None and not isinstance(state, State):
        if not isinstance(state, Mapping):
            raise ConfigurationError(
                f"state must be a mapping or a State, got {type(state).__name__}"
            )
        for key in state:
            check_key_form(key)
    request = run_request(input, RunOptions(thread=thread, state=state, max_iter=max_iter))
    return run_id, request
