"""Which processes are alive: one lock per executor id, held for as long as its process lives.

Every process that launches durable runs has its own DBOS executor id, and holds a lock named
after it from before DBOS launches until it shuts down. The operating system or the database
server releases the lock when the process dies, SIGKILL included, so "the lock is free" means
"no live process is that executor":

- PostgreSQL: a session-level advisory lock (`pg_try_advisory_lock`, keyed by a 64-bit hash
  of the executor id), on a connection of its own;
  the server drops it with the session when the process dies (or the connection breaks).
- SQLite: an exclusive `flock` on a file in `<database file>.executors/`, released by the
  kernel when the process's descriptors close. SQLite is one machine's database already, so a
  file lock on that machine is as good a witness as the database itself.

`claim(executor_id)` takes another executor's lock when it is free and holds it while the
caller moves that executor's runs (`network.durable.takeover`): two live processes that both
see a process die cannot both move its runs, since only one holds its lock at a time, and
the second, listing the runs under the lock after the first released it, finds none left.
No heartbeat table, no coordinator, no clock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from network.durable.process import DurableConfigError

GENERATED = re.compile(r"an-(worker-)?[0-9a-f]{16}")
"""The executor ids `launch` makes up: never reused, so the lock file of a dead one with no
run left may go (a process that opened it before still finds nothing to move)."""


class Locks(Protocol):
    """The lock of each executor id, on one system database."""

    def acquire(self, executor_id: str) -> bool: ...

    def release(self, executor_id: str, *, forget: bool = False) -> None: ...

    def close(self) -> None: ...


class Claim:
    """A dead executor's lock, held; `emptied` once none of its runs is left to move."""

    def __init__(self, executor_id: str) -> None:
        self.executor_id = executor_id
        self.emptied = False


class Liveness:
    """This process's own lock, and the claim of other executors' locks."""

    def __init__(self, url: str, executor_id: str) -> None:
        self.executor_id = executor_id
        self._locks: Locks = (
            _PostgresLocks(url) if url.startswith("postgresql") else _FileLocks(url)
        )
        if not self._locks.acquire(executor_id):
            self._locks.close()
            raise DurableConfigError(
                f"executor id {executor_id!r} is held by a live process on this database: "
                "give each process its own (or none: launch makes one up)"
            )

    @contextlib.contextmanager
    def claim(self, executor_id: str) -> Iterator[Claim | None]:
        """A `Claim` (the lock held until the block ends) when `executor_id` is dead."""
        if executor_id == self.executor_id or not self._locks.acquire(executor_id):
            yield None
            return
        claim = Claim(executor_id)
        try:
            yield claim
        finally:
            forget = claim.emptied and GENERATED.fullmatch(executor_id) is not None
            self._locks.release(executor_id, forget=forget)

    def close(self) -> None:
        """Release this process's lock (it is leaving on purpose)."""
        self._locks.close()


def lock_key(executor_id: str) -> str:
    """The name of `executor_id`'s lock (hashed into a PostgreSQL advisory lock's key)."""
    return f"agent-network-executor:{executor_id}"


class _PostgresLocks:
    def __init__(self, url: str) -> None:
        import psycopg  # noqa: PLC0415 (dbos brings psycopg; only PostgreSQL needs it)

        self._conn: Any = psycopg.connect(url, autocommit=True)

    def acquire(self, executor_id: str) -> bool:
        row = self._conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (lock_key(executor_id),)
        ).fetchone()
        return bool(row and row[0])

    def release(self, executor_id: str, *, forget: bool = False) -> None:
        self._conn.execute(
            "SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key(executor_id),)
        )

    def close(self) -> None:
        self._conn.close()  # the session ends: every lock it held is released


class _FileLocks:
    def __init__(self, url: str) -> None:
        database = url.split(":///", 1)[1]  # sqlite:///relative or sqlite:////absolute
        self._dir = Path(database.split("?", 1)[0] + ".executors")
        self._dir.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, int] = {}

    def _path(self, executor_id: str) -> Path:
        return self._dir / f"{executor_id}.lock"

    def acquire(self, executor_id: str) -> bool:
        fd = os.open(self._path(executor_id), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._held[executor_id] = fd
        return True

    def release(self, executor_id: str, *, forget: bool = False) -> None:
        fd = self._held.pop(executor_id)
        if forget:  # still held: a process that opens it later finds it gone or free
            with contextlib.suppress(FileNotFoundError):
                self._path(executor_id).unlink()
        os.close(fd)

    def close(self) -> None:
        for executor_id in list(self._held):
            self.release(executor_id)
