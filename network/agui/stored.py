"""AG-UI threads on a thread store: `app(network, store=...)`.

Every thread the server runs lives in the store, as a run in Python on a store does
(`network.threads.session`): its state (with `user:` keys shared across the user's threads and
`app:` keys across everyone's), its conversation, its agent calls. So a restarted server, or
another server process on the same database, continues a thread where it was.

- The thread's user is the principal `authorize` returned (without a hook: the anonymous user
  `""`, whom every request is). A thread of another user, or of another app on the same
  database, is answered 404 `thread_not_found`, exactly as a thread that does not exist.
- One run per thread across processes: a request claims the thread's run lease in the store
  (`network.threads.leases`) before anything runs, and a thread whose lease another live run
  holds is answered 409 `thread_busy`, whichever process holds it. The lease is renewed while
  the run goes on and released when it ends; a crashed process's lease expires on its own.
- What the server checks a request against is read from the store: the state (the client's
  writes are what differs from it), the tool calls issued on the thread (every call in the
  stored conversation; a result the client sends must be for one of them and, once the thread
  has one, be that result), and the pending interrupts.
- The stored conversation is the thread's: the client's messages that the thread does not
  hold yet (new user messages, results of client tool calls) are appended to it; the rest of
  what the client sends is checked, then left (the stored copy wins). A run whose client
  lacks some of the stored conversation (a reloaded page, a new client on the same threadId)
  sends MESSAGES_SNAPSHOT right after its first STATE_SNAPSHOT (`ConversationReplay`), so
  the client gets the whole conversation back beside the state; a client that holds it all
  is not sent it again.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from network.agui.declared_tools import CONTEXT_KEY
from network.agui.errors import RequestError
from network.agui.input import check_request
from network.agui.messages import input_text
from network.agui.registry import ThreadRecord, json_size
from network.agui.snapshot import message_id, messages_snapshot
from network.agui.tool_results import result_digest
from network.continuing import RunnableNetwork
from network.errors import InvalidIdError
from network.history.messages import AssistantMessage, ToolMessage, UserMessage
from network.ids import new_id
from network.logger import LazyLogger
from network.run.context import NetworkLike, RunContext
from network.run.emitter import EventSink
from network.run.interrupts import AlreadyAnsweredError, Interrupt
from network.run.thread_ref import ThreadRef
from network.serving.lease import HeldLease
from network.threads.ids import check_id
from network.threads.leases import DEFAULT_LEASE_TTL, check_ttl
from network.threads.resolve import open_store
from network.threads.session import ThreadSession
from network.threads.store_leases import run_leases
from network.threads.thread_data import ANONYMOUS_USER

MAX_PENDING_THREADS = 10_000  # threads whose pending interrupts this process remembers
MAX_PENDING_BYTES = 64 * 1024 * 1024  # and the most bytes they may take together

log = LazyLogger("agent_network.agui")


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


def issued_calls(conversation: Iterable[Any]) -> dict[str, str | None]:
    """Every tool call of a stored conversation, with the digest of its result (None: none yet)."""
    issued: dict[str, str | None] = {}
    for message in conversation:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                issued.setdefault(call.id, None)
        elif isinstance(message, ToolMessage) and message.tool_call_id in issued:
            issued[message.tool_call_id] = result_digest(message.content)
    return issued


def new_messages(conversation: Iterable[Any], client: list[Any]) -> list[Any]:
    """The client's messages the thread does not hold: user messages with an id it has not
    stored, and results of its tool calls that have none yet (client tool calls)."""
    ids: set[str] = set()
    answered: set[str] = set()
    for message in conversation:
        if message.id is not None:
            ids.add(message.id)
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
    fresh: list[Any] = []
    for message in client:
        if isinstance(message, UserMessage) and (message.id is None or message.id not in ids):
            fresh.append(message)
        elif isinstance(message, ToolMessage) and message.tool_call_id not in answered:
            answered.add(message.tool_call_id)
            fresh.append(message)
    return fresh


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


class StoredThreads:
    """The AG-UI server's threads on a thread store (see the module docstring).

    Args:
        store: a thread store, a database URL or an SQLite path. One given as a URL or path is
            opened here and closed by `close()`; a store object is the caller's to close.
        lease_ttl: seconds a run's lease lasts without renewal (renewed every third of it):
            how long a thread stays busy after its server process died mid-run.
    """

    def __init__(self, store: Any, *, lease_ttl: float = DEFAULT_LEASE_TTL) -> None:
        self.store, self._owned = open_store(store)
        self.leases = run_leases(self.store)
        self.lease_ttl = check_ttl(lease_ttl)
        # Pending interrupts of threads whose store does not keep them, in this process,
        # with their size in bytes.
        self.remembered: OrderedDict[str, tuple[list[Interrupt], int]] = OrderedDict()
        self._remembered_bytes = 0

    async def close(self) -> None:
        """Close the store when it was opened here from a URL or path."""
        if self._owned:
            self._owned = False
            await self.store.close()

    async def claim(self, network: NetworkLike, thread_id: str, principal: str | None) -> Claimed:
        """Read the thread, check who may run on it, and take its run lease.

        404 for a thread of another user or app (before the lease is looked at, so a busy
        thread of someone else's is as unknown as any); 409 when another run holds the lease.
        """
        user = principal if principal is not None else ANONYMOUS_USER
        try:
            check_id("user_id", user, allow_empty=True)
        except InvalidIdError:  # the application's hook, not the client, is at fault
            log.error("agui.unstorable_principal", length=len(user))
            raise RequestError(500, "internal_error", "authorization failed") from None
        app = network.name
        thread = await self._read(thread_id)
        _check_owner(thread, thread_id, app, user)
        holder = new_id("lease_")
        asked = time.time()
        if not await _guarded("claim", self.leases.claim(thread_id, holder, self.lease_ttl)):
            if thread is None:  # created meanwhile: by someone this request may not see?
                _check_owner(await self._read(thread_id), thread_id, app, user)
            raise RequestError(
                409,
                "thread_busy",
                f"thread {thread_id!r} has a run under way; wait for it to finish",
            )
        lease = HeldLease(self.leases, thread_id, holder, self.lease_ttl, granted_at=asked)
        try:
            thread = await self._read(thread_id)  # what the lease now protects
            _check_owner(thread, thread_id, app, user)
            record = ThreadRecord(thread_id, owner=principal)
            if thread is not None:
                record.state = visible_state(network, thread)
                record.issued_calls = issued_calls(thread.messages)
                pending = stored_interrupts(thread)
                if pending is None:
                    pending = list(self.remembered.get(thread_id, ([], 0))[0])
                record.interrupts = pending
            return Claimed(record, user, lease, stored=thread is not None)
        except BaseException:
            await lease.release()
            raise

    def remember(self, thread_id: str, interrupts: list[Interrupt]) -> None:
        """Keep the pending interrupts of a thread whose store does not (bounded: the least
        recently used beyond `MAX_PENDING_THREADS` threads or `MAX_PENDING_BYTES` are
        forgotten, and their threads' next request is refused as answering nothing)."""
        old = self.remembered.pop(thread_id, None)
        if old is not None:
            self._remembered_bytes -= old[1]
        if not interrupts:
            return
        size = sum(json_size(dataclasses.asdict(interrupt)) for interrupt in interrupts)
        self.remembered[thread_id] = (list(interrupts), size)
        self._remembered_bytes += size
        while self.remembered and (
            len(self.remembered) > MAX_PENDING_THREADS or self._remembered_bytes > MAX_PENDING_BYTES
        ):
            _, (_, dropped) = self.remembered.popitem(last=False)
            self._remembered_bytes -= dropped

    async def list_threads(self, app_name: str, user_id: str) -> list[Any]:
        """The headers of `user_id`'s threads of `app_name`, newest first."""
        infos: list[Any] = await _guarded(
            "list_threads", self.store.list_threads(app_name=app_name, user_id=user_id)
        )
        return infos

    async def _read(self, thread_id: str) -> Any:
        return await _guarded("get_thread", self.store.get_thread(thread_id))


async def _claim_answers(session: ThreadSession, answered: Any, run_id: str) -> None:
    """Claim the answered interrupts in the store, or 409 when another answer came first."""
    claims = {
        interrupt.id: json.dumps(answer.to_json(), default=str) for interrupt, answer in answered
    }
    try:
        await session.claim(claims, run_id)
    except AlreadyAnsweredError as error:
        await session.close()
        raise RequestError(
            409, "interrupt_answered", f"already answered: {', '.join(sorted(claims))}"
        ) from error
    except RequestError:
        raise
    except Exception as error:
        await session.close()
        await _guarded("claim_answers", _raise(error))


async def _raise(error: BaseException) -> None:
    raise error


async def _guarded(operation: str, pending: Any) -> Any:
    """A store call whose failure the client hears of only as `store_failed` (500)."""
    try:
        return await pending
    except RequestError:
        raise
    except Exception as error:  # the store's own text may quote SQL or values: logged only
        reference = new_id("err_")
        log.error("agui.store_failed", operation=operation, reference=reference, exc_info=error)
        raise RequestError(
            500,
            "store_failed",
            f"the thread store failed (reference {reference}); the server's log has the details",
        ) from error


def _check_owner(thread: Any, thread_id: str, app: str, user: str) -> None:
    if thread is not None and (thread.app_name != app or thread.user_id != user):
        raise RequestError(404, "thread_not_found", f"no thread {thread_id!r}")


class ConversationReplay:
    """A sink that gives a client coming back to a stored thread its conversation, right
    after the run's first STATE_SNAPSHOT.

    The client merges MESSAGES_SNAPSHOT into what it holds: the messages it keeps stay in
    its order, the others are appended. So it first gets the conversation as stored (which
    drops its unsent copy of the new message), then, when the request added messages, the
    whole conversation, which appends them after the stored ones.
    """

    def __init__(self, sink: EventSink, conversation: Any, stored: int) -> None:
        self.sink = sink
        self.conversation = conversation
        self.stored = stored  # how many of its messages were stored before this run
        self.sent = False

    async def __call__(self, event: Any) -> None:
        await self.sink(event)
        if not self.sent and event.type == "STATE_SNAPSHOT":
            self.sent = True
            await self.sink(messages_snapshot(islice(self.conversation, self.stored)))
            if len(self.conversation) > self.stored:
                await self.sink(messages_snapshot(self.conversation))


def lacks_stored_messages(conversation: Iterable[Any], client: list[Any]) -> bool:
    """Whether the client's messages miss any of the stored conversation's (by snapshot id)."""
    held = {message.id for message in client}
    return any(message_id(m, i) not in held for i, m in enumerate(conversation))


@dataclass(slots=True)
class StoredRun:
    """A run the server is about to stream on a stored thread, its lease held."""

    threads: StoredThreads
    claimed: Claimed
    session: ThreadSession
    ctx: RunContext
    replay: bool  # the client lacks some of the stored conversation: send it
    stored_messages: int = 0  # how many messages the thread held before this run

    @property
    def record(self) -> ThreadRecord:
        return self.claimed.record

    @property
    def lease(self) -> HeldLease:
        """The run's lease on its thread."""
        return self.claimed.lease

    async def keep_lease(self) -> None:
        """Renew the lease until the response's task group ends (or the lease is lost)."""
        await self.claimed.lease.keep()

    async def release(self) -> None:
        """Release the lease (the session's store stays open: it is the server's)."""
        await self.claimed.lease.release()


async def open_stored_run(
    threads: StoredThreads,
    network: RunnableNetwork,
    run_input: Any,
    principal: str | None,
    *,
    system_messages: str,
    max_state_bytes: int,
) -> StoredRun:
    """Claim the thread, check the request against it, and load the run's State from the
    store, or raise the `RequestError` that refuses it (the lease then released)."""
    thread_id = run_input.thread_id
    claimed = await threads.claim(network, thread_id, principal)
    claimed.lease.run_id = run_input.run_id
    try:
        record = claimed.record
        checked = check_request(
            network,
            record,
            run_input,
            system_messages=system_messages,
            max_state_bytes=max_state_bytes,
        )
        missing = object()
        writes = {
            key: value
            for key, value in checked.data.items()
            if record.state.get(key, missing) != value
        }
        session = await _guarded(
            "get_thread",
            ThreadSession.open(
                network,
                ThreadRef(thread_id, user_id=principal, store=threads.store),
                state=writes,
            ),
        )
        if checked.answered and session.pending:
            # Kept with the thread: the store claims the answers once, whichever process or
            # request comes first (a second answer runs nothing: 409).
            await _claim_answers(session, checked.answered, run_input.run_id)
        state = session.state
        stored_messages = len(state.messages)
        replay = lacks_stored_messages(state.messages, checked.messages)
        fresh = new_messages(state.messages, checked.messages)
        state.append_messages(fresh)
        if checked.context is not None:
            state.kv.set(CONTEXT_KEY, checked.context)
        session.run_id = run_input.run_id
        # The user's message is the thread's from now on: a run killed before its first
        # agent call commits must not lose it (the lease keeps other runs away meanwhile).
        await _guarded("append_results", session.keep_input())
        ctx = RunContext(
            network=network,
            state=state,
            input=input_text(fresh) or _last_user_text(state.messages),
            run_id=run_input.run_id,
            thread_id=thread_id,
            resume=checked.answered,
            client_input=run_input,
            client_tools=tuple(checked.client_tools),
        )
        ctx.record_model_calls = True  # RUN_FINISHED's usage per provider and model
        session.attach(ctx)  # its commits keep what the run stops on with the thread
        return StoredRun(threads, claimed, session, ctx, replay, stored_messages)
    except BaseException:
        await claimed.lease.release()
        raise


def _last_user_text(conversation: Any) -> str:
    """The text of the conversation's last user message, read from its end."""
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation[index]
        if isinstance(message, UserMessage):
            text: str = message.content
            return text
    return ""
