"""Running a network on a persistent thread: load before the run, commit as it goes.

`network.run(input, thread=ThreadRef(id, user_id=..., store=...))` opens a `ThreadSession`:

1. Load. The thread is read (created when missing) and the run's State starts from its keys,
   its user's `user:` keys and its app's `app:` keys, its conversation and its results (so
   routers see the whole thread in `state.results`, as with AgentKit's history adapter). Keys
   a closed schema does not declare are left in storage, unseen: several networks may share
   an app. The caller's `state=` is then written over the loaded state as the caller's writes
   (recorded in the first delta, and saved).
2. Commit. The session is a sink of the run's typed events (`network.run.events`, subscribed
   as an `Observer`). On each `StepFinished` (STEP_FINISHED on the wire) it commits, in one
   transaction, the new agent call with its state delta, the conversation messages it added
   (the first commit also carries the user's message), the new values of the thread keys that
   delta touched, and the raw `user:` / `app:` writes for the store to re-apply with their handlers.
   On `RunFinished` it commits whatever the router wrote after the last call (not when the
   run was cancelled: pending writes then belong to the call in flight). The sink runs
   before any other, so a client that sees STEP_FINISHED knows the call is saved. A crash thus
   loses at most the call in flight; a failed run keeps every call that completed.
3. Conflicts. Each commit names the revision it builds on; when another run has committed in
   between, the store raises `StaleThreadError` and the run fails with it (its calls so far
   stay saved, nothing is merged or forked). The user message is committed with the first call,
   not on its own, so two runs racing on a thread leave exactly one of them in its history;
   a served run, which holds the thread's run lease, commits it as soon as it is admitted
   instead (`keep_input`), so a crash before its first call does not lose it.

`temp:` keys never reach a store: the State leaves them out of deltas, snapshots and events,
and the session only reads keys that deltas name or that are `user:` / `app:` writes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Unpack

import anyio

from network.run import engine
from network.run.context import NetworkLike, RunContext
from network.run.emitter import AnySink, Observer
from network.run.events import RunCancelled, RunEvent, RunFinished, StepFinished
from network.run.result import RunResult
from network.run.steps import StepRunner
from network.run.thread_ref import ThreadKeywords, ThreadRef, thread_of
from network.sentinels import DELETED
from network.state.kv import KV, MISSING
from network.state.state import State
from network.threads.codec import record_of
from network.threads.commit_once import commit_once
from network.threads.commit_parts import encode_key, record_writes, thread_keys
from network.threads.ids import check_id, check_ids
from network.threads.pending import PendingCall
from network.threads.pending_claims import claim_once
from network.threads.protocol import ThreadStore
from network.threads.resolve import open_store
from network.threads.thread_data import Commit, SharedWrite, Thread
from network.threads.thread_load import (
    check_owner,
    create_missing,
    load_recorded,
    load_thread,
    state_of,
    write_initial,
)


class ThreadSession:
    """One run's link to its thread. Make it with `await ThreadSession.open(...)`."""

    def __init__(
        self, store: ThreadStore, thread: Thread, state: State, *, owns_store: bool
    ) -> None:
        self.store = store
        self.thread_id = thread.thread_id
        self.app_name = thread.app_name
        self.user_id = thread.user_id
        self.revision = thread.revision  # what the next commit builds on
        self.state = state
        self.run_id: str | None = None
        self._owns_store = owns_store
        self._results_saved = len(state.results)
        self._messages_saved = len(state.messages)
        self._summaries_saved = len(state.summaries)
        self._loaded = len(state.results)  # the thread's calls before this run
        self._writes_saved = 0  # position in the run's write log of what is committed
        self.steps: StepRunner | None = None  # a durable run's (network.run.steps)
        self.pending: list[PendingCall] = list(thread.pending)  # what the thread waits on
        self._ctx: RunContext | None = None
        self._pending_saved: set[str] = set()  # ids of the run's stops already committed
        self._superseded: dict[str, str] = {}  # waiting calls a new message leaves behind
        # messages held until calls of these ids have their results: kept with the entry of
        # the first interrupt that waits on one of them, if the run stops there (`hold`)
        self._holding: tuple[frozenset[str], tuple[Any, ...]] | None = None
        self.input_kept = False  # the thread was created holding the run's input (`open`)

    @classmethod
    async def open(
        cls,
        network: NetworkLike,
        ref: ThreadRef | str,
        *,
        state: Mapping[str, Any] | State | None = None,
        steps: StepRunner | None = None,
        create: bool = True,
        loaded: Thread | None = None,
        missing: bool = False,
        keep: Sequence[Any] = (),
        run_id: str | None = None,
        **deprecated: Unpack[ThreadKeywords],
    ) -> ThreadSession:
        """Load (or, with `create`, create) the thread and build the run's State from it.

        `steps` (a durable run's): the load and each commit are recorded steps (a resumed run
        starts from the thread as loaded, and commits each agent call once).
        `loaded`: the thread as a server just read it under its run lease: not read again
        (its owner still checked; ignored for a durable run, whose load is a recorded step).
        `missing`: the caller just found it missing (under its lease): created without a read
        first. `keep` (with `missing`): the messages run `run_id` starts with, the new thread's
        first commit in its creation's transaction where the store can (then `input_kept`;
        else the caller adds them and `keep_input` commits them).
        `open(network, "t1", user_id=..., store=...)`: the old spelling, kept for one release.
        """
        named = ThreadRef.of(ref) if not deprecated else None
        if named is None:  # the old spelling: the id and its keywords
            named = thread_of(None, {"thread_id": ref, **deprecated}, where="ThreadSession.open")
            assert named is not None
        thread_id, user_id, store = named.id, named.user_id, named.store
        app = named.app_name or network.name
        # Before the store is opened: every store, the user's own too, gets the same rules.
        check_id("thread_id", thread_id)
        check_ids(user_id=user_id, app_name=app)
        opened, owned = open_store(store)
        kept = False
        try:
            if steps is None and loaded is not None:
                thread = check_owner(loaded, thread_id, app, user_id)
            elif steps is None and missing and create and keep:
                thread, kept = await create_missing(opened, thread_id, app, user_id, keep, run_id)
            elif steps is None:
                thread = await load_thread(
                    opened, thread_id, app, user_id, create, missing=missing and create
                )
            else:
                thread = await load_recorded(steps, opened, thread_id, app, user_id, create)
            run_state = state_of(network, thread)
            _kv(run_state).record_shared_writes = True
            if state is not None:
                write_initial(run_state, state)
            session = cls(opened, thread, run_state, owns_store=owned)
            session.steps, session.input_kept = steps, kept
            return session
        except BaseException:
            if owned:
                with anyio.CancelScope(shield=True):
                    await opened.close()
            raise

    async def execute(
        self,
        ctx: RunContext,
        *,
        max_iter: int | None = None,
        sinks: Sequence[AnySink | Observer] = (),
    ) -> RunResult:
        """Run `ctx` (built on `self.state`) with this session committing as it goes.

        The session only watches (`Observer`): a run on a thread asks its model as a run
        without one does."""
        self.attach(ctx)
        try:
            committing = Observer(self.sink)
            return await engine.execute(ctx, max_iter=max_iter, sinks=[committing, *sinks])
        finally:
            await self.close()

    def attach(self, ctx: RunContext) -> None:
        """Commit for the run `ctx` (built on `self.state`): its id, and what it stops on
        (approvals, client tool calls), kept with the thread. `execute` does it; a caller that
        drives the run itself with `sink` among its sinks (the AG-UI server) calls it first.
        The run id goes with every commit, so it follows the identifier rules: one a store
        refuses is `InvalidIdError` here, before the run pays for anything."""
        self.run_id = check_id("run_id", ctx.run_id)
        self._ctx = ctx
        ctx.engine.persisted = True
        ctx.engine.user_id, ctx.engine.app_name = self.user_id, self.app_name

    async def close(self) -> None:
        """Close the store when the session opened it from a URL or path."""
        if self._owns_store:
            self._owns_store = False
            with anyio.CancelScope(shield=True):
                await self.store.close()

    async def sink(self, event: RunEvent) -> None:
        """The event sink that commits: after each agent call, and at the end of the run."""
        if isinstance(event, StepFinished):
            if len(self.state.results) > self._results_saved:  # not a step closed by an error
                await self.commit()
        elif isinstance(event, RunFinished):
            if isinstance(event, RunCancelled):
                return  # stopped mid-call: what is pending belongs to the call in flight
            await self.commit(trailing=True)

    async def commit(self, *, trailing: bool = False) -> None:
        """Commit everything the run did since the last commit (`trailing`: and the writes
        made after the last agent call)."""
        state = self.state
        kv = _kv(state)
        conversation = state.messages
        results = state.results[self._results_saved :]
        messages = conversation[self._messages_saved :]
        summaries = state.summaries[self._summaries_saved :]
        ops = [op for result in results for op in result.state_delta]
        if trailing:
            ops.extend(kv.take_ops())
        shared = [
            SharedWrite(key, DELETED if value is MISSING else value, handler, kv.spec(key))
            for key, value, handler in kv.take_shared_writes()
        ]
        writes = kv.writes_since(self._writes_saved)
        if results:
            first = self._results_saved - self._loaded  # the run's own index of results[0]
            record_writes(results, first, writes, self.run_id)
        values: dict[str, str] = {}
        removed: list[str] = []
        for key in thread_keys(ops):
            if kv.has(key):
                values[key] = encode_key(key, kv.spec(key).to_json(kv.raw(key)))
            else:
                removed.append(key)
        stops = self._new_stops()
        commit = Commit(
            revision=self.revision,
            run_id=self.run_id,
            messages=list(messages),
            results=[record_of(result, conversation) for result in results],
            state=values,
            removed=removed,
            shared=shared,
            summaries=list(summaries),
            pending=stops,
            answered=self._superseded,
        )
        if commit.empty:
            return
        await self._append(commit, "thread_commit", commit_once)
        self._results_saved += len(results)
        self._messages_saved += len(messages)
        self._summaries_saved += len(summaries)
        self._pending_saved.update(entry.id for entry in stops)
        self._superseded = {}
        if results:  # else they wait for a call to go with (trailing ones stay in the run)
            self._writes_saved += len(writes)

    async def _append(
        self,
        commit: Commit,
        step: str,
        once: Callable[[ThreadStore, str, Commit], Awaitable[int]],
    ) -> None:
        """Append `commit` to the thread, shielded: a commit begun (a call that completed, a
        claim) is saved even when the run is being cancelled. A durable run's is its recorded
        step `step`, made idempotent by `once`: a resumed run does not make it again."""
        with anyio.CancelScope(shield=True):
            if self.steps is None:
                self.revision = await self.store.append_results(self.thread_id, commit)
            else:
                self.revision = await self.steps.step(
                    step, lambda: once(self.store, self.thread_id, commit)
                )

    async def keep_input(self) -> None:
        """Commit the conversation messages the run starts with (its user's message), on
        their own, before anything runs.

        A served run does this when it is admitted: the thread's run lease keeps other runs
        off the thread, so committing the message early races with nobody, and a process
        killed before the run's first agent call commits leaves the message in the thread
        (the next turn's history has it). A run without a lease leaves it to its first
        commit instead (see the module docstring)."""
        messages = self.state.messages[self._messages_saved :]
        if not messages:
            return
        # Not synced to disk where the store can (it survives the process; the first agent
        # call's commit, synced, takes it to the disk): a crash of the machine before any
        # call committed loses the turn whole, the user's message with it. A durable run's
        # is synced: its step is recorded as done, and a resumed run does not commit it again.
        commit = Commit(
            revision=self.revision,
            run_id=self.run_id,
            messages=list(messages),
            synced=self.steps is not None,
        )
        await self._append(commit, "thread_input", commit_once)
        self._messages_saved += len(messages)

    def supersede_pending(self, run_id: str) -> None:
        """A new message on a thread that waits on calls leaves them unanswered for good: the
        run's first commit claims them as superseded (so the thread waits only on what this
        run stops on, and answering an old one is `AlreadyAnsweredError`)."""
        note = json.dumps({"superseded_by": run_id})
        self._superseded = {entry.id: note for entry in self.pending}
        self.pending = []

    def hold(self, calls: Collection[str], messages: Sequence[Any]) -> None:
        """Keep `messages` with the thread's entry of the first interrupt this run stops on
        that waits on one of `calls` (tool call ids), instead of in its conversation: they
        belong after that call's result (`PendingCall.held`). A call that gets its result
        makes no stop of its id any more: once every one of `calls` has one, the messages are
        the run's to add (`network.serving.held_messages`), and nothing keeps them here."""
        self._holding = (frozenset(calls), tuple(messages)) if calls and messages else None

    def _new_stops(self) -> list[PendingCall]:
        """The calls the run stopped on since the last commit (`network.threads.pending`)."""
        ctx = self._ctx
        if ctx is None or not (ctx.engine.interrupts or ctx.engine.pending_tool_calls):
            return []
        saved = self._pending_saved
        # the run's root span: the run that answers, in any process, links its trace to it
        engine = ctx.engine
        trace = None if engine.trace_id is None else (engine.trace_id, engine.span_id or "")
        stops = []
        for interrupt in ctx.engine.interrupts:
            if interrupt.id in saved:
                continue
            holding, held = self._holding or (frozenset(), ())
            if interrupt.tool_call_id in holding:  # once: the first entry keeps them
                self._holding = None
                stops.append(PendingCall.of_interrupt(interrupt, self.run_id, held, trace))
            else:
                stops.append(PendingCall.of_interrupt(interrupt, self.run_id, trace=trace))
        stops.extend(
            PendingCall.of_tool_call(call, self.run_id, trace)
            for call in ctx.engine.pending_tool_calls
            if call.id not in saved
        )
        return stops

    async def claim(self, answered: dict[str, str], run_id: str) -> None:
        """Claim the answers of pending calls for run `run_id`, before anything runs: one
        commit the store refuses with `AlreadyAnsweredError` when any was answered already
        (`network.threads.pending`). A durable run's claim is a recorded step."""
        commit = Commit(revision=self.revision, run_id=run_id, answered=answered)
        await self._append(commit, "thread_claim", claim_once)
        answered_ids = set(answered)
        self.pending = [entry for entry in self.pending if entry.id not in answered_ids]


def _kv(state: State) -> KV:
    """A run's own store (a tool's staged view never reaches the session)."""
    kv = state.kv
    if not isinstance(kv, KV):
        raise TypeError(f"a thread run needs the run's KV, got {type(kv).__name__}")
    return kv
