"""Where tasks are kept: the SDK's task stores, beside the threads, scoped to their owner.

A task is one run on a thread (the A2A `contextId`): what a client reads with `tasks/get`
(its status, the messages of the exchange, its artifacts) after, or while, it runs. The
thread stays the truth about the conversation, the state and the approvals; the task record
is what was reported to the client about one run of it.

Tasks live beside the threads: on an SQL thread store, the SDK's `DatabaseTaskStore` on the
store's own engine as its writers use it (`SQLStore.writer`; table `a2a_tasks`), so every
server process on the database reads the same tasks, and concurrent runs' writes wait for
each other; on any other store, the SDK's `InMemoryTaskStore` of this process, bounded
(`network.a2a.bounded_tasks`: at most `max_tasks` tasks, 10,000 by default, and 256 MiB of
them, the least recently saved idle ones forgotten first, never one running). Every read
and write names its owner, the network (the app) and the principal together: a task of
another principal, or of another network on the same database, is not found, exactly as a
task that does not exist.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import InvalidParamsError, ListTasksRequest, ListTasksResponse, Task

from network.a2a.bounded_tasks import BoundedTaskStore
from network.serving.errors import RequestError
from network.serving.principals import store_user
from network.serving.registry import DEFAULT_MAX_BYTES, DEFAULT_MAX_THREADS
from network.serving.screening import guarded
from network.threads.sql_tables import create_tables

TABLE = "a2a_tasks"
OWNER = "agent_network_owner"  # where the owner travels in a ServerCallContext's state


def owner_of(context: ServerCallContext) -> str:
    """The owner a task store reads from a call context (set by `TaskRecords`)."""
    return str(context.state[OWNER])


DEFAULT_MAX_TASKS = DEFAULT_MAX_THREADS  # as many as the threads a server keeps in memory


def task_store_for(store: Any, *, max_tasks: int = DEFAULT_MAX_TASKS) -> TaskStore:
    """The SDK task store beside `store` (a thread store): on its engine when it is an SQL
    store, as the store's own writers use it (`SQLStore.writer`: on SQLite the write lock
    taken when a transaction begins, so the SDK's read-then-write `save` waits its turn
    instead of failing with "database is locked" beside another run's writes), else in
    this process's memory, at most `max_tasks` of them (`BoundedTaskStore`)."""
    engine = getattr(store, "writer", None)
    if engine is not None:
        from a2a.server.tasks import DatabaseTaskStore  # noqa: PLC0415 (sqlalchemy models)

        # The SDK declares its model for our table under the name its module's own model has
        # (`TaskModel`), which SQLAlchemy warns of on stderr at every server start; the two
        # are never looked up by that name (no relationship names a task model).
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", message="This declarative base already contains a class"
            )
            # the table is made by `TaskRecords.setup`, where processes starting together
            # take turns
            return DatabaseTaskStore(
                engine, create_table=False, table_name=TABLE, owner_resolver=owner_of
            )
    return BoundedTaskStore(
        InMemoryTaskStore(owner_resolver=owner_of),
        owner_of=owner_of,
        max_tasks=max_tasks,
        max_bytes=DEFAULT_MAX_BYTES,
    )


class TaskRecords:
    """The tasks of one network's server, read and written for a principal."""

    def __init__(self, app_name: str, store: TaskStore) -> None:
        self.app_name = app_name
        self.store = store

    async def setup(self) -> None:
        """Create the tasks' table when the store has one to create (server processes that
        start together on one database take turns: `create_tables`)."""
        model = getattr(self.store, "task_model", None)
        if model is not None:
            table = model.__table__
            engine = self.store.engine  # type: ignore[attr-defined]
            made = create_tables(engine, engine.dialect.name, table.metadata, [table])
            await guarded("setup_tasks", made)
        initialize = getattr(self.store, "initialize", None)
        if initialize is not None:
            await guarded("setup_tasks", initialize())

    def _context(self, principal: str | None) -> ServerCallContext:
        owner = json.dumps([self.app_name, store_user(principal)])
        return ServerCallContext(state={OWNER: owner})

    async def get(self, task_id: str, principal: str | None) -> Task | None:
        """The principal's task `task_id`, or None (someone else's is None too)."""
        found: Task | None = await guarded(
            "get_task", self.store.get(task_id, self._context(principal))
        )
        return found

    async def save(self, task: Task, principal: str | None) -> None:
        """Keep `task` (a copy) as the principal's."""
        kept = Task()
        kept.CopyFrom(task)
        await guarded("save_task", self.store.save(kept, self._context(principal)))

    async def list(self, request: ListTasksRequest, principal: str | None) -> ListTasksResponse:
        """The principal's tasks, as `tasks/list` pages them."""
        page: ListTasksResponse = await guarded(
            "list_tasks", self._listed(request, self._context(principal))
        )
        return page

    async def _listed(self, request: ListTasksRequest, context: ServerCallContext) -> Any:
        try:
            return await self.store.list(request, context)
        except InvalidParamsError:  # the client's page token (the SDK's text quotes it whole)
            raise RequestError(
                422,
                "invalid_page_token",
                "pageToken is not a page token this server gave",
                key="pageToken",
            ) from None
