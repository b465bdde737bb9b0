"""Run resources: live things (a database client, a sandbox) opened by a run when first used.

A resource is declared by a *factory*, never by a value: `resources={"db": open_db}` where
`open_db()` returns an async context manager (an `@asynccontextmanager` function, or a class
with `__aenter__` / `__aexit__`). A run opens a resource the first time something asks for it
(`await ctx.resource("db")` in a tool, router, hook or instruction function), hands the same
object to every later request in that run, and closes every resource it opened when it ends, in
the reverse order of opening: after success, after an error (the context managers see the
error) and after cancellation.

Because the run holds factories and not values, nothing about a resource is copied, persisted
or streamed: a resumed run (`network.run(result.resume(...))`, a thread's next run) opens its
own, fresh ones.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio

from network.errors import ConfigurationError
from network.logger import get_logger
from network.mappings import mapping_entries

ResourceFactory = Callable[[], Any]
"""A zero-argument callable returning an async context manager; its `__aenter__` result is the
resource."""


def check_factories(owner: str, factories: Mapping[str, Any] | None) -> dict[str, ResourceFactory]:
    """`factories` as a dict, or `ConfigurationError` naming the entry that is not a factory."""
    return mapping_entries(
        factories,
        lambda: (
            f"{owner}: resources must be a dict of name -> factory, got {type(factories).__name__}"
        ),
        functools.partial(_checked_factory, owner),
    )


def _checked_factory(owner: str, name: Any, factory: ResourceFactory) -> ResourceFactory:
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"{owner}: resource names must be non-empty strings, got {name!r}")
    # A class with `__aenter__` is a factory (calling it makes the manager); an instance of
    # one is a manager already opened or about to be, which a resumed run could not rebuild.
    if hasattr(factory, "__aenter__") and not isinstance(factory, type):
        raise ConfigurationError(
            f"{owner}: resource {name!r} is an opened context manager; give the factory "
            "that makes one (a resumed run must be able to build its own)"
        )
    if not callable(factory):
        raise ConfigurationError(
            f"{owner}: resource {name!r} must be a factory returning an async context "
            f"manager, got {factory!r}"
        )
    # The two likeliest slips: each was taken, then every use in every run was a tool error
    # ("its factory returned async_generator / coroutine"), the coroutine never awaited.
    if inspect.isasyncgenfunction(factory):
        raise ConfigurationError(
            f"{owner}: resource {name!r} is an async generator function, not a factory: "
            "decorate it with @contextlib.asynccontextmanager"
        )
    if inspect.iscoroutinefunction(factory):
        raise ConfigurationError(
            f"{owner}: resource {name!r} is an async def returning a value, not a factory: "
            "make it an @contextlib.asynccontextmanager function that opens, yields the "
            "resource and closes it"
        )
    return factory


def run_resources(
    owner: str, factories: Mapping[str, Any] | None, defaults: Mapping[str, ResourceFactory]
) -> Resources:
    """A run's resources: its own `factories` (checked, errors naming `owner`) over
    `defaults`, its network's (a run's factory wins a name)."""
    resources = Resources(check_factories(owner, factories))
    resources.add_defaults(defaults)
    return resources


class Resources:
    """The resources of one run: factories, the ones opened so far, and how to close them."""

    __slots__ = (
        "_factories",
        "_locks",
        "_opened",
        "_owned",
        "_owned_stack",
        "_stack",
        "_task",
        "closed",
    )

    def __init__(self, factories: Mapping[str, ResourceFactory] | None = None) -> None:
        self._factories: dict[str, ResourceFactory] = dict(factories or {})
        self._opened: dict[str, Any] = {}
        self._owned: dict[int, tuple[object, Any]] = {}  # id(owner) -> (owner, value)
        self._locks: dict[object, anyio.Lock] = {}
        self._stack: AsyncExitStack | None = None
        self._owned_stack: AsyncExitStack | None = None
        self._task = _current_task()  # the run's own task, which closes what is owned
        self.closed = False

    def add_defaults(self, factories: Mapping[str, ResourceFactory]) -> None:
        """Add the network's factories under this run's own (a run's factory wins a name)."""
        for name, factory in factories.items():
            self._factories.setdefault(name, factory)

    @property
    def names(self) -> list[str]:
        """The names this run can open."""
        return list(self._factories)

    @property
    def opened(self) -> list[str]:
        """The names opened so far, in opening order."""
        return list(self._opened)

    async def get(self, name: str) -> Any:
        """The resource `name`, opened now if this run has not opened it yet."""
        if name in self._opened:
            return self._opened[name]
        factory = self._factories.get(name)
        if factory is None:
            raise ConfigurationError(
                f"no resource named {name!r} (resources: {', '.join(self._factories) or 'none'})"
            )
        if self.closed:
            raise ConfigurationError(f"resource {name!r} asked for after its run ended")
        lock = self._locks.setdefault(name, anyio.Lock())
        async with lock:  # two concurrent tools asking at once open it once
            if name in self._opened:
                return self._opened[name]
            manager = factory()
            if not hasattr(manager, "__aenter__"):
                raise ConfigurationError(
                    f"resource {name!r}: its factory returned {type(manager).__name__}, "
                    "not an async context manager"
                )
            if self._stack is None:
                self._stack = AsyncExitStack()
            value = await self._stack.enter_async_context(manager)
            self._opened[name] = value
            return value

    async def open_owned(self, owner: object, factory: ResourceFactory) -> Any:
        """A library-owned live thing for this run, keyed by `owner`'s identity, not by a name.

        For things the library opens on a run's behalf (an agent's MCP server connection):
        opened by `factory()` on first request, handed to every later request for the same
        owner, and closed with the run's named resources. Its key is the owner object, so it
        can never collide with, or be reached as, a resource the user named.

        They are closed before the named resources, by the task that runs the run, and not
        inside a cancellation shield: such a thing may hold task groups (an MCP client does),
        which must be left in the task, and under the cancel scope, they were entered in. It
        shields its own shutdown where it needs one (the MCP SDK does, for its subprocess).
        """
        entry = self._owned.get(id(owner))
        if entry is not None:
            return entry[1]
        if self.closed:
            raise ConfigurationError(f"{owner!r} asked for a run resource after its run ended")
        if self._task is not None and _current_task() != self._task:
            # It would be entered in this task and left in the run's: task groups inside it
            # (an MCP client's) cannot survive that. Say so instead of failing at the end.
            raise ConfigurationError(
                f"{owner!r} was first needed outside the run's own task (in a parallel "
                "branch?); open it before the run instead (`async with` it)"
            )
        lock = self._locks.setdefault((id(owner),), anyio.Lock())  # a tuple: never a name
        async with lock:
            entry = self._owned.get(id(owner))
            if entry is not None:
                return entry[1]
            if self._owned_stack is None:
                self._owned_stack = AsyncExitStack()
            value = await self._owned_stack.enter_async_context(factory())
            self._owned[id(owner)] = (owner, value)  # the owner is kept: its id stays unique
            return value

    async def aclose(self, error: BaseException | None = None) -> None:
        """Close what was opened, newest first; shielded so a cancelled run still closes.

        `error` (the run's exception, if any) is passed to each context manager's
        `__aexit__`; a resource cannot swallow it. An error raised while closing propagates
        after every resource had its chance to close.
        """
        self.closed = True
        owned, self._owned_stack = self._owned_stack, None
        self._owned.clear()
        try:
            if owned is not None:
                # Not given the run's error: a task group inside would re-raise it wrapped
                # in an ExceptionGroup. Their failure to close is the run's error when the
                # run succeeded, and a logged warning when the run already failed.
                try:
                    await owned.aclose()
                except Exception as closing:
                    if error is None:
                        raise
                    get_logger().warning(
                        "run_resource_close_failed", error=f"{type(closing).__name__}: {closing}"
                    )
        finally:
            await self._close_named(error)

    def close_unopened(self) -> bool:
        """`aclose` without awaiting anything, when nothing was opened (most runs): True
        when that closed them, False when `aclose` has something to close."""
        if self._stack is not None or self._owned_stack is not None:
            return False
        self.closed = True
        self._owned.clear()
        self._opened.clear()
        return True

    async def _close_named(self, error: BaseException | None) -> None:
        stack, self._stack = self._stack, None
        self._opened.clear()
        if stack is None:
            return
        with anyio.CancelScope(shield=True):
            if error is None:
                await stack.aclose()
            else:
                await stack.__aexit__(type(error), error, error.__traceback__)


def _current_task() -> int | None:
    """The id of the task running now (anyio's `TaskInfo.id`), or None outside an event loop.

    Every run pays for this once: on asyncio it asks asyncio directly (a tenth of the cost of
    `anyio.get_current_task()`, which builds a `TaskInfo`); the id is the same.
    """
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no running asyncio loop: maybe trio, maybe none
            task = None
        if task is not None:
            return id(task)
    try:
        return anyio.get_current_task().id
    except RuntimeError:  # no event loop: built by synchronous code
        return None
