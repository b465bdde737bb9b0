"""Server processes for the tests: a free loopback port, a server started as a real OS
process, waited for until it answers over HTTP, killed (no shutdown, as a crash) after, and
Node with the pinned npm packages a test drives."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def node_with(package: str, folder: Path) -> str:
    """The `node` executable, once `package` (an npm name) is installed in `folder`'s
    node_modules; else the test fails saying what to install."""
    found = shutil.which("node")
    if found is None:
        pytest.fail(f"node (>= 20) is needed to drive {package} and was not found")
    if not (folder / "node_modules" / package / "package.json").exists():
        where = folder.relative_to(ROOT)
        pytest.fail(
            f"{where}/node_modules is missing {package}: run `npm ci` in {where} "
            "(scripts/install-test-deps.sh does it)"
        )
    return found


def free_port() -> int:
    """A loopback port nothing listens on (at the time of asking)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server_process(
    command: Sequence[str],
    probe: str,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = ROOT,
    ok: int | None = 200,
    timeout: float = 120,
    name: str = "the server",
    stdout: int | None = subprocess.PIPE,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` with the repository on PYTHONPATH (and `env` on top of this process's
    environment); yield the process once a GET of URL `probe` answers with status `ok`
    (None: any answer); kill it after. A process that exits first fails the test with the
    end of its stderr. The wait ends as soon as it answers: `timeout` is long because a
    loaded machine (test workers on 2 cores) can take a minute to start a Python process."""
    with server_processes(
        [(command, probe)], env=env, cwd=cwd, ok=ok, timeout=timeout, name=name, stdout=stdout
    ) as (process,):
        yield process


@contextmanager
def server_processes(
    servers: Sequence[tuple[Sequence[str], str]],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = ROOT,
    ok: int | None = 200,
    timeout: float = 120,
    name: str = "the server",
    stdout: int | None = subprocess.PIPE,
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`server_process` for several (command, probe) pairs at once: every process is started
    before any is waited for, so their start-ups (mostly imports) overlap on the cores a
    machine has; yields them, in order, once each answers; kills them all after."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for command, _ in servers:
            processes.append(
                subprocess.Popen(
                    list(command), cwd=cwd, env=environment, stdout=stdout, stderr=subprocess.PIPE
                )
            )
        deadline = time.monotonic() + timeout
        # One client for every probe: `httpx.get` makes a client each time, and its TLS
        # context loads the CA bundle (about 60 ms of CPU a probe, ten probes a second while
        # a process starts: CPU taken from the very start-ups being waited for).
        with httpx.Client(timeout=1) as client:
            for process, (_, probe) in zip(processes, servers, strict=True):
                _wait_until_it_answers(client, process, probe, ok, deadline, name)
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait(10)
            # the pipes too: left to the garbage collector, each was an `unclosed file`
            # ResourceWarning (a reader of them stops at their end, which the kill made)
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()


def _wait_until_it_answers(
    client: httpx.Client,
    process: subprocess.Popen[bytes],
    probe: str,
    ok: int | None,
    deadline: float,
    name: str,
) -> None:
    while True:
        assert process.poll() is None, process.communicate()[1].decode()[-3000:]
        try:
            status = client.get(probe).status_code
            if ok is None or status == ok:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{name} did not start"
        time.sleep(0.1)
