"""A client that went back in its conversation: the stored thread follows it.

CopilotKit's chat regenerates an answer by sending the conversation cut after the user's
message (the old answer left out), and a chat that lets the user edit a message sends the
conversation cut before it, then the new text. In memory the client's copy is the
conversation, so the model answers what the user sees; on a thread store the stored
conversation is the thread's, and without this the model would read the old answer (or the
old message) too, and the server's `MESSAGES_SNAPSHOT` would put it back in the chat.

So a request whose messages are the start of the stored conversation (each message where the
thread has it, by the id the client sees it under, a user message with its text too; an
answer the thread never kept, such as a stopped run's tool call, passed over), then
only messages the thread does not hold (or one edited message: the thread's next user
message, its id kept, its text changed), moves the thread back before what the client left
out: the store's `rewind_thread` to the last checkpoint (committed agent call) at or before
the cut, which keeps the thread as it was as `<thread>~rewound-<random>` (nothing is lost),
withdraws what the calls it removes asked for, and takes the thread keys back to that point.
What the client sends after the checkpoint is then added as any new message is, and its
`state` written as on any request. `StoredThreads.follow` does it once the request was
checked, so a refused request leaves the thread as it was.

Not moved back (the thread goes on as before): a client that holds none of the thread (one
that sends only its new message), or the whole of it; a cut right before a tool result (a
stopped run's call, whose result the client never received); a cut before the thread's first
checkpoint (nothing committed to go back to); a store without checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.history.messages import AssistantMessage, ToolMessage, UserMessage, shown_id
from network.ids import new_id
from network.threads.checkpoint_store import CheckpointStore
from network.threads.ids import MAX_ID_LENGTH


def _holds(message: Any, stored: Any, index: int) -> bool:
    """Whether the client's `message` is its copy of `stored`, at `index` of the thread."""
    if isinstance(message, ToolMessage):
        return isinstance(stored, ToolMessage) and stored.tool_call_id == message.tool_call_id
    if message.id is None or message.id != shown_id(stored, index):
        return False
    if isinstance(message, UserMessage):
        return isinstance(stored, UserMessage) and stored.content == message.content
    return isinstance(message, AssistantMessage) and isinstance(stored, AssistantMessage)


def rewind_point(conversation: Sequence[Any], client: Sequence[Any]) -> int | None:
    """How many of the thread's messages the client kept, when it went back in the thread
    (see the module docstring); None when it did not."""
    ids = {shown_id(message, index) for index, message in enumerate(conversation)}
    kept = read = 0
    for message in client:
        if kept < len(conversation) and _holds(message, conversation[kept], kept):
            kept += 1
        elif not (isinstance(message, AssistantMessage) and message.id not in ids):
            break  # (an answer the thread never kept, a stopped run's, is the client's own)
        read += 1
    if kept == 0 or kept == len(conversation) or isinstance(conversation[kept], ToolMessage):
        return None
    calls = {m.tool_call_id for m in conversation if isinstance(m, ToolMessage)}
    for position, message in enumerate(client[read:]):
        if isinstance(message, ToolMessage):
            if message.tool_call_id in calls:
                return None  # a result the thread holds: not a clean cut
        elif message.id is not None and message.id in ids:
            edited = position == 0 and isinstance(message, UserMessage)
            if not (edited and shown_id(conversation[kept], kept) == message.id):
                return None  # a message the thread holds elsewhere: not a clean cut
    return kept


def rewound_id(thread_id: str) -> str:
    """The id the thread as it was is kept under: `<thread>~rewound-<random>`."""
    made = new_id(f"{thread_id}~rewound-")
    return made if len(made) <= MAX_ID_LENGTH else new_id("rewound-")


async def follow_client(store: Any, thread: Any, client: Sequence[Any] | None) -> bool:
    """Move `thread` back to where `client` (the request's messages) went back to, when it did
    and the store can; whether it was moved (read the thread again then). Run under the
    thread's run lease."""
    if not client or not isinstance(store, CheckpointStore):
        return False
    kept = rewind_point(list(thread.messages), client)
    if kept is None:
        return False
    checkpoints = await store.checkpoints(thread.thread_id) or []
    target = None
    for checkpoint in checkpoints:
        if checkpoint.messages <= kept:
            target = checkpoint
    if target is None:
        return False
    # what the client sends again after the checkpoint is added as new: user messages and
    # tool results only (an assistant's message there would be lost)
    between = list(thread.messages)[target.messages : kept]
    if any(isinstance(message, AssistantMessage) for message in between):
        return False
    await store.rewind_thread(thread.thread_id, to=target, kept_as=rewound_id(thread.thread_id))
    return True
