"""An SQLite system database in write-ahead-log mode, as durable as before and cheaper.

DBOS leaves SQLite in its default rollback-journal mode, where each commit (one per recorded
step) writes and syncs a journal file, syncs the database and deletes the journal: two or
more fsyncs and a file deletion per step. In WAL mode a commit appends to the log and syncs
it once, and readers (a `DurableClient` following a run) never block the writer.

Durability is unchanged: SQLite's `synchronous` setting stays FULL, so a committed step is on
disk before the run goes on, whatever kills the process (SIGKILL, or a power cut). The mode is
a property of the database file (every later connection, of any process, uses it), set here
before DBOS opens the file. WAL needs the processes sharing the file to be on one machine
(no network filesystem), which an SQLite system database already requires.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def use_write_ahead_log(url: str) -> None:
    """Put the SQLite database of `url` in WAL mode (created when missing); a no-op for
    another database or an in-memory one."""
    if not url.startswith("sqlite"):
        return
    from sqlalchemy.engine import make_url  # noqa: PLC0415 (only when launching on SQLite)

    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(database, timeout=30)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
    finally:
        connection.close()


def sqlite_file_exists(url: str) -> bool:
    """Whether the SQLite database file of `url` exists (True for another database: its
    server says)."""
    if not url.startswith("sqlite"):
        return True
    from sqlalchemy.engine import make_url  # noqa: PLC0415 (only for an SQLite database)

    database = make_url(url).database
    return not database or database.startswith("file:") or Path(database).is_file()
