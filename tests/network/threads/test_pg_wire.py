"""The PostgreSQL store's connections on libpq (`network.threads.pg_wire`, through
`sql_links.PostgresLink`): parameters and results in binary form, errors, a connection that
breaks or a statement cancelled, and asyncpg kept for arguments libpq has no name for."""

from __future__ import annotations

import enum
from enum import StrEnum
from typing import Any

import anyio
import pytest
from sqlalchemy.exc import DBAPIError

from network.threads import pg_wire
from network.threads.sql_links import PostgresLink, postgres_arguments

pytestmark = pytest.mark.anyio


class Kind(StrEnum):
    A = "a"


def link_of(url: str, size: int = 1, **extra: Any) -> PostgresLink:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    return PostgresLink(postgres_arguments(engine.dialect, engine.url, extra), size=size)


async def test_parameters_and_results_travel_in_binary_form(postgres_url: str) -> None:
    link = link_of(postgres_url)
    try:
        (row,) = await link.fetch(
            "SELECT $1::text, $2 + 1, $3 * 2, NOT $4, $5::text IS NULL, $6::text[],"
            " $7::int[], $8::float8[], cardinality($9::int[]), 'é'::varchar, 7::int2,"
            " ARRAY[ROW('k'::text, 1, 2.5::float8, NULL::text)], ARRAY[]::text[], ARRAY[1, NULL]",
            "a'b\"c\\",
            41,
            1.25,
            True,
            None,
            ["x", "", '{"q": "\\""}'],
            [1, -2],
            [0.5],
            [],
        )
        assert row == (
            "a'b\"c\\",
            42,
            2.5,
            False,
            True,
            ["x", "", '{"q": "\\""}'],
            [1, -2],
            [0.5],
            0,
            "é",
            7,
            [("k", 1, 2.5, None)],
            [],
            [1, None],
        )

        # NULLs among an array's values, and values of a subclass (as asyncpg took them):
        # a parallel branch's rerun writes [1, None, None]
        class Level(enum.IntEnum):
            HIGH = 3

        class Colour(enum.StrEnum):
            RED = "red"

        (row,) = await link.fetch(
            "SELECT $1::int8[], $2::text[], $3::float8[], $4::int8[], $5::text[], $6::text[]",
            [1, None, None],
            [None, "b"],
            [None, 0.5],
            [Level.HIGH, 2],
            [Colour.RED, None],
            [None, None],
        )
        assert row == (
            [1, None, None],
            [None, "b"],
            [None, 0.5],
            [3, 2],
            ["red", None],
            [None, None],
        )
        with pytest.raises(TypeError, match="str, int or float alike"):
            await link.fetch("SELECT $1::text[]", [1, "a", None])
        with pytest.raises(TypeError, match="str, int or float alike"):
            await link.fetch("SELECT $1::text[]", [True, None])
        long = "x" * 5_000_000  # more than the socket takes at once: written as it drains
        assert await link.fetch("SELECT length($1)", long) == [(5_000_000,)]
        assert await link.fetch("SELECT 1 WHERE false") == []
        assert await link.fetch("SET application_name = 'x'") == []
    finally:
        await link.close()


async def test_a_parameter_of_another_type_is_refused_before_anything_is_sent(
    postgres_url: str,
) -> None:
    link = link_of(postgres_url)
    try:
        ((pid,),) = await link.fetch("SELECT pg_backend_pid()")
        with pytest.raises(TypeError, match="dict"):
            await link.fetch("SELECT $1::text", {"a": 1})
        assert await link.fetch("SELECT $1::text", Kind.A) == [("a",)]  # a str subclass
        with pytest.raises(TypeError, match="alike"):
            await link.fetch("SELECT $1::int[]", [1, "2"])
        assert await link.fetch("SELECT pg_backend_pid()") == [(pid,)]  # the same connection
    finally:
        await link.close()


async def test_a_server_error_raises_and_replaces_the_connection(postgres_url: str) -> None:
    import psycopg

    link = link_of(postgres_url)
    try:
        ((pid,),) = await link.fetch("SELECT pg_backend_pid()")
        with pytest.raises(DBAPIError) as raised:
            await link.fetch("SELECT 1 / $1", 0)
        assert isinstance(raised.value.orig, psycopg.errors.DivisionByZero)
        ((again,),) = await link.fetch("SELECT pg_backend_pid()")
        assert again != pid
    finally:
        await link.close()


async def test_a_connection_the_server_closed_while_idle_is_replaced_before_use(
    postgres_url: str,
) -> None:
    """Before, the next statement failed on it (`DBAPIError`), a run's commit among them;
    nothing was sent on it, so a new connection takes the statement instead."""
    link, other = link_of(postgres_url), link_of(postgres_url)
    try:
        ((pid,),) = await link.fetch("SELECT pg_backend_pid()")
        await other.fetch("SELECT pg_terminate_backend($1::int)", pid)
        await anyio.sleep(0.1)  # the end of file reaches the idle connection's watch
        ((again,),) = await link.fetch("SELECT pg_backend_pid()")
        assert again != pid
        assert await link.fetch("SELECT 1") == [(1,)]
    finally:
        await link.close()
        await other.close()


async def test_a_cancelled_statement_closes_its_connection(postgres_url: str) -> None:
    link = link_of(postgres_url)
    try:
        ((pid,),) = await link.fetch("SELECT pg_backend_pid()")
        with anyio.move_on_after(0.2):
            await link.fetch("SELECT pg_sleep(5)")
        ((again,),) = await link.fetch("SELECT pg_backend_pid()")
        assert again != pid
    finally:
        await link.close()


async def test_libpq_opens_the_connections_unless_an_argument_needs_asyncpg(
    postgres_url: str,
) -> None:
    plain = link_of(postgres_url)
    settings = link_of(postgres_url, server_settings={"application_name": "by-asyncpg"})
    try:
        assert await plain.fetch("SELECT $1::text", "on libpq") == [("on libpq",)]
        assert isinstance(plain._pool._opened[0], pg_wire.Connection)
        ((name,),) = await settings.fetch("SELECT current_setting('application_name')")
        assert name == "by-asyncpg"
        assert not isinstance(settings._pool._opened[0], pg_wire.Connection)
    finally:
        await plain.close()
        await settings.close()


def test_libpq_connection_strings_from_asyncpg_arguments() -> None:
    arguments = {"host": "h", "port": 5, "user": "u", "database": "d", "ssl": "require"}
    found = pg_wire.conninfo(arguments)
    assert found is not None
    assert dict(part.split("=") for part in found.split()) == {
        "host": "h",
        "port": "5",
        "user": "u",
        "dbname": "d",
        "sslmode": "require",
    }
    assert pg_wire.conninfo({"host": "h", "ssl": object()}) is None
    assert pg_wire.conninfo({"host": "h", "command_timeout": 5}) is None


async def test_texts_travel_as_utf8_whatever_the_databases_encoding(postgres_url: str) -> None:
    # Parameters are written as UTF-8: a LATIN1 database's default client encoding would
    # take 'é' as two characters (stored as 'Ã©'), and its results would be read as LATIN1.
    import uuid

    name = f"latin1_{uuid.uuid4().hex[:8]}"
    admin = link_of(postgres_url)
    try:
        await admin.fetch(
            f"CREATE DATABASE {name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'"
            " TEMPLATE template0"
        )
        link = link_of(postgres_url.rsplit("/", 1)[0] + "/" + name)
        try:
            rows = await link.fetch("SELECT length($1), $1 || 'è', ARRAY[$1]", "é")
            assert rows == [(1, "éè", ["é"])]
        finally:
            await link.close()
        await admin.fetch(f"DROP DATABASE {name}")
    finally:
        await admin.close()


def test_an_array_of_one_exact_type_is_written_as_the_general_writer_writes_it() -> None:
    # `_array` writes lists of exact `str`, `int` or `float` on a short path; the general one
    # (NULLs, subclasses) must agree with it byte for byte
    for items in (["a", "", "é" * 300], [1, -2, 2**63 - 1], [0.5, -1e300], ["x"], [7]):
        assert pg_wire._array(items) == pg_wire._mixed_array(items)
    assert pg_wire.encode(True) == (pg_wire.BOOL, b"\x01")
    assert pg_wire.encode(Kind.A) == pg_wire.encode("a")


async def test_a_statements_result_is_not_kept_once_its_rows_are_read(postgres_url: str) -> None:
    link = link_of(postgres_url)
    try:
        big = "x" * 1_000_000
        assert await link.fetch("SELECT length($1::text), $1::text = $2", big, big) == [
            (1_000_000, True)
        ]
        (connection,) = link._pool._opened
        assert connection._loader.pgresult is None
    finally:
        await link.close()


PLANS = (
    "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
    " WHERE statement NOT LIKE '%pg_prepared_statements%'"
)


async def test_the_links_connections_plan_each_statement_once(postgres_url: str) -> None:
    # PostgreSQL plans a prepared statement anew for each of its first five runs, and after
    # them for as long as its generic plan looks dearer than theirs (sql_links.GENERIC_PLANS):
    # on libpq and through asyncpg, every run takes the generic plan.
    by_asyncpg = link_of(postgres_url, server_settings={"application_name": "x"})
    for link in (link_of(postgres_url), by_asyncpg):
        try:
            for number in range(3):
                assert await link.fetch("SELECT $1::int8 + 1", number) == [(number + 1,)]
            rows = [tuple(row) for row in await link.fetch(PLANS)]
            assert rows == [("SELECT $1::int8 + 1", 3, 0)]
        finally:
            await link.close()


async def test_a_threads_load_is_not_planned_again_at_every_run(postgres_url: str) -> None:
    # Each load was planned again for its first five runs on a connection, and on a thread of
    # some size for good (its generic plan, seven subqueries, looks dearer to the planner than
    # a plan for the run's values): about half of the load's server CPU. Loads and commits of a
    # thread: each statement planned once, the load's generic plan from its first run.
    from network.threads import SQLStore
    from tests.network.threads.test_conformance import commit_exchange

    store = SQLStore(postgres_url)
    try:
        await store.create_thread("planned", app_name="app")
        revision = 0
        for turn in range(7):
            assert (await store.get_thread("planned")) is not None
            revision = await commit_exchange(store, "planned", revision, f"turn {turn}")
        rows = await store.statement("", PLANS, ())
        loads = [row for row in rows if row[0].startswith("SELECT t.thread_id")]
        assert len(loads) == 1 and loads[0][1:] == (7, 0)
        assert all(custom == 0 for _, _, custom in rows), rows
    finally:
        await store.close()
