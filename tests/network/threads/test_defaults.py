"""Which store a run uses: none without a thread id, SQLite by default, a URL or a path."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, Network, ThreadRef
from network.threads import STORE_ENV, MemoryStore, SQLStore, open_store, store_url
from network.threads.urls import check_store_url

pytestmark = pytest.mark.anyio


@tool
def remember(ctx: ToolContext) -> str:
    """Write to every scope."""
    ctx.kv.set("seen", True)
    ctx.kv.set("user:seen", True)
    ctx.kv.set("app:seen", True)
    return "ok"


def network() -> Network:
    agent = Agent("a", tools=[remember], model=ScriptedModel([call("remember"), "done"]))
    return Network(
        "defaults", agents=[agent], router=lambda ctx: agent if ctx.call_count < 2 else None
    )


async def test_without_a_thread_id_nothing_is_written_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(STORE_ENV, raising=False)
    result = await network().run("go")
    assert result["user:seen"] is True
    assert list(tmp_path.iterdir()) == []
    assert result.state.kv.take_shared_writes() == []  # not even kept in memory for a store


async def test_a_thread_id_alone_uses_the_sqlite_file_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(STORE_ENV, raising=False)
    await network().run("go", thread=ThreadRef("t1", user_id="u"))

    assert (tmp_path / "agent-network.db").exists()
    async with SQLStore(str(tmp_path / "agent-network.db")) as store:
        thread = await store.get_thread("t1")
    assert thread is not None and thread.revision == 2
    assert thread.full_state() == {"seen": True, "user:seen": True, "app:seen": True}
    with (tmp_path / "agent-network.db").open("rb") as db:  # WAL mode is recorded in the header
        assert db.read(20)[18:20] == b"\x02\x02"


async def test_the_environment_names_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "elsewhere" / "threads.db"
    target.parent.mkdir()
    monkeypatch.setenv(STORE_ENV, f"sqlite:///{target}")
    await network().run("go", thread="t1")
    assert target.exists() and not (tmp_path / "agent-network.db").exists()


def test_the_suites_default_store_is_outside_the_checkout() -> None:
    """tests/conftest.py names the default store in a temporary folder for the session: a test
    run from the checkout that opens the default store writes nothing into the checkout."""
    checkout = Path(__file__).resolve().parents[3]
    default = Path(store_url().removeprefix("sqlite+aiosqlite:///"))
    assert default.name == "agent-network.db" and default.is_absolute()
    assert not default.is_relative_to(checkout) and not default.is_relative_to(Path.cwd())


async def test_a_path_and_a_url_name_the_same_sqlite_store(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    await network().run("one", thread=ThreadRef("t1", store=str(path)))
    second = await network().run("two", thread=ThreadRef("t1", store=f"sqlite+aiosqlite:///{path}"))
    third = await network().run("three", thread=ThreadRef("t1", store=path))
    assert len(second.results) == 4 and len(third.results) == 6


async def test_a_postgresql_url_string(postgres_url: str) -> None:
    thread_id = f"url-{uuid.uuid4()}"
    await network().run("one", thread=ThreadRef(thread_id, store=postgres_url))
    again = await network().run("two", thread=ThreadRef(thread_id, store=postgres_url))
    assert [m.content for m in again.messages if m.role == "user"] == ["one", "two"]


def test_store_urls() -> None:
    assert store_url("postgresql://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert store_url("postgres://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert store_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    assert store_url("x.db") == "sqlite+aiosqlite:///" + os.path.abspath("x.db")
    memory = MemoryStore()
    assert open_store(memory) == (memory, False)
    with pytest.raises(ConfigurationError, match="store="):
        open_store(42)
    with pytest.raises(ConfigurationError, match="MemoryStore"):
        SQLStore("sqlite+aiosqlite://")
    with pytest.raises(ConfigurationError, match="SQLite and PostgreSQL"):
        SQLStore("mysql+aiomysql://u@h/db")


def test_a_bad_store_url_is_a_configuration_error_that_shows_no_password() -> None:
    # the URL was echoed whole, password and all, into an error that gets logged
    with pytest.raises(ConfigurationError, match="SQLite and PostgreSQL") as unsupported:
        SQLStore("mysql://ann:s3cret@db-host/app")
    assert "s3cret" not in str(unsupported.value) and "ann:***@db-host" in str(unsupported.value)
    # a host that does not parse was sqlalchemy's ValueError from int() of a port
    with pytest.raises(ConfigurationError, match="is not a database URL") as unparsed:
        SQLStore("postgresql://ann:s3cret@[::1/app")
    assert "s3cret" not in str(unparsed.value)
    from network.memory import Memories

    memories = Memories("postgresql://ann:p@ss:w@rd@db-host/app")  # opened on first use
    assert "p@ss" not in repr(memories) and "w@rd" not in repr(memories)


def test_a_url_naming_another_driver_is_a_configuration_error_naming_it() -> None:
    # a psycopg URL failed at the first run with "connect() got an unexpected keyword
    # argument 'dbname'"; a sync SQLite or psycopg2 one with SQLAlchemy's or the import's
    for url, driver in (
        ("postgresql+psycopg://ann:s3cret@db-host/app", "psycopg"),
        ("postgresql+psycopg2://ann:s3cret@db-host/app", "psycopg2"),
        ("sqlite+pysqlite:///threads.db", "pysqlite"),
    ):
        with pytest.raises(ConfigurationError, match=f"'{driver}' driver") as refused:
            SQLStore(url)
        assert "s3cret" not in str(refused.value)
        with pytest.raises(ConfigurationError, match=f"'{driver}' driver"):
            check_store_url(url)  # what a durable run's enqueue records
    assert check_store_url("postgresql://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert check_store_url("sqlite+aiosqlite:///x.db") == "sqlite+aiosqlite:///x.db"


def test_importing_the_library_does_not_load_sqlalchemy() -> None:
    code = (
        "import sys, network, agents, routers, network.threads\n"
        "assert 'sqlalchemy' not in sys.modules, 'sqlalchemy was imported'\n"
        "from network.threads import SQLStore\n"
        "assert 'sqlalchemy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
