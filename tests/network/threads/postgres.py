"""A throwaway PostgreSQL server for the tests, started from Debian's `postgresql` package.

The server lives in a temporary directory, listens on a free port of 127.0.0.1 (and a unix
socket in that directory), and is stopped and removed afterwards. initdb refuses to run as
root, so under root every server command runs as the `postgres` user. A missing server is a
test failure, never a skip: scripts/install-test-deps.sh installs it (`.ci/run` calls that).
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DATABASE = "agent_network_test"


def postgres_bindir(pattern: str = "/usr/lib/postgresql/*/bin/initdb") -> Path:
    """The newest installed server's bin directory (or initdb's on PATH); fails the test when
    there is none."""

    def version(path: str) -> tuple[int, ...]:
        found = re.search(r"/postgresql/([\d.]+)/", path)
        return tuple(int(part) for part in found.group(1).split(".")) if found else (0,)

    found = sorted(glob.glob(pattern), key=version)
    on_path = shutil.which("initdb") if pattern.startswith("/usr/lib/postgresql/") else None
    if not found and on_path:  # another layout, as scripts/install-test-deps.sh accepts
        found = [on_path]
    if not found:
        pytest.fail(
            "PostgreSQL's initdb was not found (looked for /usr/lib/postgresql/*/bin/initdb). "
            "Install the server with scripts/install-test-deps.sh "
            "(apt-get install postgresql); the PostgreSQL store tests need a real server.",
            pytrace=False,
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(command: list[str], **kwargs: object) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}", pytrace=False)


@contextmanager
def postgres_server(
    *, fsync: bool = False, max_connections: int | None = None, bindir: Path | None = None
) -> Iterator[str]:
    """Start a server, create a database, yield its SQLAlchemy URL; stop and clean up after.

    `fsync=False` (the tests'): a commit does not wait for the disk. `fsync=True` keeps
    PostgreSQL's default settings (benchmarks measure with both). `max_connections`: the
    server's limit (default PostgreSQL's, 100; a benchmark of many worker processes needs
    more). `bindir`: another server's programs (the memory tests' PostgreSQL with pgvector:
    tests/network/memory/pgvector.py)."""
    bindir = bindir or postgres_bindir()
    root = Path(tempfile.mkdtemp(prefix="agent-network-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root, but there is no `postgres` user to run initdb as")
        os.chown(root, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    port = _free_port()
    pg_ctl = str(bindir / "pg_ctl")
    try:
        _run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
              "-E", "UTF8", "--no-sync"])  # fmt: skip
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1"
        options += "" if fsync else " -c fsync=off"
        options += f" -c max_connections={max_connections}" if max_connections else ""
        _run([*prefix, pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-w", "-t", "60",
              "-o", options, "start"])  # fmt: skip
        try:
            _run([*prefix, str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                  "-U", "postgres", DATABASE])  # fmt: skip
            yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/{DATABASE}"
        finally:
            subprocess.run(
                [*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                capture_output=True,
                timeout=60,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
