"""Loading a thread for a run: the thread read (created when missing), a durable run's load as
it first recorded it, and the run's `State` made from the thread (see `network.threads.session`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from network.errors import ThreadError
from network.history.log import RecordLog
from network.run.context import NetworkLike
from network.run.steps import StepRunner
from network.state.handlers import replace_values
from network.state.state import State
from network.state.values import is_pydantic_model
from network.threads.ids import check_id
from network.threads.pending import PendingCall
from network.threads.protocol import ThreadExistsError, ThreadNotFoundError, ThreadStore
from network.threads.thread_data import ANONYMOUS_USER, Thread


async def load_thread(
    store: ThreadStore,
    thread_id: str,
    app: str,
    user_id: str | None,
    create: bool = True,
    *,
    missing: bool = False,
) -> Thread:
    """The thread, created when missing (with `create`). `missing`: the caller has just found
    it missing (a server, under the thread's run lease): it is created without a read first,
    and read back with its creation where the store can (`create_and_get`)."""
    thread = None if missing else await store.get_thread(thread_id)
    if thread is None and not create:
        raise ThreadNotFoundError(f"thread {thread_id!r} does not exist in the store given")
    if thread is None:
        thread, _ = await create_missing(store, thread_id, app, user_id)
    return check_owner(thread, thread_id, app, user_id)


async def create_missing(
    store: ThreadStore,
    thread_id: str,
    app: str,
    user_id: str | None,
    keep: Sequence[Any] = (),
    run_id: str | None = None,
) -> tuple[Thread, bool]:
    """A thread found missing, created and read back, and whether it was created holding the
    messages `keep` (of run `run_id`) as its first commit.

    A store with `create_and_get` creates, keeps and reads back in one transaction; another
    creates it bare (the caller then commits `keep` itself: False). A thread another run
    created meanwhile is read as it is, `keep` not added (False). The owner is checked."""
    if run_id is not None:
        check_id("run_id", run_id)
    user = user_id or ANONYMOUS_USER
    both = getattr(store, "create_and_get", None)
    thread: Thread | None = None
    kept = False
    try:
        if both is None:
            await store.create_thread(thread_id, app_name=app, user_id=user)
        elif keep:
            thread = await both(thread_id, app_name=app, user_id=user, messages=keep, run_id=run_id)
            kept = True
        else:
            thread = await both(thread_id, app_name=app, user_id=user)
    except ThreadExistsError:  # another run created it: read theirs
        pass
    if thread is None:
        thread = await store.get_thread(thread_id)
    if thread is None:
        raise ThreadNotFoundError(f"thread {thread_id!r} was deleted while being opened")
    return check_owner(thread, thread_id, app, user_id), kept


def check_owner(
    thread: Thread,
    thread_id: str,
    app: str,
    user_id: str | None,
    error: type[ThreadError] = ThreadError,
) -> Thread:
    """`thread`, when it is `thread_id` and belongs to `app` (and to `user_id`, when named);
    else `error` (a `ThreadError`; time travel raises its own kind)."""
    if thread.thread_id != thread_id:
        raise error(f"thread {thread.thread_id!r} was given as thread {thread_id!r}")
    if thread.app_name != app:
        raise error(f"thread {thread_id!r} belongs to app {thread.app_name!r}, not {app!r}")
    if user_id is not None and thread.user_id != user_id:
        raise error(f"thread {thread_id!r} belongs to user {thread.user_id!r}, not {user_id!r}")
    return thread


async def load_recorded(
    steps: StepRunner,
    store: ThreadStore,
    thread_id: str,
    app: str,
    user_id: str | None,
    create: bool = True,
) -> Thread:
    """A durable run's load: the thread as it was when the run first loaded it.

    The step records where the thread stood (its revision, how many messages, calls and
    summaries it had, its keys' values), not the thread itself. A replayed load reads the
    thread again and cuts it back to that point: what was appended since (this run's own
    commits among it) is left out, and the keys are the recorded values.
    """
    loaded: list[Thread] = []

    async def load() -> dict[str, Any]:
        thread = await load_thread(store, thread_id, app, user_id, create)
        loaded.append(thread)
        return {
            "revision": thread.revision,
            "messages": len(thread.messages),
            "results": len(thread.results),
            "summaries": len(thread.summaries),
            "state": dict(thread.state),
            "user_state": dict(thread.user_state),
            "app_state": dict(thread.app_state),
            "pending": [entry.to_text() for entry in thread.pending],
        }

    mark = await steps.step("thread_load", load)
    if loaded:  # loaded just now, not replayed
        return loaded[0]
    thread = await load_thread(store, thread_id, app, user_id)
    if len(thread.messages) < mark["messages"] or len(thread.results) < mark["results"]:
        raise ThreadError(
            f"thread {thread_id!r} was rewound after this durable run loaded it: the run "
            "cannot resume on it (fork the thread you kept, or start a new run)"
        )
    return thread.model_copy(
        update={
            "revision": mark["revision"],
            "messages": RecordLog(thread.messages, mark["messages"]),
            "results": RecordLog(thread.results, mark["results"]),
            "summaries": list(thread.summaries[: mark["summaries"]]),
            "state": mark["state"],
            "user_state": mark["user_state"],
            "app_state": mark["app_state"],
            "pending": [PendingCall.from_text(text) for text in mark.get("pending", [])],
        }
    )


def state_of(network: NetworkLike, thread: Thread) -> State:
    schema = network.schema
    data = {
        key: value
        for key, value in thread.full_state().items()
        if not schema.closed or key in schema
    }
    state = State(data, schema=schema)
    # The thread's records stay the store's (they never change): the store hands out
    # `RecordLog`s over them, which the run takes over and appends to. Nothing is copied or
    # decoded here, so loading is flat in the thread's length; a record is decoded only when
    # something reads it. A loaded result's history stays a view of the store's conversation,
    # a prefix of the same messages as the run's.
    state.take_over(thread.messages, thread.results)
    state.summaries.extend(thread.summaries)
    return state


def write_initial(state: State, initial: Mapping[str, Any] | State) -> None:
    if isinstance(initial, State):
        values: Mapping[str, Any] = initial.kv.data
    elif is_pydantic_model(initial):
        values = initial.model_dump(exclude_unset=True)
    else:
        values = initial
    kv = state.kv
    for key, value in values.items():
        kv.set(key, value, replace_values)
