"""`serve`, `dev` and `mcp` open `--store` once before anything listens: a store that cannot
be opened stops the command with one line naming the option and the driver's reason (never a
password), instead of a server that answers every request `store_failed`; a store that can be
opened gets its tables then."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from unittest import mock

import pytest

from network.cli.load import CLIError
from network.cli.store_check import check_store
from tests.network.a2a.servers import TEAM
from tests.network.cli.test_main import cli_main

REFUSING = "postgresql://app:s3cret-pw@127.0.0.1:1/threads"  # nothing listens on port 1


@pytest.mark.parametrize("command", ["serve", "dev", "mcp"])
def test_a_store_in_a_directory_that_does_not_exist_stops_the_command(command: str) -> None:
    refused = AssertionError("served despite a store it cannot open")
    with (
        mock.patch("uvicorn.Server.run", side_effect=refused),
        mock.patch("network.mcp.serve_mcp", side_effect=refused),
    ):
        done = cli_main(command, TEAM, "--port", "0", "--store", "no/such/dir/threads.db")
    assert done.returncode != 0
    assert done.stderr.endswith(
        "error: --store: cannot open the thread store: no such directory: no/such/dir\n"
    )
    assert "Serving" not in done.stdout


@pytest.mark.parametrize(
    ("url", "directory"),
    [
        ("sqlite:///no/such/dir/threads.db", "no/such/dir"),
        ("sqlite+aiosqlite:////no/such/dir/threads.db?timeout=5", "/no/such/dir"),
    ],
)
def test_an_sqlite_url_in_a_directory_that_does_not_exist_names_the_directory(
    url: str, directory: str
) -> None:
    with pytest.raises(CLIError) as refused:
        check_store(url)
    assert str(refused.value) == (
        f"--store: cannot open the thread store: no such directory: {directory}"
    )


def test_a_database_that_refuses_the_connection_stops_serve_without_its_password() -> None:
    refused = AssertionError("served despite a store it cannot open")
    with mock.patch("uvicorn.Server.run", side_effect=refused):
        done = cli_main("serve", TEAM, "--port", "0", "--store", REFUSING)
    assert done.returncode != 0
    last = done.stderr.splitlines()[-1]
    assert last.startswith("error: --store: cannot open the thread store: ConnectionRefusedError")
    assert "s3cret-pw" not in done.stderr + done.stdout


def test_a_store_that_opens_has_its_tables_made(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    check_store(str(path))
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        assert "agent_network_threads" in {name for (name,) in tables}
    check_store(str(path))  # and opened again as it is


def test_a_file_that_is_not_a_database_is_named_by_the_drivers_reason(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database " * 100)
    with pytest.raises(CLIError, match=r"^--store: cannot open the thread store: \w+Error: "):
        check_store(str(path))
    assert path.read_text() == "not a database " * 100  # left as it was


def test_threads_in_memory_are_not_checked() -> None:
    check_store(None)
