"""`ServedThreads`: a network's threads as a protocol server serves them.

    threads = ServedThreads(network, authorize=authorize, store="threads.db")
    principal = await threads.principal(request, thread_id)   # 401 / 403 / 500
    admission = await threads.admit(thread_id, run_id, principal)  # 404 / 409
    try:
        ...  # the protocol checks its request against admission.record
        ctx = await admission.start(RunRequest(...))
        result = await admission.execute(ctx, sinks=[encoder])
    finally:
        await admission.release()

It owns what every protocol needs and none should write twice: principals (the application's
`authorize` hook, `network.serving.principals`), thread ownership (a thread belongs to the
principal that created it; anyone else's request on it is 404 `thread_not_found`), admission
(one run per thread: a busy flag in memory, the store's lease across processes, 409
`thread_busy`; at most `max_runs` runs at once on the server, 503 `server_busy`,
`network.serving.capacity`), the limits on what a thread may hold (`max_thread_bytes`,
413), exactly-once answers to approvals (`network.serving.approvals`) and the caller's thread
list. Threads live in an in-memory `ThreadRegistry` (`threads=`, the default) or on a thread
store (`store=`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from network.errors import ConfigurationError
from network.ids import new_id
from network.numbers import check_number
from network.run.interrupts import Interrupt
from network.serving.admission import Admission, MemoryAdmission, StoredAdmission
from network.serving.capacity import RunSlots, Slot, run_slots
from network.serving.errors import RequestError, thread_busy
from network.serving.limits import check_run_id, check_thread_id
from network.serving.principals import Authorize, check_owner, not_found, principal_of
from network.serving.registry import DEFAULT_MAX_THREAD_BYTES, ThreadRecord, ThreadRegistry
from network.serving.stored import StoredThreads
from network.threads.leases import DEFAULT_LEASE_TTL, check_ttl

if TYPE_CHECKING:
    from network.run.definition import RunnableNetwork

T = TypeVar("T")


def is_thread_busy(refused: RequestError) -> bool:
    """Whether a refused admission says the thread is busy (409 `thread_busy`): another run
    holds it, and the thread can be taken once that run ends."""
    return refused.code == "thread_busy"


# How long `close` waits for the runs under way (cancelled by a stopping server) to free
# their threads before it closes the store anyway.
CLOSE_WAIT_S = 5.0


@dataclass(slots=True, frozen=True)
class ThreadHeader:
    """One thread of a caller's list; the times (seconds since the epoch) and the message
    count are known on a store only."""

    thread_id: str
    created_at: float | None = None
    updated_at: float | None = None
    message_count: int | None = None


@dataclass(slots=True, frozen=True)
class ThreadView:
    """What a caller may read of one of its threads (`ServedThreads.read`).

    - `state`: the state as the client was last shown it: the thread's state with the
      proposals of its pending interrupts (`ThreadRecord.client_view`), so a client that
      sends it back with its next request writes nothing.
    - `interrupts`: the approvals the thread waits on, oldest first; the next request on
      the thread answers every one by its id.
    - `messages`: the conversation, as the network's messages; None in memory, where the
      server does not keep it (the client holds it).
    """

    thread_id: str
    state: dict[str, Any]
    interrupts: list[Interrupt]
    messages: list[Any] | None


class ServedThreads:
    """The threads of `network` as a server serves them (see the module docstring).

    Args:
        network: the network the runs run.
        authorize: `authorize(request, thread_id)` (sync or async) returning the caller's
            principal, or raising `Unauthorized` / `Forbidden`; default: every request
            anonymous (`network.serving.principals`).
        threads: the in-memory registry (default: a new `ThreadRegistry()`); its limits
            bound the server's memory.
        store: run every thread on this thread store instead (a store, a database URL or an
            SQLite path; one given as a URL or path is opened here and closed by `close`).
        lease_ttl: with `store`, seconds a run's lease lasts without renewal.
        max_thread_bytes: with `store`, the largest state one thread may hold (413 beyond);
            in memory the registry's `max_thread_bytes` is.
        max_runs: the most runs under way at once (503 `server_busy` beyond): a count, or a
            `RunSlots` shared with other servers of the process; default
            `network.serving.capacity.default_max_runs()`.
    """

    def __init__(
        self,
        network: RunnableNetwork,
        *,
        authorize: Authorize | None = None,
        threads: ThreadRegistry | None = None,
        store: Any = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        max_thread_bytes: int = DEFAULT_MAX_THREAD_BYTES,
        max_runs: int | RunSlots | None = None,
    ) -> None:
        if authorize is not None and not callable(authorize):
            raise ConfigurationError(f"authorize must be callable, got {authorize!r}")
        if store is not None and threads is not None:
            raise ConfigurationError("give threads= (in memory) or store=, not both")
        if threads is not None and not isinstance(threads, ThreadRegistry):
            raise ConfigurationError(f"threads must be a ThreadRegistry, got {threads!r}")
        check_number("max_thread_bytes", max_thread_bytes, integer=True, minimum=1)
        # checked in memory too: the option given there is a mistake to hear of now, not
        # when the same code is first given a store
        check_ttl(lease_ttl)
        self.slots = run_slots(max_runs)
        self.network = network
        self.authorize = authorize
        # `is None`: an empty registry is falsy (it has a length)
        self.registry = threads if threads is not None else ThreadRegistry()
        self.stored = StoredThreads(store, lease_ttl=lease_ttl) if store is not None else None
        self.max_thread_bytes = (
            max_thread_bytes if self.stored is not None else self.registry.max_thread_bytes
        )
        # New threads admitted but not yet running (they join the registry when they start):
        # a second request on the same new thread id finds them busy.
        self._reserved: dict[str, ThreadRecord] = {}
        self.under_way = 0  # runs admitted whose thread is not free again yet (`close` waits)

    @property
    def on_store(self) -> bool:
        """Whether the threads live on a thread store (else in this process's memory)."""
        return self.stored is not None

    async def principal(self, request: Any, thread_id: str | None) -> str | None:
        """Who `request` acts for on `thread_id` (None: anonymous, no hook)."""
        return await principal_of(self.authorize, request, thread_id)

    def slot(self) -> Slot:
        """A place for a run on no thread (an MCP call without one), or 503 `server_busy`;
        release it when the run ends (`with served.slot(): ...`)."""
        return self.slots.take()

    async def admit(
        self,
        thread_id: str,
        run_id: str,
        principal: str | None,
        messages: Sequence[Any] | None = None,
    ) -> Admission:
        """Hold `thread_id` for run `run_id` of `principal`, or the `RequestError` refusing
        it: 422 for an id no store could keep, 503 `server_busy` when `max_runs` runs are
        under way, 404 for a thread the principal may not see, 409 `thread_busy` while
        another run holds it. Release the answer when done (it frees the slot too).

        `messages`: the request's messages (the network's, as `RunRequest.messages` will be),
        when the protocol has them before admission: on a store, a new thread is then created
        by the claim holding its user's message, one transaction fewer
        (`network.serving.stored.opening_messages`); removed again when the request is
        refused before `start` completes."""
        check_thread_id(thread_id)
        check_run_id(run_id)
        slot = self.slots.take()
        try:
            admission = await self._admit(thread_id, run_id, principal, messages)
        except BaseException:
            slot.release()
            raise
        admission.slot = slot
        self.under_way += 1
        admission.on_freed = self._freed
        return admission

    async def holding(
        self,
        thread_id: str,
        principal: str | None,
        then: Callable[[Admission], Awaitable[T]],
        *,
        busy: Callable[[RequestError], bool] = is_thread_busy,
    ) -> T | None:
        """`then(admission)`, run while this server holds `thread_id` for `principal` as
        any request does (`admit`, a run id of its own), released after, also when cancelled;
        None when the thread cannot be taken now (`busy`: which refusals say so, by default
        409 `thread_busy`; any other is raised). For work on a thread that starts no run:
        ending a task whose run is gone, settling the approvals a cancelled task waited on."""
        try:
            admission = await self.admit(thread_id, new_id("run_"), principal)
        except RequestError as refused:
            if busy(refused):
                return None
            raise
        try:
            return await then(admission)
        finally:
            with anyio.CancelScope(shield=True):
                await admission.release()

    def _freed(self) -> None:
        self.under_way -= 1

    async def _admit(
        self,
        thread_id: str,
        run_id: str,
        principal: str | None,
        messages: Sequence[Any] | None = None,
    ) -> Admission:
        if self.stored is not None:
            claimed = await self.stored.claim(self.network, thread_id, principal, run_id, messages)
            return StoredAdmission(
                self.network, self.stored, claimed, run_id, self.max_thread_bytes
            )
        # No await from here until the record is marked busy: two requests on one thread
        # cannot both get through.
        record = self.registry.peek(thread_id) or self._reserved.get(thread_id)
        check_owner(record, principal)
        if record is None:  # joins the registry only when its run starts
            record = ThreadRecord(thread_id, owner=principal)
            self._reserved[thread_id] = record
        elif record.busy:
            raise thread_busy(thread_id, f" ({record.run_id})")
        record.run_id = run_id
        return MemoryAdmission(self.network, self.registry, self._reserved, record, run_id)

    async def read(self, thread_id: str, principal: str | None) -> ThreadView:
        """`principal`'s thread `thread_id` (`ThreadView`), or the `RequestError` refusing it:
        422 for an id no store could keep, 404 `thread_not_found` for a thread that does not
        exist or that the principal may not see (the same answer a run on it gets). A read
        takes no lease: it answers while a run is under way, as the last commit left it."""
        check_thread_id(thread_id)
        if self.stored is not None:
            record, messages = await self.stored.read(self.network, thread_id, principal)
            return ThreadView(thread_id, record.client_view(), record.interrupts, messages)
        kept = self.registry.peek(thread_id)  # a read does not make it recently used
        check_owner(kept, principal)
        if kept is None:
            raise not_found(thread_id)
        return ThreadView(thread_id, dict(kept.client_view()), list(kept.interrupts), None)

    async def list_threads(self, principal: str | None) -> list[ThreadHeader]:
        """`principal`'s threads of this network, most recently used first."""
        if self.stored is None:
            return [ThreadHeader(thread_id) for thread_id in self.registry.owned_by(principal)]
        infos = await self.stored.list_threads(self.network.name, principal)
        return [
            ThreadHeader(info.thread_id, info.created_at, info.updated_at, info.message_count)
            for info in infos
        ]

    async def close(self) -> None:
        """Close the store when it was opened here from a URL or path, once the runs under
        way freed their threads (for `CLOSE_WAIT_S` at most): a server stopping (SIGTERM)
        cancels them first, and a lease released after its store was closed stayed behind,
        keeping the thread busy for the lease's time to live."""
        with anyio.move_on_after(CLOSE_WAIT_S):
            while self.under_way > 0:
                await anyio.sleep(0.02)
        if self.stored is not None:
            await self.stored.close()
