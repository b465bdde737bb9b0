"""`BoundedTaskStore`: a task store in this process's memory that forgets old tasks.

The SDK's `InMemoryTaskStore` keeps every task until it is deleted, and every message a client
sends makes one: a stranger could make a server hold as much as it liked. This wraps it (the
SDK keeps the tasks; this only counts them and decides which to delete) and keeps at most
`max_tasks` tasks and `max_bytes` of them (each measured as its serialized size when last
saved), forgetting the least recently saved first, never one still running (submitted or
working: its run saves it again when it ends). A task waiting for the client's answer
(input-required) is idle and may be forgotten like a finished one, as the thread it waits on
may be (`network.threads.memory`); a forgotten task is not found, as one never made.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

from network.numbers import check_sizes

RUNNING = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
OwnerOf = Callable[[ServerCallContext], str]
TASK_OVERHEAD = 256  # the bookkeeping of one task beyond its serialized size, roughly


@dataclass(slots=True)
class _Kept:
    context: ServerCallContext  # the one it was saved with: it names the task's owner
    size: int
    running: bool


class BoundedTaskStore(TaskStore):
    """`store` (the SDK's `InMemoryTaskStore`), forgetting its least recently saved idle
    tasks beyond `max_tasks` tasks or `max_bytes` bytes (see the module docstring).

    `owner_of(context)` names the owner a context reads and writes for, as `store` resolves
    it: a task is kept under its owner and its id together.
    """

    def __init__(
        self, store: TaskStore, *, owner_of: OwnerOf, max_tasks: int, max_bytes: int
    ) -> None:
        check_sizes("BoundedTaskStore", max_tasks=max_tasks, max_bytes=max_bytes)
        self.store = store
        self.owner_of = owner_of
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple[str, str], _Kept] = OrderedDict()  # oldest first
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The bytes of the tasks kept, as `max_bytes` counts them."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._kept)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self.store.save(task, context)
        key = (self.owner_of(context), task.id)
        old = self._kept.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        kept = _Kept(context, TASK_OVERHEAD + task.ByteSize(), task.status.state in RUNNING)
        self._kept[key] = kept
        self._bytes += kept.size
        await self._evict(keep=key)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        return await self.store.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self.store.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self.store.delete(task_id, context)
        old = self._kept.pop((self.owner_of(context), task_id), None)
        if old is not None:
            self._bytes -= old.size

    async def _evict(self, keep: tuple[str, str]) -> None:
        """Delete the least recently saved idle tasks until within the limits (oldest first;
        the running ones and `keep` are put back where they were)."""
        kept = self._kept
        skipped: list[tuple[tuple[str, str], _Kept]] = []
        doomed: list[tuple[tuple[str, str], _Kept]] = []
        # decided without a pause (atomic on the event loop), deleted after
        while kept and (len(kept) + len(skipped) > self.max_tasks or self._bytes > self.max_bytes):
            key, entry = kept.popitem(last=False)
            if entry.running or key == keep:
                skipped.append((key, entry))
                continue
            self._bytes -= entry.size
            doomed.append((key, entry))
        for key, entry in reversed(skipped):
            kept[key] = entry
            kept.move_to_end(key, last=False)
        for (owner, task_id), entry in doomed:
            if (owner, task_id) not in kept:  # not saved again meanwhile
                await self.store.delete(task_id, entry.context)
