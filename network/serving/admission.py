"""Admission: one run per thread, and the run a request is admitted to, for every protocol.

`ServedThreads.admit(thread_id, run_id, principal)` (`network.serving.threads`) holds the
thread for one request (404 for a thread the principal may not see, 409 `thread_busy` while
another run holds it) and answers an `Admission`: the thread's `record` (its state, pending
interrupts, issued tool calls, owner), against which the protocol checks what the request
asks for. Then:

    ctx = await admission.start(RunRequest(messages=..., data=..., answered=...))
    result = await admission.execute(ctx, sinks=[...])       # the protocol's encoder
    ...
    await admission.release()                                 # always, also when refused

`start` makes the run's context: it bounds the state (413 `state_too_large`), validates it
through the schema (422 `invalid_state` naming the key), and, on a thread store, settles the
request's answers to pending approvals exactly once (409 `interrupt_answered` when another
request came first) and commits the messages the request adds before anything runs (a server
killed before the run's first commit keeps the user's message). Nothing is applied when
`start` refuses. `execute` runs it: in memory the thread's record is updated when the run
ends; on a store the run commits as it goes, behind the lease it keeps (a run whose lease is
lost stops, `network.serving.lease`). `release` frees the thread for the next request.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from network import kernel
from network.errors import ConfigurationError, StateError
from network.history.answer_order import hold_after_answers, results_after_calls
from network.history.messages import UserMessage
from network.history.unanswered import answered, unanswered_calls
from network.run.context import RunBookkeeping, RunContext
from network.run.emitter import Listener, Sink, wrapped
from network.run.interrupts import Answer, Interrupt
from network.run.thread_ref import ThreadRef
from network.serving.approvals import settle
from network.serving.capacity import Slot
from network.serving.errors import RequestError
from network.serving.held_messages import HeldMessages, without_result
from network.serving.lease import HeldLease
from network.serving.registry import ThreadRecord, ThreadRegistry, json_size
from network.serving.screening import guarded
from network.serving.stored import Claimed, StoredThreads, new_messages
from network.state.state import State
from network.telemetry.run_trace import link_to
from network.threads.pending import held_by, trace_links
from network.threads.session import ThreadSession

if TYPE_CHECKING:
    from network.run.definition import RunnableNetwork


@dataclass(slots=True)
class RunRequest:
    """What a request asks a run for, once the protocol has checked it against the record.

    - `messages`: the client's messages, as the network's. In memory they are the run's
      conversation (the client holds it); on a store, those the thread does not hold yet
      (user messages with a new id, results of its client tool calls) are appended to the
      stored conversation, the rest being the client's copy.
    - `data`: the state the run starts from: the record's state with the client's writes
      (and a rejected proposal's keys restored). On a store only what differs from the
      record's state is written, as the client's writes.
    - `answered`: the pending interrupts with their answers (`approvals.pair_answers`).
    - `temp`: `temp:` keys the run starts with (an AG-UI client's context), never stored.
    - `input`: the run's input text (default: the conversation's last user message).
    - `client_input`, `client_tools`: the protocol's request and the tools its client
      declared (`RunContext.engine.client_input`, `RunContext.engine.client_tools`).
    """

    messages: list[Any]
    data: dict[str, Any]
    answered: Sequence[tuple[Interrupt, Answer]] = ()
    temp: dict[str, Any] = field(default_factory=dict)
    input: str | None = None
    client_input: Any = None
    client_tools: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        # a protocol adapter's mistake named here, not a bare TypeError deep in the run
        for name, value, kind in (
            ("messages", self.messages, list),
            ("data", self.data, dict),
            ("temp", self.temp, dict),
            ("client_tools", self.client_tools, tuple),
        ):
            if not isinstance(value, kind):
                raise ConfigurationError(
                    f"RunRequest.{name} must be a {kind.__name__}, got {type(value).__name__}"
                )
        if isinstance(self.answered, str | bytes) or not isinstance(self.answered, Sequence):
            raise ConfigurationError(
                "RunRequest.answered must be a sequence of (Interrupt, Answer) pairs, got "
                f"{type(self.answered).__name__}"
            )
        if self.input is not None and not isinstance(self.input, str):
            raise ConfigurationError(
                f"RunRequest.input must be a string or None, got {type(self.input).__name__}"
            )


def last_user_text(conversation: Any) -> str:
    """The text of the conversation's last user message ("" when there is none)."""
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation[index]
        if isinstance(message, UserMessage):
            text: str = message.content
            return text
    return ""


def admitted_messages(
    conversation: Sequence[Any],
    messages: Sequence[Any],
    request: RunRequest,
    waiting: Collection[str] | None = None,
) -> tuple[list[Any], list[Any]]:
    """The request's `messages` to add to `conversation` now, and those held until the calls
    the request answers have their results (`network.serving.held_messages`).

    A call the client moved on from is answered as not run (`network.history.unanswered`),
    except those the request answers: they run (or are rejected) first, their results right
    after their call, then come the request's new messages (`network.history.answer_order`).
    `waiting`: on a stored thread, the ids of the calls it still waits on; a call of the
    stored conversation without a result and not among them was answered by a run that died
    before saving its result, and is said to be unfinished, not "not run".
    """
    resolved = {interrupt.tool_call_id for interrupt, _ in request.answered}
    added = answered(messages, unanswered_calls(conversation), resolved, waiting)
    if not resolved:
        return added, []
    return hold_after_answers(added, resolved)


def checked_state(
    network: RunnableNetwork, thread_id: str, request: RunRequest, max_state_bytes: int
) -> State:
    """The run's State of `request.data` and `request.temp`, bounded and through the schema:
    413 `state_too_large`, 422 `invalid_state` naming the key."""
    size = json_size(request.data)
    if size > max_state_bytes:
        raise RequestError(
            413,
            "state_too_large",
            f"thread {thread_id!r}: its state would take {size} bytes, more than the limit "
            f"of {max_state_bytes} bytes",
        )
    try:
        return network.new_state({**request.data, **request.temp})
    except StateError as exc:
        raise RequestError(422, "invalid_state", str(exc), key=exc.key) from exc


class Admission:
    """A request admitted on its thread (see the module docstring); made by
    `ServedThreads.admit`."""

    record: ThreadRecord
    run_id: str
    lease: HeldLease | None = None
    # how many messages the thread held before this run (on a store; 0 in memory, where the
    # client holds the conversation)
    prior_messages: int = 0
    # the run's place among the server's runs in flight (`network.serving.capacity`), given
    # back by `release`
    slot: Slot | None = None
    # called once the thread is free (`ServedThreads` counts the runs still holding one)
    on_freed: Callable[[], None] | None = None
    # what the request said after its answers, held until the answered calls have their
    # results (`start` adds it to the run); None when it said nothing more
    held: HeldMessages | None = None

    def held_messages(self) -> Sequence[Any]:
        """The request's messages still held back (none once the run has added them)."""
        return () if self.held is None else self.held.messages

    @property
    def stopped(self) -> bool:
        """Whether the run was stopped from outside: its lease on the thread was lost."""
        return self.lease is not None and self.lease.lost

    async def start(self, request: RunRequest) -> RunContext:
        """The run's context for `request`, or the `RequestError` that refuses it."""
        raise NotImplementedError

    def _hold(
        self,
        held: Sequence[Any],
        request: RunRequest,
        keep: Callable[[], Awaitable[None]] | None = None,
    ) -> tuple[HeldMessages, ...]:
        """The run's own capabilities: the one adding `held` once the calls `request` answers
        have their results (`keep`: commits them then), when there is something held."""
        if not held:
            return ()
        answered = [interrupt.tool_call_id for interrupt, _ in request.answered]
        self.held = HeldMessages(held, answered, keep)
        return (self.held,)

    async def execute(self, ctx: RunContext, sinks: Sequence[Sink] = ()) -> Any:
        """Run `ctx` (from `start`) with `sinks` (the protocol's); the `RunResult`."""
        raise NotImplementedError

    async def release(self) -> None:
        """Free the run's slot on the server and the thread for the next request (call it
        once, whatever happened). The slot goes first: also when freeing the thread fails or
        is cancelled."""
        if self.slot is not None:
            self.slot.release()
        try:
            await self.free_thread()
        finally:
            freed, self.on_freed = self.on_freed, None  # counted once, if released twice
            if freed is not None:
                freed()

    async def free_thread(self) -> None:
        """Free the thread for the next request (by `release`)."""
        raise NotImplementedError


class MemoryAdmission(Admission):
    """A request on a thread of the in-memory registry: the thread is marked busy from
    admission to `release` (a new thread joins the registry only when its run starts, so a
    refused request creates and evicts nothing)."""

    def __init__(
        self,
        network: RunnableNetwork,
        registry: ThreadRegistry,
        reserved: dict[str, ThreadRecord],
        record: ThreadRecord,
        run_id: str,
    ) -> None:
        self.network = network
        self.registry = registry
        self.reserved = reserved  # new threads admitted, not yet in the registry
        self.record = record
        self.run_id = run_id

    async def start(self, request: RunRequest) -> RunContext:
        record = self.record
        state = checked_state(
            self.network, record.thread_id, request, self.registry.max_thread_bytes
        )
        # the client keeps the conversation: a result it placed after a later message (one
        # streamed after the message sent with the answers) goes back after its call
        client = results_after_calls(request.messages)
        now, held = admitted_messages(state.messages, client, request)
        state.append_messages(now)
        if self.reserved.get(record.thread_id) is record:
            del self.reserved[record.thread_id]
        self.registry.admit(record)  # joins (or is marked most recently used)
        ctx = RunContext(
            network=self.network,
            state=state,
            input=request.input if request.input is not None else last_user_text(client),
            run_id=self.run_id,
            thread_id=record.thread_id,
            engine=RunBookkeeping(
                user_id=record.owner,  # the principal: whose memories the run reads
                app_name=self.network.name,
                resume=request.answered,
                capabilities=self._hold(held, request),
                client_input=request.client_input,
                client_tools=request.client_tools,
                known_active_agent=record.active_agent,
                record_model_calls=True,  # a usage report per provider and model
            ),
        )
        if request.answered and record.trace:  # the run that stopped on them: its trace
            link_to(ctx, (record.trace,))  # linked (`ThreadRecord.trace`)
        return ctx

    async def execute(self, ctx: RunContext, sinks: Sequence[Sink] = ()) -> Any:
        record = self.record
        try:
            return await kernel.execute(self.network, ctx, sinks=sinks)
        finally:
            # What the client was shown is what the server keeps: also after an error or a
            # cancellation, so the next request's state diff starts from the same place.
            record.state = ctx.state.snapshot()
            record.active_agent = ctx.active_agent
            if not ctx.engine.resume:  # the pending interrupts were answered (the run took them)
                record.interrupts = list(ctx.engine.interrupts)
                trace_id, span_id = ctx.engine.trace_id, ctx.engine.span_id
                record.trace = None
                if ctx.engine.interrupts and trace_id is not None and span_id is not None:
                    record.trace = (trace_id, span_id)
            record.runs += 1
            self.registry.resize(record)

    async def free_thread(self) -> None:
        record = self.record
        if record.run_id == self.run_id:
            record.run_id = None
        if self.reserved.get(record.thread_id) is record:
            del self.reserved[record.thread_id]


class StoredAdmission(Admission):
    """A request on a thread of a thread store, holding the thread's run lease."""

    def __init__(
        self,
        network: RunnableNetwork,
        threads: StoredThreads,
        claimed: Claimed,
        run_id: str,
        max_state_bytes: int,
    ) -> None:
        self.network = network
        self.threads = threads
        self.claimed = claimed
        self.record = claimed.record
        self.lease = claimed.lease
        self.run_id = run_id
        self.max_state_bytes = max_state_bytes
        self.session: ThreadSession | None = None
        self.started = False  # `start` made the run's context: its input stays with the thread

    async def start(self, request: RunRequest) -> RunContext:
        network, record = self.network, self.record
        checked_state(network, record.thread_id, request, self.max_state_bytes)
        if not request.answered:  # a client gone back in the conversation takes the thread
            await self.threads.follow(network, self.claimed, request.messages)
        missing = object()
        writes = {
            key: value
            for key, value in request.data.items()
            if record.state.get(key, missing) != value
        }
        claimed = self.claimed
        missing = not claimed.stored
        # A new thread holds nothing yet: it is created holding the request's messages, in
        # one transaction where the store can (else `keep_input` commits them below); or the
        # claim created it holding them already (`Claimed.created`).
        keep = new_messages((), request.messages) if missing and not request.answered else []
        session = await guarded(
            "get_thread",
            ThreadSession.open(
                network,
                ThreadRef(record.thread_id, user_id=record.owner, store=self.threads.store),
                state=writes,
                loaded=claimed.thread,  # read (or created) under the lease: not read again
                missing=missing and not claimed.created,
                keep=keep,
                run_id=self.run_id,
            ),
        )
        if claimed.created and keep == list(claimed.thread.messages):
            session.input_kept = True  # kept by the claim: the thread holds nothing else
        self.session = session
        state = session.state
        # what an earlier request said beside its answers, held while the call it answered
        # waits again (on what this request answers): held again, after their results (on a
        # store that keeps no pending calls, this process remembered them with the thread's
        # interrupts: after the results of the calls this request answers or moves on from)
        kept = self.claimed.pending_kept
        if kept:
            waited = held_by(session.pending) if request.answered else []
        else:
            waited = self.threads.held(record.thread_id)
        # the runs that stopped on what it answers: their traces, linked (before the claim
        # takes the answered entries out of `session.pending`)
        links = trace_links(session.pending, request.answered)
        # What the request adds, checked before its answers are claimed: a message refused
        # (an id the thread holds for another message: 422) leaves the thread as it was.
        # (a client that sends its whole conversation sends the held ones again: not twice)
        fresh = (
            [] if session.input_kept else new_messages([*state.messages, *waited], request.messages)
        )
        if request.answered and kept:
            # Kept with the thread: the store claims the answers once, whichever process or
            # request comes first (a second answer runs nothing: 409), also when they were
            # paired with what the thread waited on before another answer settled it.
            await settle(session, request.answered, self.run_id)
        held: list[Any] = []
        if session.input_kept:
            self.prior_messages = len(state.messages) - len(keep)
        else:
            self.prior_messages = len(state.messages)
            # the calls the thread still waits on; unknown (None) where the store keeps no
            # pending calls: a call without a result is then one the client moved on from
            # ("Not run"), never one a run took up and died in ("No result")
            waiting = {entry.tool_call_id for entry in session.pending} if kept else None
            now, held = admitted_messages(state.messages, [*waited, *fresh], request, waiting)
            state.append_messages(now)
            if held:  # kept with the thread if an answered call waits again
                answered = {interrupt.tool_call_id for interrupt, _ in request.answered}
                session.hold([c.id for c in without_result(state.messages, answered)], held)
        for key, value in request.temp.items():
            state.kv.set(key, value)
        session.run_id = self.run_id
        # The user's message is the thread's from now on: a run killed before its first
        # agent call commits must not lose it (the lease keeps other runs away meanwhile).
        # One held until the answered calls have their results is committed after them.
        await guarded("append_results", session.keep_input())
        said = [*state.messages, *held]
        ctx = RunContext(
            network=network,
            state=state,
            input=request.input if request.input is not None else last_user_text(said),
            run_id=self.run_id,
            thread_id=record.thread_id,
            engine=RunBookkeeping(
                resume=request.answered,
                capabilities=self._hold(
                    held, request, functools.partial(keep_messages, session, self.claimed.lease)
                ),
                client_input=request.client_input,
                client_tools=request.client_tools,
                record_model_calls=True,  # a usage report per provider and model
            ),
        )
        link_to(ctx, links)
        session.attach(ctx)  # its commits keep what the run stops on with the thread
        self.started = True
        return ctx

    async def execute(self, ctx: RunContext, sinks: Sequence[Sink] = ()) -> Any:
        session, lease = self.session, self.claimed.lease
        if session is None:
            raise RuntimeError("StoredAdmission.execute: start() first")
        failure: BaseException | None = None
        outcome: Any = None
        done = anyio.Event()  # the run ended: the keeper returns (`HeldLease.keep`)
        async with anyio.create_task_group() as group:
            group.start_soon(lease.keep, done)
            try:
                # The session's commits first (a client that sees a step end knows it is
                # saved), behind the lease: a run whose lease is lost stops, commits nothing
                # more, and ends with LeaseLostError.
                with lease.guarding():
                    delivered = [wrapped(sink, lease.delivering) for sink in sinks]
                    committing = Listener(lease.committing(session.sink))
                    after = Listener(lease.after_event)
                    outcome = await kernel.execute(
                        self.network, ctx, sinks=[committing, *delivered, after]
                    )
            except BaseException as error:  # raised below, outside the keeper's task group
                failure = error
            finally:
                done.set()
                if lease.renewing:  # not waiting for the store's answer to end the run
                    group.cancel_scope.cancel()
                if (
                    not ctx.engine.resume
                ):  # the pending interrupts were answered (the run took them)
                    # with what is still held while an answered call waits again, where the
                    # store keeps no pending calls (else the thread's entry holds it)
                    held = () if self.claimed.pending_kept else self.held_messages()
                    self.threads.remember(record_id(ctx), list(ctx.engine.interrupts), held)
        if failure is not None:
            raise failure
        return outcome

    async def free_thread(self) -> None:
        """Release the lease (the session's store stays open: it is the server's); a thread
        the claim created for a request refused before its run started is removed with it."""
        claimed = self.claimed
        if claimed.created and not self.started:
            await self.threads.drop_created(claimed.lease, claimed.thread)
        else:
            await claimed.lease.release()


async def keep_messages(session: ThreadSession, lease: HeldLease) -> None:
    """Commit the run's conversation messages not saved yet (those a request sent with its
    answers, once the answered calls have their results: `network.serving.held_messages`), as
    every commit of the run is: not once its lease is lost."""
    if not lease.expired():
        await guarded("append_results", session.keep_input())


def record_id(ctx: RunContext) -> str:
    """The thread id of a served run's context (always set by `start`)."""
    return ctx.thread_id or ""
