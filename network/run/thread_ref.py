"""`ThreadRef`: which stored thread a run continues, for whom, and where it is kept.

One value in place of the `thread_id=` / `user_id=` / `app_name=` / `store=` keywords that
used to travel together through every way into a run:

    await network.run("Hi", thread=ThreadRef("trip-42", user_id="ann", store="app.db"))
    await network.run("Hi", thread="trip-42")       # a bare id: the default store, no user

It names a thread; the thread's data (its conversation, state, pending approvals) is what a
store hands back as `network.threads.Thread`. A `ThreadRef` is plain data: its `store` is
checked when it is made (`network.run.store_option`), its id when a run opens the thread (the
id rules of `network.threads.ids`), and it can be pickled or sent to another process as long
as its `store` is a URL or a path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from network.errors import ConfigurationError, InvalidIdError
from network.redacted import shown_url
from network.run.store_option import check_store
from network.warned import warn


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """A thread a run continues: its id, its user, its app, and the store that keeps it.

    Args:
        id: the thread's id.
        user_id: the thread's owner; a run naming another user than the stored owner is
            refused. None: no user (`user:` keys shared by every thread without one).
        app_name: the app whose `app:` keys the thread shares (default: the network's name).
        store: a thread store, a database URL or an SQLite path (default
            `agent-network.db`). A durable run needs a URL or a path.
    """

    id: str
    user_id: str | None = None
    app_name: str | None = None
    store: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise ConfigurationError(f"a thread needs an id, got {self.id!r}")
        if not self.id:  # the id rules' own error (`network.threads.ids`), as for a blank one
            raise InvalidIdError("thread_id must not be empty", field="thread_id")
        if self.app_name == "":  # was read as "no app given": the network's name, silently
            raise InvalidIdError(
                "app_name must not be empty (None: the network's name)", field="app_name"
            )
        check_store("ThreadRef.store", self.store)  # here, not when a run first opens it

    def __repr__(self) -> str:
        """The fields, a store URL's password as `***` (a repr is printed and logged)."""
        store = shown_url(self.store) if isinstance(self.store, str) else self.store
        return (
            f"ThreadRef(id={self.id!r}, user_id={self.user_id!r}, "
            f"app_name={self.app_name!r}, store={store!r})"
        )

    @classmethod
    def of(cls, thread: ThreadRef | str | None) -> ThreadRef | None:
        """The `thread=` option as a `ThreadRef` (a bare string is an id on the default store)."""
        if thread is None or isinstance(thread, ThreadRef):
            return thread
        if isinstance(thread, str):
            return cls(thread)
        raise ConfigurationError(
            f"thread= takes a ThreadRef or a thread id, got {type(thread).__name__}"
        )


class ThreadKeywords(TypedDict, total=False):
    """The keywords `thread=` replaces (deprecated; removed in the next release)."""

    thread_id: str | None
    user_id: str | None
    app_name: str | None
    store: Any


# keywords a run took once: the error names what replaced them (docs/running.md)
_REMOVED_KEYWORDS = {
    "step_runner": "the durable engine's hook is the kernel's steps= (network.kernel.run), "
    "not an option of run",
}


def thread_of(
    thread: ThreadRef | str | None,
    deprecated: Mapping[str, Any],
    *,
    where: str = "run",
    stopped_thread: str | None = None,
    stacklevel: int = 3,
) -> ThreadRef | None:
    """The run's `ThreadRef` from `thread=`, or from the deprecated keywords (with a warning).

    `stopped_thread`: the thread of the stopped run a continuation answers, which the old
    spelling took its id from (`network.run(result.resume(answers), store=url)`).
    `stacklevel`: kept for callers; the warning points at the user's line whatever it is
    (`network.warned`).
    """
    ref = ThreadRef.of(thread)
    if not deprecated:
        return ref
    unknown = sorted(set(deprecated) - set(ThreadKeywords.__annotations__))
    if unknown:
        instead = _REMOVED_KEYWORDS.get(unknown[0])
        said = f": it was removed; {instead}" if instead else ""
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}{said}")
    given = {key: value for key, value in deprecated.items() if value is not None}
    if not given:
        return ref
    names = ", ".join(f"{key}=" for key in given)
    warn(
        f"{where}(): {names} are deprecated (removed in the next release); pass "
        "thread=ThreadRef(id, user_id=..., app_name=..., store=...) instead",
        DeprecationWarning,
    )
    if ref is not None:
        raise ConfigurationError(f"{where}(): give thread= or {names}, not both")
    thread_id = given.get("thread_id", stopped_thread)
    if thread_id is None:
        raise ConfigurationError("store= and user_id= only apply to a run with a thread_id")
    return ThreadRef(
        thread_id,
        user_id=given.get("user_id"),
        app_name=given.get("app_name"),
        store=given.get("store"),
    )
