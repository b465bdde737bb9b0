"""Server processes for the tests: a free loopback port, and a server started as a real OS
process, waited for until it answers over HTTP, killed (no shutdown, as a crash) after."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


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
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    process = subprocess.Popen(
        list(command), cwd=cwd, env=environment, stdout=stdout, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert process.poll() is None, process.communicate()[1].decode()[-3000:]
            try:
                status = httpx.get(probe, timeout=1).status_code
                if ok is None or status == ok:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{name} did not start"
            time.sleep(0.1)
        yield process
    finally:
        process.kill()
        process.wait(10)
