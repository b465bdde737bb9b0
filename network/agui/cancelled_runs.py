"""A run cancelled from inside, while its client listens: the stream ends as the run did.

A run's `CancelledError` usually means the request itself is being cancelled: its client went
away (`_cancel_on_disconnect`) or the server is shutting down; then nothing more can be sent,
and the cancellation goes on up. But a run can also be cancelled from inside, with no one
cancelling the request: a tool that awaits a task or a future someone else cancelled gets a
`CancelledError` of its own. The run then ends as a cancelled run does (its open messages,
tool calls and steps closed, and `RUN_FINISHED` whose outcome is `{"type": "cancelled"}`,
which AG-UI 1.0 names for it), and the client, still listening, must read that end: before,
the error went on up out of the ASGI app, which cut the stream before its last frames were
written (the official client reported `TypeError: terminated` and no RUN_FINISHED).

Told apart on asyncio by the task's own count of cancellation requests (`Task.cancelling()`:
a scope's cancellation is one, a stray `CancelledError` is none); on another event loop (trio,
whose `Cancelled` user code cannot raise) every cancellation is the request's.
"""

from __future__ import annotations

import anyio


def cancelled_from_inside(scope: anyio.CancelScope) -> bool:
    """Whether the `CancelledError` being handled came from the run itself, not from a
    cancellation of the request's task (or of `scope`, the request's task group)."""
    if scope.cancel_called:
        return False
    try:
        import asyncio  # noqa: PLC0415 (only asyncio has stray cancellations)

        task = asyncio.current_task()
    except RuntimeError:  # not on asyncio
        return False
    return task is not None and task.cancelling() == 0
