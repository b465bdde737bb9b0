"""Tasks running in this process: their current form, their subscribers, their cancel scope.

A run answers an A2A request in the server's own task group, not in the request's task: a
client whose stream drops does not stop the task (A2A's model: it may `SubscribeToTask`
again), `tasks/cancel` from another request stops it, and `message/send` simply waits for it.

`LiveTask` holds the task as the client sees it and applies every update to it (a status
replaces the status, its message joining the history; an artifact is added or appended to),
then hands the update to every subscriber. A subscriber that does not keep up (more than
`QUEUE` updates behind) is dropped, its stream closed: a slow client cannot make the server
hold an unbounded backlog. Nor can many clients: a task takes at most `MAX_SUBSCRIBERS`
subscriptions at once in a process (`Subscriptions`), one more refused `server_busy`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from a2a.types import Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from network.serving.errors import RequestError

QUEUE = 1_000  # updates a subscriber may lag behind before it is dropped
MAX_HISTORY = 200  # messages a task keeps (the oldest beyond are dropped from the task)
MAX_SUBSCRIBERS = 16  # subscriptions (SubscribeToTask) one task takes at once in a process
SUBSCRIBE_RETRY_AFTER = 1  # seconds a refused subscriber is told to wait

Update = TaskStatusUpdateEvent | TaskArtifactUpdateEvent


class LiveTask:
    """One task running here (see the module docstring)."""

    def __init__(self, task: Task, principal: str | None) -> None:
        self.task = task
        self.principal = principal
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self._subscribers: list[MemoryObjectSendStream[Update]] = []

    def snapshot(self) -> Task:
        """A copy of the task as it is now."""
        copy = Task()
        copy.CopyFrom(self.task)
        return copy

    def publish(self, update: Update) -> None:
        """Apply `update` to the task and hand it to every subscriber."""
        apply(self.task, update)
        self.broadcast(update)

    def record(self, update: Update) -> None:
        """Apply `update` to the task only (`broadcast` it later)."""
        apply(self.task, update)

    def broadcast(self, update: Update) -> None:
        """Hand `update`, already applied to the task, to every subscriber."""
        for subscriber in list(self._subscribers):
            try:
                subscriber.send_nowait(update)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._subscribers.remove(subscriber)
                subscriber.close()

    def finish(self) -> None:
        """The task ended: subscribers' streams end after what they were sent."""
        for subscriber in self._subscribers:
            subscriber.close()
        self._subscribers.clear()
        self.done.set()

    def subscribe(self) -> MemoryObjectReceiveStream[Update]:
        """A stream of the updates from now until the task ends (or this subscriber is
        dropped for falling behind); close it when done."""
        send, receive = anyio.create_memory_object_stream[Update](QUEUE)
        if self.done.is_set():
            send.close()
        else:
            self._subscribers.append(send)
        return receive


def apply(task: Task, update: Update) -> None:
    """`update` applied to `task`, as a client applies it."""
    if isinstance(update, TaskStatusUpdateEvent):
        if task.status.HasField("message"):
            task.history.append(task.status.message)
            if len(task.history) > MAX_HISTORY:
                del task.history[: len(task.history) - MAX_HISTORY]
        task.status.CopyFrom(update.status)
        return
    artifact = update.artifact
    for existing in task.artifacts:
        if existing.artifact_id == artifact.artifact_id:
            if update.append:
                existing.parts.extend(artifact.parts)
            else:
                existing.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)


class LiveTasks:
    """The tasks running in this process, by id."""

    def __init__(self) -> None:
        self.running: dict[str, LiveTask] = {}

    def get(self, task_id: str) -> LiveTask | None:
        """The running task `task_id`, if it runs here."""
        return self.running.get(task_id)

    def add(self, live: LiveTask) -> None:
        """`live` runs here from now on."""
        self.running[live.task.id] = live

    def remove(self, live: LiveTask) -> None:
        """`live` ended."""
        if self.running.get(live.task.id) is live:
            del self.running[live.task.id]

    def __len__(self) -> int:
        return len(self.running)

    def cancel_all(self) -> list[Any]:
        """Cancel every running task (the server is shutting down); the cancelled."""
        cancelled = list(self.running.values())
        for live in cancelled:
            live.scope.cancel()
        return cancelled


class Subscriptions:
    """The subscriptions (`SubscribeToTask`) open in this process, by task: each holds a
    stream and its client's connection (and, for a task running in another process, reads
    its record twice a second), so a task takes at most `limit` at once, from anyone."""

    def __init__(self, limit: int = MAX_SUBSCRIBERS) -> None:
        self.limit = limit
        self.counts: dict[str, int] = {}

    @contextmanager
    def held(self, task_id: str) -> Iterator[None]:
        """One subscription to `task_id` while in the block, or `RequestError` 503
        `server_busy` (`Retry-After`) when it has `limit` already."""
        count = self.counts.get(task_id, 0)
        if count >= self.limit:
            raise RequestError(
                503,
                "server_busy",
                f"task {task_id} has {self.limit} subscriptions open, the most it takes at "
                "once; try again later",
                retry_after=SUBSCRIBE_RETRY_AFTER,
            )
        self.counts[task_id] = count + 1
        try:
            yield
        finally:
            left = self.counts[task_id] - 1
            if left:
                self.counts[task_id] = left
            else:
                del self.counts[task_id]
