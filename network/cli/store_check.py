"""`--store` opened once before a server listens.

A store the server cannot open (an SQLite file in a directory that does not exist or cannot be
written, a database that refuses the connection or the credentials) would otherwise be found
at the first request, and every request after it answered `store_failed` while the server
looks healthy. Opened here, it stops the command with one line naming the option and the
driver's reason (its class and message: a connection's reason names the host, never the
password), as every other bad option does. The tables are made here too, as the first run
would make them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio

from network.cli.load import CLIError
from network.errors import ConfigurationError, ThreadStoreError

__all__ = ["check_store", "reason", "sqlite_path"]

# A database that does not answer at all (a host that drops packets) is given this long.
OPEN_WITHIN_SECONDS = 30.0


def check_store(store: str | None, *, within: float = OPEN_WITHIN_SECONDS) -> None:
    """Open `store` (a `--store` value after `store_option`), make its tables and close it;
    a `CLIError` naming `--store` if that fails. None (threads in memory) is not checked."""
    if store is None:
        return
    try:
        path = sqlite_path(store)
        if path is not None:
            _open_sqlite_file(str(path))
        anyio.run(_open_and_close, store, within)
    except ConfigurationError as exc:  # a URL no store supports
        raise CLIError(f"--store: {exc}") from exc
    except (ThreadStoreError, sqlite3.Error) as exc:
        raise CLIError(f"--store: cannot open the thread store: {reason(store, exc)}") from exc
    except TimeoutError as exc:
        raise CLIError(f"--store: the database did not answer within {within:g} s") from exc


def _open_sqlite_file(path: str) -> None:
    """SQLite's own open of the file, and a read of its header ("file is not a database"),
    before the store's: a failed open through aiosqlite leaves its thread answering an event
    loop that has ended by then."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA schema_version")
    finally:
        connection.close()


async def _open_and_close(store: str, within: float) -> None:
    from network.threads.resolve import open_store  # noqa: PLC0415 (sqlalchemy)

    opened, _ = open_store(store)
    try:
        with anyio.fail_after(within):
            await opened.setup()  # type: ignore[attr-defined]  # the URL's store is an SQLStore
    finally:
        await opened.close()


def sqlite_path(store: str) -> Path | None:
    """The SQLite file `store` names: a path, or an `sqlite:///PATH` URL (a driver's too,
    `sqlite+aiosqlite:///PATH`; four slashes for an absolute path); None for another
    database. Opened as a file first, as a path is (an SQLite URL's failed open left
    aiosqlite's thread on a closed loop), and a missing directory named (the URL said only
    "unable to open database file")."""
    if "://" not in store:
        return Path(store)
    scheme, _, rest = store.partition("://")
    if scheme.split("+", 1)[0] != "sqlite":
        return None
    path = rest.removeprefix("/").split("?", 1)[0]
    return Path(path) if path else None


def reason(store: str, exc: Exception) -> str:
    """What the driver said, in one line, without SQLAlchemy's wrapping."""
    cause: Any = exc.__cause__ if isinstance(exc, ThreadStoreError) else exc
    path = sqlite_path(store)
    if path is not None and not path.parent.is_dir():
        return f"no such directory: {path.parent}"
    driver = getattr(cause, "orig", None) or cause
    if driver is None:
        return "the store failed; the server's log has the details"
    message = str(driver).splitlines()[0] if str(driver) else ""
    return f"{type(driver).__name__}: {message}" if message else type(driver).__name__
