"""A server's threads on a thread store: every thread lives in the store, as a run in Python
on a store does (`network.threads.session`), so a restarted server, or another server process
on the same database, continues a thread where it was.

- The thread's user is the request's principal (`network.serving.principals.store_user`). A
  thread of another user, or of another app on the same database, is answered 404
  `thread_not_found`, exactly as a thread that does not exist (before its lease is looked at,
  so a busy thread of someone else's is as unknown as any).
- One run per thread across processes: a request claims the thread's run lease in the store
  (`network.threads.leases`) before anything runs, and a thread whose lease another live run
  holds is answered 409 `thread_busy`, whichever process holds it (`claim`). The run keeps the
  lease while it goes on and stops when it loses it (`network.serving.lease`).
- What a request is checked against is read from the store (`ThreadRecord`): the state, the
  tool calls issued on the thread (every call in the stored conversation, with the digest of
  its result once it has one), and the pending interrupts.
- The stored conversation is the thread's: a client's messages that the thread does not hold
  yet (new user messages, results of client tool calls: `new_messages`) are appended to it;
  the rest are the client's copy. A client that went back in the conversation (a regenerate,
  an edited message) takes the thread back with it, once its request was checked, before its
  run starts (`StoredThreads.follow`, `network.serving.rewinds`).
- A new thread is created by the claim when the protocol gave the request's messages and they
  look like a thread's first request (`opening_messages`): the claim, the thread's creation
  and the user's message are one transaction (`network.threads.leases.CreatingLeases`). The
  request is then checked as on any new thread; refused, the thread is removed again with the
  lease's release (`drop_created`), so a refused request leaves no thread and no message.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from network.history.messages import AssistantMessage, ToolMessage, UserMessage, shown_id
from network.ids import new_id
from network.run.context import NetworkLike
from network.run.interrupts import Interrupt
from network.serving.errors import RequestError, thread_busy
from network.serving.lease import HeldLease, log
from network.serving.principals import not_found, store_user
from network.serving.registry import SERVER_CALL, ThreadRecord, json_size, result_digest
from network.serving.rewinds import follow_client
from network.serving.screening import guarded
from network.threads.leases import (
    DEFAULT_LEASE_TTL,
    CreatingLeases,
    ReadingLeases,
    check_ttl,
)
from network.threads.resolve import open_store
from network.threads.store_leases import run_leases

MAX_PENDING_THREADS = 10_000  # threads whose pending interrupts this process remembers
MAX_PENDING_BYTES = 64 * 1024 * 1024  # and the most bytes they may take together


def stored_interrupts(thread: Any) -> list[Interrupt] | None:
    """The interrupts a stored thread waits on, or None when its store does not keep them.

    The one place the server reads pending approvals from a stored thread: a store that keeps
    them with the thread (so that any process, after a restart too, can take the answers)
    hands them back on the thread; with one that does not, the server remembers them in its
    own memory (`StoredThreads.remembered`), in this process only.
    """
    kept = getattr(thread, "pending_interrupts", None)
    if kept is None:
        return None
    if callable(kept):  # a custom store's method
        kept = kept()
    return [item for item in kept if isinstance(item, Interrupt)]


def stored_client_calls(thread: Any) -> set[str] | None:
    """The ids of the client tool calls a stored thread waits on (the calls a client may
    answer), or None when its store does not keep them with the thread."""
    kept = getattr(thread, "pending_tool_calls", None)
    if kept is None:
        return None
    if callable(kept):  # a custom store's method
        kept = kept()
    return {call.id for call in kept if isinstance(getattr(call, "id", None), str)}


def issued_calls(
    conversation: Iterable[Any], client_calls: set[str] | None = None
) -> dict[str, str | None]:
    """Every tool call of a stored conversation, with the digest of its result; one with none
    yet is None when a client may answer it (`client_calls`; all of them when None: a store
    that does not say), else `SERVER_CALL` (the server's own: held for confirmation, say)."""
    issued: dict[str, str | None] = {}
    for message in conversation:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                awaits_client = client_calls is None or call.id in client_calls
                issued.setdefault(call.id, None if awaits_client else SERVER_CALL)
        elif isinstance(message, ToolMessage) and message.tool_call_id in issued:
            issued[message.tool_call_id] = result_digest(message.content)
    return issued


def new_messages(conversation: Iterable[Any], client: list[Any]) -> list[Any]:
    """The client's messages the thread does not hold: user messages with an id it has not
    stored, and results of its tool calls that have none yet (client tool calls).

    A message is known by the id a client sees it under (`shown_id`: a stored message without
    an id, such as a run in Python's user message, by its position), so the client's copy of
    the conversation adds nothing twice. A user message whose id the thread (or an earlier
    message of the request) already holds for another message, other text or another role, is
    refused: 422 `message_id_reused` naming the id. Dropping it would run the agent again on
    the old conversation, the user's new words lost without a word; keeping both would give
    two messages one id, which a client's snapshot holds as one. Send a new message with a new
    id.
    """
    held: dict[str, list[Any]] = {}  # a thread may hold an id twice (`add_messages` did)
    answered: set[str] = set()
    for index, message in enumerate(conversation):
        held.setdefault(shown_id(message, index), []).append(message)
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
    fresh: list[Any] = []
    for message in client:
        if isinstance(message, UserMessage):
            if message.id is None:
                fresh.append(message)
                continue
            known = held.get(message.id)
            if known is None:
                fresh.append(message)
                held[message.id] = [message]
            elif not any(_same(message, other) for other in known):
                raise reused_id(message.id)
        elif isinstance(message, ToolMessage) and message.tool_call_id not in answered:
            answered.add(message.tool_call_id)
            fresh.append(message)
    return fresh


def _same(message: UserMessage, other: Any) -> bool:
    """Whether `other`, held under `message`'s id, is the client's copy of it."""
    return isinstance(other, UserMessage) and other.content == message.content


def reused_id(message_id: str) -> RequestError:
    """422 `message_id_reused`: a user message whose id the thread holds for another message."""
    return RequestError(
        422,
        "message_id_reused",
        f"message id {message_id[:100]!r} is already the thread's, for another message: a "
        "new message needs an id of its own (nothing was run or stored)",
    )


def opening_messages(client: Sequence[Any] | None) -> list[Any] | None:
    """What a request whose client sent `client` would create a new thread holding, when it
    looks like a thread's first request: user messages only (a client continuing a thread
    sends the answers it was given; a tool result on a new thread is refused anyway). None
    otherwise, or when the protocol gave no messages: the claim then only reads."""
    if not client:
        return None
    for message in client:
        if isinstance(message, AssistantMessage | ToolMessage):
            return None
    try:
        fresh = new_messages((), list(client))
    except RequestError:  # refused by the run's own check, before anything is created
        return None
    return fresh or None


def visible_state(network: NetworkLike, thread: Any) -> dict[str, Any]:
    """The keys a run on `thread` starts from (app, user, thread), as its session loads them."""
    schema = network.schema
    return {
        key: value
        for key, value in thread.full_state().items()
        if not schema.closed or key in schema
    }


@dataclass(slots=True)
class Claimed:
    """A thread whose run lease this request holds, and its record as the store has it."""

    record: ThreadRecord
    user_id: str
    lease: HeldLease
    stored: bool  # the thread existed before this request
    # the record's pending interrupts are the store's (else this process remembered them)
    pending_kept: bool = True
    thread: Any = None  # the thread as read under the lease (None: it does not exist yet)
    # the claim created the thread holding the request's first messages (`opening_messages`):
    # `thread` is it as created; the record is a new thread's all the same
    created: bool = False


class StoredThreads:
    """A server's threads on a thread store (see the module docstring).

    Args:
        store: a thread store, a database URL or an SQLite path. One given as a URL or path is
            opened here and closed by `close()`; a store object is the caller's to close.
        lease_ttl: seconds a run's lease lasts without renewal (renewed every third of it):
            how long a thread stays busy after its server process died mid-run.
    """

    def __init__(self, store: Any, *, lease_ttl: float = DEFAULT_LEASE_TTL) -> None:
        self.store, self._owned = open_store(store)
        self.leases = run_leases(self.store)
        # leases that check the owner, claim and read in one go (checked once: a runtime
        # protocol check is slow)
        self.reading = self.leases if isinstance(self.leases, ReadingLeases) else None
        # ... and that create a new thread with the claim (`opening_messages`)
        self.creating = self.leases if isinstance(self.leases, CreatingLeases) else None
        self.lease_ttl = check_ttl(lease_ttl)
        # Pending interrupts of threads whose store does not keep them, in this process,
        # with what a request said beside its answers while an answered call waits again
        # (kept with the thread's entry on a store that keeps pending calls:
        # `PendingCall.held`), and their size in bytes.
        self.remembered: OrderedDict[str, tuple[list[Interrupt], tuple[Any, ...], int]] = (
            OrderedDict()
        )
        self._remembered_bytes = 0

    async def close(self) -> None:
        """Close the store when it was opened here from a URL or path."""
        if self._owned:  # closing again is fine: a pooled store reconnects on next use
            await self.store.close()

    async def claim(
        self,
        network: NetworkLike,
        thread_id: str,
        principal: str | None,
        run_id: str,
        messages: Sequence[Any] | None = None,
    ) -> Claimed:
        """Read the thread, check who may run on it, and take its run lease for `run_id`.

        404 for a thread of another user or app (before the lease is looked at, so a busy
        thread of someone else's is as unknown as any); 409 when another run holds the lease.
        `messages`: the request's (the client's conversation), when the protocol has them
        before admission: a thread found missing is then created holding them by the claim
        (`opening_messages`; removed again by `drop_created` when the request is refused).
        """
        user = store_user(principal)
        app = network.name
        holder = new_id("lease_")
        asked = time.time()
        first = opening_messages(messages) if self.creating is not None else None
        created = False
        if self.creating is not None and first is not None:  # and create a missing thread
            found = await guarded(
                "claim",
                self.creating.claim_creating(
                    thread_id,
                    holder,
                    self.lease_ttl,
                    app_name=app,
                    user_id=user,
                    messages=first,
                    run_id=run_id,
                ),
            )
            if found.foreign:
                raise not_found(thread_id)
            taken, existed, read, fresh = found.taken, found.existed, found.thread, True
            created = found.created
        elif self.reading is not None:  # the owner, the lease and the read at once
            found = await guarded(
                "claim",
                self.reading.claim_reading(
                    thread_id, holder, self.lease_ttl, app_name=app, user_id=user
                ),
            )
            if found.foreign:
                raise not_found(thread_id)
            taken, existed, read, fresh = found.taken, found.existed, found.thread, True
        else:
            read = await self._read(thread_id)
            _check_owner(read, thread_id, app, user)
            existed = read is not None
            taken = await guarded("claim", self.leases.claim(thread_id, holder, self.lease_ttl))
            fresh = False  # read before the lease: read again below
        if not taken:
            if not existed:  # created meanwhile: by someone this request may not see?
                _check_owner(await self._read(thread_id), thread_id, app, user)
            raise thread_busy(thread_id)
        lease = HeldLease(
            self.leases, thread_id, holder, self.lease_ttl, granted_at=asked, run_id=run_id
        )
        try:
            # what the lease now protects (read with the claim when the leases could)
            thread = read if fresh else await self._read(thread_id)
            _check_owner(thread, thread_id, app, user)
            # a thread the claim created is checked as the new thread it is
            record, kept = self._record(network, thread_id, None if created else thread, principal)
            return Claimed(
                record,
                user,
                lease,
                stored=thread is not None and not created,
                pending_kept=kept,
                thread=thread,
                created=created,
            )
        except BaseException:
            await (self.drop_created(lease, read) if created else lease.release())
            raise

    async def follow(self, network: NetworkLike, claimed: Claimed, messages: Sequence[Any]) -> None:
        """Take `claimed`'s thread back where the client's `messages` went back to, when they
        did (`network.serving.rewinds`), and read it and its record again. Run once the
        request was checked, under the lease: a refused request leaves the thread as it was."""
        thread = claimed.thread
        if thread is None or claimed.created or not claimed.stored:
            return
        if not await guarded("rewind", follow_client(self.store, thread, messages)):
            return
        thread = await self._read(claimed.record.thread_id)
        record, _ = self._record(network, claimed.record.thread_id, thread, claimed.record.owner)
        claimed.record.state = record.state
        claimed.record.issued_calls = record.issued_calls
        claimed.record.interrupts = record.interrupts
        claimed.thread = thread

    async def drop_created(self, lease: HeldLease, thread: Any) -> None:
        """Remove `thread`, which the claim of `lease` created (its request was refused before
        its run started), and release the lease, in one transaction, shielded; when that
        fails, the lease is released on its own (the thread, holding only the user's message,
        stays)."""
        with anyio.CancelScope(shield=True):
            try:
                assert self.creating is not None
                await self.creating.release_created(lease.thread_id, lease.holder, thread.revision)
                return
            except Exception as error:
                log.warning(
                    "serving.new_thread_drop_failed", thread_id=lease.thread_id, error=repr(error)
                )
            await lease.release()

    async def read(
        self, network: NetworkLike, thread_id: str, principal: str | None
    ) -> tuple[ThreadRecord, list[Any]]:
        """`principal`'s thread `thread_id` as a run on it would start (its record) and its
        conversation, read without its lease; 404 for a thread that does not exist or that
        belongs to another user or app (the same answer: knowing an id reads nothing)."""
        user = store_user(principal)
        thread = await self._read(thread_id)
        if thread is None:
            raise not_found(thread_id)
        _check_owner(thread, thread_id, network.name, user)
        record, _ = self._record(network, thread_id, thread, principal)
        return record, list(thread.messages)

    def _record(
        self, network: NetworkLike, thread_id: str, thread: Any, principal: str | None
    ) -> tuple[ThreadRecord, bool]:
        """The record of a stored thread (None: not created yet), and whether its pending
        interrupts are the store's (else this process remembered them)."""
        record = ThreadRecord(thread_id, owner=principal)
        if thread is None:
            return record, True
        record.state = visible_state(network, thread)
        record.issued_calls = issued_calls(thread.messages, stored_client_calls(thread))
        pending = stored_interrupts(thread)
        kept = pending is not None
        if pending is None:
            pending = list(self.remembered.get(thread_id, ([], (), 0))[0])
        record.interrupts = pending
        return record, kept

    def remember(
        self, thread_id: str, interrupts: list[Interrupt], held: Sequence[Any] = ()
    ) -> None:
        """Keep the pending interrupts of a thread whose store does not (bounded: the least
        recently used beyond `MAX_PENDING_THREADS` threads or `MAX_PENDING_BYTES` are
        forgotten, and their threads' next request is refused as answering nothing), and
        `held`: the messages a request sent beside its answers while an answered call waits
        again on one of them, added after that call's result by the request answering it
        (`held`), as a store that keeps pending calls keeps them with its entry."""
        old = self.remembered.pop(thread_id, None)
        if old is not None:
            self._remembered_bytes -= old[2]
        if not interrupts:
            return
        size = sum(json_size(dataclasses.asdict(interrupt)) for interrupt in interrupts)
        size += sum(json_size(message.to_dict()) for message in held)
        self.remembered[thread_id] = (list(interrupts), tuple(held), size)
        self._remembered_bytes += size
        while self.remembered and (
            len(self.remembered) > MAX_PENDING_THREADS or self._remembered_bytes > MAX_PENDING_BYTES
        ):
            _, (_, _, dropped) = self.remembered.popitem(last=False)
            self._remembered_bytes -= dropped

    def held(self, thread_id: str) -> list[Any]:
        """The messages remembered with `thread_id`'s pending interrupts (`remember`)."""
        return list(self.remembered.get(thread_id, ([], (), 0))[1])

    async def list_threads(self, app_name: str, principal: str | None) -> list[Any]:
        """The headers (`ThreadInfo`) of `principal`'s threads of `app_name`, newest first."""
        infos: list[Any] = await guarded(
            "list_threads",
            self.store.list_threads(app_name=app_name, user_id=store_user(principal)),
        )
        return infos

    async def _read(self, thread_id: str) -> Any:
        return await guarded("get_thread", self.store.get_thread(thread_id))


def _check_owner(thread: Any, thread_id: str, app: str, user: str) -> None:
    if thread is not None and (thread.app_name != app or thread.user_id != user):
        raise not_found(thread_id)
