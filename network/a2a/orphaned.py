"""A task whose server process died while it ran: ended `failed` when it is next read.

A task's record says `working` from its run's start to its end, and the run saves its final
status before it lets go of its thread's run lease (`A2AHandler._run`). A server process
killed mid-run (kill -9, a crash, a machine gone) never saves that status: the record would
say `working` for ever, `tasks/get` and a resubscription would wait on a run that no process
has, and `tasks/cancel` would answer that it runs in another server process.

The lease tells the two apart. A live run renews it; a dead one's expires after the server's
lease time to live (`--lease-ttl`, 30 s by default). So a `submitted` or `working` task that
no run of this process has is checked by taking its thread the way any request does
(`ServedThreads.admit`): while its run (or any other) holds the thread, nothing changes;
once the thread can be taken, the record is read again under that hold, and a task still
`working` has no run anywhere: it is saved `failed`, telling the client its server stopped,
and its thread is free again at once. Of two processes reading the task at once, one takes
the thread and ends it; the other finds the thread busy, or the task ended. What the run
had committed on its thread (its finished agent calls) stays there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from a2a.types import Task, TaskState

from network.a2a.live import LiveTask
from network.a2a.message_out import failed
from network.serving.threads import ServedThreads

UNFINISHED = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
STOPPED = (
    "the server process running this task stopped before the task ended; what its run "
    "had finished is kept in the conversation (send a new message to go on)"
)


async def ended_if_orphaned(
    served: ServedThreads,
    task: Task,
    principal: str | None,
    read: Callable[[], Awaitable[Task | None]],
    save: Callable[[Task], Awaitable[None]],
) -> Task | None:
    """`task` (unfinished, run by no run of this process) as it stands once checked: saved
    `failed` when no run holds its thread, re-read when it ended meanwhile; None when a run
    holds the thread (it goes on) or the server cannot take it now (the record stands)."""

    async def checked(_: object) -> Task | None:
        fresh = await read()  # under the hold: no run can end or start it meanwhile
        if fresh is None or fresh.status.state not in UNFINISHED:
            return fresh
        live = LiveTask(fresh, principal)
        live.publish(failed(live, STOPPED))
        await save(live.task)
        return live.snapshot()

    # busy: its run (or another) holds the thread; or no slot now: the record stands
    return await served.holding(task.context_id, principal, checked, busy=lambda _: True)
