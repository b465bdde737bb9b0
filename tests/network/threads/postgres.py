"""A throwaway PostgreSQL server for the tests, started from Debian's `postgresql` package.

The server lives in a temporary directory, listens on a free port of 127.0.0.1 (and a unix
socket in that directory), and is stopped and removed afterwards. initdb refuses to run as
root, so under root every server command runs as the `postgres` user. A missing server is a
test failure, never a skip: scripts/install-test-deps.sh installs it (`.ci/run` calls that).

A session that is killed (`kill -9`, a CI timeout, a second Ctrl-C) never stops its server:
the `postgres -D <tmp>/agent-network-pg-*/data` goes on, holding its port and memory, for
every later session to find. So each server's folder holds `owner.json`, written before
initdb: the process that started it (its pid and start time). Before starting a server,
`reap_stale` stops those whose owner is gone and removes their folders. It touches only what
this helper made and whose maker is dead: a folder without `owner.json` (a user's, or one
from before) is left alone; an owner still running (another xdist worker, another session)
keeps its server; and a pid is signalled only when its command line names that folder's data
directory (a pid the system reused for another program is not).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DATABASE = "agent_network_test"
PREFIX = "agent-network-pg-"  # the folders of the servers this helper starts
OWNER = "owner.json"  # in each: the process that started it (see the module docstring)


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
    *,
    fsync: bool = False,
    max_connections: int | None = None,
    bindir: Path | None = None,
    base: Path | None = None,
) -> Iterator[str]:
    """Start a server, create a database, yield its SQLAlchemy URL; stop and clean up after.

    `fsync=False` (the tests'): a commit does not wait for the disk. `fsync=True` keeps
    PostgreSQL's default settings (benchmarks measure with both). `max_connections`: the
    server's limit (default PostgreSQL's, 100; a benchmark of many worker processes needs
    more). `bindir`: another server's programs (the memory tests' PostgreSQL with pgvector:
    tests/network/memory/pgvector.py). `base`: the folder the server's own folder is made in
    (default the system's temporary folder), where servers of dead sessions are reaped first."""
    bindir = bindir or postgres_bindir()
    base = base or Path(tempfile.gettempdir())
    reap_stale(base)
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    write_owner(root)
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


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat), or None when
    there is no such process, or it is a zombie (it ended; only its exit status is left)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (command) "
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])  # field 22 of the line: starttime


def write_owner(root: Path, pid: int | None = None) -> None:
    """Say in `root` that process `pid` (this one) started the server kept there."""
    pid = os.getpid() if pid is None else pid
    (root / OWNER).write_text(json.dumps({"pid": pid, "started": start_time(pid)}))


def owner_alive(root: Path) -> bool | None:
    """Whether the process that started `root`'s server still runs (None: not this helper's
    folder, or its owner file is not written yet, or unreadable: leave it alone)."""
    try:
        owner = json.loads((root / OWNER).read_text())
        pid, started = int(owner["pid"]), owner["started"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now = start_time(pid)
    return now is not None and now == started  # another start time: the pid was reused


def _postmaster(data: Path) -> int | None:
    """The pid of the server running on `data`, when its command line names `data` (so a
    pid the system gave to another program since is never signalled)."""
    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    if os.fsencode(str(data)) not in command or start_time(pid) is None:
        return None
    return pid


def reap_stale(base: Path, wait: float = 10.0) -> list[Path]:
    """Stop the servers under `base` whose owner died, and remove their folders; the folders
    removed (see the module docstring for what is never touched)."""
    reaped = []
    for root in sorted(base.glob(f"{PREFIX}*")):
        if owner_alive(root) is not False:
            continue
        pid = _postmaster(root / "data")
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(pid, signal.SIGQUIT)  # PostgreSQL's immediate shutdown
            deadline = time.monotonic() + wait
            while start_time(pid) is not None and time.monotonic() < deadline:
                time.sleep(0.05)
            if start_time(pid) is not None:
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
        reaped.append(root)
    return reaped
