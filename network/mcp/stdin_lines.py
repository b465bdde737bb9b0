"""The lines of this process's stdin as the SDK's stdio server reads them, each kept until the
message the SDK made of it is taken.

The SDK's stdio transport turns each line into one message (or one exception, for a line it
cannot read) and drops the line: a message whose `id` its models ignore (a request with a null
id reads as a notification) cannot be told from one that had none. Handed this reader as its
`stdin`, the transport reads the same lines, and `answering_bad_lines` takes the line of
each message it relays (one line, one item, in order) to look at what the model dropped.

Standard input is claimed as the SDK claims it when it opens stdin itself: the wire moved to a
private descriptor and fd 0 pointed at the null device while the server runs (a tool or a
child process that reads stdin reads nothing, instead of the client's messages), restored
after. That is the SDK's own function (`mcp.server.stdio._claim_fd`); an SDK without it reads
stdin in place, as the SDK's own fallback does.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from io import TextIOWrapper
from typing import Any

import anyio


class StdinLines:
    """An async iterator of the lines of `file`, each also kept in `pending` until `taken()`."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.pending: deque[str] = deque()

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        line: str = await self.file.readline()
        if not line:
            raise StopAsyncIteration
        self.pending.append(line)
        return str(line)

    def taken(self) -> str | None:
        """The oldest line read whose message was not taken yet (None if there is none)."""
        return self.pending.popleft() if self.pending else None


class _UnownedText(TextIOWrapper):
    """A text layer whose close leaves the buffer open: the buffer is stdin's (or the
    claim's), not this wrapper's to close when it is collected."""

    def close(self) -> None:
        with suppress(ValueError):
            self.detach()


@asynccontextmanager
async def stdin_lines() -> AsyncIterator[StdinLines]:
    """This process's stdin, claimed as the SDK claims it, read as `StdinLines` (UTF-8, an
    undecodable byte replaced, as the SDK reads it); released when the block ends."""
    from mcp.server import stdio  # noqa: PLC0415 (mcp)

    claim: Callable[..., Any] | None = getattr(stdio, "_claim_fd", None)
    diversion = getattr(stdio, "_open_stdin_diversion", None)
    release: Callable[[], None] | None = None
    if claim is not None and diversion is not None:
        buffer, release = claim(0, sys.stdin, "rb", diversion)
    else:  # an SDK without the claim: stdin read in place
        buffer = sys.stdin.buffer
    try:
        text = _UnownedText(buffer, encoding="utf-8", errors="replace")
        yield StdinLines(anyio.wrap_file(text))
    finally:
        if release is not None:
            release()
