"""One statement on a psycopg connection's libpq handle, awaited on the event loop.

A recorded step is one small statement, sent from the run's event loop. psycopg's async
cursor costs about twice the CPU of the exchange itself (its cursor, adapters and waiting
generators, an event per wait): about 0.22 ms a statement, against 0.1 ms when the statement
is sent and its result read on the connection's libpq handle (`pgconn`) directly, and the
round trip takes half as long. So `execute` does that, for the statements of
`network.durable.connections` (`execute_async`): psycopg opens and closes the connections,
and nothing else uses them.

- A statement is written with psycopg's named placeholders (`%(name)s`); it is prepared on a
  connection once (under a name of its own, with the parameters' types taken from the
  values: `int`, `bool`, `str`, or None for the server to infer), then executed by name.
- Values travel as text; results come back as tuples of `int` (integer columns), `bool`,
  `str` or None.
- An error the server returns is raised as psycopg raises it (`psycopg.errors`, by
  SQLSTATE); a connection that fails raises psycopg's `OperationalError`, which the caller
  retries on a new connection. A cancelled call leaves the connection in an unknown state:
  the caller discards it.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from network.threads.pg_wire import decoded_rows

PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")
INTEGERS = frozenset({20, 21, 23, 26})  # int8, int2, int4, oid
BOOLEAN = 16
TEXT, INT8, BOOL, UNKNOWN = 25, 20, 16, 0
COMMAND_OK, TUPLES_OK = 1, 2
CONNECTION_OK = 0


class Shape(NamedTuple):
    """A statement in libpq's form: its text with `$n` placeholders, and the names of its
    parameters in that order."""

    sql: bytes
    names: tuple[str, ...]


_shapes: dict[str, Shape] = {}
_prepared: weakref.WeakKeyDictionary[Any, dict[tuple[str, tuple[int, ...]], bytes]] = (
    weakref.WeakKeyDictionary()
)


def shape(sql: str) -> Shape:
    """`sql` (psycopg's named placeholders) in libpq's form (made once per text)."""
    found = _shapes.get(sql)
    if found is None:
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name is None:  # `%%`: a literal percent sign
                return "%"
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        found = _shapes[sql] = Shape(PLACEHOLDER.sub(number, sql).encode(), tuple(names))
    return found


def as_text(value: Any) -> bytes | None:
    """A parameter's value as text (None: NULL)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, int | str):
        return str(value).encode()
    raise TypeError(f"a statement parameter must be int, bool, str or None, got {type(value)}")


def type_of(value: Any) -> int:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT8
    return TEXT if isinstance(value, str) else UNKNOWN


class Watch:
    """A connection's socket, watched by the event loop for as long as the connection is kept
    (`network.durable.connections` keeps one per pooled connection): a statement then waits
    on a future, where `execute` without a watch registers the socket with the loop and
    unregisters it for each statement (two system calls and the loop's bookkeeping, about a
    sixth of a statement's CPU). Stop it before the connection is closed (`stop`, or
    `discard`): a closed socket left registered would shadow the next socket of its number.
    A connection that breaks while idle (the server closed it) stops its watch itself; its
    next statement fails and is retried on a new connection."""

    __slots__ = ("fd", "loop", "pgconn", "prepared", "waiter", "watching")

    def __init__(self, connection: Any) -> None:
        self.pgconn = connection.pgconn
        # the connection's prepared statements (`execute`), at hand without a weak lookup
        self.prepared = _prepared.setdefault(connection, {})
        self.loop = asyncio.get_running_loop()
        self.fd: int = self.pgconn.socket
        self.waiter: asyncio.Future[None] | None = None
        self.loop.add_reader(self.fd, self._readable)
        self.watching = True

    def _readable(self) -> None:
        waiter = self.waiter
        try:
            self.pgconn.consume_input()
            broken = self.pgconn.status != CONNECTION_OK
            done = broken or not self.pgconn.is_busy()
        except Exception as exc:  # the connection failed: raised by the awaiting statement
            self.stop()
            if waiter is not None and not waiter.done():
                waiter.set_exception(exc)
            return
        if broken:  # closed by the server: an end of file stays readable, never watched again
            self.stop()
        if done and waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until the statement sent has its result (or the connection failed)."""
        self.waiter = waiter = self.loop.create_future()
        try:
            await waiter
        finally:
            self.waiter = None

    def stop(self) -> None:
        """Stop watching (on the watch's event loop, or while it does not run)."""
        if self.watching:
            self.watching = False
            self.loop.remove_reader(self.fd)


def discard(connection: Any, watch: Watch) -> None:
    """Close `connection` at once, without a word to the server, its watch stopped first; from
    any thread (on another thread than its running loop's, the loop does it)."""

    def close() -> None:
        watch.stop()
        connection.pgconn.finish()

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is watch.loop or not watch.loop.is_running():
        close()
        return
    try:
        watch.loop.call_soon_threadsafe(close)
    except RuntimeError:  # the loop closed meanwhile: nothing of it watches any more
        close()


async def execute(
    connection: Any, sql: str, params: dict[str, Any], watch: Watch | None = None
) -> list[tuple[Any, ...]]:
    """Run `sql` with `params` on psycopg `connection` (async or not: only its libpq handle
    is used), without blocking the event loop; its rows. `watch`: the connection's `Watch`,
    if it has one."""
    pgconn = connection.pgconn
    form = _shapes.get(sql) or shape(sql)
    types, texts = _values(form, params)
    known = watch.prepared if watch is not None else _prepared.get(connection)
    if known is None:
        known = _prepared[connection] = {}
    name = known.get((sql, types))
    if name is None:
        name = f"an_{len(known)}".encode()
        pgconn.send_prepare(name, form.sql, param_types=types)
        await _result(pgconn, watch)
        known[(sql, types)] = name
    pgconn.send_query_prepared(name, texts)
    result = await _result(pgconn, watch)
    if result.status != TUPLES_OK:
        return []
    return _rows(result)


def _values(form: Shape, params: dict[str, Any]) -> tuple[tuple[int, ...], list[bytes | None]]:
    """The parameters' types and texts, in `form`'s order (one loop: a statement's
    parameters are nearly always `str`, `int` or None, looked up by their exact type)."""
    types: list[int] = []
    texts: list[bytes | None] = []
    for name in form.names:
        value = params[name]
        kind = type(value)
        if kind is str:
            types.append(TEXT)
            texts.append(value.encode())
        elif kind is int:
            types.append(INT8)
            texts.append(str(value).encode())
        elif value is None:
            types.append(UNKNOWN)
            texts.append(None)
        else:
            types.append(type_of(value))
            texts.append(as_text(value))
    return tuple(types), texts


def _rows(result: Any) -> list[tuple[Any, ...]]:
    """A result's rows: integer columns as `int`, booleans as `bool`, the rest as `str`."""
    columns: list[Callable[[bytes], Any]] = [
        int if kind in INTEGERS else _bool if kind == BOOLEAN else _str
        for kind in (result.ftype(column) for column in range(result.nfields))
    ]
    return decoded_rows(result, columns)


def _bool(raw: bytes) -> bool:
    return raw == b"t"


def _str(raw: bytes) -> str:
    return raw.decode()


async def _result(pgconn: Any, watch: Watch | None = None) -> Any:
    """The result of the statement just sent on `pgconn` (its last one), or its error raised."""
    pgconn.nonblocking = 1
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    while pgconn.flush():  # the statement did not fit in the socket's buffer
        await _ready(loop, fd, loop.add_writer, loop.remove_writer, lambda: True)
    pgconn.consume_input()
    last = None
    while True:  # libpq's get_result blocks while busy: wait on the socket before each one
        if pgconn.is_busy():
            if watch is not None and watch.watching:
                await watch.wait()
            else:
                await _ready(loop, fd, loop.add_reader, loop.remove_reader, lambda: _read(pgconn))
        result = pgconn.get_result()
        if result is None:
            break
        last = result
    if last is None or last.status not in (COMMAND_OK, TUPLES_OK):
        import psycopg  # noqa: PLC0415 (only with a PostgreSQL system database)

        if last is None or pgconn.status != CONNECTION_OK:  # the connection broke
            message = pgconn.get_error_message() if last is None else last.error_message
            raise psycopg.OperationalError(bytes(message or b"").decode(errors="replace"))
        raise psycopg.errors.error_from_result(last, encoding="utf-8")
    return last


def _read(pgconn: Any) -> bool:
    """Read what arrived; whether the result is complete."""
    pgconn.consume_input()
    return not pgconn.is_busy()


async def _ready(loop: Any, fd: int, add: Any, remove: Any, done: Any) -> None:
    """Until `done()` says so, each time `fd` is ready (`add`: the loop's add_reader or
    add_writer)."""
    future = loop.create_future()

    def check() -> None:
        if future.done():
            return
        try:
            if done():
                future.set_result(None)
        except Exception as exc:  # a connection that failed: raised by the awaiting call
            future.set_exception(exc)

    add(fd, check)
    try:
        await future
    finally:
        remove(fd)
