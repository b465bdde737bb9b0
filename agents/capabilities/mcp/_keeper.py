"""The task group, one per event loop, that MCP sessions run in.

A session's host task (`Connection._host`) is not a child of the task that opened it: the SDK's
stdio transport ends a session by closing the server's stdin, waiting 2 s for it to exit, then
terminating and killing its process tree, all inside a cancellation shield. A child task would
make its opener wait through that however its own deadline ran out: a server that neither
answers nor exits when its stdin closes held a run with `connect_timeout=2` for about 4 s.
Hosted here, the opener gets its error at its deadline while the teardown finishes on its own.

Nothing is left unowned. The group lives as long as the event loop (a task the loop runs to the
end: `asyncio.run` and anyio cancel it on their way out, trio cancels its system tasks when the
main task returns), and a cancelled group still waits for each session's shielded teardown.
asyncio's own cancellation goes through that shield, though, and `asyncio.run` cancels every
task left, each session's too; a loop closed with its tasks pending never finishes them. Then
the session kills its server at once, or the interpreter's exit does (`agents.mcp._orphans`):
whatever the loop, no server process outlives the program.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.lowlevel import RunVar


class _Keeper:
    """The group and the moment it is ready (several first users may wait for it at once)."""

    def __init__(self) -> None:
        self.group: TaskGroup | None = None
        self.ready = anyio.Event()
        self.task: object = None  # an asyncio loop holds its tasks weakly: this holds it

    async def keep(self) -> None:
        async with anyio.create_task_group() as group:
            self.group = group
            self.ready.set()
            await anyio.sleep_forever()


_keeper: RunVar[_Keeper] = RunVar("agent_network_mcp_sessions")


async def session_group() -> TaskGroup:
    """The current event loop's task group for MCP sessions, started on first use."""
    try:
        keeper = _keeper.get()
    except LookupError:
        keeper = _Keeper()
        _keeper.set(keeper)
        _spawn_for_the_loop(keeper)
    await keeper.ready.wait()
    assert keeper.group is not None
    return keeper.group


def _spawn_for_the_loop(keeper: _Keeper) -> None:
    """Run `keeper.keep` as a task of the loop itself, not of the task asking for it."""
    asyncio = sys.modules.get("asyncio")
    loop: Any = None
    if asyncio is not None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on asyncio: trio
            loop = None
    if loop is not None:
        keeper.task = loop.create_task(keeper.keep(), name="agent-network MCP sessions")
        return
    import trio  # noqa: PLC0415 (only a trio program gets here)

    trio.lowlevel.spawn_system_task(keeper.keep, name="agent-network MCP sessions")
