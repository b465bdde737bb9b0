"""`network.add_messages(thread, messages)`: the application appends to a thread's conversation.

After a run that stopped on a guardrail the user's message is in the thread with no answer;
the application says why (a refusal) so that the next turn does not send two user messages in
a row. Or it adds a note, or a message that came through another channel.

The messages come from outside, so each one is checked before the store is touched, and the
error (`MessageError`) names the message's position and the field:
- a role of "user" or "assistant": a system message belongs to an agent's instructions, and a
  tool message answers a tool call the conversation does not hold;
- text content, not empty, at most `MAX_CHARS` characters, without NUL (which no database
  stores in text); an assistant message carries no tool calls (calls without results would
  leave the conversation unanswerable);
- as a message object (`UserMessage`, `AssistantMessage`) or a dict of `role`, `content`,
  and optionally `name` and `id` (strings): nothing else;
- at most `MAX_MESSAGES` of them in one call;
- an `id` no earlier message of the call has, nor the thread: checked once the thread is
  read, to fail early, and again by the store in the commit's own transaction
  (`network.threads.message_ids`), so that of two calls appending one id at once (two
  processes, one database) only one lands.

The thread must exist, belong to the app (default: the network's name) and to the user when
the `ThreadRef` names one. The messages are one commit: all or nothing.

While the thread waits on an approval or a client tool call, its conversation ends with a
tool call whose result has not come: a message added then would land between the call and its
result (`user, assistant+tool_calls, assistant, tool`), a conversation every provider refuses.
So it is refused (`MessageError`, field "thread", naming the pending call), and nothing is
written: answer the call first. The store checks this in the commit's own transaction.

Appending depends on nothing another commit changes, so the commit is `append_only`: the ready
stores apply it at whatever revision the thread is at, and concurrent calls all land. A store
that does not know the flag refuses a commit made on an older revision (`StaleThreadError`);
the thread is then read again and the commit retried, up to `ATTEMPTS` times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from network.errors import MessageError, StaleThreadError
from network.history.messages import AssistantMessage, UserMessage
from network.run.context import NetworkLike
from network.run.thread_ref import ThreadRef
from network.threads.ids import check_id, check_ids
from network.threads.message_ids import check_new_ids
from network.threads.pending import waiting_error
from network.threads.protocol import ThreadNotFoundError
from network.threads.resolve import open_store
from network.threads.thread_data import Commit
from network.threads.thread_load import check_owner
from network.utf8 import has_utf8_form

MAX_MESSAGES = 100
MAX_CHARS = 100_000
ATTEMPTS = 3
_FIELDS = {"role", "content", "name", "id"}


async def add_messages(
    network: NetworkLike, thread: ThreadRef | str, messages: Sequence[Any]
) -> int:
    """Append `messages` to the thread's conversation; the thread's new revision."""
    checked = check_added(messages)
    ref = ThreadRef.of(thread)
    assert ref is not None
    app = ref.app_name or network.name
    check_id("thread_id", ref.id)
    check_ids(user_id=ref.user_id, app_name=app)
    store, owned = open_store(ref.store)
    try:
        for attempt in range(ATTEMPTS):
            found = await store.get_thread(ref.id)
            if found is None:
                raise ThreadNotFoundError(f"thread {ref.id!r} does not exist in the store given")
            check_owner(found, ref.id, app, ref.user_id)
            if found.pending:
                raise waiting_error(ref.id, found.pending)
            check_new_ids(found.messages, checked)
            try:
                commit = Commit(revision=found.revision, messages=list(checked), append_only=True)
                return await store.append_results(ref.id, commit)
            except StaleThreadError:
                if attempt == ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")
    finally:
        if owned:
            await store.close()


def check_added(messages: Any) -> list[UserMessage | AssistantMessage]:
    """The messages as message objects, or `MessageError` naming the first bad one."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise MessageError(
            f"messages must be a list of messages, got {type(messages).__name__}",
            index=None,
            field="messages",
        )
    if not messages:
        raise MessageError("messages is empty: nothing to add", index=None, field="messages")
    if len(messages) > MAX_MESSAGES:
        raise MessageError(
            f"{len(messages)} messages in one call; at most {MAX_MESSAGES}",
            index=None,
            field="messages",
        )
    checked = [_one(index, message) for index, message in enumerate(messages)]
    seen: set[str] = set()
    for index, message in enumerate(checked):
        if message.id in seen:
            raise MessageError(
                f"message {index}: id {message.id!r} is an earlier message's: a message needs "
                "an id of its own",
                index=index,
                field="id",
            )
        if message.id:
            seen.add(message.id)
    return checked


def _one(index: int, message: Any) -> UserMessage | AssistantMessage:
    role, fields = _role_and_fields(index, message)
    _check_role(index, role)
    content = _checked_content(index, fields["content"])
    for key in ("name", "id"):
        _check_label(index, key, fields[key])
    if role == "user":
        return UserMessage(content, fields["id"], fields["name"])
    return AssistantMessage(content, id=fields["id"], name=fields["name"])


def _role_and_fields(index: int, message: Any) -> tuple[Any, dict[str, Any]]:
    """The message's role and its `content`, `name` and `id`, as given (checked later)."""
    if isinstance(message, UserMessage | AssistantMessage):
        if isinstance(message, AssistantMessage) and (message.tool_calls or message.reasoning):
            what = "tool calls" if message.tool_calls else "reasoning"
            raise MessageError(
                f"message {index}: an added assistant message carries text only, not {what}",
                index=index,
                field="tool_calls" if message.tool_calls else "reasoning",
            )
        return message.role, {"content": message.content, "name": message.name, "id": message.id}
    if isinstance(message, Mapping):
        unknown = sorted(str(key) for key in message if key not in _FIELDS)
        if unknown:
            raise MessageError(
                f"message {index}: unknown field {unknown[0]!r} (a message has "
                f"{', '.join(sorted(_FIELDS))})",
                index=index,
                field=unknown[0][:100],
            )
        return message.get("role"), {key: message.get(key) for key in ("content", "name", "id")}
    raise MessageError(
        f"message {index}: a message is a UserMessage, an AssistantMessage or a dict, "
        f"got {type(message).__name__}",
        index=index,
        field="message",
    )


def _check_role(index: int, role: Any) -> None:
    if role not in ("user", "assistant"):
        shown = repr(role)[:40] if isinstance(role, str) else type(role).__name__
        raise MessageError(
            f"message {index}: role {shown} cannot be added; only 'user' and 'assistant' (a "
            "system message belongs to an agent's instructions, a tool message to a tool call)",
            index=index,
            field="role",
        )


def _checked_content(index: int, content: Any) -> str:
    """`content` when it is text a store can keep; else `MessageError` on field "content"."""
    if not isinstance(content, str):
        raise MessageError(
            f"message {index}: content must be text, got {type(content).__name__}",
            index=index,
            field="content",
        )
    if not content.strip():
        raise MessageError(f"message {index}: content is empty", index=index, field="content")
    if "\x00" in content:  # no database stores it in text
        raise MessageError(
            f"message {index}: content holds a NUL character", index=index, field="content"
        )
    if not has_utf8_form(content):
        raise MessageError(
            f"message {index}: content holds a lone surrogate (no UTF-8 form)",
            index=index,
            field="content",
        )
    if len(content) > MAX_CHARS:
        raise MessageError(
            f"message {index}: content has {len(content)} characters; at most {MAX_CHARS}",
            index=index,
            field="content",
        )
    return content


def _check_label(index: int, key: str, value: Any) -> None:
    """A message's optional `name` or `id`: short text, no NUL, no lone surrogate."""
    if value is not None and (
        not isinstance(value, str)
        or len(value) > 200
        or "\x00" in value
        or not has_utf8_form(value)
    ):
        raise MessageError(
            f"message {index}: {key} must be text of at most 200 characters (no NUL, "
            "no lone surrogate)",
            index=index,
            field=key,
        )
