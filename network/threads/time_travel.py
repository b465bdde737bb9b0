"""`network.fork` and `network.rewind`: time travel on a thread, through the network's schema.

The store does the work (`CheckpointStore.fork_thread` / `rewind_thread`, one transaction
each); this module checks what comes from the caller first, so that bad input changes nothing:

- the thread is a `ThreadRef`, as `network.run` takes it: its ids are checked, and the thread
  must belong to its app (by default the network's) and to its user when one is named, as a
  run on it would require;
- a fork's `update` is validated through the network's schema, key by key, exactly as a run's
  writes are (a bad value is the schema's `StateValidationError` naming the key). It may only
  hold thread keys: `temp:` keys are never stored, and `user:` / `app:` keys are shared with
  the user's or the app's other threads, so a fork of one thread cannot set them (a run's
  `state=` can).

Decisions where the issue was silent: a fork keeps the source's app and user (a fork is the
same conversation, continued otherwise); its id defaults to `<source>~fork-<random>`, and a
rewind keeps the thread as it was under `<thread>~rewound-<random>` (`kept_as`), both falling
back to a random id when the source's id is too long to extend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from network.ids import new_id
from network.run.context import NetworkLike
from network.run.thread_ref import ThreadRef
from network.state.handlers import replace_values
from network.state.kv import KV
from network.state.scopes import scope_of
from network.threads.checkpoint_data import (
    Checkpoint,
    ForkResult,
    RewindReport,
    TimeTravelError,
)
from network.threads.checkpoint_store import CheckpointStore
from network.threads.ids import MAX_ID_LENGTH, check_id, check_ids
from network.threads.protocol import ThreadNotFoundError, ThreadStore
from network.threads.resolve import open_store
from network.threads.thread_data import Thread, check_metadata, encode_value
from network.threads.thread_load import check_owner


def validate_update(network: NetworkLike, update: Mapping[str, Any] | None) -> dict[str, str]:
    """A fork's `update` as the JSON texts of thread keys, validated through the schema."""
    if update is None:
        return {}
    if not isinstance(update, Mapping):
        raise TimeTravelError(
            f"update must be a mapping of state keys, got {type(update).__name__}"
        )
    kv = KV(network.schema)
    texts: dict[str, str] = {}
    for key, value in update.items():
        if not isinstance(key, str) or not key:
            raise TimeTravelError(
                f"update keys must be non-empty strings, got {key!r}", key=str(key)
            )
        scope = scope_of(key)
        if scope == "temp":
            raise TimeTravelError(
                f"update key {key!r} is a temp: key: it is never stored, so a fork cannot carry it",
                key=key,
            )
        if scope != "thread":
            raise TimeTravelError(
                f"update key {key!r} is a {scope}: key, shared with the {scope}'s other threads; "
                "a fork cannot set it for one thread (set it with a run's state= instead)",
                key=key,
            )
        kv.set(key, value, replace_values)  # the schema's error names the key
        spec = kv.spec(key)
        texts[key] = encode_value(spec.to_json(kv.raw(key)))
    return texts


def _derived_id(base: str, suffix: str) -> str:
    """`base` + `suffix` + random hex, or only a random id when that would be too long."""
    made = new_id(f"{base}{suffix}")
    return made if len(made) <= MAX_ID_LENGTH else new_id(suffix.lstrip("~"))


async def _owned(
    store: ThreadStore, network: NetworkLike, thread: ThreadRef
) -> tuple[CheckpointStore, Thread]:
    """The store as a `CheckpointStore`, and the thread, checked to be the app's (the
    `ThreadRef`'s, by default the network's) and its user's when one is named."""
    if not isinstance(store, CheckpointStore):
        raise TimeTravelError(
            f"the thread store {type(store).__name__} keeps no checkpoints: it must implement "
            "network.threads.CheckpointStore (MemoryStore and SQLStore do)"
        )
    found = await store.get_thread(thread.id)
    if found is None:
        raise ThreadNotFoundError(f"thread {thread.id!r} does not exist")
    check_owner(found, thread.id, thread.app_name or network.name, thread.user_id, TimeTravelError)
    return store, found


def _check(thread: ThreadRef) -> None:
    check_id("thread_id", thread.id)
    check_ids(user_id=thread.user_id, app_name=thread.app_name)


async def fork(
    network: NetworkLike,
    thread: ThreadRef,
    *,
    at: int | Checkpoint,
    update: Mapping[str, Any] | None = None,
    new_thread_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> ForkResult:
    """Make a new thread from `thread` at checkpoint `at`, plus `update` (see `Network.fork`)."""
    _check(thread)
    if new_thread_id is not None:
        check_id("new_thread_id", new_thread_id)
    texts = validate_update(network, update)
    if metadata is not None:
        metadata = check_metadata(metadata)
    opened, owned = open_store(thread.store)
    try:
        checkpoints, _found = await _owned(opened, network, thread)
        return await checkpoints.fork_thread(
            thread.id,
            at=at,
            new_thread_id=new_thread_id or _derived_id(thread.id, "~fork-"),
            state=texts,
            metadata=metadata,
        )
    finally:
        if owned:
            with anyio.CancelScope(shield=True):
                await opened.close()


async def rewind(
    network: NetworkLike,
    thread: ThreadRef,
    *,
    to: int | Checkpoint,
    kept_as: str | None = None,
) -> RewindReport:
    """Move `thread` back to checkpoint `to` (see `Network.rewind`)."""
    _check(thread)
    if kept_as is not None:
        check_id("kept_as", kept_as)
    opened, owned = open_store(thread.store)
    try:
        checkpoints, _found = await _owned(opened, network, thread)
        return await checkpoints.rewind_thread(
            thread.id, to=to, kept_as=kept_as or _derived_id(thread.id, "~rewound-")
        )
    finally:
        if owned:
            with anyio.CancelScope(shield=True):
                await opened.close()
