"""The queues' rows in DBOS's workflow table: claimed with one statement, announced by NOTIFY.

A queued run is a row of DBOS's `workflow_status` with status ENQUEUED and its queue's name
(DBOS's client and `resume_workflow` write them). DBOS's own queue threads poll every
queue they listen to (a transaction of four to six statements built by SQLAlchemy per poll,
and a run waits for the next poll); this process claims its queues' runs itself:

- **One claim statement** (`claim`): it picks the oldest ENQUEUED runs of this
  application on the queues it is given (a worker's: one per network it serves, see
  `network.durable.network_queues`; so a worker never takes a run it cannot run), highest
  priority first, at most `limit` (on PostgreSQL `FOR UPDATE SKIP
  LOCKED`, so two workers never pick one run and never wait for each other), and marks them
  PENDING under this process's executor id and a new owner token, as DBOS's claim does
  (started now, one more recovery attempt, a deadline from a timeout). On PostgreSQL it
  returns the claimed runs' rows as DBOS reads them to start them (`STATUS_COLUMNS`), which
  spares the read DBOS would make next; on SQLite their ids, and one statement is one write
  transaction there, so the pick and the mark are atomic too.
- **A wake-up** (PostgreSQL): a trigger on the workflow table sends `NOTIFY
  agent_network_queue` with the queue's name whenever a row of one of this library's queues
  becomes ENQUEUED, in the transaction that enqueued it (so a listener hears it once it
  commits), whoever wrote it: `DurableClient.enqueue`, DBOS's own client, a takeover putting
  a dead worker's run back (`network.durable.takeover`). `install_wake_trigger` creates it once
  per database (idempotent; under an advisory lock, so concurrent installers do not race).
  `network.durable.dispatch` listens and claims when told.

The statements run on this process's own connections (`network.durable.connections`). The
layout is DBOS 3.x's (the extra pins `dbos>=3.4,<4`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.durable.connections import Connections

CHANNEL = "agent_network_queue"
"""The NOTIFY channel a queued run is announced on (its payload: the queue's name)."""
QUEUE_PREFIX = "agent-network"
"""Every queue of this library is named so (the workers' one, each process's own)."""
TRIGGER_FUNCTION = "agent_network_announce_queued"
STATUS_COLUMNS = {
    "workflow_uuid": "workflow_uuid",
    "status": "status",
    "name": "name",
    "recovery_attempts": "recovery_attempts",
    "config_name": "config_name",
    "class_name": "class_name",
    "authenticated_user": "authenticated_user",
    "authenticated_roles": "authenticated_roles",
    "assumed_role": "assumed_role",
    "queue_name": "queue_name",
    "executor_id": "executor_id",
    "created_at": "created_at",
    "updated_at": "updated_at",
    "app_version": "application_version",
    "app_id": "application_id",
    "workflow_deadline_epoch_ms": "workflow_deadline_epoch_ms",
    "workflow_timeout_ms": "workflow_timeout_ms",
    "deduplication_id": "deduplication_id",
    "priority": "priority",
    "inputs": "inputs",
    "queue_partition_key": "queue_partition_key",
    "forked_from": "forked_from",
    "parent_workflow_id": "parent_workflow_id",
    "started_at_epoch_ms": "started_at_epoch_ms",
    "serialization": "serialization",
    "delay_until_epoch_ms": "delay_until_epoch_ms",
    "attributes": "attributes",
    "schedule_name": "schedule_name",
    "debounce_deadline_epoch_ms": "debounce_deadline_epoch_ms",
    "is_debounced": "is_debounced",
    "application_name": "application_name",
}
"""A claimed run's status as DBOS 3.x reads it to start a dequeued run (its
`get_workflow_statuses`: key, column; the inputs from `workflow_input` when they are there)."""


class QueueTable:
    """Claims of this process's queues, on one system database."""

    def __init__(self, db: Connections) -> None:
        self.db = db
        self._claims: dict[int, str] = {}  # the claim statement, by its number of queues

    def _claim(self, queues: int) -> str:
        """The claim statement of `queues` queues (made once per number: the queues are its
        parameters `q0`, `q1`, ...; one queue is `queue_name = q0`, as before networks had
        queues of their own, so the index on the queue's name serves it as it did)."""
        statement = self._claims.get(queues)
        if statement is not None:
            return statement
        db = self.db
        status, p = db.table("workflow_status"), db.mark
        now = db.now_ms()
        names = ", ".join(p(f"q{i}") for i in range(queues))
        which = f"queue_name = {names}" if queues == 1 else f"queue_name IN ({names})"
        pick = (
            f"SELECT workflow_uuid FROM {status} "
            f"WHERE {which} AND status = 'ENQUEUED' "
            f"AND (application_version = {p('version')} OR application_version IS NULL) "
            f"AND (application_name = {p('app')} OR application_name IS NULL) "
            f"ORDER BY priority, created_at LIMIT {p('limit')}"
        )
        mark = (
            f"status = 'PENDING', owner_xid = {p('owner')}, "
            f"application_version = {p('version')}, executor_id = {p('executor')}, "
            f"application_name = {p('app')}, started_at_epoch_ms = {now}, "
            f"updated_at = {now}, rate_limited = FALSE, "
            "recovery_attempts = recovery_attempts + 1, "
            "workflow_deadline_epoch_ms = CASE "
            "WHEN workflow_timeout_ms IS NOT NULL AND workflow_deadline_epoch_ms IS NULL "
            f"THEN {now} + workflow_timeout_ms ELSE workflow_deadline_epoch_ms END"
        )
        if db.sqlite:
            statement = (
                f"UPDATE {status} SET {mark} WHERE workflow_uuid IN ({pick}) "
                "AND status = 'ENQUEUED' RETURNING workflow_uuid"
            )
        else:  # the claimed runs' rows come back whole, as DBOS reads them to start them
            inputs = db.table("workflow_input")
            returned = ", ".join(
                "COALESCE(given.inputs, queued.inputs)"
                if column == "inputs"
                else f"queued.{column}"
                for column in STATUS_COLUMNS.values()
            )
            statement = (
                f"WITH picked AS ({pick} FOR UPDATE SKIP LOCKED) "
                f"UPDATE {status} AS queued SET {mark} FROM picked "
                f"LEFT JOIN {inputs} AS given ON given.workflow_uuid = picked.workflow_uuid "
                "WHERE queued.workflow_uuid = picked.workflow_uuid AND queued.status = 'ENQUEUED' "
                f"RETURNING {returned}"
            )
        self._claims[queues] = statement
        return statement

    def claim(
        self,
        queues: str | Sequence[str],
        *,
        limit: int,
        executor: str,
        owner: str,
        version: str,
    ) -> list[dict[str, Any]]:
        """Mark up to `limit` of the runs queued on `queues` (one queue, or several: the
        oldest of them all, in one statement) PENDING for this process (blocking: call from
        a thread). The runs it marked, oldest first: on PostgreSQL each run's status as
        DBOS reads it to start it (`STATUS_COLUMNS`), on SQLite its id (`workflow_uuid`)."""
        names = [queues] if isinstance(queues, str) else list(queues)
        if not names:
            return []
        params: dict[str, Any] = {f"q{i}": name for i, name in enumerate(names)}
        params.update(
            limit=limit, executor=executor, owner=owner, version=version, app=self.db.app_name
        )
        rows = self.db.execute(self._claim(len(names)), params)
        if self.db.sqlite:
            return [{"workflow_uuid": row[0]} for row in rows]
        claimed = [dict(zip(STATUS_COLUMNS, row, strict=True)) for row in rows]
        for status in claimed:
            status["is_debounced"] = bool(status["is_debounced"])
            status["shard_key"] = None  # this library's databases are not sharded
        claimed.sort(key=lambda status: (status["priority"], status["created_at"]))
        return claimed

    def install_wake_trigger(self) -> None:
        """Create the NOTIFY trigger on PostgreSQL, once per database (a no-op on SQLite)."""
        if self.db.sqlite:
            return
        schema, status = self.db.schema, self.db.table("workflow_status")
        exists = (
            "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %(schema)s AND c.relname = 'workflow_status' "
            "AND t.tgname IN ('agent_network_queued', 'agent_network_requeued')"
        )
        params = {"schema": schema.strip('"').replace('""', '"')}
        if self.db.execute(exists, params)[0][0] == 2:
            return
        function = f"{schema}.{TRIGGER_FUNCTION}"
        ours = f"NEW.status = 'ENQUEUED' AND NEW.queue_name LIKE '{QUEUE_PREFIX}%'"
        statements = [
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN PERFORM pg_notify('{CHANNEL}', NEW.queue_name); RETURN NULL; END $$",
            f"DROP TRIGGER IF EXISTS agent_network_queued ON {status}",
            f"CREATE TRIGGER agent_network_queued AFTER INSERT ON {status} FOR EACH ROW "
            f"WHEN ({ours}) EXECUTE FUNCTION {function}()",
            f"DROP TRIGGER IF EXISTS agent_network_requeued ON {status}",
            f"CREATE TRIGGER agent_network_requeued AFTER UPDATE OF status ON {status} "
            f"FOR EACH ROW WHEN ({ours} AND OLD.status IS DISTINCT FROM 'ENQUEUED') "
            f"EXECUTE FUNCTION {function}()",
        ]
        connection = self.db.connect()
        try:
            with connection.transaction():
                # One installer at a time (DDL on one table from two sessions would fail),
                # and none once another has finished.
                connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%(lock)s, 0))",
                    {"lock": TRIGGER_FUNCTION},
                )
                if connection.execute(exists, params).fetchone()[0] == 2:
                    return
                for statement in statements:
                    connection.execute(statement)
        finally:
            connection.close()
