"""DBOS's step table, read once per execution and written with one statement per step.

DBOS records a workflow's steps as rows of its system database's `operation_outputs` table:
the workflow's id, the step's number and name, and its output or its error (serialized by
DBOS's serializer). Going through DBOS's step call, each step costs two transactions and four
statements (a read of the workflow's status and of the step's row, an ownership check, the
insert) built by SQLAlchemy, and three thread hops: 2.4 to 5 ms per step on PostgreSQL on our
machines, nearly all of it CPU, where the insert alone takes about 0.2 ms.

This module writes the same rows itself, in DBOS's format, so DBOS's own tools (its step
listing, `fork_workflow`, retention) see them as they see their own:

- A workflow's recorded steps are read in one query when an execution begins
  (`recorded`); a step found there replays without a query of its own. On PostgreSQL the
  same statement records the execution's first step when it is not there yet (`begin_async`:
  the read sees the rows as they were before it, so it tells a first execution from a
  resumed one). Nothing else records
  steps of a workflow while this execution owns it (below), so the read does not go stale.
- A step's outcome is written by one autocommit statement (`record`); a router decision's
  with the step after it, the rows of both by one statement (`record_async`'s `carried`).
  It writes only while the execution still owns the workflow: DBOS hands a workflow to a new
  execution (recovery on another worker, a resume, a cancel) by changing its `owner_xid`,
  and the statement inserts nothing unless the row still carries this execution's token,
  locking it until the insert commits (as DBOS's own ownership check does). An execution
  that lost the workflow gets DBOS's `DBOSWorkflowConflictIDError` (or
  `DBOSWorkflowCancelledError`) and stops.
- A row already there for the step is either this statement's own earlier attempt (a retry
  after a lost connection: the same completion time) or another outcome for the same step
  (DBOS's `DBOSStepNondeterminismError`).
- A lost connection or a busy SQLite file is retried on a fresh connection, with backoff,
  until the database answers (DBOS blocks the same way rather than lose a step).

The statements run on this process's own connections (`network.durable.connections`:
autocommit, outside DBOS's pool, retried until the database answers), never on the event
loop. The table's layout is DBOS 3.x's (`network.durable`'s extra pins `dbos>=3.4,<4`);
`tests/network/durable/test_step_table.py` checks DBOS reads these rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import anyio
import anyio.to_thread

from network.durable.connections import PerDatabase, connections
from network.durable.event_log import (
    OFFSET_RETRIES,
    EventLog,
    Riding,
    offset_taken,
    retry_or_raise,
    stream_table,
)


class StepRow(NamedTuple):
    """One recorded step: its name and its serialized output or error."""

    name: str
    output: str | None
    error: str | None
    serialization: str | None


class StepOutcome(NamedTuple):
    """One step's outcome, to record: whose it is (the workflow, and the execution's owner
    token), which step, when it started (epoch ms), and its serialized output or error."""

    workflow_id: str
    owner: str
    number: int
    name: str
    started: int
    output: str | None
    error: str | None
    serialization: str
    completed: int | None = None  # epoch ms; None: when it is written


class StepTable:
    """The system database's step rows, for the workflows this process executes."""

    def __init__(self, sys_db: Any) -> None:
        self.connections = db = connections(sys_db)
        self.sqlite = db.sqlite
        self.app_name = db.app_name
        steps, status, p = db.table("operation_outputs"), db.table("workflow_status"), db.mark
        self._select = (
            "SELECT function_id, function_name, output, error, serialization "
            f"FROM {steps} WHERE workflow_uuid = {p('workflow')}"
        )
        columns = (
            "workflow_uuid, function_id, function_name, output, error, serialization, "
            "started_at_epoch_ms, completed_at_epoch_ms, application_name, retention_timestamp"
        )
        values = (
            f"{p('workflow')}, {p('number')}, {p('name')}, {p('output')}, {p('error')}, "
            f"{p('serialization')}, {p('started')}, {p('completed')}, {p('app')}, {p('completed')}"
        )
        owned = f"workflow_uuid = {p('workflow')} AND owner_xid = {p('owner')}"
        self._pieces = (steps, status, columns, owned)
        self._statements: dict[tuple[int, bool], str] = {}  # several rows: by count, riding
        upsert = (
            "ON CONFLICT (workflow_uuid, function_id) DO UPDATE "
            f"SET completed_at_epoch_ms = {steps}.completed_at_epoch_ms "
            "RETURNING completed_at_epoch_ms"
        )
        if self.sqlite:
            # One statement is one write transaction: SQLite serializes writers, so the owner
            # read and the insert are atomic.
            self._insert = (
                f"INSERT INTO {steps} ({columns}) SELECT {values} "
                f"WHERE EXISTS (SELECT 1 FROM {status} WHERE {owned}) {upsert}"
            )
        else:
            # The workflow's row stays locked until the insert commits (DBOS locks it the
            # same way), so a hand-off cannot land between the check and the write.
            self._insert = (
                f"WITH owner AS (SELECT 1 FROM {status} WHERE {owned} FOR NO KEY UPDATE) "
                f"INSERT INTO {steps} ({columns}) SELECT {values} FROM owner {upsert}"
            )
            # The same, appending a batch of the run's events (`event_log.Riding`) in the same
            # transaction; only when the step was not recorded before the statement (a retry
            # of a statement that committed appends nothing again).
            stream = stream_table(db)
            step = f"workflow_uuid = {p('workflow')} AND function_id = {p('number')}"
            self._completed = f"SELECT completed_at_epoch_ms FROM {steps} WHERE {step}"
            self._insert_riding = (
                f"WITH owner AS (SELECT 1 FROM {status} WHERE {owned} FOR NO KEY UPDATE), "
                f"fresh AS (SELECT 1 FROM owner WHERE NOT EXISTS "
                f"(SELECT 1 FROM {steps} WHERE {step})), "
                f"events AS ({stream.insert} FROM fresh RETURNING 1), "
                f"step AS (INSERT INTO {steps} ({columns}) SELECT {values} FROM owner {upsert}) "
                "SELECT completed_at_epoch_ms, (SELECT count(*) FROM events) FROM step"
            )
        self._status = f"SELECT status FROM {status} WHERE workflow_uuid = {p('workflow')}"
        # The rows before this statement, and a row (-1) when it recorded the first step
        self._begin = (
            f"WITH owner AS (SELECT 1 FROM {status} WHERE {owned} FOR NO KEY UPDATE), "
            f"written AS (INSERT INTO {steps} ({columns}) SELECT {values} FROM owner "
            "ON CONFLICT (workflow_uuid, function_id) DO NOTHING RETURNING 1) "
            f"{self._select} UNION ALL SELECT -1, NULL, NULL, NULL, NULL FROM written"
        )

    def recorded(self, workflow_id: str) -> dict[int, StepRow]:
        """Every recorded step of `workflow_id`, by number (blocking: call from a thread)."""
        rows = self._execute(self._select, {"workflow": workflow_id})
        return {int(row[0]): StepRow(row[1], row[2], row[3], row[4]) for row in rows}

    async def recorded_async(self, workflow_id: str) -> dict[int, StepRow]:
        """`recorded`, without blocking the event loop."""
        rows = await self.connections.execute_async(self._select, {"workflow": workflow_id})
        return {int(row[0]): StepRow(row[1], row[2], row[3], row[4]) for row in rows}

    async def begin_async(self, outcome: StepOutcome) -> dict[int, StepRow]:
        """The workflow's recorded steps, by number (`recorded`), with `outcome` (the
        execution's first step) recorded when it is not among them; one statement on
        PostgreSQL. An execution that no longer owns the workflow is refused as by `record`."""
        if self.sqlite:
            rows = await self.recorded_async(outcome.workflow_id)
            if outcome.number not in rows:
                await self.record_async(outcome)
            return rows
        found = await self.connections.execute_async(self._begin, self._params(outcome))
        recorded = {
            int(row[0]): StepRow(row[1], row[2], row[3], row[4]) for row in found if row[0] >= 0
        }
        if outcome.number not in recorded and len(recorded) == len(found):  # nothing written
            await anyio.to_thread.run_sync(self._refused, outcome.workflow_id)
        return recorded

    def record(
        self,
        workflow_id: str,
        owner: str,
        number: int,
        name: str,
        *,
        started: int,
        output: str | None,
        error: str | None,
        serialization: str,
    ) -> None:
        """Write step `number`'s outcome, if this execution still owns the workflow
        (blocking: call from a thread; `record_async` on an event loop)."""
        outcome = StepOutcome(
            workflow_id, owner, number, name, started, output, error, serialization
        )
        params = self._params(outcome)
        self._check(self._execute(self._insert, params), params)

    async def record_async(
        self,
        outcome: StepOutcome,
        log: EventLog | None = None,
        carried: Sequence[StepOutcome] = (),
    ) -> None:
        """`record`, without blocking the event loop (see `Connections.execute_async`). On
        PostgreSQL, the events of the run's `log` that are due to be written
        (`EventLog.ride`) are appended by the same statement. `carried`: steps recorded
        before `outcome`, written by the same statement (router decisions riding on the step
        that follows them: `network.durable.steps`), each refused or checked as `outcome`."""
        if carried:
            outcomes = (*carried, outcome)
            params = self._params_of(outcomes)
            plain = self._rows_statement(len(outcomes), riding=False)
        else:
            outcomes = (outcome,)
            params = self._params(outcome)
            plain = self._insert
        riding = None if log is None or self.sqlite else log.ride()
        if log is None or riding is None:
            rows = await self.connections.execute_async(plain, params)
        else:
            statement = (
                self._insert_riding
                if not carried
                else self._rows_statement(len(outcomes), riding=True)
            )
            rows = await self._record_riding(statement, plain, params, log, riding)
        if not rows:
            await anyio.to_thread.run_sync(self._refused, outcome.workflow_id)
        if carried:
            self._check_rows(rows, params, len(outcomes))
        else:
            self._check(rows, params)

    async def _record_riding(
        self, sql: str, plain: str, params: dict[str, Any], log: EventLog, riding: Riding
    ) -> list[Any]:
        """The step's statement (`sql`) with `riding`'s events; when another writer of the
        stream took the batch's offset, the step alone (`plain`: the events wait for the
        log's next write).

        Cancelled once sent, the statement may still commit: its connection is dropped, and
        the server runs what it received. Its answer is lost, so the batch goes back to the
        log unsettled, with `settled` to learn its fate before anything else is written."""
        statement = {**params, **riding.params}
        written = False
        unsettled = None
        try:
            rows = await self.connections.execute_async(sql, statement)
            # a row: the step is recorded, by this statement or its attempt that committed
            # before the connection broke (which appended the events then)
            written = bool(rows)
        except Exception as exc:
            if not offset_taken(exc):  # the server refused it: nothing was written
                raise
            rows = await self.connections.execute_async(plain, params)
        except BaseException:
            unsettled = partial(self.settled, statement, sql)
            raise
        finally:
            log.rode(riding, written=written, unsettled=unsettled)
        return rows

    def settled(self, statement: dict[str, Any], sql: str | None = None) -> bool:
        """Whether the step statement carrying events (`statement`: its parameters; `sql`:
        its text, the one-step statement when not given), whose answer was lost, appended
        them (blocking: call from a thread).

        It is sent again: it appends the events only with the step it records, so of the two
        (the first may still be on its way), the one that records the step appends them, and
        the other appends nothing; the step recorded at this statement's completion time
        says they were appended."""
        for attempt in range(OFFSET_RETRIES):
            try:  # the offset taken by the first, committing meanwhile: read again
                rows = self._execute(sql or self._insert_riding, statement)
                break
            except Exception as exc:
                retry_or_raise(exc, attempt)
        number = statement["number"]  # the step the events ride on (the last of several)
        rows = [row for row in rows if len(row) < 3 or row[2] == number]
        if not rows:  # not this execution's run now: did the first record the step before?
            rows = self._execute(self._completed, statement)
        return bool(rows) and rows[0][0] == statement["completed"]

    def _rows_statement(self, count: int, *, riding: bool) -> str:
        """The statement recording `count` steps at once (parameters suffixed `_0` .. by
        row, `_params_of`), each row as `_insert` writes one: only while this execution owns
        the workflow, the run's row locked until it commits. Rows: (completion time, step
        number), and on PostgreSQL with `riding`, the events' count between them: a batch of
        the run's events appended only when the last step was not recorded before."""
        key = (count, riding)
        found = self._statements.get(key)
        if found is not None:
            return found
        steps, status, columns, owned = self._pieces
        p = self.connections.mark
        where = (
            f"WHERE EXISTS (SELECT 1 FROM {status} WHERE {owned})" if self.sqlite else "FROM owner"
        )
        rows = " UNION ALL ".join(
            f"SELECT {p('workflow')}, {p(f'number_{i}')}, {p(f'name_{i}')}, {p(f'output_{i}')}, "
            f"{p(f'error_{i}')}, {p(f'serialization_{i}')}, {p(f'started_{i}')}, "
            f"{p(f'completed_{i}')}, {p('app')}, {p(f'completed_{i}')} {where}"
            for i in range(count)
        )
        upsert = (
            "ON CONFLICT (workflow_uuid, function_id) DO UPDATE "
            f"SET completed_at_epoch_ms = {steps}.completed_at_epoch_ms "
            "RETURNING completed_at_epoch_ms, function_id"
        )
        insert = f"INSERT INTO {steps} ({columns}) {rows} {upsert}"
        if self.sqlite:
            found = insert
        else:
            owner = f"owner AS (SELECT 1 FROM {status} WHERE {owned} FOR NO KEY UPDATE)"
            if not riding:
                found = f"WITH {owner} {insert}"
            else:
                stream = stream_table(self.connections)
                last = f"workflow_uuid = {p('workflow')} AND function_id = {p('number')}"
                found = (
                    f"WITH {owner}, fresh AS (SELECT 1 FROM owner WHERE NOT EXISTS "
                    f"(SELECT 1 FROM {steps} WHERE {last})), "
                    f"events AS ({stream.insert} FROM fresh RETURNING 1), "
                    f"step AS ({insert}) "
                    "SELECT completed_at_epoch_ms, (SELECT count(*) FROM events), function_id "
                    "FROM step"
                )
        self._statements[key] = found
        return found

    def _params_of(self, outcomes: Sequence[StepOutcome]) -> dict[str, Any]:
        """`_rows_statement`'s parameters: each outcome's, suffixed by its row, each row
        completed when it was made (a step carried by a later one keeps its own time); the
        last row's number and completion time unsuffixed too (what `settled` reads)."""
        last = self._params(outcomes[-1])
        params = {"workflow": last["workflow"], "owner": last["owner"], "app": last["app"]}
        for i, outcome in enumerate(outcomes):
            params[f"number_{i}"] = outcome.number
            params[f"name_{i}"] = outcome.name
            params[f"output_{i}"] = outcome.output
            params[f"error_{i}"] = outcome.error
            params[f"serialization_{i}"] = outcome.serialization
            params[f"started_{i}"] = outcome.started
            params[f"completed_{i}"] = outcome.completed or last["completed"]
        params["number"] = last["number"]
        params["completed"] = last["completed"]
        return params

    def _check_rows(self, rows: list[Any], params: dict[str, Any], count: int) -> None:
        """`_check` for the rows of `_rows_statement`: each step recorded by this statement
        (or by its attempt that committed before its answer was lost)."""
        if not rows:
            self._refused(params["workflow"])
        written = {int(row[-1]): row[0] for row in rows}
        for i in range(count):
            number = params[f"number_{i}"]
            completed = written.get(number)
            if completed is None or int(completed) != params[f"completed_{i}"]:
                from dbos import error as dbos_error  # noqa: PLC0415 (dbos is optional)

                raise dbos_error.DBOSStepNondeterminismError(params["workflow"], number)

    def _params(self, outcome: StepOutcome) -> dict[str, Any]:
        """The insert's parameters: `outcome`, completed now, by this application."""
        return {
            "workflow": outcome.workflow_id,
            "owner": outcome.owner,
            "number": outcome.number,
            "name": outcome.name,
            "output": outcome.output,
            "error": outcome.error,
            "serialization": outcome.serialization,
            "started": outcome.started,
            "completed": outcome.completed or int(time.time() * 1000),
            "app": self.app_name,
        }

    def _check(self, rows: list[Any], params: dict[str, Any]) -> None:
        """Refused (not this execution's run any more), or another outcome recorded before."""
        if not rows:
            self._refused(params["workflow"])
        elif rows[0][0] is None or int(rows[0][0]) != params["completed"]:
            from dbos import error as dbos_error  # noqa: PLC0415 (dbos is optional and heavy)

            raise dbos_error.DBOSStepNondeterminismError(params["workflow"], params["number"])

    def _refused(self, workflow_id: str) -> None:
        from dbos import error  # noqa: PLC0415 (dbos is optional and heavy)

        rows = self._execute(self._status, {"workflow": workflow_id})
        if rows and rows[0][0] == "CANCELLED":
            raise error.DBOSWorkflowCancelledError(f"Workflow {workflow_id} is cancelled")
        raise error.DBOSWorkflowConflictIDError(workflow_id)  # another execution owns it now

    def _execute(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self.connections.execute(sql, params)


_tables = PerDatabase(StepTable)


def step_table(sys_db: Any) -> StepTable:
    """The step table of DBOS system database `sys_db` (one per database, per process)."""
    return _tables.of(sys_db)


def close_step_tables() -> None:
    """Forget every step table (DBOS is shut down in this process; its connections close
    with `network.durable.connections.close_connections`)."""
    _tables.clear()
