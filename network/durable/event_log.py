"""The event stream of a durable run, kept in DBOS's database and readable by run id.

Each event the run emits is appended, in its AG-UI JSON form (`network.run.agui_encoder`:
the form a reader serves to a client, and the form of the logs written before the run's
events were typed), to the DBOS stream `events` of the run's workflow
(`DurableClient.events(run_id)` reads it, from any process, while the run goes on). A write
to the stream costs about what a recorded step does, so events are not written one by one,
nor once per agent call, but in batches, off the run's path:

- events wait in memory and the process's flusher thread writes them together, at most
  `FLUSH_EVERY` seconds after the log's previous write (or the run's start): a reader sees
  an event within about that delay, and a burst of fast agent calls costs one write;
- the run's last event (RUN_FINISHED or RUN_ERROR) is written with whatever is pending, and
  the run waits for it: a run's stream is complete when its workflow ends (a reader stops
  there). A background write that failed fails this last one, naming its error. The run's
  router decisions still deferred (its last one: `network.durable.steps`) are written first
  (`carrier`): on PostgreSQL by the same statement, which appends this last batch as a step's
  statement does (below), so the stream never ends without them.

Writes of one run reach the stream in order (one write at a time per run). Events not yet
written when the process dies (those of the last `FLUSH_EVERY` seconds at most) are lost;
the resumed execution starts its part of the stream with a STATE_SNAPSHOT of the rebuilt
state, so a reader still ends with the run's true state and one RUN_FINISHED. The stream
always begins with the run's RUN_STARTED: a resumed execution's first write checks whether
any earlier execution wrote to the stream, and when none did, writes the run's RUN_STARTED
(replayed, and handed over by the replay gate) first.

On PostgreSQL a batch also rides on a recorded step: when a step of the run is recorded at
least `RIDE_AFTER` seconds after the log's previous write, the events pending then are
appended by the step's own statement (`network.durable.step_table`), in its transaction, and
the flusher's write is put off to `FLUSH_EVERY` seconds after that one. A run whose steps
come often enough (a model call of 50 ms: every agent call) then writes its events without
a statement of their own. A step's statement cancelled once sent may commit all the same (the
server runs what it received): its batch waits, unsettled, until the log's next write sends
that statement again (it appends events only with the step it records, so twice is harmless)
and learns from its answer whether they were appended: each event is appended once.

A batch is one row of DBOS's stream table, in DBOS's format (DBOS's `read_stream` reads it),
written with one statement on this process's own connections (`network.durable.connections`)
rather than through DBOS's stream write (a statement built by SQLAlchemy): the row takes the
stream's next offset. On PostgreSQL a batch of the flusher or of the run's last write names
the offset the log expects (learnt from its own writes, or read by a resumed execution's
first one) and is appended only while that is the stream's next: a statement retried after
its connection broke (committed, its answer lost) appends nothing the second time, and the
log reads the row at that offset to tell its own batch from another writer's, then takes the
stream's next offset. On PostgreSQL each batch written is announced on DBOS's streams channel,
for readers that listen, as DBOS announces its own stream writes, not by the writing statement
(a transaction that notifies takes PostgreSQL's notify lock, which serializes every notifying
commit of the server; a step's must not wait for it): the process's announcer
(`network.durable.announcer`) sends those of 0.1 s in one statement. A batch takes no step
id (step 0, as DBOS's step-level stream write): the events a run emits differ between its
first execution and a replay (the replay gate drops some), and the workflow's step ids must
not.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, Protocol

import anyio

from network.durable.announcer import announcer
from network.durable.connections import Connections, connections
from network.run.events import RunError, RunEvent, RunFinished

STREAM_KEY = "events"
FLUSH_EVERY = 0.1
"""Seconds: the longest an event waits in memory after the stream's previous write."""
RIDE_AFTER = FLUSH_EVERY / 2
"""Seconds after the log's previous write from which pending events ride on a recorded step
(PostgreSQL): earlier, each step would append a row of its own."""
LAST = (RunFinished, RunError)


STREAMS_CHANNEL = "dbos_streams_channel"
"""DBOS's NOTIFY channel for stream writes (payload `<workflow id>::<key>`)."""
OFFSET_RETRIES = 5
"""Attempts of a batch whose offset another writer of the stream took first."""


class StreamTable:
    """The statements appending to, and reading, a run's event stream (one per database)."""

    def __init__(self, db: Connections) -> None:
        self.db = db
        streams, p = db.table("streams"), db.mark
        this = f"workflow_uuid = {p('workflow')} AND key = {p('key')}"
        batch = (
            f"INSERT INTO {streams} "
            '(workflow_uuid, function_id, key, value, serialization, "offset") '
            f"SELECT {p('workflow')}, 0, {p('key')}, {p('value')}, {p('serialization')}, "
        )
        following = f'COALESCE((SELECT MAX("offset") FROM {streams} WHERE {this}), -1) + 1'
        insert = batch + following
        # (psycopg fetches rows of every statement: an insert returns the offset it took)
        self.append = insert if db.sqlite else f'{insert} RETURNING "offset"'
        self.insert = insert  # a step's statement appends a batch with it (`Riding`)
        # PostgreSQL: a batch at the offset the log expects, only when that is the stream's
        # next (never a gap): the same statement sent again after its answer was lost
        # appends nothing twice, and the log reads what took the offset
        at = p("offset")
        self.append_at = f"{batch}{at} WHERE {following} = {at} RETURNING 1"
        self.value_at = f'SELECT value FROM {streams} WHERE {this} AND "offset" = {at}'
        self.last = f'SELECT MAX("offset") FROM {streams} WHERE {this}'


_stream_tables: dict[int, StreamTable] = {}


def stream_table(db: Connections) -> StreamTable:
    table = _stream_tables.get(id(db))
    if table is None or table.db is not db:
        table = _stream_tables[id(db)] = StreamTable(db)
    return table


class Riding(NamedTuple):
    """A batch of events riding on a step's statement: the append's parameters, and the
    events (put back when the statement does not write them); `final`: the run's last event,
    the batch's tail (put back apart: it is written only after its decisions, `EventLog`)."""

    params: dict[str, Any]
    events: list[dict[str, Any]]
    final: list[dict[str, Any]] | None = None


class Settle(Protocol):
    """Writes the run's router decisions still deferred (`DurableSteps.settle`); `failed`:
    the run ends with an error, which stays the one reported (a failure to write them is
    logged, not raised)."""

    async def __call__(self, *, failed: bool = False) -> None: ...


class EventLog:
    """A sink of the run's typed events appending their AG-UI JSON to the run's DBOS stream
    (see the module docstring)."""

    def __init__(self, run_id: str, *, resumed: bool = False) -> None:
        """The log of run `run_id`; `resumed`: this execution resumes an earlier one."""
        from dbos import WorkflowSerializationFormat  # noqa: PLC0415 (dbos is optional and heavy)
        from dbos._dbos import _get_dbos_instance  # noqa: PLC0415 (dbos is optional and heavy)
        from dbos._serialization import serialize_value  # noqa: PLC0415 (dbos is optional)

        from network.run.agui_encoder import encode_json  # noqa: PLC0415 (ag_ui: loaded with dbos)

        self.run_id = run_id
        self._dumped = encode_json
        dbos = _get_dbos_instance()
        self._table = stream_table(connections(dbos._sys_db))
        self._serialize = partial(
            serialize_value,
            serialization_type=WorkflowSerializationFormat.DEFAULT,
            serializer=dbos._serializer,
        )
        self._pending: list[dict[str, Any]] = []
        self._scheduled = False  # the flusher has this log on its list
        self._buffer = threading.Lock()  # `_pending` and `_scheduled`, shared with the flusher
        self._writing = threading.Lock()  # one write at a time: batches land in order
        self._last_write = time.monotonic()
        self._error: BaseException | None = None  # a background write's failure
        self._check_stream = resumed  # at the first write: did an earlier execution write?
        # the stream's next offset as this log knows it (None: unknown; PostgreSQL's appends
        # go there, so a statement repeated after a lost answer is told from another's)
        self._offset: int | None = None if resumed else 0
        self._start: dict[str, Any] | None = None  # the run's replayed RUN_STARTED
        # a batch whose step statement's answer was lost, and how to learn whether it wrote it
        self._unsettled: tuple[Callable[[], bool], list[dict[str, Any]]] | None = None
        # writes the run's deferred router decisions before its last event (`_end`)
        self.carrier: Settle | None = None
        self._final: list[dict[str, Any]] | None = None  # the last event, while they are
        # each batch written, announced to listening readers (`network.durable.announcer`)
        self._announce: Callable[[], None] = (
            _nothing
            if self._table.db.sqlite
            else partial(
                announcer(dbos._sys_db).announce, STREAMS_CHANNEL, f"{run_id}::{STREAM_KEY}"
            )
        )

    def keep_start(self, event: RunEvent) -> None:
        """The run's RUN_STARTED, replayed (the gate drops it): written first by a resumed
        execution when no earlier one wrote anything."""
        (self._start,) = self._dumped(event)

    async def __call__(self, event: RunEvent) -> None:
        dumped = self._dumped(event)
        if isinstance(event, LAST):
            await self._end(dumped, failed=isinstance(event, RunError))
            return
        with self._buffer:
            self._pending.extend(dumped)
            schedule = not self._scheduled
            self._scheduled = True
        if schedule:
            flusher().schedule(self, self._last_write + FLUSH_EVERY)

    async def _end(self, final: list[dict[str, Any]], *, failed: bool) -> None:
        """The run's last event (`final`, dumped) and what is pending, written, after the
        router decisions still deferred (`carrier`): on PostgreSQL the statement writing those
        appends this batch too (`ride`), in one transaction, so the run's end is never in the
        stream without its last decision. When they are written by themselves (SQLite, or the
        log is busy), the batch is written after them. A failure to write them fails the run's
        end (`failed`: logged by the carrier; the error event is written all the same)."""
        if self.carrier is not None:
            self._final = final  # ridden by the decisions' statement, or handed back
            try:
                await self.carrier(failed=failed)
            except BaseException:
                self._final = None  # never written without the decisions before it
                raise
            final, self._final = self._final or [], None  # ([]: written with them)
        if final:
            with self._buffer:
                self._pending.extend(final)
                self._scheduled = True
        await self._write_last()
        flusher().forget(self)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def ride(self) -> Riding | None:
        """The pending events, to append with a step's statement (PostgreSQL), when they are
        due (`RIDE_AFTER`; at the run's end, the last event and all before it) and no write of
        this log is under way; None otherwise. A batch taken is handed back with `rode`,
        written or not."""
        final = self._final  # the run's end: every event is due
        due = final is not None or (
            bool(self._pending) and time.monotonic() >= self._last_write + RIDE_AFTER
        )
        if (
            not due
            or self._check_stream
            or self._unsettled is not None
            or self._table.db.sqlite
            or not self._writing.acquire(blocking=False)
        ):
            return None
        try:
            batch = self._next_batch(final)
        except BaseException:
            self._writing.release()
            raise
        if batch is None:
            self._writing.release()
        else:
            self._final = None  # handed back by `rode` when not written
        return batch

    def rode(
        self, riding: Riding, *, written: bool, unsettled: Callable[[], bool] | None = None
    ) -> None:
        """The step's statement ended: `riding`'s events were appended (`written`), or they
        wait again, ahead of those that came since, for the next write. `unsettled`: the
        statement's answer was lost (it may have appended them); the next write calls it
        first (blocking: whether they were appended) and writes them only when not. The run's
        last event is never put where the flusher writes it: it goes back to `_end`."""
        try:
            if written:  # at the stream's next offset: the one this log expects, if it knows
                self._appended(self._offset)
                return
            final = riding.final
            events = riding.events if final is None else riding.events[: -len(final)]
            with self._buffer:
                if unsettled is None:
                    self._pending[:0] = events
                    if final is not None:
                        self._final = final
                else:
                    self._unsettled = (unsettled, events)
                self._scheduled = True
            flusher().schedule(self, self._last_write + FLUSH_EVERY)
        finally:
            self._writing.release()

    def _settle(self) -> None:
        """The batch whose step statement's answer was lost: appended by it, or put back
        ahead of the pending events (the caller holds `_writing`)."""
        if self._unsettled is None:
            return
        appended, events = self._unsettled
        if appended():
            self._appended(self._offset)
        else:
            with self._buffer:
                self._pending[:0] = events
        self._unsettled = None

    def write_pending(self) -> None:
        """Write every pending event now, in one append (from a worker or flusher thread)."""
        with self._writing:
            self._settle()
            batch = self._next_batch()
            if batch is None:
                return
            try:
                self._append(batch.params)
            finally:
                self._last_write = time.monotonic()

    def _append(self, params: dict[str, Any]) -> None:
        """Append a batch (blocking; the caller holds `_writing`): at the offset the log
        expects (PostgreSQL), else at the stream's next one."""
        db, table = self._table.db, self._table
        if self._offset is not None and not db.sqlite:
            at = {**params, "offset": self._offset}
            try:
                appended = bool(db.execute(table.append_at, at))
            except Exception as exc:
                if not offset_taken(exc):
                    raise
                appended = False
            # appended by this statement, or by its attempt whose answer was lost
            if appended or db.execute(table.value_at, at) == [(params["value"],)]:
                self._appended(self._offset)
                return
        for attempt in range(OFFSET_RETRIES):  # another writer took it: the next offset
            try:
                self._appended(_offset_of(db.execute(table.append, params)))
                return
            except Exception as exc:
                retry_or_raise(exc, attempt)

    def _appended(self, at: int | None) -> None:
        """A batch was appended at offset `at` (None: not known)."""
        self._offset = None if at is None else at + 1
        self._last_write = time.monotonic()
        self._announce()

    async def _write_last(self) -> None:
        """The run's last write. On PostgreSQL, when no write of this log is under way, on the
        event loop itself (`Connections.execute_async`: no hop to a thread and back on the
        run's path); otherwise in a thread, after the write under way (batches land in order)."""
        db = self._table.db
        if (
            db.sqlite
            or self._check_stream
            or self._unsettled is not None  # (set and cleared on this loop, or under way)
            or not self._writing.acquire(blocking=False)
        ):
            await anyio.to_thread.run_sync(self.write_pending)
            return
        try:  # the flusher waits for this write, as for another thread's
            batch = self._next_batch()
            if batch is None:
                return
            await self._append_async(batch.params)
        finally:
            self._writing.release()

    async def _append_async(self, params: dict[str, Any]) -> None:
        """`_append` on the event loop (PostgreSQL)."""
        db, table = self._table.db, self._table
        try:
            if self._offset is not None:
                at = {**params, "offset": self._offset}
                try:
                    appended = bool(await db.execute_async(table.append_at, at))
                except Exception as exc:
                    if not offset_taken(exc):
                        raise
                    appended = False
                if appended or await db.execute_async(table.value_at, at) == [(params["value"],)]:
                    self._appended(self._offset)
                    return
            for attempt in range(OFFSET_RETRIES):
                try:
                    self._appended(_offset_of(await db.execute_async(table.append, params)))
                    return
                except Exception as exc:
                    retry_or_raise(exc, attempt)
        finally:
            self._last_write = time.monotonic()

    def _next_batch(self, final: list[dict[str, Any]] | None = None) -> Riding | None:
        """Every pending event (then `final`, the run's last) and the append's parameters
        (None: nothing pending); the caller holds `_writing`. The first write of a resumed
        execution looks whether an earlier one wrote (a blocking read: from a thread)."""
        with self._buffer:
            batch, self._pending = self._pending, []
            self._scheduled = False
        if final is not None:
            batch.extend(final)
        if not batch:
            return None
        key = {"workflow": self.run_id, "key": STREAM_KEY}
        if self._check_stream:
            self._check_stream = False
            ((last,),) = self._table.db.execute(self._table.last, key)
            self._offset = 0 if last is None else int(last) + 1
            if last is None and self._start is not None:
                batch.insert(0, self._start)
        value, serialization = self._serialize(batch)
        return Riding({**key, "value": value, "serialization": serialization}, batch, final)

    def write_in_background(self) -> None:
        """The flusher's write: a failure is kept for the run's last write to raise. Events
        that came since a batch rode on a step wait until `FLUSH_EVERY` after it."""
        due = self._last_write + FLUSH_EVERY
        if time.monotonic() < due:
            with self._buffer:
                waiting = bool(self._pending) or self._unsettled is not None
            if waiting:
                flusher().schedule(self, due)
            return
        try:
            self.write_pending()
        except Exception as exc:  # raised by the run's last write (never swallowed)
            if self._error is None:
                self._error = exc


class Flusher:
    """The process's one flusher thread: writes each log's pending events when they are due."""

    def __init__(self) -> None:
        self._due: dict[EventLog, float] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        # When the waiting thread looks at the list again by itself (-inf: it is not waiting,
        # and looks before it waits): a log due no earlier does not wake it (a thread switch)
        self._wakes_at = -math.inf

    def schedule(self, log: EventLog, at: float) -> None:
        """Write `log`'s pending events at `at` (`time.monotonic()`), or earlier."""
        with self._changed:
            due = self._due.get(log)
            if due is not None and due <= at:
                return
            self._due[log] = at
            if self._thread is None or not self._thread.is_alive():  # (a forked child's too)
                self._thread = threading.Thread(
                    target=self._serve, name="agent-network-events", daemon=True
                )
                self._thread.start()
            if at < self._wakes_at:
                self._changed.notify()

    def forget(self, log: EventLog) -> None:
        """Drop `log` from the list (its run wrote its last events itself)."""
        with self._changed:
            self._due.pop(log, None)

    def _serve(self) -> None:
        while True:
            with self._changed:
                ready = self._take_due()
                while not ready:
                    self._wakes_at = min(self._due.values()) if self._due else math.inf
                    wait = self._wakes_at - time.monotonic() if self._due else None
                    self._changed.wait(wait)
                    self._wakes_at = -math.inf
                    ready = self._take_due()
            for log in ready:
                log.write_in_background()

    def _take_due(self) -> list[EventLog]:
        now = time.monotonic()
        ready = [log for log, at in self._due.items() if at <= now]
        for log in ready:
            del self._due[log]
        return ready


_flusher = Flusher()


def flusher() -> Flusher:
    """The process's flusher (its thread starts with the first deferred write)."""
    return _flusher


def _nothing() -> None:
    """No announcement (SQLite: readers poll)."""


def _offset_of(rows: list[Any]) -> int | None:
    """The offset an append took, from its answer (SQLite's append returns no row)."""
    return int(rows[0][0]) if rows else None


def retry_or_raise(exc: Exception, attempt: int) -> None:
    """A statement appending to a stream failed: tried again when another writer took the
    offset (its next attempt reads it again), unless this was the last attempt; raised
    otherwise."""
    if attempt == OFFSET_RETRIES - 1 or not offset_taken(exc):
        raise exc


def offset_taken(exc: Exception) -> bool:
    """Whether `exc` is the stream's primary key refusing an offset written meanwhile."""
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

    return isinstance(exc, psycopg.errors.UniqueViolation)
