"""`connect_timeout` bounds the whole connection, whatever the SDK does inside it (its
`server/discover` probe alone waits 10 s before falling back to the handshake): a server that
never answers, over stdio or over HTTP, fails the run after about `connect_timeout`."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp  # noqa: F401  (imported here: the SDK's import time is not the connection's)
import pytest

from agents import Agent, MCPServer, MCPServerError, ScriptedModel, call
from tests.agents.capabilities.mcp.servers import stdio_server

# Each test asserting a wall-clock bound is marked `deadline` (run alone, after the parallel
# part); the one that only sleeps past a limit runs with the others.
pytestmark = pytest.mark.anyio

TIMEOUT = 1.0
# Far below the 10 s the SDK's probe waits alone (the run was held 12 to 14 s with a
# connect_timeout of 2), with room for a loaded machine starting a process.
BOUND = TIMEOUT + 4.0
SILENT = "import sys; sys.stdin.read()"  # reads every request, answers none


async def held_for(server: MCPServer) -> tuple[float, MCPServerError]:
    """How long a run using `server` took to fail, and its error."""
    agent = Agent("a", tools=[server], model=ScriptedModel(["never asked"]))
    started = time.perf_counter()
    with pytest.raises(MCPServerError) as caught:
        await agent.run("x")
    return time.perf_counter() - started, caught.value


@pytest.mark.deadline
async def test_a_stdio_server_that_never_answers_fails_the_run_in_time() -> None:
    server = MCPServer.stdio(sys.executable, ["-c", SILENT], name="mute", connect_timeout=TIMEOUT)
    took, error = await held_for(server)
    assert took < BOUND, took
    assert error.server == "mute"
    assert f"no answer within connect_timeout={TIMEOUT:g} s" in str(error)


@pytest.fixture
def silent_http() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers; its /mcp URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:  # closed: the test is over
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


@pytest.mark.deadline
async def test_an_http_server_that_never_answers_fails_the_run_in_time(silent_http: str) -> None:
    server = MCPServer.http(silent_http, name="mute-http", connect_timeout=TIMEOUT)
    took, error = await held_for(server)
    assert took < BOUND, took
    assert error.server == "mute-http"
    assert "connect_timeout" in str(error)


async def test_the_deadline_ends_once_connected() -> None:
    """A held session outlives `connect_timeout`: only connecting was bounded."""
    limit = 10.0  # room for a loaded machine to start the Python test server (6 s was not)
    server = stdio_server(connect_timeout=limit)
    started = anyio.current_time()
    async with server:
        await anyio.sleep_until(started + limit + 0.5)
        model = ScriptedModel([call("echo", text="still here"), "ok"])
        result = await Agent("a", tools=[server], model=model).run("x")
    assert result.state.results[0].tool_calls[0].result == {"result": "still here"}


STUBBORN = str(Path(__file__).with_name("stubborn_server.py"))


async def gone(pid: int, within: float) -> bool:
    """Whether process `pid` is gone, reaped (no zombie left), within `within` seconds."""
    with anyio.move_on_after(within):
        while Path(f"/proc/{pid}").exists():
            await anyio.sleep(0.05)
        return True
    return False


@pytest.mark.deadline
@pytest.mark.parametrize("ignores", ["stdin close", "stdin close and SIGTERM"])
async def test_a_server_that_ignores_its_stdin_closing_costs_no_more_than_the_deadline(
    tmp_path: Path, ignores: str
) -> None:
    """The SDK gives such a server 2 s to exit (shielded), then terminates it, and kills it 2 s
    later: that teardown finishes in the background, and the run fails at its deadline."""
    pid_file = tmp_path / "pid"
    args = [STUBBORN, str(pid_file)] + (["--ignore-term"] if "SIGTERM" in ignores else [])
    server = MCPServer.stdio(sys.executable, args, name="stubborn", connect_timeout=2.0)
    took, error = await held_for(server)
    # 2 s of deadline, and nothing of the SDK's 2 s grace (or of the 2 s before its SIGKILL):
    # with the grace it takes 4 s at least, however idle the machine; the rest is room for load.
    assert took < 3.8, took
    assert error.server == "stubborn"
    assert "no answer within connect_timeout=2 s" in str(error)
    with anyio.fail_after(5):
        while not pid_file.exists():
            await anyio.sleep(0.05)
    pid = int(pid_file.read_text())
    # The grace, then SIGTERM (and SIGKILL 2 s later for the one ignoring it), then reaped.
    assert await gone(pid, within=10.0), f"process {pid} still there"


@pytest.mark.deadline
async def test_a_run_cancelled_while_connecting_ends_at_once_and_the_server_still_stops(
    tmp_path: Path,
) -> None:
    """Cancelled before the handshake, the run does not wait out the SDK's teardown either."""
    pid_file = tmp_path / "pid"
    server = MCPServer.stdio(sys.executable, [STUBBORN, str(pid_file)], name="stubborn")
    agent = Agent("a", tools=[server], model=ScriptedModel(["never asked"]))
    async with anyio.create_task_group() as group:
        group.start_soon(agent.run, "x")
        with anyio.fail_after(10):
            while not pid_file.exists():  # the server runs: the run is connecting to it
                await anyio.sleep(0.05)
        cancelled = time.perf_counter()
        group.cancel_scope.cancel()
    # The SDK's 2 s grace alone would hold it at least 2 s (the rest is room for load).
    assert time.perf_counter() - cancelled < 1.8
    assert await gone(int(pid_file.read_text()), within=10.0)
