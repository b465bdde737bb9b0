"""Opening a run's thread session: the thread stores load with the first run on a thread.

`network.threads` (its stores, codec and records) is imported here, inside the function, so
that `import network` does not pay for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from network.run.context import NetworkLike
from network.run.steps import StepRunner
from network.run.thread_ref import ThreadRef
from network.state.state import State

if TYPE_CHECKING:
    from network.threads.session import ThreadSession


async def open_session(
    network: NetworkLike,
    thread: ThreadRef,
    *,
    state: Mapping[str, Any] | State | None = None,
    steps: StepRunner | None = None,
    create: bool = True,
) -> ThreadSession:
    """Open `thread` for a run (`create=False`: it must exist, as for a continuation)."""
    from network.threads.session import ThreadSession  # noqa: PLC0415 (see the docstring)

    return await ThreadSession.open(network, thread, state=state, steps=steps, create=create)
