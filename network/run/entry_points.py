"""`run_sync` and `stream`, made from a run method so that they take exactly its arguments.

`blocking(run)` and `streaming(run)` wrap an async `run(self, input, **options)` method; the
`ParamSpec` carries its whole signature over, so editors and type checkers see the same
parameters on all three and a new option of `run` reaches the other two by itself.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio

from network.errors import ConfigurationError
from network.run.streaming import EventStream

P = ParamSpec("P")
R = TypeVar("R")
Self = TypeVar("Self")


def refuse_inside_loop(what: str) -> None:
    """`ConfigurationError` when called from a thread whose event loop is running."""
    # Read from sys.modules, not imported: a loop cannot be running before asyncio is loaded,
    # and importing it here would put asyncio (with ssl and socket) on `import network`.
    running_asyncio = sys.modules.get("asyncio")
    if running_asyncio is None:
        return
    try:
        running_asyncio.get_running_loop()
    except RuntimeError:
        return
    raise ConfigurationError(
        f"{what}: run_sync cannot run inside a running event loop (a notebook, an async "
        "function); use `await network.run(...)` there instead"
    )


def _same_signature(wrapper: Callable[..., Any], run: Callable[..., Any]) -> None:
    """`inspect.signature(wrapper)` is `run`'s (followed lazily: nothing is computed at import)."""
    wrapper.__wrapped__ = run  # type: ignore[attr-defined]
    wrapper.__module__ = run.__module__
    wrapper.__qualname__ = f"{run.__qualname__.rsplit('.', 1)[0]}.{wrapper.__name__}"


def blocking(
    run: Callable[Concatenate[Self, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Self, P], R]:
    """`run` for synchronous callers: the same arguments, run to the end in `anyio.run`."""

    def run_sync(self: Self, /, *args: P.args, **kwargs: P.kwargs) -> R:
        refuse_inside_loop(f"{type(self).__name__.lower()} {getattr(self, 'name', '')!r}")
        return anyio.run(functools.partial(run, self, *args, **kwargs))

    _same_signature(run_sync, run)
    run_sync.__doc__ = (
        f"`{run.__name__}` for synchronous callers: takes its arguments and returns its "
        "result (wrapped in `anyio.run`).\n\nInside a running event loop (a notebook, an "
        f"async app) use `await ....{run.__name__}(...)` instead."
    )
    return run_sync


def streaming(
    run: Callable[Concatenate[Self, P], Coroutine[Any, Any, Any]],
) -> Callable[Concatenate[Self, P], EventStream]:
    """`run` as a stream of its AG-UI events: the same arguments, the events as they happen."""

    def stream(self: Self, /, *args: P.args, **kwargs: P.kwargs) -> EventStream:
        extra = list(kwargs.pop("sinks", ()))  # type: ignore[call-overload]
        call: Callable[..., Coroutine[Any, Any, Any]] = run
        return EventStream(lambda sink: call(self, *args, sinks=[sink, *extra], **kwargs))

    _same_signature(stream, run)
    stream.__doc__ = (
        f"Run as `{run.__name__}` does (the same arguments) and yield the run's AG-UI events "
        "(`ag_ui.core` models) as they happen.\n\nThe events end with RUN_FINISHED, or with "
        "RUN_ERROR after which the run's exception is raised. Use `async with "
        "network.stream(...) as events:` when you may stop reading early: leaving the block "
        "cancels the run at once. The `RunResult` is on `events.result` once the run finished."
    )
    return stream
