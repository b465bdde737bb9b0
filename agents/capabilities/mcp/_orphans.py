"""The last resort against a stdio MCP server outliving the program that started it.

The SDK stops a stdio server inside a cancellation shield: it closes the server's stdin, gives
it 2 s, terminates its process tree, and kills it 2 s later. anyio's shield holds against
anyio's cancellations only. asyncio's own `Task.cancel()` goes through it, and `asyncio.run`
cancels every task still pending when its main coroutine returns, a teardown under way
included (the server's process is then never terminated); a loop closed without running its
tasks to the end never finishes one either. Either way the server outlives the program,
reparented to init (`/bin/sleep 600`, which ignores its stdin closing, for ten minutes).

So every stdio server is started with a marker in its environment (`MARKER=<random id>`, one
per connection), and:

- a session whose teardown did not end normally (`kill_marked`, called by the session's host
  task on its way out) kills at once every child process of this program carrying its marker,
  with its process group (the SDK starts each server in a session of its own);
- at interpreter exit (`atexit`), every marked server whose session never ended is killed the
  same way.

Both are synchronous: they work in a task that was just cancelled and after the event loop is
gone. The processes are found through /proc (Linux): a child of this process whose initial
environment holds the marker. Where there is no /proc this last resort finds nothing, and the
SDK's teardown is all there is. A killed child is reaped by the event loop's child watcher
while the loop lives, else by init once the program exits.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal

MARKER = "AGENT_NETWORK_MCP_SESSION"

_live: set[str] = set()  # the markers of sessions whose teardown has not ended
_at_exit: list[bool] = []  # one entry once the exit hook is registered


def new_marker() -> str:
    """A marker for one session's server, watched until `forget(marker)`."""
    marker = secrets.token_hex(8)
    _live.add(marker)
    if not _at_exit:
        atexit.register(_kill_every_live)
        _at_exit.append(True)
    return marker


def forget(marker: str) -> None:
    """The session's teardown ended: nothing of it is left to kill at exit."""
    _live.discard(marker)


def kill_marked(marker: str) -> list[int]:
    """Kill (SIGKILL, with its process group) every live child of this process whose
    environment carries `marker`; return their pids."""
    killed = _children_marked(f"{MARKER}={marker}".encode())
    for pid in killed:
        _kill_group(pid)
    return killed


def _kill_every_live() -> None:
    for marker in list(_live):
        kill_marked(marker)
        _live.discard(marker)


def _children_marked(entry: bytes) -> list[int]:
    """The pids of this process's children whose initial environment holds `entry`."""
    me = os.getpid()
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc: nothing to find
        return []
    found: list[int] = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                stat = stat_file.read()
            # "pid (command) state ppid ...": the command may hold spaces and parentheses.
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) != me:
                continue
            with open(f"/proc/{pid}/environ", "rb") as environ_file:
                environment = environ_file.read().split(b"\0")
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue
        if entry in environment:  # a zombie's environment reads empty: it is not counted
            found.append(int(pid))
    return found


def _kill_group(pid: int) -> None:
    """SIGKILL `pid` and, when it leads its process group (the SDK's servers do), the group.

    The pid was found as a child of this process, alive: until it is reaped it cannot be
    another process's.
    """
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:  # it ended meanwhile
        return
