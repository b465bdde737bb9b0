"""A thread store of your own that keeps no pending calls (one written before stores kept
them): its threads have no `pending_interrupts` and no entries, and a commit's `pending` and
`answered` are dropped. A server on it remembers a thread's approvals in its own memory
(`network.serving.stored.StoredThreads.remember`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from network.threads import MemoryStore
from network.threads.protocol import BaseStore
from network.threads.thread_data import Commit


class _Unkept:
    """A thread as the store hands it back: the memory store's, without what it waits on."""

    def __init__(self, thread: Any) -> None:
        self._thread = thread
        self.pending: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        if name in ("pending_interrupts", "pending_tool_calls"):
            raise AttributeError(name)
        return getattr(self._thread, name)


class KeepsNoPending(BaseStore):
    """A `MemoryStore` that drops what a commit says the thread waits on."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    async def _create_thread(self, info: Any) -> None:
        await self.inner._create_thread(info)

    async def get_thread(self, thread_id: str) -> Any:
        thread = await self.inner.get_thread(thread_id)
        return None if thread is None else _Unkept(thread)

    async def list_threads(self, **owner: Any) -> Any:
        return await self.inner.list_threads(**owner)

    async def delete_thread(self, thread_id: str) -> bool:
        return await self.inner.delete_thread(thread_id)

    async def get_results(self, thread_id: str, **which: Any) -> Any:
        return await self.inner.get_results(thread_id, **which)

    async def append_results(self, thread_id: str, commit: Commit) -> int:
        dropped = dataclasses.replace(commit, pending=[], answered={})
        return await self.inner.append_results(thread_id, dropped)
