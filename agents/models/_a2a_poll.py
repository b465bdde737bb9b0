"""A remote A2A task followed by polling, for a remote that does not stream.

`A2AModel` sends such a remote its message non-blocking (A2A 1.0 `SendMessage` with
`configuration.returnImmediately`, 0.3 `message/send` with `configuration.blocking: false`,
the SDK writing whichever the card's version speaks): the answer is the task at once, with
the id a `CancelTask` names, so a call given up while the remote works cancels its task.
`follow` then reads the task (`GetTask`) until it ends. A remote that answers with the
finished task (or a message) anyway is read as before: `follow` sends nothing.

Cost: one `GetTask` 50 ms after the send's answer, the wait doubling to 1 s between reads
(50, 100, 200, 400, 800 ms, then 1 s): a task done within 50 ms costs one request more than a
blocking send, one of 10 s about 14 more (reads at 0.05, 0.15, 0.35, 0.75, 1.55, 2.55, ...
10.55 s); the answer arrives at most one wait (at most 1 s, and never more than about the
time the task has run) after the task ended. Each read is an HTTP answer bounded as any
(`max_bytes`, `idle_timeout`); the whole call's `timeout` bounds the reading, so a remote
that says `working` for ever is read at most about once a second until then; each read
replaces the last (`Answer.take_polled`), so what is held stays bounded.
"""

from __future__ import annotations

from typing import Any

import anyio

from agents.models._a2a_wire import Answer
from agents.models.base import ChunkHandler, ReasoningDelta

FIRST_WAIT = 0.05  # seconds before the first `GetTask`
LONGEST_WAIT = 1.0  # the wait doubles up to this
WORKING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})
# The history a read asks for: 1 (not 0, which 0.3 reads as "all"); none of it is read.
HISTORY = 1


async def follow(client: Any, answer: Answer, on_chunk: ChunkHandler | None) -> None:
    """Read the remote's task until it leaves `submitted` / `working`, folding each read into
    `answer` and its new progress to `on_chunk`."""
    from a2a.types import GetTaskRequest  # noqa: PLC0415 (with a2a-sdk)

    wait = FIRST_WAIT
    while answer.task_id and answer.state in WORKING:
        await anyio.sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)
        task = await client.get_task(GetTaskRequest(id=answer.task_id, history_length=HISTORY))
        for progress in answer.take_polled(task):
            if on_chunk is not None:
                await on_chunk(ReasoningDelta(progress + "\n"))
