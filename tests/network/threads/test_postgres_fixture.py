"""The PostgreSQL fixture fails, never skips, when the server is not installed; the servers
of killed sessions are reaped by the next, and only those."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.network.threads.postgres import (
    OWNER,
    PREFIX,
    owner_alive,
    postgres_bindir,
    postgres_server,
    reap_stale,
    start_time,
    write_owner,
)

ROOT = Path(__file__).resolve().parents[3]


def test_a_missing_server_fails_the_tests_with_a_clear_message() -> None:
    with pytest.raises(pytest.fail.Exception, match="install-test-deps.sh"):
        postgres_bindir("/nonexistent/postgresql/*/bin/initdb")


def test_the_installed_server_is_found() -> None:
    assert (postgres_bindir() / "pg_ctl").exists()


# Servers left by dead sessions are reaped; nothing else is (tests/network/threads/postgres.py).


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder servers can be made in: readable by the `postgres` user that runs them under
    root (pytest's own tmp_path is private to its user)."""
    made = Path(tempfile.mkdtemp(prefix="agent-network-reap-test-"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def stale_folder(base: Path, owner: int | None, postmaster: int | None = None) -> Path:
    """A server folder as the helper leaves it (without a server), owned by process `owner`
    (None: no owner file), its postmaster.pid naming `postmaster`."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    (root / "data").mkdir()
    if owner is not None:
        write_owner(root, owner)
    if postmaster is not None:
        (root / "data" / "postmaster.pid").write_text(f"{postmaster}\n{root / 'data'}\n")
    return root


def test_the_server_of_a_killed_session_is_stopped_and_its_folder_removed(base: Path) -> None:
    # a session that starts a server and is then killed: its server goes on, orphaned
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from tests.network.threads.postgres import postgres_server\n"
        "with postgres_server(base=Path(sys.argv[1])) as url:\n"
        "    print(url, flush=True)\n"
        "    time.sleep(600)\n"
    )
    session = subprocess.Popen(
        [sys.executable, "-c", script, str(base)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert session.stdout is not None and session.stdout.readline().startswith("postgres")
    finally:
        session.kill()
        session.wait()
    (orphan,) = base.glob(f"{PREFIX}*")
    server = int((orphan / "data" / "postmaster.pid").read_text().split()[0])
    assert start_time(server) is not None  # still running with no one to stop it
    with postgres_server(base=base) as url:  # the next session's server reaps it first
        assert url.startswith("postgresql+asyncpg://")
        assert not orphan.exists()
        deadline = time.monotonic() + 10
        while start_time(server) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert start_time(server) is None
        (own,) = base.glob(f"{PREFIX}*")  # its own, left to it
        assert owner_alive(own) is True
    assert list(base.glob(f"{PREFIX}*")) == []


def test_a_live_owners_server_and_a_folder_not_the_helpers_are_left_alone(base: Path) -> None:
    # another xdist worker's (or another session's) server: its owner runs
    live = stale_folder(base, os.getpid())
    # a folder this helper did not make (a user's, or one from before the owner file)
    foreign = stale_folder(base, None)
    assert reap_stale(base) == []
    assert live.exists() and foreign.exists()


def test_a_dead_owners_folder_is_removed_without_signalling_another_program(base: Path) -> None:
    # the pid in postmaster.pid now belongs to another program: never signalled
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        gone = stale_folder(base, dead_pid(), postmaster=bystander.pid)
        reused = stale_folder(base, os.getpid())  # this pid, but not started when it says
        owner = json.loads((reused / OWNER).read_text())
        (reused / OWNER).write_text(json.dumps({**owner, "started": owner["started"] - 1}))
        assert sorted(reap_stale(base, wait=0.5)) == sorted([gone, reused])
        assert not gone.exists() and not reused.exists()
        assert bystander.poll() is None  # still running
    finally:
        bystander.kill()
        bystander.wait()
