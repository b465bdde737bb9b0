"""The state progress capability: a run with a live sink sees a tool's writes as it makes them.

Without it, the writes of an agent call reach an event stream once, after its tools returned
(one STATE_DELTA). A tool that walks through steps (`ctx.kv.set("steps", ...)`, then
`await` the next piece of work) would show the user nothing until its end. With it, whenever
a tool that writes to the run's store waits (each time its coroutine gives control back to
the event loop), the writes it made since the last wait go out as a STATE_DELTA first. No
code in the tool: an `await` that really waits is the flush point.

What stays as it was: the store's values, the operations the agent call records
(`InferenceResult.state_delta`), and the undoing of a failed call's writes. A tool that fails
after its progress was shown has its writes rolled back as before, and the store sends the
operations that take the shown ones back (`KV.rollback`) with its next delta, so the client's
copy ends equal to the server's state.

What it costs: nothing for a run without a live sink (the network adds the capability only to
runs that have one: `Network.run_stages_for`), and for a tool that writes nothing one
comparison each time it waits. Several tool calls of one answer run on staged views of the
state and commit together at the end, in the model's order: their writes are shown then, as
before (showing a view's writes early could show what the commit then refuses).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, ClassVar

from network.history.results import ToolCallRecord
from network.run.agent_call import ToolUse
from network.run.capability import Capability
from network.run.emitter import Emitter
from network.state.kv import KV


class StateProgress(Capability):
    """Flushes a running tool's state writes to the run's sinks each time the tool waits."""

    order: ClassVar[int] = 100  # innermost: right around the tool itself

    async def wrap_tool(
        self, use: ToolUse, proceed: Callable[[], Awaitable[ToolCallRecord]]
    ) -> ToolCallRecord:
        run = use.run
        kv: Any = use.state.kv
        if kv is not run.state.kv:  # a staged view: its writes are shown when it commits
            return await proceed()
        return await _Flushing(proceed(), run.engine.emitter, kv)

    def __repr__(self) -> str:
        return "StateProgress()"


class _Flushing:
    """`awaitable`, awaited so that each time it gives control back to the event loop, the
    store's unshown operations are sent first (the tool is suspended meanwhile).

    Everything the event loop sends or throws in goes to `awaitable` unchanged, also while the
    operations are being sent (a cancellation then reaches the tool at the wait it was about
    to make, where its time limit expects it); closing this closes `awaitable`.
    """

    __slots__ = ("awaitable", "emitter", "kv")

    def __init__(self, awaitable: Awaitable[ToolCallRecord], emitter: Emitter, kv: KV) -> None:
        self.awaitable = awaitable
        self.emitter = emitter
        self.kv = kv

    def __await__(self) -> Generator[Any, Any, ToolCallRecord]:
        inner = self.awaitable.__await__()
        kv = self.kv
        try:
            waiting_on = inner.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        while True:
            if kv.has_unpublished_ops():
                try:
                    yield from self.emitter.flush_state(kv).__await__()
                except GeneratorExit:
                    _close(inner)
                    raise
                except BaseException as thrown:  # met while the tool waits: the tool's, as if
                    try:  # its own wait had raised it (its time limit's cancellation, say)
                        waiting_on = inner.throw(thrown)
                    except StopIteration as done:
                        return done.value  # type: ignore[no-any-return]
                    continue
            try:
                sent = yield waiting_on
            except GeneratorExit:
                _close(inner)
                raise
            except BaseException as thrown:  # a cancellation, a timeout: the tool's to handle
                try:
                    waiting_on = inner.throw(thrown)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
                continue
            try:
                waiting_on = inner.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]


def _close(awaitable: Any) -> None:
    """Close a coroutine's iterator (its `finally` blocks run now), if it can be closed."""
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
