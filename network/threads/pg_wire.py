"""The PostgreSQL store's statements on psycopg's libpq handle (`sql_links.PostgresLink`).

A run on a thread makes four round trips to PostgreSQL (its load, one commit per agent call).
Through asyncpg each costs the client about 100,000 instructions (its Python layers, its
statement cache, the asyncio protocol); sent on libpq's handle (`pgconn`) directly, as the
durable engine sends its steps (`network.durable.wire`), about a third of that. Measured in a
stored run: 0.05 to 0.11 ms of CPU a run less on a thread of a few KB (8 to 10%), 0.2 to 0.28
ms once its values reach 5 to 7 KB (benchmarks/README.md, "PostgreSQL's round trips on
libpq"). So the store's own connections are psycopg connections of which only the libpq
handle is used:

- A statement (asyncpg's `$n` placeholders) is prepared on a connection once per text and
  parameters' types, then executed by name.
- Parameters travel in PostgreSQL's binary form, chosen by their exact Python type: `str`
  (`text`), `int` (`int8`), `float` (`float8`), `bool`, None (NULL, its type left to the
  server), and lists of one of the first three (one-dimensional arrays; an empty list is a
  `text[]`, which the statement's cast turns into the type it wants). Anything else is a
  `TypeError` before anything is sent.
- Results come back in binary form too, read by psycopg's own loaders (written in C) by
  their column's type, as psycopg reads them: text, integers, `float8`, booleans, a row
  (`ROW(...)`) as a tuple, an array as a list.
- Texts travel as UTF-8 whatever the database's encoding (the connection's client encoding).
- The connection's socket is watched by the event loop for as long as it is open (a
  statement waits on a future). A server error is raised as psycopg raises it
  (`psycopg.errors`), a broken connection as psycopg's `OperationalError`; the link closes a
  connection a statement failed on, or was cancelled on, rather than reusing it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from struct import Struct
from typing import Any

TEXT, INT8, FLOAT8, BOOL = 25, 20, 701, 16
TEXT_ARRAY, INT8_ARRAY, FLOAT8_ARRAY = 1009, 1016, 1022
COMMAND_OK, TUPLES_OK = 1, 2
BINARY = 1  # libpq's format code
CONNECTION_OK = 0
HEADER = Struct(">iiiii")  # an array's dimensions, NULL flag, element type, length, lower bound
EMPTY = Struct(">iii").pack(0, 0, TEXT)  # an array of no dimension
WORD = Struct(">i")
DOUBLE = Struct(">d")
INT8_PACK = Struct(">q").pack
ARRAY_OF = {TEXT: TEXT_ARRAY, INT8: INT8_ARRAY, FLOAT8: FLOAT8_ARRAY}
# An array element's type and binary form, by the element's exact Python type. Each is a
# function written in C: a commit's parameters are a dozen, seven of them arrays, and each
# step of Python per parameter or element is paid on every commit.
ELEMENTS: dict[type, tuple[int, Callable[[Any], bytes]]] = {
    str: (TEXT, str.encode),
    int: (INT8, INT8_PACK),
    float: (FLOAT8, DOUBLE.pack),
}


def _array(items: list[Any]) -> tuple[int, bytes]:
    if not items:
        return TEXT_ARRAY, EMPTY
    first = type(items[0])
    element = ELEMENTS.get(first)
    if element is None:
        return _mixed_array(items)
    kind, form = element
    parts = [HEADER.pack(1, 0, kind, len(items), 1)]
    for item in items:  # each element: its length, then its bytes
        if type(item) is not first:
            return _mixed_array(items)  # NULLs among the values, or subclasses (a StrEnum)
        data = form(item)
        parts += (WORD.pack(len(data)), data)
    return ARRAY_OF[kind], b"".join(parts)


ELEMENT_FORMS: dict[int, Callable[[Any], bytes]] = {
    TEXT: str.encode,  # a subclass's own value, whatever its __str__
    INT8: lambda value: int.to_bytes(value, 8, "big", signed=True),
    FLOAT8: DOUBLE.pack,
}
NULL_ELEMENT = WORD.pack(-1)
ELEMENT = {str: TEXT, int: INT8, float: FLOAT8}


def _element_kind(value: Any) -> int | None:
    """A non-NULL element's type: str, int (not bool) or float, or a subclass of one."""
    if isinstance(value, bool):
        return None
    return next((kind for base, kind in ELEMENT.items() if isinstance(value, base)), None)


def _mixed_array(items: list[Any]) -> tuple[int, bytes]:
    """The general array: NULL elements (None) among values of one type, or values of a
    subclass of it, as asyncpg took them. An array of NULLs only is a `text[]`."""
    kinds = {_element_kind(item) for item in items if item is not None}
    found = kinds.pop() if len(kinds) == 1 else TEXT if not kinds else None
    if found is None:
        raise TypeError(f"an array parameter holds str, int or float alike, not {items[:3]!r}")
    kind: int = found
    form = ELEMENT_FORMS[kind]
    parts = [HEADER.pack(1, int(None in items), kind, len(items), 1)]
    for item in items:
        if item is None:
            parts.append(NULL_ELEMENT)
        else:
            data = form(item)
            parts.append(WORD.pack(len(data)) + data)
    return ARRAY_OF[kind], b"".join(parts)


def _null(value: None) -> None:
    return None


# A parameter's type and binary form's writer, by its exact Python type (a list: `_array`).
SCALARS: dict[type, tuple[int, Callable[[Any], bytes | None]]] = {
    str: (TEXT, str.encode),
    int: (INT8, INT8_PACK),
    float: (FLOAT8, DOUBLE.pack),
    bool: (BOOL, {False: b"\x00", True: b"\x01"}.__getitem__),
    type(None): (0, _null),
}
BASES: tuple[type, ...] = (bool, str, int, float, list)


def encode(value: Any) -> tuple[int, bytes | None]:
    """A parameter's type and binary form (see the module docstring); a subclass of a type
    taken (a `StrEnum`, say) as its base."""
    kind = type(value)
    if kind is list:
        return _array(value)
    scalar = SCALARS.get(kind)
    if scalar is None:
        base = next((base for base in BASES if isinstance(value, base)), None)
        if base is None:
            raise TypeError(f"a statement parameter of type {kind.__name__} is not supported")
        if base is list:
            return _array(value)
        scalar = SCALARS[base]
    oid, form = scalar
    return oid, form(value)


def decoded_rows(result: Any, readers: list[Callable[[bytes], Any]]) -> list[tuple[Any, ...]]:
    """A libpq result's rows, each column's raw value read by its reader (NULL as None);
    the durable engine's statements read their text results the same way."""
    get = result.get_value
    rows = []
    for row in range(result.ntuples):
        values = []
        for column, read in enumerate(readers):
            raw = get(row, column)
            values.append(None if raw is None else read(raw))
        rows.append(tuple(values))
    return rows


class Connection:
    """One psycopg connection, used through its libpq handle (see the module docstring)."""

    __slots__ = ("_connection", "_fd", "_loader", "_loop", "_pgconn", "_prepared", "_waiter")

    def __init__(self, connection: Any) -> None:
        from psycopg.adapt import Transformer  # noqa: PLC0415 (loaded with the connection)

        self._connection = connection
        self._pgconn = pgconn = connection.pgconn
        pgconn.nonblocking = 1
        self._loop = asyncio.get_running_loop()
        self._fd: int | None = pgconn.socket
        self._waiter: asyncio.Future[None] | None = None
        self._prepared: dict[tuple[str, tuple[int, ...]], bytes] = {}
        # psycopg's loaders (written in C) read the results: half the instructions of
        # reading them in Python here, for the same values
        self._loader = Transformer(connection)
        self._loop.add_reader(pgconn.socket, self._readable)

    @classmethod
    async def open(cls, conninfo: str, setup: Sequence[str] = ()) -> Connection:
        """A new connection, `setup`'s statements (settings) run on it first."""
        import psycopg  # noqa: PLC0415 (the PostgreSQL driver, loaded only for PostgreSQL)

        # Statements and parameters are written as UTF-8 whatever the database's encoding
        # (as asyncpg's connections were): the server converts them, and its results, for us
        connect = psycopg.AsyncConnection.connect
        connection = await connect(conninfo, autocommit=True, client_encoding="utf8")
        try:
            for statement in setup:
                await connection.execute(statement)
        except BaseException:
            await connection.close()
            raise
        return cls(connection)

    @property
    def broken(self) -> bool:
        """Whether the connection is lost: the server closed it (a restart, an idle timeout,
        `pg_terminate_backend`) while it was idle, as the event loop saw (`_readable`)."""
        return self._fd is None or self._pgconn.status != CONNECTION_OK

    async def close(self) -> None:
        self._unwatch()
        await self._connection.close()

    async def fetch(self, sql: str, *arguments: Any) -> list[tuple[Any, ...]]:
        """The rows of `sql` run with `arguments` (one round trip; two the first time a text
        is run with these parameters' types, to prepare it)."""
        types: list[int] = []
        values: list[bytes | None] = []
        for argument in arguments:
            scalar = SCALARS.get(type(argument))
            if scalar is None:  # a list, or a subclass
                kind, value = encode(argument)
            else:
                kind, form = scalar
                value = form(argument)
            types.append(kind)
            values.append(value)
        pgconn = self._pgconn
        key = (sql, tuple(types))
        name = self._prepared.get(key)
        if name is None:
            name = f"an_{len(self._prepared)}".encode()
            pgconn.send_prepare(name, sql.encode(), param_types=types)
            await self._result()
            self._prepared[key] = name
        formats = [BINARY] * len(values)
        pgconn.send_query_prepared(name, values, param_formats=formats, result_format=BINARY)
        result = await self._result()
        if result.status != TUPLES_OK:
            return []
        loader = self._loader
        loader.set_pgresult(result)  # each column in the format it came in: binary
        try:
            return loader.load_rows(0, result.ntuples, tuple)
        finally:  # a thread's whole load can be megabytes: not kept until the next statement
            loader.set_pgresult(None)

    async def _result(self) -> Any:
        """The result of the statement just sent (its last), or its error raised."""
        pgconn = self._pgconn
        if self._fd is None:  # broken while idle
            raise _failure(pgconn, None)
        while pgconn.flush():  # the statement did not fit in the socket's buffer
            writable = self._loop.create_future()
            self._loop.add_writer(self._fd, _settle, writable)
            try:
                await writable
            finally:
                self._loop.remove_writer(self._fd)
        last = None
        while True:
            if pgconn.is_busy():
                self._waiter = waiter = self._loop.create_future()
                try:
                    await waiter
                finally:
                    self._waiter = None
            result = pgconn.get_result()
            if result is None:
                break
            last = result
        if last is None or last.status not in (COMMAND_OK, TUPLES_OK):
            raise _failure(pgconn, last)
        return last

    def _readable(self) -> None:
        waiter = self._waiter
        pgconn = self._pgconn
        try:
            pgconn.consume_input()
            broken = pgconn.status != CONNECTION_OK
            done = broken or not pgconn.is_busy()
        except Exception as exc:  # the connection failed: raised by the awaiting statement
            self._unwatch()
            if waiter is not None and not waiter.done():
                waiter.set_exception(exc)
            return
        if broken:  # an end of file stays readable: never watched again
            self._unwatch()
        if done and waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _unwatch(self) -> None:
        if self._fd is not None:
            self._loop.remove_reader(self._fd)
            self._fd = None


def _failure(pgconn: Any, last: Any) -> Exception:
    """psycopg's error for a statement's failed result (`last`), or for a broken connection."""
    import psycopg  # noqa: PLC0415 (loaded already: it opened the connection)

    if last is None or pgconn.status != CONNECTION_OK:
        message = pgconn.get_error_message() if last is None else last.error_message
        return psycopg.OperationalError(bytes(message or b"").decode(errors="replace"))
    error: Exception = psycopg.errors.error_from_result(last, encoding="utf-8")
    return error


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# asyncpg's connection arguments libpq takes, under libpq's names
LIBPQ_NAMES = {"host": "host", "port": "port", "user": "user", "password": "password"}
LIBPQ_NAMES |= {"database": "dbname", "dsn": "dsn"}
SSL_MODES = frozenset({"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})


def conninfo(arguments: dict[str, Any]) -> str | None:
    """libpq's connection string for `asyncpg.connect`'s `arguments`; None when one of them
    has no libpq equivalent here (an SSL context, server settings, timeouts...): such
    connections are opened by asyncpg."""
    from psycopg.conninfo import make_conninfo  # noqa: PLC0415 (only for PostgreSQL)

    names: dict[str, Any] = {}
    for name, value in arguments.items():
        if name == "ssl" and isinstance(value, str) and value in SSL_MODES:
            names["sslmode"] = value
        elif name in LIBPQ_NAMES and isinstance(value, str | int):
            names[LIBPQ_NAMES[name]] = str(value)
        elif value is not None:
            return None
    dsn = names.pop("dsn", "")
    return make_conninfo(dsn, **names)
