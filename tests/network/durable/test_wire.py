"""`network.durable.wire`: a statement sent on a connection's libpq handle reads and writes
what psycopg would, raises the server's errors as psycopg does, is prepared once per
connection, and a connection that fails raises psycopg's `OperationalError`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest

from network.durable import wire

pytestmark = pytest.mark.anyio
on_postgres = pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)


@pytest.fixture
async def connection(durable_db: str) -> AsyncIterator[Any]:
    server = durable_db.rsplit("/", 1)[0] + "/postgres"
    name = durable_db.rsplit("/", 1)[1]
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    conn = await psycopg.AsyncConnection.connect(durable_db, autocommit=True)
    await conn.execute(
        "CREATE TABLE t (id integer PRIMARY KEY, name text, big bigint, flag boolean)"
    )
    try:
        yield conn
    finally:
        await conn.close()


async def test_named_placeholders_become_numbered_ones_once_per_name() -> None:
    form = wire.shape("SELECT %(a)s, %(b)s, %(a)s, 5 %% 2")
    assert form == wire.Shape(b"SELECT $1, $2, $1, 5 % 2", ("a", "b"))


@on_postgres
async def test_values_go_and_come_back_as_psycopg_reads_them(connection: Any) -> None:
    insert = (
        "INSERT INTO t VALUES (%(id)s, %(name)s, %(big)s, %(flag)s) RETURNING id, name, big, flag"
    )
    row = {"id": 1, "name": "é'; --", "big": 2**40, "flag": True}
    assert await wire.execute(connection, insert, row) == [(1, "é'; --", 2**40, True)]
    none = {"id": 2, "name": None, "big": None, "flag": False}
    assert await wire.execute(connection, insert, none) == [(2, None, None, False)]
    cursor = await connection.execute("SELECT id, name, big, flag FROM t ORDER BY id")
    assert await cursor.fetchall() == [(1, "é'; --", 2**40, True), (2, None, None, False)]
    empty = await wire.execute(connection, "SELECT id FROM t WHERE id = %(id)s", {"id": 9})
    assert empty == []
    assert await wire.execute(connection, "UPDATE t SET big = 1", {}) == []


@on_postgres
async def test_a_statement_is_prepared_once_per_connection(connection: Any) -> None:
    select = "SELECT count(*) FROM t WHERE id > %(low)s"
    for _ in range(3):
        assert await wire.execute(connection, select, {"low": 0}) == [(0,)]
    cursor = await connection.execute(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%%$1%%'"
    )
    assert await cursor.fetchone() == (1,)


@on_postgres
async def test_a_long_statement_is_sent_whole(connection: Any) -> None:
    text = "x" * 3_000_000  # more than a socket's buffer: sent as the socket drains
    insert = "INSERT INTO t (id, name) VALUES (%(id)s, %(name)s) RETURNING length(name)"
    assert await wire.execute(connection, insert, {"id": 3, "name": text}) == [(3_000_000,)]


@on_postgres
async def test_the_servers_errors_are_raised_as_psycopg_raises_them(connection: Any) -> None:
    insert = "INSERT INTO t (id) VALUES (%(id)s)"
    await wire.execute(connection, insert, {"id": 4})
    with pytest.raises(psycopg.errors.UniqueViolation):
        await wire.execute(connection, insert, {"id": 4})
    with pytest.raises(psycopg.errors.UndefinedTable):
        await wire.execute(connection, "SELECT * FROM nowhere", {})
    assert await wire.execute(connection, "SELECT 1", {}) == [(1,)]  # still usable
    with pytest.raises(TypeError, match="float"):
        await wire.execute(connection, "SELECT %(x)s", {"x": 1.5})


@on_postgres
async def test_a_connection_that_failed_raises_an_operational_error(
    connection: Any, durable_db: str
) -> None:
    (pid,) = await wire.execute(connection, "SELECT pg_backend_pid()", {})
    with psycopg.connect(durable_db, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
    with pytest.raises(psycopg.OperationalError):
        await wire.execute(connection, "SELECT 1", {})


@on_postgres
async def test_a_watched_connection_is_registered_with_its_loop_once(
    connection: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    added: list[int] = []
    real = loop.add_reader

    def counted(fd: int, callback: Any, *args: Any) -> None:
        added.append(fd)
        real(fd, callback, *args)

    monkeypatch.setattr(loop, "add_reader", counted)
    watch = wire.Watch(connection)
    for low in range(5):
        assert await wire.execute(connection, "SELECT %(low)s + 1", {"low": low}, watch) == [
            (low + 1,)
        ]
    assert added == [watch.fd]  # once, not once per statement
    watch.stop()
    assert not loop._selector.get_map().get(watch.fd)  # type: ignore[attr-defined]
    assert await wire.execute(connection, "SELECT 2", {}) == [(2,)]  # unwatched: as before


@on_postgres
async def test_a_watched_connection_the_server_closes_while_idle_stops_its_watch(
    connection: Any, durable_db: str
) -> None:
    import asyncio

    watch = wire.Watch(connection)
    (pid,) = await wire.execute(connection, "SELECT pg_backend_pid()", {}, watch)
    with psycopg.connect(durable_db, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
    for _ in range(200):  # the end of file is read by the watch, which stops
        await asyncio.sleep(0.01)
        if not watch.watching:
            break
    assert not watch.watching  # never a socket that stays readable on the loop
    with pytest.raises(psycopg.OperationalError):
        await wire.execute(connection, "SELECT 1", {}, watch)


@on_postgres
async def test_the_pool_keeps_its_connections_watched_and_stops_them_when_closed(
    durable_db: str,
) -> None:
    import asyncio

    from dbos import DBOS

    from network.durable.connections import Connections

    DBOS.migrate(durable_db)  # (creates the database)

    import sqlalchemy

    # what `Connections` reads of DBOS's system database
    engine = SimpleNamespace(url=sqlalchemy.make_url(durable_db))
    sys_db = SimpleNamespace(_is_sqlite=False, app_name="test", schema="dbos", engine=engine)
    pool = Connections(sys_db)
    loop = asyncio.get_running_loop()
    for _ in range(3):
        assert await pool.execute_async("SELECT 1", {}) == [(1,)]
    ((connection, watch),) = pool._loop_pool()[0]
    assert watch.watching and loop._selector.get_map().get(watch.fd)  # type: ignore[attr-defined]
    pool.close()  # on the loop's own thread: at once
    assert not watch.watching and connection.pgconn.status != 0
